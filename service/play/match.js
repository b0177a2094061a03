// The match page: one match, as the seat this tab holds (or as a spectator when it holds none).
//
// The loop a front end runs, in four steps:
//   1. read the match with GraphQL (`match(id)`: version, status, toAct, the seat's view and legal actions);
//   2. draw the view, and the legal actions if the match waits on this seat;
//   3. submit the chosen action with `expectedVersion` = the version read (a VersionConflict means someone
//      acted first: read again and choose again);
//   4. follow `matchEvents` (live.js) and read again after each update.
// Seats joining is not an action (no update is published), so while seats are open the page polls.

import { actionInput, addBot, graphql, joinMatch, matchDocuments, matchHeader, games } from "./api.js";
import { actionsPanel, describeAction } from "./actions.js";
import { details, fill, h, words } from "./dom.js";
import { logEntry } from "./events.js";
import { rendererFor } from "./games/index.js";
import { follow } from "./live.js";
import { loadNames } from "./names.js";
import { forgetSeat, heldSeat, keepSeat } from "./seats.js";

const BOT_LEVELS = ["random", "greedy", "strong"];
const WAITING_POLL_MS = 1000;
const SUBMIT_ATTEMPTS = 6; // over about 15 s

/** The name people see for a seat: its player's name or bot level; -1 is the board itself. */
export function seatNamer(match) {
  return (seat) => {
    if (seat === -1) return "the board";
    const entry = match?.seats.find((s) => s.seat === seat);
    const name = entry?.bot ? `${entry.bot} bot` : entry?.name ?? "open seat";
    return `${name} (seat ${seat}${seat === match?.mySeat ? ", you" : ""})`;
  };
}

