// One match of each game over GraphQL, with the operations @graphql-codegen types (generated/graphql/:
// `npm run generate`; docs/api.md, "Generate a client") and a graphql-ws subscription to follow the match.
//
//   node dist/src/play-graphql-codegen.js http://127.0.0.1:8000
//
// Each match: create it with a random bot in the other seat, take the free seat, then follow it live
// (matchEvents) and whenever it waits on our seat read it through the field named after its game and
// send one of the legal actions back as it came (less `__typename`). Once per match a write names a stale
// version on purpose: it comes back as the `VersionConflict` member of the result union. Prints
// `finished <game> <match id> <version>` per match.
import { createClient } from "graphql-ws";
import WebSocket from "ws";

import {
  CreateMatchDocument,
  FollowMatchDocument,
  JoinMatchDocument,
  ReadMatchDocument,
  SubmitActionDocument,
  type ActionInput,
  type CreateMatchInput,
  type FollowMatchSubscription,
  type ReadMatchQuery,
  type TypedDocumentString,
} from "../generated/graphql/graphql.js";

const MATCHES: CreateMatchInput[] = [
  { game: "casting-stones", variant: "basic", seed: "1", bots: [{ seat: 1, level: "random" }] },
  { game: "quidditch", variant: "standard", seed: "2", bots: [{ seat: 1, level: "random" }] },
  { game: "spells-and-potions", variant: "practice-1", seed: "3", bots: [{ seat: 1, level: "random" }] },
  { game: "sorcerers-stone", variant: "sprout", seed: "4", bots: [{ seat: 1, level: "random" }] },
];

type Match = Extract<ReadMatchQuery["match"], { __typename: "Match" }>;

/** A query or mutation over HTTP; an `errors` entry (an invalid document) is a bug here. */
async function execute<Result, Variables>(url: string, document: TypedDocumentString<Result, Variables>,
                                          variables: Variables, token?: string): Promise<Result> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query: document.toString(), variables }),
  });
  const body: { data?: Result; errors?: unknown[] } = await response.json();
  if (body.errors || !body.data) throw new Error(`GraphQL errors: ${JSON.stringify(body.errors)}`);
  return body.data;
}

/** One of the match's legal actions as the input of its game (the field named after it); none: null. */
function chosenAction(match: Match): ActionInput | null {
  const pick = <T,>(actions: T[]): T | undefined => actions[match.version % actions.length];
  if (match.castingStones) {
    const legal = pick(match.castingStones.legalActions);
    if (legal) {
      const { __typename, ...action } = legal;
      return { castingStones: action };
    }
  } else if (match.quidditch) {
    const legal = pick(match.quidditch.legalActions);
    if (legal) {
      const { __typename, ...action } = legal;
      return { quidditch: action };
    }
  } else if (match.spellsAndPotions) {
    const legal = pick(match.spellsAndPotions.legalActions);
    if (legal) {
      const { __typename, ...action } = legal;
      return { spellsAndPotions: action };
    }
  } else if (match.sorcerersStone) {
    const legal = pick(match.sorcerersStone.legalActions);
    if (legal) {
      const { __typename, ...action } = legal;
      return { sorcerersStone: action };
    }
  }
  return null;
}

async function play(baseUrl: string, input: CreateMatchInput): Promise<void> {
  const url = `${baseUrl}/graphql`;
  const created = (await execute(url, CreateMatchDocument, { input })).createMatch;
  if (created.__typename !== "MatchCreated") throw new Error(`create the match: ${JSON.stringify(created)}`);
  const matchId = created.match.id;
  const joined = (await execute(url, JoinMatchDocument, { input: { matchId, name: "graphql-codegen", seat: 0 } }))
    .joinMatch;
  if (joined.__typename !== "SeatJoined") throw new Error(`join: ${JSON.stringify(joined)}`);
  const { seat, token } = joined;
  let staleWriteRefused = false;

  /** Read the match; when it waits on our seat, act. Returns the match as read. */
  async function act(): Promise<Match> {
    const match = (await execute(url, ReadMatchDocument, { id: matchId }, token)).match;
    if (match.__typename !== "Match") throw new Error(`read the match: ${JSON.stringify(match)}`);
    const action = match.status === "ACTIVE" && match.toAct.includes(seat) ? chosenAction(match) : null;
    if (action === null) return match;
    if (!staleWriteRefused && match.version > 0) {
      const stale = (await execute(url, SubmitActionDocument,
        { input: { matchId, expectedVersion: match.version - 1, action } }, token)).submitAction;
      if (stale.__typename !== "VersionConflict") {
        throw new Error(`a stale write was not refused as a version conflict: ${JSON.stringify(stale)}`);
      }
      staleWriteRefused = true;
    }
    const sent = (await execute(url, SubmitActionDocument,
      { input: { matchId, expectedVersion: match.version, action } }, token)).submitAction;
    // a conflict: a bot acted at the same time; the next event brings us back
    if (sent.__typename !== "ActionAccepted" && sent.__typename !== "VersionConflict") {
      throw new Error(`submit: ${JSON.stringify(sent)}`);
    }
    return match;
  }

  const live = createClient({ url: url.replace(/^http/, "ws"), webSocketImpl: WebSocket,
                              connectionParams: { token } });
  try {
    await act(); // the stream speaks only when something happens: the match may wait on us already
    const events = live.iterate<FollowMatchSubscription>({ query: FollowMatchDocument.toString(),
                                                           variables: { id: matchId, after: 0 } });
    for await (const { data, errors } of events) {
      const event = data?.matchEvents;
      if (!event || errors) throw new Error(`subscription: ${JSON.stringify(errors)}`);
      if (event.__typename === "MatchEvent") {
        if (event.status === "ACTIVE" && event.toAct.includes(seat)) await act();
      } else if (event.__typename === "StreamEnded") {
        if (event.reason !== "finished") throw new Error(`the stream ended: ${event.reason}: ${event.message}`);
        break;
      } else {
        throw new Error(`subscription: ${event.code}: ${event.message}`);
      }
    }
  } finally {
    await live.dispose();
  }
  const match = await act();
  if (match.status !== "FINISHED") throw new Error(`${matchId}: the stream ended but the match did not`);
  if (!staleWriteRefused) throw new Error(`${matchId}: finished before our stale write`);
  console.log("finished", input.game, match.id, match.version);
}

const baseUrl = process.argv[2];
if (!baseUrl) throw new Error("usage: play-graphql-codegen.js <service URL>");
for (const match of MATCHES) await play(baseUrl, match);
