// The replay viewer: step through a finished match, one accepted action at a time.
//
// The workers rebuild a match from its seed and action log (`startReplay`, then poll `replay(id)` until it
// is finished; docs/bots.md). Each frame holds the version, who acted, the action, its events and the view
// after it: the spectator's, and in the spectator replay every seat's too (`views`).
// The frames are read over REST (`GET /v1/replays/{id}`): in GraphQL a document asking for every field of
// every frame's view costs more than the service's cost limit (each list counts as 10 items), so the page
// takes the JSON and gives the views their GraphQL shape (shapes.js asGraphQL) for the game's renderer.

import { games, matchHeader, rest, replayStatus, startReplay } from "./api.js";
import { describeAction } from "./actions.js";
import { details, fill, h } from "./dom.js";
import { logEntry } from "./events.js";
import { rendererFor } from "./games/index.js";
import { loadNames } from "./names.js";
import { asGraphQL } from "./shapes.js";

const POLL_MS = 300;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function showReplay(root, matchId) {
  let stopped = false;
  const header = await matchHeader(matchId);
  if (header.__typename !== "Match") {
    fill(root, h("p", { class: "problem", "data-problem": header.code }, header.message));
    return () => {};
  }
  const game = (await games())[header.game.id];
  const names = await loadNames(game.id);
  const renderer = rendererFor(game.id);
  fill(root, h("h1", {}, `Replay: ${game.title} · ${header.variant}`), h("p", {}, "Replaying the match…"));

  // 1. ask the workers for the spectator's replay, 2. wait for it, 3. read its frames.
  let job = await startReplay(matchId);
  if (job.__typename !== "ReplayJob") {
    fill(root, h("p", { class: "problem", "data-problem": job.code }, job.message), h("a", { href: `#/match/${matchId}` }, "Back to the match"));
    return () => {};
  }
  while (!stopped && job.status !== "finished" && job.status !== "failed") {
    await sleep(POLL_MS);
    job = await replayStatus(job.id);
    if (job.__typename !== "ReplayJob") break;
  }
  if (stopped) return () => {};
  const replay = job.status === "finished" ? (await rest(`/v1/replays/${encodeURIComponent(job.id)}`))?.replay : null;
  if (!replay) {
    fill(root, h("p", { class: "problem" }, "The replay could not be made."));
    return () => {};
  }

  const frames = replay.frames;
  const seatName = (seat) => (seat === -1 ? "the board" : `seat ${seat}`);
  let index = 0;
  let seen = "spectator"; // whose view: the spectator's, or a seat's from `views`

  const frameBox = h("section", { class: "frame" });
  const position = h("span", { "data-replay-position": "" });
  const step = (to) => () => {
    index = Math.max(0, Math.min(frames.length - 1, to()));
    draw();
  };
  const whose = h("select", { "data-replay-seat": "", onchange: () => ((seen = whose.value), draw()) },
    h("option", { value: "spectator" }, "the spectator's view"),
    (frames[0].views ?? []).map((_, seat) => h("option", { value: seat }, `seat ${seat}'s view`)));

  fill(root,
    h("h1", {}, `Replay: ${game.title} · ${header.variant}`),
    h("p", {}, `${frames.length - 1} actions${replay.verified ? ", every state verified" : ""}. ${replay.note}`),
    h("nav", { class: "replay-controls" },
      h("button", { type: "button", "data-replay-step": "first", onclick: step(() => 0) }, "⏮ first"),
      h("button", { type: "button", "data-replay-step": "prev", onclick: step(() => index - 1) }, "◀ back"),
      position,
      h("button", { type: "button", "data-replay-step": "next", onclick: step(() => index + 1) }, "next ▶"),
      h("button", { type: "button", "data-replay-step": "last", onclick: step(() => frames.length - 1) }, "last ⏭"),
      " ", whose),
    frameBox,
    h("p", {}, h("a", { href: `#/match/${matchId}` }, "Back to the match")));

  function draw() {
    const frame = frames[index];
    const json = seen === "spectator" ? frame.view : frame.views[Number(seen)];
    const view = asGraphQL(json, game.viewSchema);
    fill(position, ` frame ${index} of ${frames.length - 1} · version ${frame.version} `);
    frameBox.setAttribute("data-frame", index);
    frameBox.setAttribute("data-version", frame.version);
    fill(frameBox,
      h("p", {}, frame.seat === null ? "The set-up." : `${seatName(frame.seat)} played `,
        frame.action ? h("strong", {}, describeAction(frame.action, names)) : null),
      h("ul", { class: "log" }, logEntry(frame, names, seatName)),
      renderer.render(view, { names, mySeat: null, seatName, game }),
      h("details", {}, h("summary", {}, "Everything in the view"), details(view)));
  }
  draw();
  return () => {
    stopped = true;
  };
}
