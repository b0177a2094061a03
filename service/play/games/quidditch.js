// Quidditch: the balls in play with both sides' cards, the scores, the priority window and your hand.
// Rules: docs/rules/quidditch.md. A card face down on a ball is shown only to its owner until the ball
// is revealed: the view already leaves it out for everyone else, and so does this page.

import { describeAction } from "../actions.js";
import { h, table, words } from "../dom.js";

/** A card as people name it: its catalogue name ("Seeker", "Wingardium Leviosa") and a player card's value. */
function cardText(card, names) {
  if (!card) return "–";
  const name = names.entry(card.id)?.name ?? words(card.kind);
  return card.value !== null && card.value !== undefined ? `${name} ${card.value}` : name;
}

export function render(view, { names, seatName }) {
  // Balls get their names for the action labels and the log ("play card: Chaser 7 on Quaffle").
  names.learn(Object.fromEntries(view.balls.map((ball) => [ball.id, ball.name])));

  const side = (s) => {
    const card = s.card ? cardText(s.card, names) : s.occupied ? "a card, face down" : "–";
    const marks = [s.locked ? `locked (${words(s.locked_by ?? "")})` : "", ...s.modifiers.map(words)].filter(Boolean);
    return `${card}${marks.length ? ` [${marks.join(", ")}]` : ""}`;
  };
  const compared = (ball) => (ball.compared
    ? ball.compared.map((c) => `${c.kind ? words(c.kind) : "no player card"} ${c.value ?? ""}`).join(" vs ")
    : "–");

  return h("div", { class: "quidditch" },
    h("p", {}, `Round ${view.round} of at most ${view.max_rounds} · pitcher: ${seatName(view.pitcher)} · `,
      `stage: ${words(view.stage)} · pitch deck: ${view.pitch_deck_count}${view.pitch_available ? " · a ball may be pitched" : ""}`),
    table(["seat", "team", "score", "hand", "deck", "bludgers", "discard"], view.players.map((p) => [
      seatName(p.seat), `${p.name} (${words(p.team)})`, p.score, p.hand_count, p.deck_count, p.bludgers,
      p.discard.length ? cardText(p.discard.at(-1), names) : "–",
    ])),
    h("h3", {}, "Balls in play"),
    view.balls.length
      ? table(["ball", "points", "seat 0's side", "seat 1's side", "state", "compared"], view.balls.map((ball) => [
        ball.name, ball.points, side(ball.sides[0]), side(ball.sides[1]),
        ball.resolved ? "resolved" : ball.revealed ? "revealed" : "in play", compared(ball),
      ]), { "data-balls": "" })
      : h("p", {}, "No ball in play."),
    view.window ? h("p", { class: "window" }, `Priority window after ${words(view.window.after)}`,
      view.window.ball ? ` on ${names.name(view.window.ball)}` : "",
      view.window.pending.length ? ` · pending: ${view.window.pending.map((p) => `${seatName(p.seat)}: ${cardText(p.card, names)}`).join("; ")}` : "",
      view.window.passed.length ? ` · passed: ${view.window.passed.map(seatName).join(", ")}` : "") : null,
    view.seat !== null ? [h("h3", {}, "Your hand"), h("p", { "data-hand": "" }, view.hand.map((c) => cardText(c, names)).join(" · ") || "empty")] : null,
    view.result ? h("p", {}, `Result: ${view.result.reason}`) : null);
}

/** Card and ball ids by name, a card from the hand with its value: "play card: Chaser 7 on Quaffle". */
export function describe(action, names, view) {
  const card = view.hand.find((c) => c.id === action.card);
  if (!card) return describeAction(action, names);
  const target = action.ball ?? action.targetBall;
  const on = target ? ` on ${names.name(target)}` : action.targetCard ? ` against ${names.name(action.targetCard)}` : "";
  return `${words(action.type)}: ${cardText(card, names)}${on}`;
}