/** Show match `matchId` in `root`. Returns a function that stops the page (its stream and polls). */
export async function showMatch(root, matchId) {
  const header = await matchHeader(matchId);
  if (header.__typename !== "Match") {
    fill(root, h("p", { class: "problem", "data-problem": header.code }, header.message), h("a", { href: "#/" }, "Home"));
    return () => {};
  }
  const game = (await games())[header.game.id];
  const documents = matchDocuments(game);
  const names = await loadNames(game.id);
  const renderer = rendererFor(game.id);

  let held = heldSeat(matchId); // {seat, token} or null: a spectator
  let match = null; // the last match read
  let follower = null;
  let waitingPoll = null;
  let stopped = false;

  const statusLine = h("span", { class: "status", "data-status": "" });
  const liveState = h("span", { class: "live", "data-live": "connecting" }, "connecting");
  const notice = h("p", { class: "notice", "data-notice": "" });
  const seatsBox = h("section", { class: "seats", "data-seats": "" });
  const viewBox = h("section", { class: "view", "data-view": "" });
  const actionsBox = h("div", {});
  const resultBox = h("div", {});
  const log = h("ol", { class: "log", "data-log": "" });
  const shareLink = `${location.origin}${location.pathname}#/match/${matchId}`;
  fill(root,
    h("h1", {}, `${game.title} · ${header.variant}`),
    h("p", {}, "Share this link to invite players or spectators (it carries no token): ",
      h("input", { readonly: true, size: 48, value: shareLink, "data-share-link": "" })),
    h("p", {}, statusLine, " · stream: ", liveState), notice, seatsBox, resultBox, actionsBox, viewBox,
    h("h2", {}, "Log"), log);

  // ---- reading and drawing -------------------------------------------------------------------------

  async function read(force = false) {
    const data = await graphql(documents.read, { id: matchId }, held?.token);
    if (data.match.__typename === "InvalidToken" && held) {
      // The seat was left, or handed to a bot: the token is dead. Carry on as a spectator.
      forgetSeat(matchId);
      held = null;
      say("Your seat token no longer holds a seat here; you are watching.");
      restartStream();
      return read();
    }
    if (data.match.__typename !== "Match") return say(data.match.message);
    show(data.match, force);
  }

  // A read answered after a newer one (or after a submit's answer) must not draw an older version.
  function show(next, force = false) {
    if (match && next.version < match.version) return;
    // Seats change without a new version (joins are not actions): redraw them, and the rest only when
    // the match moved, so that a choice half made in the actions panel is not wiped by a re-read.
    const moved = force || !match || next.version !== match.version || next.status !== match.status || next.mySeat !== match.mySeat;
    const startedNow = match?.status === "WAITING" && next.status !== "WAITING";
    match = next;
    drawSeats();
    if (!moved) return;
    const seatName = seatNamer(match);
    const { view, legalActions } = match[documents.field];
    const toAct = match.toAct.map(seatName).join(", ") || "nobody";
    statusLine.setAttribute("data-status", match.status);
    statusLine.setAttribute("data-version", match.version);
    fill(statusLine, `version ${match.version} · ${words(match.status)} · to act: ${toAct}`,
      match.mySeat === null ? " · watching as a spectator" : ` · you are seat ${match.mySeat}`);
    fill(viewBox, renderer.render(view, { names, mySeat: match.mySeat, seatName, game }),
      h("details", {}, h("summary", {}, "Everything in the view"), details(view)));
    const mine = match.mySeat !== null && match.toAct.includes(match.mySeat) && match.status === "ACTIVE";
    fill(actionsBox, mine ? actionsPanel(legalActions, match.version, {
      describe: (action) => (renderer.describe ?? describeAction)(action, names, view),
      choose: submit,
    }) : null);
    fill(resultBox, match.status === "FINISHED" ? resultSection(seatName) : null);
    if (match.status !== "WAITING") clearInterval(waitingPoll);
    if (startedNow) say("");
  }

  function resultSection(seatName) {
    const result = match.result;
    const winners = result.winners.map(seatName).join(", ") || "nobody";
    return h("section", { class: "result", "data-result": "" },
      h("h2", {}, "Match over"),
      h("p", {}, `Winners: ${winners}. ${result.reason}`),
      result.scores ? h("p", {}, `Scores: ${result.scores.join(" – ")}`) : null,
      h("p", {}, h("a", { href: `#/replay/${matchId}`, "data-replay-link": "" }, "Watch the replay")));
  }

  function drawSeats() {
    const seatName = seatNamer(match);
    const open = match.status === "WAITING";
    fill(seatsBox, h("h2", {}, "Seats"), h("ul", {}, match.seats.map((seat) => h("li", { "data-seat": seat.seat },
      seatName(seat.seat),
      open && !seat.joined ? seatControls(seat.seat) : null))));
  }

  // An open seat: take it (when this tab holds none), or give it to a bot (anyone may, until the match starts).
  function seatControls(seat) {
    const level = h("select", { "data-bot-level": seat }, BOT_LEVELS.map((l) => h("option", { value: l }, l)));
    return h("span", {}, " ",
      held ? null : h("button", { type: "button", "data-join-seat": seat, onclick: () => join(seat) }, "Take this seat"),
      " ", level, h("button", { type: "button", "data-add-bot": seat, onclick: () => bot(seat, level.value) }, "Add bot"));
  }

  function say(message) {
    fill(notice, message);
  }

  // ---- acting --------------------------------------------------------------------------------------

  async function submit(action) {
    const input = {
      matchId,
      expectedVersion: match.version, // the version this choice was made on
      action: actionInput(documents.field, action),
      idempotencyKey: `${matchId}-${match.version}-${Math.random().toString(36).slice(2)}`,
    };
    let result;
    for (let attempt = 0; !result; attempt += 1) {
      try {
        result = (await graphql(documents.submit, { input }, held.token)).submitAction;
      } catch (error) {
        // No answer (the network failed, the server restarted): the same request again, with the same
        // idempotency key, is safe: the service applies it at most once and answers the first outcome.
        if (attempt === SUBMIT_ATTEMPTS - 1) {
          say(`Not sent: ${error.message}`);
          return read(true);
        }
        say("No answer from the server; trying again…");
        await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
      }
    }
    say("");
    if (result.__typename === "ActionAccepted") return show(result.match);
    say(result.__typename === "VersionConflict" ? "Someone acted first; here is the match now." : result.message);
    await read(true); // redraw even at the same version: the refused choice's panel is disabled
  }

  async function join(seat) {
    const name = sessionStorage.getItem("grimoire.name") || "Player";
    const result = await joinMatch(matchId, name, seat);
    if (result.__typename !== "SeatJoined") return say(result.message);
    keepSeat(matchId, result.seat, result.token);
    held = heldSeat(matchId);
    restartStream();
    await read();
  }

  async function bot(seat, level) {
    // No token: with one, addBot hands *that token's* seat to the bot (docs/api.md, "Leaving a seat").
    const result = await addBot(matchId, seat, level);
    if (result.__typename !== "BotAdded") say(result.message);
    await read();
  }

  // ---- following -----------------------------------------------------------------------------------

  let reading = null;
  let readAgain = false;
  // One read at a time; updates arriving meanwhile are folded into one more read.
  function refresh() {
    if (reading) return void (readAgain = true);
    reading = read().catch((error) => say(error.message)).finally(() => {
      reading = null;
      if (readAgain && !stopped) {
        readAgain = false;
        refresh();
      }
    });
  }

  function restartStream() {
    follower?.stop();
    if (stopped || match?.status === "FINISHED") return;
    follower = follow(matchId, match?.version ?? 0, held?.token, {
      onEvent: (update) => {
        log.append(logEntry(update, names, seatNamer(match)));
        refresh();
      },
      onEnd: (reason) => {
        // finished: the last read shows the result. invalid_token: read() notices the dead token.
        if (reason !== "finished" && reason !== "invalid_token") say(`The stream ended: ${reason}`);
        refresh();
      },
      onState: (state) => {
        liveState.setAttribute("data-live", state);
        fill(liveState, state);
      },
    });
  }

  await read();
  if (match) {
    log.append(h("li", { "data-from": match.version }, `Following from version ${match.version}.`));
    restartStream();
    if (match.status === "WAITING") waitingPoll = setInterval(refresh, WAITING_POLL_MS);
  }
  if (match?.status === "FINISHED") {
    liveState.setAttribute("data-live", "ended");
    fill(liveState, "ended");
  }
  return () => {
    stopped = true;
    follower?.stop();
    clearInterval(waitingPoll);
  };
}
