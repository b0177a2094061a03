"""The GraphQL endpoint: strawberry's ASGI app with our context."""

from datetime import timedelta

from strawberry.asgi import GraphQL
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL

from service.store import bearer_token


class GraphQLApp(GraphQL):
    """GraphiQL in the browser; only the ``graphql-transport-ws`` protocol for subscriptions."""

    def __init__(self, schema, *, max_subscriptions_per_connection: int = 10):
        super().__init__(schema, graphql_ide="graphiql", allow_queries_via_get=False,
                         subscription_protocols=(GRAPHQL_TRANSPORT_WS_PROTOCOL,),
                         connection_init_wait_timeout=timedelta(seconds=10),
                         max_subscriptions_per_connection=max_subscriptions_per_connection)

    async def get_context(self, request, response):
        return {"request": request, "response": response, "store": request.app.state.store,
                "token": bearer_token(request.headers.get("authorization"))}
