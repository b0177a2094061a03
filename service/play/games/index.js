// One renderer per game. A renderer is a module with
//   render(view, ctx) -> Node        ctx: {names, mySeat, seatName(seat), game}
//   describe(action, names, view)    optional: a label for a legal action (else actions.js's describeAction)
// The view comes in its GraphQL shape: GraphQL field names, SCREAMING_CASE enum values (docs/api.md).

import * as castingStones from "./casting-stones.js";
import * as quidditch from "./quidditch.js";
import * as sorcerersStone from "./sorcerers-stone.js";
import * as spellsAndPotions from "./spells-and-potions.js";
import { details } from "../dom.js";

const RENDERERS = {
  "casting-stones": castingStones,
  quidditch,
  "sorcerers-stone": sorcerersStone,
  "spells-and-potions": spellsAndPotions,
};

/** A game added to the service before /play knows it still shows: its view as a tree. */
const generic = { render: (view) => details(view) };

export const rendererFor = (gameId) => RENDERERS[gameId] ?? generic;
