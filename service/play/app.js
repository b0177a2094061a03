// /play's entry point: a tiny router over the URL fragment.
//   #/               home: create a match, or pick one from the lobby
//   #/match/<id>     a match: as the seat this tab holds, else as a spectator (who may take an open seat)
//   #/replay/<id>    the replay of a finished match
// The fragment never holds a token, so any of these links can be shared.

import { fill, h } from "./dom.js";
import { showHome } from "./home.js";
import { showMatch } from "./match.js";
import { showReplay } from "./replay.js";

const root = document.getElementById("app");
let leave = () => {};

async function route() {
  leave(); // stop the previous page's stream and polls
  leave = () => {};
  const [, page, id] = location.hash.match(/^#\/(match|replay)\/([^/]+)/) ?? [];
  const show = page === "match" ? showMatch : page === "replay" ? showReplay : showHome;
  try {
    leave = await show(root, decodeURIComponent(id ?? ""));
  } catch (error) {
    console.error(error);
    fill(root, h("p", { class: "problem", "data-problem": "page" }, `Something went wrong: ${error.message}`), h("a", { href: "#/" }, "Home"));
  }
}

window.addEventListener("hashchange", route);
route();
