// The home page: create a match (some seats given to bots), or join one from the lobby.
//
// Creating is two mutations: `createMatch` (game, variant, seats, options, bots), then `joinMatch`
// for this tab's own seat, whose token the page keeps (seats.js). The lobby (`lobby`) lists matches
// still waiting for players.

import { createMatch, games, joinMatch, lobby } from "./api.js";
import { fill, h } from "./dom.js";
import { keepSeat } from "./seats.js";

const SEAT_CHOICES = [["open", "open (another player joins)"], ["random", "random bot"], ["greedy", "greedy bot"], ["strong", "strong bot"]];

/** The defaults of a game's options, from its optionsSchema, as editable JSON. */
function defaultOptions(game) {
  const entries = Object.entries(game.optionsSchema.properties ?? {})
    .filter(([, property]) => "default" in property && !property.deprecated)
    .map(([key, property]) => [key, property.default]);
  return JSON.stringify(Object.fromEntries(entries), null, 1);
}

export async function showHome(root) {
  const all = await games();
  const name = h("input", { name: "name", value: sessionStorage.getItem("grimoire.name") ?? "Player", "data-player-name": "",
    oninput: () => sessionStorage.setItem("grimoire.name", name.value) });
  sessionStorage.setItem("grimoire.name", name.value);

  const gameSelect = h("select", { name: "game" }, Object.values(all).map((g) => h("option", { value: g.id }, g.title)));
  const variantSelect = h("select", { name: "variant" });
  const seatsInput = h("input", { name: "seats", type: "number" });
  const botsBox = h("div", { class: "bots" });
  const optionsInput = h("textarea", { name: "options", rows: 4, cols: 50 });
  const summary = h("p", { class: "summary" });
  const problem = h("p", { class: "problem", "data-problem": "" });

  // The form follows the chosen game: its variants, seat range, options and, per other seat, who sits there.
  function gameChanged() {
    const game = all[gameSelect.value];
    fill(variantSelect, game.variants.map((v) => h("option", { value: v.id, title: v.description }, v.title)));
    Object.assign(seatsInput, { min: game.minSeats, max: game.maxSeats, value: game.minSeats });
    optionsInput.value = defaultOptions(game);
    fill(summary, game.summary);
    fill(botsBox);
    seatsChanged();
  }
  function seatsChanged() {
    const seats = Number(seatsInput.value);
    const before = Object.fromEntries([...botsBox.querySelectorAll("[data-seat-choice]")].map((s) => [s.dataset.seatChoice, s.value]));
    const rows = [];
    for (let seat = 1; seat < seats; seat += 1) {
      const choice = h("select", { "data-seat-choice": seat }, SEAT_CHOICES.map(([value, label]) => h("option", { value }, label)));
      choice.value = before[seat] ?? "open"; // keep what was chosen for the seats that stay
      rows.push(h("label", {}, `Seat ${seat}: `, choice, " "));
    }
    fill(botsBox, h("span", {}, "Seat 0: you. "), rows);
  }
  gameSelect.addEventListener("change", gameChanged);
  seatsInput.addEventListener("input", seatsChanged);

  async function create(event) {
    event.preventDefault();
    let options;
    try {
      options = JSON.parse(optionsInput.value || "{}");
    } catch {
      return fill(problem, "The options are not valid JSON.");
    }
    const bots = [...botsBox.querySelectorAll("[data-seat-choice]")]
      .filter((select) => select.value !== "open")
      .map((select) => ({ seat: Number(select.dataset.seatChoice), level: select.value }));
    const created = await createMatch({
      game: gameSelect.value, variant: variantSelect.value, seats: Number(seatsInput.value), options, bots });
    if (created.__typename !== "MatchCreated") return fill(problem, created.message);
    const id = created.match.id;
    const joined = await joinMatch(id, name.value, 0);
    if (joined.__typename !== "SeatJoined") return fill(problem, joined.message);
    keepSeat(id, joined.seat, joined.token);
    location.hash = `#/match/${id}`;
  }

  const lobbyBox = h("section", { "data-lobby": "" });
  async function refreshLobby() {
    const open = await lobby();
    fill(lobbyBox, h("h2", {}, "Open matches"), open.length ? h("ul", {}, open.map((entry) => h("li", { "data-lobby-match": entry.id },
      `${all[entry.game]?.title ?? entry.game} · ${entry.variant} · ${entry.openSeats} open seat(s) · `,
      entry.seats.filter((s) => s.joined).map((s) => s.bot ? `${s.bot} bot` : s.name).join(", "), " ",
      h("a", { href: `#/match/${entry.id}`, "data-open-match": entry.id }, "open")))) : h("p", {}, "None: create one."),
    h("button", { type: "button", onclick: refreshLobby }, "Refresh"));
  }

  const goTo = h("input", { placeholder: "match id", "data-match-id": "" });
  fill(root,
    h("h1", {}, "Grimoire: play"),
    h("p", {}, "The reference front end: every page here uses only the public API (its source is in service/play/)."),
    h("label", {}, "Your name: ", name),
    h("form", { class: "create", "data-create": "", onsubmit: create },
      h("h2", {}, "New match"),
      h("p", {}, h("label", {}, "Game ", gameSelect), " ", h("label", {}, "Variant ", variantSelect), " ",
        h("label", {}, "Seats ", seatsInput)),
      summary, botsBox,
      h("p", {}, h("label", {}, "Options (JSON, the game's optionsSchema)", h("br"), optionsInput)),
      h("button", { type: "submit" }, "Create and take seat 0"), problem),
    lobbyBox,
    h("section", {}, h("h2", {}, "Watch or replay a match"), goTo, " ",
      h("button", { type: "button", "data-watch": "", onclick: () => (location.hash = `#/match/${goTo.value.trim()}`) }, "Open"), " ",
      h("button", { type: "button", "data-replay": "", onclick: () => (location.hash = `#/replay/${goTo.value.trim()}`) }, "Replay")));
  gameChanged();
  await refreshLobby();
  return () => {};
}
