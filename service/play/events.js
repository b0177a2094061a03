// The match log: each update from the subscription as a line people can read.
//
// Events are JSON objects with a `type` (each game lists its own in docs/rules/<game>.md and gives
// each a JSON Schema). /play shows them generically: the type, then the other fields, ids by name.

import { h, words } from "./dom.js";

/** One event as a sentence-ish line: `picked: seat 0, stone Harry Potter`. */
export function describeEvent(event, names, seatName) {
  const fields = Object.entries(event)
    .filter(([key, value]) => key !== "type" && value !== null && !(Array.isArray(value) && !value.length))
    .map(([key, value]) => `${words(key)} ${key === "seat" ? seatName(value) : names.label(value, key)}`);
  return fields.length ? `${words(event.type)}: ${fields.join(", ")}` : words(event.type);
}

/** A log entry for one MatchEvent (or a replay frame): version, who acted, what happened. */
export function logEntry(update, names, seatName) {
  const who = update.seat === null || update.seat === undefined ? "set-up" : seatName(update.seat);
  return h("li", { "data-version": update.version },
    h("strong", {}, `v${update.version} · ${who}`),
    update.events.length ? h("ul", {}, update.events.map((e) => h("li", {}, describeEvent(e, names, seatName)))) : null);
}
