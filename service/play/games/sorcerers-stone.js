// The Sorcerer's Stone: where each player is, then each board in play (a single challenge has one; the
// chain has all seven). Rules: docs/rules/sorcerers-stone.md. One small drawing per board; every board's
// full data is also in the page's "Everything in the view".

import { describeAction } from "../actions.js";
import { h, table, words } from "../dom.js";

const CHESS = { KING: "♚", QUEEN: "♛", ROOK: "♜", BISHOP: "♝", KNIGHT: "♞", PAWN: "♟" };
const FILES = "abcdefgh";

/** A grid of squares named like chess squares (a1 bottom left); `cell(name)` draws one. */
function grid(size, cell, attributes = {}) {
  const rows = [];
  for (let rank = size; rank >= 1; rank -= 1) {
    rows.push(h("tr", {}, h("th", {}, rank), [...FILES.slice(0, size)].map((file) => cell(`${file}${rank}`))));
  }
  rows.push(h("tr", {}, h("th"), [...FILES.slice(0, size)].map((file) => h("th", {}, file))));
  return h("table", { class: "grid", ...attributes }, h("tbody", {}, rows));
}

/** A path of numbered positions with the players standing on them. */
function path(length, players, seatName, label = (i) => i) {
  const at = (i) => players.filter((p) => p.position === i).map((p) => `seat ${p.seat}`).join(", ");
  const cells = [];
  for (let i = 0; i <= length; i += 1) cells.push(h("td", { class: at(i) ? "occupied" : "" }, label(i), h("br"), at(i)));
  return h("table", { class: "path" }, h("tbody", {}, h("tr", {}, cells)));
}

