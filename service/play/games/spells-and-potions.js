// Spells and Potions: the four posts round the table, the trick being played, the last trick taken,
// the partnerships' points. Rules: docs/rules/spells-and-potions.md. Cards are ids (`fire-7`,
// `power-blast-1`); their names come from the cards catalogue (GET /v1/games/spells-and-potions/cards).

import { describeAction } from "../actions.js";
import { h, table, words } from "../dom.js";

const TEAMS = ["North/South", "East/West"];

export function render(view, { names, seatName }) {
  const card = (id) => names.name(id);
  const laid = (cards) => cards.map((c) => `${words(c.post)}: ${card(c.card)}`).join(" · ") || "nothing yet";
  const holder = (post) => (post.companion
    ? `Companion${post.controller !== null ? `, played by ${seatName(post.controller)}` : ""}`
    : post.wizard !== null ? seatName(post.wizard) : "–");
  const last = view.last_trick;

  return h("div", { class: "spells-and-potions" },
    h("p", {}, `Duel ${view.duel} of ${view.duels} · ${words(view.duelPhase)}`,
      ` · trump: ${view.trump ? words(view.trump) : "none"}`,
      view.leader ? ` · leader: ${words(view.leader)}` : "",
      view.to_play ? ` · to play: ${words(view.to_play)}` : "",
      view.led_element ? ` · follow ${words(view.led_element)}` : ""),
    table(["post", "hand of", "team", "cards", "tricks"], view.table.map((post) => [
      words(post.post), holder(post), TEAMS[post.team],
      post.hand_visible ? post.hand.map(card).join(", ") || "empty" : `${post.hand_size} cards, face down`,
      post.tricks_won,
    ]), { "data-table": "" }),
    h("h3", {}, "This trick"),
    h("p", { "data-trick": "" }, laid(view.trick),
      ` (ranking: ${words(view.in_force.ranking)}${view.in_force.potion_points ? `, +${view.in_force.potion_points} potion points` : ""})`),
    last ? h("p", { class: "last" }, `Last trick (duel ${last.duel}, #${last.number}): ${laid(last.cards)} — `,
      `won by ${words(last.winner)} for ${last.points} points`) : null,
    view.choices_owed.length ? h("p", {}, "Still to choose: ",
      view.choices_owed.map((c) => `${words(c.choice)} by ${seatName(c.seat)}`).join(", ")) : null,
    h("p", {}, `This duel: ${TEAMS.map((t, i) => `${t} ${view.team_points[i] ?? 0} points, ${view.team_tricks[i] ?? 0} tricks`).join(" · ")}`),
    view.scores.length ? h("p", {}, `Totals: ${view.scores.map((s, seat) => `${seatName(seat)} ${s}`).join(" · ")}`) : null,
    view.arrangement.draws.length ? h("p", {}, "Arrangement draws: ",
      view.arrangement.draws.map((d) => `${seatName(d.seat)} ${words(d.element)} ${d.rank}`).join(", ")) : null);
}

/** "play fire 7 for north" reads better with the card's name. */
export function describe(action, names) {
  if (action.card) return `${words(action.type)}: ${names.name(action.card)}${action.for ? ` (${words(action.for)}'s hand)` : ""}`;
  return describeAction(action, names);
}
