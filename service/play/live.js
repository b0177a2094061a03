// Following a match live: the GraphQL subscription `matchEvents` over graphql-transport-ws, with resume.
//
// The seat token rides in the connection_init payload (`connectionParams`), since a browser cannot set
// headers on a websocket; without one the page follows as a spectator. Every update carries the match
// version. The page remembers the last version it saw and, whenever the stream stops short of the end of
// the match (the connection dropped, the server restarted, a StreamEnded other than `finished`),
// subscribes again with `after` set to it: the service then sends every later update once, none twice.

import { createClient } from "./vendor/graphql-ws/client.js";

const FOLLOW = `subscription Follow($id: ID!, $after: Int!) {
  matchEvents(matchId: $id, after: $after) {
    __typename
    ... on MatchEvent { version seat events toAct status at }
    ... on StreamEnded { reason message }
    ... on Problem { code message }
  }
}`;

const RETRY_MS = [250, 500, 1000, 2000, 4000]; // then every 4 s

/**
 * Follow match `matchId` from version `after`.
 * handlers: onEvent(event) for each MatchEvent, in order; onEnd(reason) once the match is over or the
 * stream was refused for good; onState(state) with "live", "reconnecting" or "ended" (for the page to show).
 * Returns {stop()}.
 */
export function follow(matchId, after, token, { onEvent, onEnd, onState = () => {} }) {
  let lastVersion = after;
  let client = null;
  let attempt = 0; // callbacks of an abandoned attempt (a disposed client still completes) are ignored
  let stopped = false;
  let failures = 0;

  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`;

  function subscribe() {
    const mine = ++attempt;
    const current = () => mine === attempt && !stopped;
    // A fresh client per attempt, and no retries inside it: graphql-ws would re-send the *first*
    // subscription's variables, while a resume must ask from the last version seen.
    client = createClient({
      url,
      connectionParams: token ? { token } : {},
      retryAttempts: 0,
      on: { connected: () => current() && ((failures = 0), onState("live")) },
    });
    client.subscribe({ query: FOLLOW, variables: { id: matchId, after: lastVersion } }, {
      next: ({ data, errors }) => {
        if (!current()) return;
        if (errors) return console.error("matchEvents", errors);
        const message = data.matchEvents;
        if (message.__typename === "MatchEvent") {
          if (message.version <= lastVersion) return; // never applied twice, whatever happens on the wire
          lastVersion = message.version;
          failures = 0;
          onEvent(message);
        } else if (message.__typename === "StreamEnded") {
          // finished: the match is over. invalid_token: the seat was left or handed to a bot.
          // shutdown, store_unavailable: the `complete` that follows subscribes again.
          if (message.reason === "finished" || message.reason === "invalid_token") finish(message.reason);
        } else {
          finish(message.code); // MatchNotFound, InvalidToken, TooManyStreams: nothing to resume
        }
      },
      error: () => current() && retry(),
      complete: () => current() && retry(),
    });
  }

  function retry() {
    attempt += 1;
    client.dispose();
    onState("reconnecting");
    const wait = RETRY_MS[Math.min(failures, RETRY_MS.length - 1)];
    failures += 1;
    setTimeout(() => !stopped && subscribe(), wait);
  }

  function finish(reason) {
    stopped = true;
    client.dispose();
    onState("ended");
    onEnd(reason);
  }

  subscribe();
  return {
    stop() {
      stopped = true;
      client?.dispose();
    },
    get lastVersion() {
      return lastVersion;
    },
  };
}
