// Casting Stones: the Tower Mat, each wizard's Casting Hand and cast, the centre pool and the Vault.
// Rules: docs/rules/casting-stones.md. Stones arrive with their names in the view; actions name them
// by id, so the labels go through `names` (the stones catalogue, GET /v1/games/casting-stones/stones).

import { describeAction } from "../actions.js";
import { h, table, words } from "../dom.js";

const stoneText = (stone) =>
  `${stone.name} (${words(stone.type)} ${stone.number}${stone.face && stone.face !== "UNCAST" ? `, ${words(stone.face)} up` : ""})`;

const stoneList = (stones) => (stones.length ? stones.map(stoneText).join(" · ") : "none");

export function render(view, { names, seatName }) {
  // Stones and cards in the view carry their names; keep them for the action labels.
  for (const player of view.players) {
    names.learn(Object.fromEntries([...player.hand, ...player.vault, ...player.library].map((s) => [s.id, s.name])));
  }
  names.learn(Object.fromEntries([...view.pool, ...view.vault].map((s) => [s.id, s.name])));

  const turret = (t) => h("td", { class: t.seat === null ? "empty" : `seat-${t.seat}`, "data-turret": t.index },
    t.name, h("br"), t.seat === null ? "empty" : seatName(t.seat));
  return h("div", { class: "casting-stones" },
    h("p", {}, `Phase: ${words(view.phase)} · turn ${view.turn} · first caster: ${seatName(view.first_caster)}`),
    view.victory ? h("p", {}, `${seatName(view.victory.seat)} won the turn with a ${words(view.victory.kind)}: ${words(view.victory.effect)}.`) : null,
    view.bonus ? h("p", {}, `Card bonus: ${view.bonus.name} (${words(view.bonus.effect)}, ${view.bonus.left} left).`) : null,
    view.last_turn ? h("p", { class: "last" }, `Last turn: ${view.last_turn.summary}`) : null,
    h("h3", {}, "Tower Mat"),
    h("table", { class: "ring" }, h("tbody", {}, h("tr", {}, view.turrets.map(turret)))),
    h("h3", {}, "Wizards"),
    table(["seat", "Casting Hand", "cast", "gems in line", "turrets", "cards"], view.players.map((p) => [
      seatName(p.seat),
      stoneList(p.hand) + (p.vault.length ? ` — vault: ${stoneList(p.vault)}` : p.vault_size ? ` — vault: ${p.vault_size} stones` : ""),
      `${words(p.conjured.kind)}${p.conjured.power !== null ? ` ${p.conjured.power}` : ""}${p.recast ? " (re-cast)" : ""}`,
      p.gems_in_line,
      p.turrets_held,
      p.library.map((c) => c.name).join(", ") || "–",
    ])),
    view.pool.length ? [h("h3", {}, "Centre (set-up draft)"), h("p", {}, stoneList(view.pool))] : null,
    view.vault.length ? [h("h3", {}, "Vault"), h("p", {}, stoneList(view.vault))] : null,
    view.face_down_cards ? h("p", {}, `${view.face_down_cards} Casting Cards lie face down.`) : null,
    view.end !== "NONE" ? h("p", {}, `Ended: ${words(view.end)}.`) : null);
}

/** Turrets by their names on the mat; everything else as usual. */
export function describe(action, names, view) {
  const turretName = (index) => view.turrets.find((t) => t.index === index)?.name ?? `turret ${index}`;
  if (action.turret !== undefined && action.turret !== null) {
    const target = action.target !== null && action.target !== undefined ? ` with ${turretName(action.target)}` : "";
    return `${words(action.type)}: ${turretName(action.turret)}${target}`;
  }
  return describeAction(action, names);
}
