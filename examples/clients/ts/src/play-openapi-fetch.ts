// One match of each game over REST, with openapi-fetch and the types openapi-typescript generates
// (generated/rest.ts: `npm run generate`; docs/api.md, "Generate a client").
//
//   node dist/src/play-openapi-fetch.js http://127.0.0.1:8000
//
// Each match: create it with a random bot in the other seat, take the free seat, then until the match is
// over read it and, when it waits on our seat, send back one of the legal actions as it came. Once per
// match a write names a stale version on purpose: it comes back as the typed `Problem` with the code
// "version_conflict". Prints `finished <game> <match id> <version>` per match.
import createClient from "openapi-fetch";

import type { components, paths } from "../generated/rest.js";

type CreateMatch = components["schemas"]["CreateMatch"];

const BOT: components["schemas"]["AddBot"][] = [{ level: "random", seat: 1 }];
const MATCHES: CreateMatch[] = [
  { game: "casting-stones", variant: "basic", seed: "1", bots: BOT },
  { game: "quidditch", variant: "standard", seed: "2", bots: BOT },
  { game: "spells-and-potions", variant: "practice-1", seed: "3", bots: BOT },
  { game: "sorcerers-stone", variant: "sprout", seed: "4", bots: BOT },
];
const DEADLINE_MS = 300_000; // how long a match may take

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function play(baseUrl: string, body: CreateMatch): Promise<void> {
  const anonymous = createClient<paths>({ baseUrl });
  const created = await anonymous.POST("/v1/matches", { body });
  if (!created.data) throw new Error(`create the match: ${JSON.stringify(created.error)}`);
  const path = { match_id: created.data.id };
  const joined = await anonymous.POST("/v1/matches/{match_id}/seats", {
    params: { path },
    body: { name: "openapi-fetch", seat: 0 },
  });
  if (!joined.data) throw new Error(`join: ${JSON.stringify(joined.error)}`);
  const seat = joined.data.seat;
  const me = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${joined.data.token}` } });
  let staleWriteRefused = false;
  const deadline = Date.now() + DEADLINE_MS;
  while (Date.now() < deadline) {
    const read = await me.GET("/v1/matches/{match_id}", { params: { path } });
    if (!read.data) throw new Error(`read the match: ${JSON.stringify(read.error)}`);
    const match = read.data;
    if (match.status === "finished") {
      if (!staleWriteRefused) throw new Error(`${match.id}: finished before our stale write`);
      console.log("finished", match.game, match.id, match.version);
      return;
    }
    if (!match.to_act.includes(seat)) {
      await pause(50); // the bot is thinking: poll gently
      continue;
    }
    const legal = await me.GET("/v1/matches/{match_id}/legal-actions", { params: { path } });
    if (!legal.data) throw new Error(`read the legal actions: ${JSON.stringify(legal.error)}`);
    const { version, actions } = legal.data;
    const action = actions[version % actions.length];
    if (action === undefined) continue; // the match moved on between the two reads
    if (!staleWriteRefused && version > 0) {
      const stale = await me.POST("/v1/matches/{match_id}/actions", {
        params: { path, header: { "If-Match": `"${version - 1}"` } },
        body: { action },
      });
      if (stale.error?.code !== "version_conflict") {
        throw new Error(`a stale write was not refused as a version conflict: ${stale.response.status}`);
      }
      staleWriteRefused = true;
    }
    const sent = await me.POST("/v1/matches/{match_id}/actions", {
      params: { path, header: { "If-Match": `"${version}"` } },
      body: { action },
    });
    // a conflict: a bot acted at the same time; read again
    if (sent.error && sent.error.code !== "version_conflict") throw new Error(`submit: ${sent.error.detail}`);
  }
  throw new Error(`${path.match_id}: not finished within ${DEADLINE_MS} ms`);
}

const baseUrl = process.argv[2];
if (!baseUrl) throw new Error("usage: play-openapi-fetch.js <service URL>");
for (const match of MATCHES) await play(baseUrl, match);
