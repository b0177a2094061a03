// GraphiQL against this service's /graphql: queries and mutations over HTTP POST, subscriptions over
// a graphql-transport-ws websocket on the same URL. A separate file, not an inline script, so that the
// page's Content-Security-Policy can allow scripts from this origin only.
"use strict";

const httpUrl = new URL("/graphql", window.location.href);
const wsUrl = new URL(httpUrl);
wsUrl.protocol = httpUrl.protocol === "https:" ? "wss:" : "ws:";

const fetcher = GraphiQL.createFetcher({url: httpUrl.href, subscriptionUrl: wsUrl.href});

const defaultQuery = `# Grimoire's GraphQL API. Run with Ctrl-Enter or the play button.
# A seat's token goes in the Headers tab: {"Authorization": "Bearer <seat token>"}
{
  games {
    id
    title
    minSeats
    maxSeats
    variants { id }
  }
}
`;

ReactDOM.createRoot(document.getElementById("graphiql")).render(
  React.createElement(GraphiQL, {
    fetcher,
    defaultQuery,
    isHeadersEditorEnabled: true,
    // seat tokens are typed into the headers: never keep them in the browser's storage
    shouldPersistHeaders: false,
  }),
);
