// A few lines of DOM building, so the renderers read like the markup they make.

/** `h("button", {class: "x", "data-action": 1, onclick}, "text", child...)`: an element. Attributes
 *  starting with `on` are event listeners; null/false children and attributes are skipped. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** Replace an element's content. */
export function fill(element, ...children) {
  element.replaceChildren();
  for (const child of children.flat(Infinity)) {
    if (child !== null && child !== undefined && child !== false) element.append(child);
  }
  return element;
}

/** `CHOOSE_LEADER` or `choose_leader` -> `choose leader`: an enum value or action type for people. */
export const words = (value) => String(value).toLowerCase().replace(/_/g, " ");

/** A small table: `rows` are arrays of cells; `head` the column titles. */
export function table(head, rows, attributes = {}) {
  return h("table", attributes,
    h("thead", {}, h("tr", {}, head.map((title) => h("th", {}, title)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((cell) => h("td", {}, cell))))));
}

/** A value of a view the renderers do not draw specially, shown as a readable nested list. */
export function details(value) {
  if (value === null || value === undefined) return "–";
  if (Array.isArray(value)) {
    if (value.every((v) => v === null || typeof v !== "object")) return value.map((v) => v ?? "–").join(", ") || "none";
    return h("ol", { start: 0 }, value.map((v) => h("li", {}, details(v))));
  }
  if (typeof value === "object") {
    return h("dl", {}, Object.entries(value).map(([k, v]) => [h("dt", {}, k), h("dd", {}, details(v))]));
  }
  return String(value);
}
