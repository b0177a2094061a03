"""GraphQL types of collections and trades that problems carry too (schema/problems.py): items and a trade.

Kept apart from schema/collections.py (the queries and mutations) so that schema/problems.py can use them
without importing the resolvers. The shapes are REST's (service/rest/collections_openapi.py): items are listed,
``[{id, count}]`` per kind, never maps.
"""

from typing import Any, Optional

import strawberry

from .game_types import graphql_enum

TradeStatus = graphql_enum(
    "TradeStatus", ["offered", "accepting", "settling", "aborting", "completed", "failed", "declined", "cancelled",
                    "expired"],
    "OFFERED: open; ACCEPTING, SETTLING, ABORTING: being carried out (any read finishes it); COMPLETED; FAILED "
    "(nothing moved); DECLINED; CANCELLED; EXPIRED.")
TradeFailure = graphql_enum("TradeFailure", ["offerer_short", "recipient_short"],
                            "Which party no longer owned its side of a failed trade.")


@strawberry.type(description="One item of a collection and how many.")
class ItemCount:
    id: str
    count: int


@strawberry.type(description="Items by kind: stones in concordance order, cards in catalogue order.")
class CollectionItems:
    stones: list[ItemCount]
    cards: list[ItemCount]


def items(listed: dict[str, list[dict[str, Any]]]) -> CollectionItems:
    """Listed items (kind -> ``[{"id", "count"}]``) as the GraphQL type."""
    return CollectionItems(stones=[ItemCount(id=e["id"], count=e["count"]) for e in listed.get("stones", [])],
                           cards=[ItemCount(id=e["id"], count=e["count"]) for e in listed.get("cards", [])])


@strawberry.type(description="A trade between two players' collections.")
class Trade:
    id: strawberry.ID
    game: strawberry.ID
    from_player: strawberry.ID = strawberry.field(name="from", description="The player who offered it.")
    to_player: strawberry.ID = strawberry.field(name="to", description="The player it was offered to.")
    give: CollectionItems = strawberry.field(description="What the offerer gives.")
    get: CollectionItems = strawberry.field(description="What the offerer gets.")
    status: TradeStatus
    reason: Optional[TradeFailure] = strawberry.field(description="Why a failed trade failed.")
    created: float = strawberry.field(description="Milliseconds since the epoch.")
    updated: float
    expires: float = strawberry.field(description="When the offer closes, if still open (ms since the epoch).")
    recovered: bool = strawberry.field(description="Finished by the workers' sweep after the process carrying "
                                                   "it out stopped.")


def trade(record: dict[str, Any]) -> Trade:
    return Trade(id=record["id"], game=record["game"], from_player=record["from"], to_player=record["to"],
                 give=items(record["give"]), get=items(record["get"]), status=TradeStatus(record["status"]),
                 reason=TradeFailure(record["reason"]) if record["reason"] else None, created=record["created"],
                 updated=record["updated"], expires=record["expires"], recovered=record["recovered"])
