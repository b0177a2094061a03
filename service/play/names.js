// Names for the ids a match speaks in, from the games' catalogues.
//
// Actions and events name stones and cards by id (`harry-potter`, `fire-7`). The catalogues give each id
// its name and text: `GET /v1/games/casting-stones/stones`, and `GET /v1/games/{game}/cards` for the card
// games. A catalogue a game does not publish (404) is skipped, and an id with no entry is shown as it is.
// The catalogue stays in memory: it lists every card of the game, and a page must show only what the
// seat's view shows (a spectator's page must not learn which cards exist in a hand).

import { rest } from "./api.js";

/** A `Names` for one game: `name(id)` and `label(value)`, loaded from its catalogues. */
export async function loadNames(gameId) {
  const entries = new Map();
  const catalogues = gameId === "casting-stones" ? ["stones", "cards"] : ["cards"];
  for (const catalogue of catalogues) {
    const body = await rest(`/v1/games/${gameId}/${catalogue}`).catch(() => null);
    for (const item of body?.items ?? []) entries.set(item.id, item);
  }
  return new Names(entries);
}

/** The keys of actions and events that hold stone or card ids (targetCard: Quidditch's `target`). */
const ID_KEYS = /^(card|cards|stone|stones|take|target|targetCard|hand|replacement|knocked|name|ball|balls|by)$/;

export class Names {
  constructor(entries = new Map()) {
    this.entries = entries;
  }

  /** The catalogue entry of an id (with its name, text, value...), or undefined. */
  entry(id) {
    return this.entries.get(id);
  }

  /** The name of a stone or card id; the id itself when the catalogues do not know it. */
  name(id) {
    return this.entries.get(id)?.name ?? id;
  }

  /** Learn names the view itself carries (Quidditch balls, Casting Stones hands): {id: name}. */
  learn(named) {
    for (const [id, name] of Object.entries(named)) {
      if (!this.entries.has(id)) this.entries.set(id, { id, name });
    }
  }

  /** A field of an action or event for people: stone and card ids by name (only under keys that hold
   *  them: an id such as `steal` or `look` is also a plain word elsewhere), lists joined. */
  label(value, key) {
    if (Array.isArray(value)) return value.map((v) => this.label(v, key)).join(", ");
    if (typeof value === "string") return ID_KEYS.test(key) ? this.name(value) : value;
    if (value && typeof value === "object") return value.id ? this.name(value.id) : JSON.stringify(value);
    return String(value);
  }
}
