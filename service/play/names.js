// Names for the ids a match speaks in, from the games' catalogues.
//
// Actions and events name stones and cards by id (`harry-potter`, `fire-7`). The catalogues give each id
// its name and text: `GET /v1/games/casting-stones/stones`, and `GET /v1/games/{game}/cards` for the card
// games. A catalogue a game does not publish (404) is skipped, and an id with no entry is shown as it is.
// The catalogue stays in memory: it lists every card of the game, and a page must show only what the
// seat's view shows (a spectator's page must not learn which cards exist in a hand).

import { rest } from "./api.js";

const CATALOGUES = ["stones", "cards"];

/** A `Names` for one game: `name(id)` and `label(value)`, loaded from its catalogues. */
export async function loadNames(gameId) {
  const entries = new Map();
  for (const catalogue of CATALOGUES) {
    const body = await rest(`/v1/games/${gameId}/${catalogue}`).catch(() => null);
    for (const item of body?.items ?? []) entries.set(item.id, item);
  }
  return new Names(entries);
}

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

  /** Any value of an action or event for people: ids by name, lists joined. */
  label(value) {
    if (Array.isArray(value)) return value.map((v) => this.label(v)).join(", ");
    if (typeof value === "string") return this.name(value);
    if (value && typeof value === "object") return JSON.stringify(value);
    return String(value);
  }
}
