// Talking to Grimoire over HTTP: GraphQL for matches, REST for the catalogues and replays.
//
// Every mutation answers a union: the success type, or a problem implementing `Problem { code message }`
// (VersionConflict, NotYourTurn...). Problems are data, so `graphql()` returns them; it throws only for an
// `errors` entry, which means the document itself was refused (a bug in the page, or a limit).

import { actionFragments, gameField, selection } from "./shapes.js";

/** POST a GraphQL document; the seat token, if any, goes in the Authorization header. */
export async function graphql(query, variables = {}, token = null) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch("/graphql", { method: "POST", headers, body: JSON.stringify({ query, variables }) });
  const body = await response.json();
  if (body.errors) throw new Error(body.errors.map((e) => e.message).join("; "));
  return body.data;
}

/** GET a REST resource as JSON; null on 404 (a catalogue the game does not publish, an expired replay). */
export async function rest(path) {
  const response = await fetch(path, { headers: { Accept: "application/json" } });
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(`${path}: ${response.status} ${(await response.json()).detail ?? ""}`);
  return response.json();
}

// ---- games and the lobby ----------------------------------------------------------------------------

const GAMES = `query Games { games { id title minSeats maxSeats summary variants { id title description }
  optionsSchema actionSchemas viewSchema } }`;

let gamesPromise = null;
/** Every game with its variants and JSON Schemas, read once (they change only with a new release). */
export function games() {
  gamesPromise ??= graphql(GAMES).then((data) => Object.fromEntries(data.games.map((g) => [g.id, g])));
  return gamesPromise;
}

const LOBBY = `query Lobby { lobby(limit: 20) { id game variant openSeats seats { seat name joined bot } } }`;
export const lobby = async () => (await graphql(LOBBY)).lobby;

// ---- creating and joining -----------------------------------------------------------------------------

const PROBLEM = "... on Problem { code message }";

const CREATE = `mutation Create($input: CreateMatchInput!) { createMatch(input: $input) {
  __typename ... on MatchCreated { match { id } } ${PROBLEM} } }`;
/** `input`: {game, variant, seats, options, bots: [{seat, level}]}. Answers MatchCreated or a Problem. */
export const createMatch = async (input) => (await graphql(CREATE, { input })).createMatch;

const JOIN = `mutation Join($input: JoinMatchInput!) { joinMatch(input: $input) {
  __typename ... on SeatJoined { seat token } ${PROBLEM} } }`;
/** Take a seat (the lowest free one unless `seat` is given). The token in the answer is shown once: keep it. */
export const joinMatch = async (matchId, name, seat = null) =>
  (await graphql(JOIN, { input: { matchId, name, seat } })).joinMatch;

const ADD_BOT = `mutation AddBot($input: AddBotInput!) { addBot(input: $input) {
  __typename ... on BotAdded { seat } ${PROBLEM} } }`;
/** Give a free seat to a bot (`level`: random, greedy or strong; docs/bots.md). Sent with a seat's token,
 *  it hands that seat to the bot instead (the token is revoked). */
export const addBot = async (matchId, seat, level, token = null) =>
  (await graphql(ADD_BOT, { input: { matchId, seat, level } }, token)).addBot;

// ---- reading and playing a match ----------------------------------------------------------------------

const HEADER = `query Header($id: ID!) { match(id: $id) { __typename ... on Match { id variant game { id title } } ${PROBLEM} } }`;
/** Which game a match is, so the page can build that game's documents. */
export const matchHeader = async (id) => (await graphql(HEADER, { id })).match;

/** The GraphQL documents for one game's matches: read the match, submit an action. Both select the
 *  same fields, so the page renders an accepted action's answer exactly like a fresh read. */
export function matchDocuments(game) {
  const field = gameField(game.id);
  const fields = `id variant version status toAct mySeat seed game { id title }
    seats { seat name joined bot } result { winners scores reason cause }
    ${field} { view ${selection(game.viewSchema)}
               legalActions { __typename ${actionFragments(game.id, game.actionSchemas)} } }`;
  return {
    field,
    read: `query Read($id: ID!) { match(id: $id) { __typename ... on Match { ${fields} } ${PROBLEM} } }`,
    submit: `mutation Submit($input: SubmitActionInput!) { submitAction(input: $input) {
      __typename ... on ActionAccepted { version match { ${fields} } }
      ... on VersionConflict { currentVersion } ${PROBLEM} } }`,
  };
}

/** An action as `legalActions` gave it, ready to send back: the same object less `__typename`. */
export function actionInput(field, action) {
  const { __typename, ...fields } = action;
  return { [field]: fields };
}

// ---- replays ---------------------------------------------------------------------------------------

const START_REPLAY = `mutation StartReplay($input: StartReplayInput!) { startReplay(input: $input) {
  __typename ... on ReplayJob { id status } ${PROBLEM} } }`;
/** Ask the workers to replay a finished match (seat null: the spectator's replay, everything shown). */
export const startReplay = async (matchId, seat = null, token = null) =>
  (await graphql(START_REPLAY, { input: { matchId, seat } }, token)).startReplay;

const REPLAY_STATUS = `query ReplayStatus($id: ID!) { replay(id: $id) {
  __typename ... on ReplayJob { id status } ${PROBLEM} } }`;
export const replayStatus = async (id) => (await graphql(REPLAY_STATUS, { id })).replay;
