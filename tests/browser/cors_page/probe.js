// A page on another origin uses Grimoire's GraphQL API (its URL in ?api=...) as a front end would:
// a query and a mutation over fetch (CORS), a subscription over a graphql-transport-ws websocket.
// Each outcome lands in window.probe ("ok: ..." or "refused: ..."); window.probeDone ends the run.
"use strict";

const api = new URL(new URLSearchParams(location.search).get("api"));
const graphqlUrl = new URL("/graphql", api).href;
const websocketUrl = graphqlUrl.replace(/^http/, "ws");
window.probe = {};

async function graphql(query, variables) {
  const response = await fetch(graphqlUrl, {
    method: "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify({query, variables}),
  });
  const body = await response.json();
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

// Resolves with the first MatchEvent of the match, as a spectator (no token in connection_init).
function firstEvent(matchId) {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(websocketUrl, "graphql-transport-ws");
    const timer = setTimeout(() => { socket.close(); reject(new Error("no event within 20 s")); }, 20000);
    socket.onopen = () => socket.send(JSON.stringify({type: "connection_init", payload: {}}));
    socket.onmessage = (message) => {
      const frame = JSON.parse(message.data);
      if (frame.type === "connection_ack") {
        socket.send(JSON.stringify({id: "1", type: "subscribe", payload: {
          query: `subscription ($id: ID!) { matchEvents(matchId: $id, after: 0) {
                    __typename ... on MatchEvent { version } ... on Problem { code } } }`,
          variables: {id: matchId}}}));
      } else if (frame.type === "next") {
        clearTimeout(timer);
        socket.close();
        resolve(frame.payload.data.matchEvents);
      }
    };
    socket.onclose = (event) => { clearTimeout(timer); reject(new Error(`websocket closed, code ${event.code}`)); };
  });
}

async function run() {
  try {
    const data = await graphql("{ games { id } }");
    window.probe.query = `ok: ${data.games.map((game) => game.id).join(",")}`;
  } catch (error) {
    window.probe.query = `refused: ${error}`;
  }
  let matchId = new URLSearchParams(location.search).get("match");  // to subscribe when the mutation is refused
  try {
    const data = await graphql(`mutation { createMatch(input: {game: "casting-stones", variant: "basic", seed: "7",
        bots: [{seat: 0, level: "random"}, {seat: 1, level: "random"}]}) { __typename ... on MatchCreated { match { id } } } }`);
    matchId = data.createMatch.match.id;
    window.probe.mutation = `ok: ${matchId}`;
  } catch (error) {
    window.probe.mutation = `refused: ${error}`;
  }
  try {
    const event = await firstEvent(matchId);
    window.probe.subscription = `ok: ${event.__typename} ${event.version}`;
  } catch (error) {
    window.probe.subscription = `refused: ${error}`;
  }
  document.getElementById("report").textContent = JSON.stringify(window.probe, null, 2);
  window.probeDone = true;
}

run();