const BOARDS = {
  hagrid(board, { seatName }) {
    return [
      h("p", {}, `Fluffy is ${board.fluffy_asleep_by === null ? "awake" : `asleep (sung to by ${seatName(board.fluffy_asleep_by)})`}`,
        ` · pile: ${board.pile_size} cards · discard: ${board.discard.join(", ") || "none"}`),
      path(board.trapdoor, board.players, seatName, (i) => (i === 0 ? "start" : i === board.trapdoor ? "trapdoor" : words(board.spaces[i - 1]))),
      table(["player", "position", "cards", "hand (notes)"], board.players.map((p) => [
        seatName(p.seat), p.finished ? "through" : p.position ?? "–", p.hand_size, p.hand.join(", ") || "–"])),
    ];
  },

  sprout(board, { seatName }) {
    return [
      h("p", {}, `Ring shapes: ${board.ring.join(", ")} · pile: ${board.pile_size} · Fire tokens left: ${board.fire_left.join(", ") || "none"}`,
        board.phase ? ` · ${seatName(board.turn)} must ${words(board.phase)}` : ""),
      table(["area", "player", "ring", "complete"], board.areas.map((a) => [
        a.area, a.player === null ? "–" : seatName(a.player), a.filled.map((f) => (f ? "●" : "○")).join(""), a.complete ? "yes" : "no"])),
      table(["player", "area", "tokens", "Fire"], board.players.filter((p) => p.arrived).map((p) => [
        seatName(p.seat), p.area ?? "–", p.hand.length ? p.hand.join(", ") : `${p.hand_size} face down`,
        p.fire ?? (p.surrounded ? "surrounded" : "–")])),
    ];
  },

  flitwick(board, { seatName }) {
    const squares = Object.fromEntries(board.squares.map((s) => [s.square, s]));
    const mark = { FACE_DOWN: "🗝", NONE: "", SILVER: "★" };
    return [
      h("p", {}, `${words(board.phase)} · ${board.face_down} keys face down`,
        board.mover !== null ? ` · ${seatName(board.mover)} spun ${board.spin}` : "",
        board.reveals.length ? ` · ${seatName(board.reveals[0].seat)} turns over ${board.reveals[0].left} more` : ""),
      grid(board.size, (name) => {
        const square = squares[name];
        return h("td", { "data-square": name }, mark[square.key] ?? words(square.key), square.seat !== null ? ` ${square.seat}` : "");
      }),
    ];
  },

  mcgonagall(board, { seatName }) {
    const pieces = Object.fromEntries(board.pieces.map((p) => [p.square, p]));
    return [
      h("p", {}, `${words(board.rules)} rules, game ${board.game}`,
        board.board_to_move ? " · the board itself is thinking…" : "",
        board.board_colour ? ` · the board plays ${words(board.board_colour)}` : "",
        board.check.length ? ` · check: ${board.check.map(words).join(", ")}` : "",
        board.over ? ` · over: ${words(board.over)}` : ""),
      grid(8, (name) => {
        const piece = pieces[name];
        const glyph = piece ? CHESS[piece.kind] : "";
        const token = piece?.token ? ` ${words(piece.token)}${piece.seat !== null ? ` ${piece.seat}` : ""}` : "";
        return h("td", { "data-square": name, class: piece ? words(piece.colour) : "" }, glyph, h("small", {}, token));
      }, { class: "grid chess" }),
      table(["player", "state", "colour", "Harry on"], board.players.map((p) => [
        seatName(p.seat), words(p.state), p.colour ? words(p.colour) : "–", p.square ?? "–"])),
      board.last.length ? h("p", {}, "Last moves: ", board.last.map((m) => `${m.seat === null ? "the board" : seatName(m.seat)} ${m.uci ?? words(m.kind)}`).join(", ")) : null,
    ];
  },

  quirrell(board, { seatName }) {
    return [
      h("p", {}, `Spinner: ${board.spinner.join(", ")}`,
        board.last_spin ? ` · last spin: ${seatName(board.last_spin.seat)} got ${board.last_spin.face}` : ""),
      path(board.end_door, board.players, seatName, (i) => (i === 0 ? "door" : i === board.end_door ? "end" : i)),
    ];
  },

  snape(board, { seatName, names }) {
    return [
      h("p", {}, `${words(board.phase)} · deck: ${board.deck} · discard: ${board.discard.map(names.name, names).join(", ") || "none"}`,
        board.turn ? ` · ${seatName(board.turn.seat)}: ${words(board.turn.step)}` : ""),
      h("p", {}, "Board: ", board.spaces.map((s) => (s.face_up ? names.name(s.card) : "▢")).join(" ")),
      table(["player", "status", "row", "piece on"], board.players.map((p) => [
        seatName(p.seat), words(p.status), p.cards.map((c) => (c === null ? "▢" : names.name(c))).join(" ") || "–", p.piece ?? "–"])),
      board.claims.length ? h("p", {}, "Claims: ", board.claims.map((c) => `${seatName(c.seat)} ${c.cards.join("+")} ${c.correct ? "right" : "wrong"}`).join("; ")) : null,
    ];
  },

  mirror(board, { seatName }) {
    return [
      h("p", {}, "Cards: ", board.cards.map((c, i) => `${i}:${c === "face_down" || c === "FACE_DOWN" ? "▢" : words(c)}`).join(" ")),
      h("p", {}, `At the Mirror: ${board.players.map(seatName).join(", ") || "nobody"}`),
    ];
  },
};

export function render(view, context) {
  const { seatName } = context;
  const fact = (facts) => Object.entries(facts ?? {}).filter(([, v]) => v !== null).map(([k, v]) => `${words(k)} ${v}`).join(", ");
  const boards = Object.entries(view.boards).filter(([, board]) => board);
  return h("div", { class: "sorcerers-stone" },
    h("p", {}, `Variant: ${view.variant}`, view.turnSeat !== null ? ` · turn: ${seatName(view.turnSeat)}` : "",
      view.reason ? ` · ${view.reason}` : ""),
    table(["player", "board", "waiting", "what earlier challenges said"], view.players.map((p) => [
      seatName(p.seat), p.board ? words(p.board) : "through every board", p.waiting || (p.held ? "held" : "–"), fact(p.facts) || "–"])),
    boards.map(([name, board]) => h("section", { class: "board", "data-board": name },
      h("h3", {}, words(name)), (BOARDS[name] ?? (() => []))(board, context))));
}

/** Hagrid's cards by their notes, chess moves as they read. */
export function describe(action, names) {
  if (action.cardNotes !== undefined && action.cardNotes !== null) return `${words(action.type)}: ${action.cardNotes} notes`;
  return describeAction(action, names);
}
