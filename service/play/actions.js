// The legal actions as controls: exactly the list the service gave, nothing composed by the page.
//
// `legalActions` lists every concrete action the seat may take now; the page offers those and sends the
// chosen one back unchanged (less `__typename`). Actions are grouped by type: a type with one action is a
// button; a type with several (pick *which* stone, play *which* card) is a small form whose select lists
// each of them. One select of whole actions, rather than one select per parameter, so that no
// combination the rules forbid can be put together.
//
// Stable hooks for tests and tools: the panel is [data-actions][data-version], each control
// [data-action-type="<json type>"], a button or option carries data-action / value = its index.

import { h, words } from "./dom.js";

/** Describe an action for people: its type and parameters, ids by name. A renderer may do better. */
export function describeAction(action, names) {
  const parameters = Object.entries(action)
    .filter(([key, value]) => key !== "__typename" && key !== "type" && value !== null)
    .map(([key, value]) => `${words(key)} ${names.label(value, key)}`);
  return parameters.length ? `${words(action.type)}: ${parameters.join(", ")}` : words(action.type);
}

/**
 * The actions panel. `describe(action)` labels one action; `choose(action)` submits it (the panel is
 * disabled until the page renders the next version).
 */
export function actionsPanel(actions, version, { describe, choose }) {
  const groups = new Map();
  actions.forEach((action, index) => {
    const type = action.type.toLowerCase();
    if (!groups.has(type)) groups.set(type, []);
    groups.get(type).push({ action, index });
  });

  const panel = h("section", { class: "actions", "data-actions": "", "data-version": version },
    h("h2", {}, actions.length ? "Your move" : "Nothing to do now"));
  const submit = (action) => {
    panel.querySelectorAll("button, select").forEach((control) => (control.disabled = true));
    panel.setAttribute("data-busy", "");
    choose(action);
  };

  for (const [type, choices] of groups) {
    if (choices.length === 1) {
      const { action, index } = choices[0];
      panel.append(h("button", { type: "button", "data-action-type": type, "data-action": index,
        onclick: () => submit(action) }, describe(action)));
      continue;
    }
    const select = h("select", { name: "choice", "data-choices": "" },
      choices.map(({ action, index }) => h("option", { value: index }, describe(action))));
    panel.append(h("form", { "data-action-type": type, onsubmit: (event) => {
      event.preventDefault();
      submit(actions[Number(select.value)]);
    } }, h("label", {}, words(type), " ", select), h("button", { type: "submit" }, words(type))));
  }
  return panel;
}
