// The GraphQL shape of a game's data, worked out from the game's JSON Schemas.
//
// Every game publishes the JSON Schemas of its view and of each action (GraphQL `games { viewSchema
// actionSchemas }`, REST `GET /v1/games`), and the service generates its GraphQL types from them. So a
// client can ask for every field of a view without writing the (long) selection by hand: walk the schema.
// Two rules map a JSON key or value to GraphQL (docs/api.md, "GraphQL names"):
//   - a property with `x-graphql-name` has that name in GraphQL (Quidditch's `ball` -> `targetBall`);
//   - the values of a titled enum are SCREAMING_CASE in GraphQL (`choose_leader` -> `CHOOSE_LEADER`).
// A typed client generated from schema/schema.graphql would not need this module; a small hand-written
// one like /play does.

const RENAME = "x-graphql-name";

/** `casting-stones` -> `CastingStones` (the prefix of the game's GraphQL type names). */
export function pascal(gameId) {
  return gameId.split(/[-_ ]+/).map((part) => part[0].toUpperCase() + part.slice(1)).join("");
}

/** `casting-stones` -> `castingStones`: the Match field (and action input field) named after a game. */
export function gameField(gameId) {
  const name = pascal(gameId);
  return name[0].toLowerCase() + name.slice(1);
}

/** `choose_leader` -> `CHOOSE_LEADER`: a JSON string as a GraphQL enum value. */
export function screaming(value) {
  return value.replace(/\W/g, "_").toUpperCase();
}

const kinds = (schema) => [].concat(schema.type ?? []);

/** The innermost item schema of (possibly nested) arrays. */
function itemOf(schema) {
  let item = schema;
  while (kinds(item).includes("array")) item = item.items ?? {};
  return item;
}

/** A GraphQL selection set asking for every field of a JSON Schema object, by its GraphQL names. */
export function selection(schema) {
  const fields = Object.entries(schema.properties ?? {}).map(([key, property]) => {
    const name = property[RENAME] ?? key;
    const item = itemOf(property);
    return kinds(item).includes("object") ? `${name} ${selection(item)}` : name;
  });
  return `{ ${fields.join(" ")} }`;
}

/** The inline fragments selecting every field of each of a game's actions (`... on CastingStonesPickAction {...}`). */
export function actionFragments(gameId, actionSchemas) {
  return Object.entries(actionSchemas)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([type, schema]) => `... on ${pascal(gameId)}${pascal(type)}Action ${selection(schema)}`)
    .join(" ");
}

const isEnumOfNames = (schema) =>
  schema.title && Array.isArray(schema.enum) && schema.enum.every((v) => v === null || /^[_A-Za-z]\w*$/.test(v));

/** A value as REST (JSON) gives it, in the shape GraphQL gives it: renamed keys, SCREAMING_CASE enums.
 *  Used for replays, which /play reads over REST (see replay.js for why). */
export function asGraphQL(value, schema) {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((v) => asGraphQL(v, schema.items ?? {}));
  if (typeof value === "object") {
    const out = {};
    for (const [key, property] of Object.entries(schema.properties ?? {})) {
      out[property[RENAME] ?? key] = asGraphQL(value[key], property);
    }
    return out;
  }
  if (typeof value === "string" && isEnumOfNames(schema)) return screaming(value);
  return value;
}
