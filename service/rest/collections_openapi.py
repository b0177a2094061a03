"""The OpenAPI description of the collections' and trades' routes (service/rest/collections.py), merged by
service/rest/openapi.py."""

from __future__ import annotations

from typing import Any

from service.store.collections import MAX_HANDS
from service.store.trades import FINAL, IN_PROGRESS, MAX_COUNT, MAX_LINES, OFFERED

from .openapi import _COMMON, _COUNT, _MS, _ON_MATCH, _SEED, _json, _nullable, _problem_responses, _ref
from .players_openapi import _CREDENTIAL, _CURSOR, _LIMIT, _PLAYER, _object

_STRING = {"type": "string"}
_ID = {"type": "string", "minLength": 1, "maxLength": 64}
_IDS = {"type": "array", "items": _ID, "maxItems": 30}
_BOOL = {"type": "boolean"}
_PLAYER_ID = {"name": "player_id", "in": "path", "required": True, "schema": _ID}
_HAND_NAME = {"name": "name", "in": "path", "required": True, "schema": {"type": "string", "minLength": 1,
                                                                           "maxLength": 40}}
_TRADE_ID = {"name": "trade_id", "in": "path", "required": True, "schema": _ID}
_MATCH_ID = {"name": "match_id", "in": "path", "required": True, "schema": _ID}
_IDEMPOTENCY = {"name": "Idempotency-Key", "in": "header", "required": False,
                "schema": {"type": "string", "minLength": 1, "maxLength": 255},
                "description": "Repeat the request with the same key to get its first answer again: nothing twice."}
_IF_MATCH = {"name": "If-Match", "in": "header", "required": True,
             "schema": {"type": "string", "pattern": '^"[0-9]{1,18}"$'},  # as a submit's (openapi.py)
             "description": 'The match version you read (its ETag), e.g. "3".'}
_ETAG = {"ETag": {"description": "The match version, quoted.", "schema": _STRING}}
_SET_KINDS = ["starter", "refill"]
_RARITY = {"type": "string", "enum": ["common", "uncommon", "rare", "rare_foil", "chaser"]}


def _list(item: str) -> dict:
    return {"type": "array", "items": _ref(item)}


def components() -> dict[str, Any]:
    count = {**_COUNT, "minimum": 1}
    completion = {"owned": _COUNT, "total": _COUNT, "complete": _BOOL}
    return {
        "ItemCount": _object(["id", "count"], {"id": _ID, "count": count}, "One item of a collection and how many."),
        "CollectionItems": _object(["stones", "cards"], {"stones": _list("ItemCount"), "cards": _list("ItemCount")},
                                   "Items by kind: stones in concordance order, cards in catalogue order."),
        "CollectionTotals": _object(["stones", "distinct_stones", "cards", "distinct_cards"], {
            "stones": _COUNT, "distinct_stones": _COUNT, "cards": _COUNT, "distinct_cards": _COUNT}),
        "SetAllowance": _object(["kind", "available", "per_day", "opened_today", "granted", "next_at"], {
            "kind": {"type": "string", "enum": _SET_KINDS},
            "available": {**_COUNT, "description": "Sets of this kind you can open now."},
            "per_day": _nullable(_COUNT, description="Refills a day (UTC) allows; null for the starter (once)."),
            "opened_today": _nullable(_COUNT), "granted": {**_COUNT, "description": "Granted by an operator, "
                                                                                    "beyond the daily allowance."},
            "next_at": _nullable(_MS, description="When one comes back, if none is available now.")}),
        "MyCollection": _object(
            ["player_id", "game", "public", "stones", "cards", "totals", "sets", "default_hand"],
            {"player_id": _STRING, "game": _STRING, "public": {**_BOOL, "description": "Others may read the counts."},
             "stones": _list("ItemCount"), "cards": _list("ItemCount"), "totals": _ref("CollectionTotals"),
             "sets": _list("SetAllowance"),
             "default_hand": {"type": ["string", "null"], "description": "The saved hand a quick match brings."}},
            "Your collection."),
        "PublicCollection": _object(["player_id", "game", "stones", "cards", "totals"], {
            "player_id": _STRING, "game": _STRING, "stones": _list("ItemCount"), "cards": _list("ItemCount"),
            "totals": _ref("CollectionTotals")}, "A player's counts, as they made them public."),
        "CollectionVisibility": _object(["public"], {"public": _BOOL}, additionalProperties=False),
        "RarityCompletion": _object(["rarity", *completion], {"rarity": _RARITY, **completion}),
        "Completion": _object(list(completion), completion),
        "MissingItems": _object(["stones", "cards"], {"stones": {"type": "array", "items": _STRING},
                                                      "cards": {"type": "array", "items": _STRING}}),
        "CollectionProgress": _object(
            ["player_id", "game", "rarities", "stones", "cards", "missing", "duplicates"],
            {"player_id": _STRING, "game": _STRING, "rarities": _list("RarityCompletion"),
             "stones": _ref("Completion"), "cards": _ref("Completion"), "missing": _ref("MissingItems"),
             "duplicates": {**_ref("CollectionItems"), "description": "What is owned beyond one of each: "
                                                                      "what can be traded without losing one."}},
            "Collectors' view: completion per rarity, missing stones and cards, duplicates."),
        "OpenSet": _object(["kind"], {"kind": {"type": "string", "enum": _SET_KINDS}}, additionalProperties=False),
        "SetOpening": _object(["id", "kind", "seed", "at", "stones", "cards", "allowance"], {
            "id": _STRING, "kind": {"type": "string", "enum": _SET_KINDS},
            "seed": {**_SEED, "description": "The opening's seed: the game's open_set(seed, kind) gives its "
                                             "contents again (docs/rules/casting-stones.md, 'Sets')."},
            "at": _MS, "stones": {"type": "array", "items": _STRING}, "cards": {"type": "array", "items": _STRING},
            "allowance": {"type": "string", "enum": ["once", "daily", "grant"],
                          "description": "What it was opened from: the starter (once), the daily allowance, "
                                         "an operator's grant."}}),
        "SetOpened": _object(["opening", "duplicate"], {
            "opening": _ref("SetOpening"),
            "duplicate": {**_BOOL, "description": "True when this repeats an earlier request's Idempotency-Key."}}),
        "SetOpeningList": _object(["openings", "next_cursor"], {
            "openings": _list("SetOpening"), "next_cursor": {"type": ["string", "null"]}}),
        "SaveHand": _object(["name", "stones", "cards", "hand"], {
            "name": {"type": "string", "minLength": 1, "maxLength": 40},
            "stones": {**_IDS, "description": "10 different stones."},
            "cards": {**_IDS, "description": "3 or more different cards, in the order you prefer them: a match of "
                                             "N cards each takes the first N."},
            "hand": {**_IDS, "description": "The 5 of the stones in your Casting Hand."},
            "default": {**_BOOL, "default": False, "description": "Make it the hand a quick match brings (the "
                                                                  "first hand saved is, until another is)."}},
            additionalProperties=False),
        "SavedHand": _object(["name", "stones", "cards", "hand", "saved", "default"], {
            "name": _STRING, "stones": {"type": "array", "items": _STRING},
            "cards": {"type": "array", "items": _STRING}, "hand": {"type": "array", "items": _STRING},
            "saved": _MS, "default": _BOOL}),
        "SavedHandList": _object(["hands"], {"hands": _list("SavedHand")}),
        "HandDeleted": _object(["name", "deleted"], {"name": _STRING, "deleted": _BOOL}),
        "BringSavedHand": _object([], {"name": {"type": "string", "minLength": 1, "maxLength": 40,
                                                "description": "A saved hand; absent: your default one."}},
                                  additionalProperties=False),
        "TradeLine": _object(["id"], {"id": _ID, "count": {**count, "maximum": MAX_COUNT, "default": 1}},
                             additionalProperties=False),
        "TradeSide": _object([], {"stones": {"type": "array", "items": _ref("TradeLine"), "maxItems": MAX_LINES},
                                  "cards": {"type": "array", "items": _ref("TradeLine"), "maxItems": MAX_LINES}},
                             additionalProperties=False),
        "OfferTrade": _object(["to"], {
            "to": {**_ID, "description": "The player you offer it to."},
            "give": {**_ref("TradeSide"), "description": "What you give."},
            "get": {**_ref("TradeSide"), "description": "What you get in return."},
            "expires_in": {"type": "integer", "minimum": 60, "maximum": 30 * 24 * 3600,
                           "description": "Seconds the offer stays open (default: the service's setting, a day; "
                                          "at most a week)."}},
            additionalProperties=False),
        "Trade": _object(
            ["id", "game", "from", "to", "give", "get", "status", "reason", "created", "updated", "expires",
             "recovered"],
            {"id": _STRING, "game": _STRING, "from": {**_STRING, "description": "The player who offered it."},
             "to": {**_STRING, "description": "The player it was offered to."},
             "give": {**_ref("CollectionItems"), "description": "What the offerer gives."},
             "get": {**_ref("CollectionItems"), "description": "What the offerer gets."},
             "status": {"type": "string", "enum": [OFFERED, *IN_PROGRESS, *FINAL],
                        "description": "offered; accepting, settling, aborting: being carried out (any read "
                                       "finishes it); completed, failed (nothing moved), declined, cancelled, "
                                       "expired."},
             "reason": {"type": ["string", "null"], "enum": ["offerer_short", "recipient_short", None],
                        "description": "Why a failed trade failed: which party no longer owned its side."},
             "created": _MS, "updated": _MS, "expires": _MS,
             "recovered": {**_BOOL, "description": "Finished by the workers' sweep after the process carrying it "
                                                   "out stopped."}},
            "A trade between two players' collections."),
        "TradeList": _object(["trades", "next_cursor"], {"trades": _list("Trade"),
                                                        "next_cursor": {"type": ["string", "null"]}}),
    }


def problem_properties() -> dict[str, Any]:
    """The details some collection problems carry, beside the Problem's own fields."""
    return {
        "missing": {**_ref("CollectionItems"), "description": "With not_in_collection: what you lack, and how many."},
        "next_at": {**_MS, "description": "With no_set_left: when the daily allowance comes back."},
        "trade_status": {"type": "string", "description": "With trade_closed: the trade's status."},
        "trade": {**_ref("Trade"), "description": "With trade_failed: the trade, failed; nothing moved."},
    }


def paths() -> dict[str, Any]:
    me = {"security": _PLAYER}
    mine = (*_CREDENTIAL, *_COMMON)
    return {
        "/v1/players/me/collection": {"get": {
            "operationId": "myCollection", "summary": "Your collection: counts, visibility, the sets you can open.",
            **me, "responses": {"200": _json(_ref("MyCollection"), "Your collection."), **_problem_responses(*mine)},
        }},
        "/v1/players/me/collection/visibility": {"post": {
            "operationId": "setCollectionVisibility", "summary": "Let others read your counts, or stop them.", **me,
            "requestBody": {"required": True,
                            "content": {"application/json": {"schema": _ref("CollectionVisibility")}}},
            "responses": {"200": _json(_ref("MyCollection"), "Your collection."),
                          **_problem_responses(*mine, "unsupported_media_type")},
        }},
        "/v1/players/me/collection/progress": {"get": {
            "operationId": "myCollectionProgress", "summary": "Collectors' view of your collection.", **me,
            "responses": {"200": _json(_ref("CollectionProgress"), "Completion, missing, duplicates."),
                          **_problem_responses(*mine)},
        }},
        "/v1/players/{player_id}/collection": {"get": {
            "operationId": "playerCollection", "summary": "A player's counts, if they made them public.",
            "parameters": [_PLAYER_ID],
            "responses": {"200": _json(_ref("PublicCollection"), "The counts."),
                          **_problem_responses("player_not_found", "collection_private", *_COMMON)},
        }},
        "/v1/players/{player_id}/collection/progress": {"get": {
            "operationId": "playerCollectionProgress", "summary": "Collectors' view of a public collection.",
            "parameters": [_PLAYER_ID],
            "responses": {"200": _json(_ref("CollectionProgress"), "Completion, missing, duplicates."),
                          **_problem_responses("player_not_found", "collection_private", *_COMMON)},
        }},
        "/v1/players/me/packs": {
            "post": {"operationId": "openSet",
                     "summary": "Open a set: the starter once, refills as the daily allowance and grants allow.",
                     **me, "parameters": [_IDEMPOTENCY],
                     "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("OpenSet")}}},
                     "responses": {"201": _json(_ref("SetOpened"), "Opened: its contents are in your collection."),
                                   "200": _json(_ref("SetOpened"), "A repeat of an earlier request (Idempotency-Key)."),
                                   **_problem_responses(*mine, "unknown_set", "set_opened_before", "no_set_left",
                                                        "unsupported_media_type")}},
            "get": {"operationId": "mySetOpenings", "summary": "The sets you opened, with their seeds, newest first.",
                    **me, "parameters": [_CURSOR, _LIMIT],
                    "responses": {"200": _json(_ref("SetOpeningList"), "A page of openings."),
                                  **_problem_responses(*mine)}},
        },
        "/v1/players/me/hands": {
            "get": {"operationId": "myHands", "summary": "Your saved hands.", **me,
                    "responses": {"200": _json(_ref("SavedHandList"), "Your saved hands, by name."),
                                  **_problem_responses(*mine)}},
            "post": {"operationId": "saveHand", "summary": f"Save a hand you own, by name (at most {MAX_HANDS}; "
                                                           "the same name replaces it).", **me,
                     "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("SaveHand")}}},
                     "responses": {"201": _json(_ref("SavedHand"), "Saved."),
                                   **_problem_responses(*mine, "invalid_hand", "not_in_collection", "too_many_hands",
                                                        "unsupported_media_type")}},
        },
        "/v1/players/me/hands/{name}": {
            "get": {"operationId": "getHand", "summary": "One of your saved hands.", **me, "parameters": [_HAND_NAME],
                    "responses": {"200": _json(_ref("SavedHand"), "The hand."),
                                  **_problem_responses(*mine, "hand_not_found")}},
            "delete": {"operationId": "deleteHand", "summary": "Delete a saved hand.", **me,
                       "parameters": [_HAND_NAME],
                       "responses": {"200": _json(_ref("HandDeleted"), "Deleted."),
                                     **_problem_responses(*mine, "hand_not_found")}},
        },
        "/v1/matches/{match_id}/saved-hand": {"post": {
            "operationId": "bringSavedHand",
            "summary": "Bring a saved hand into an Advanced match (the bring action made of it), as your seat.",
            **me, "parameters": [_MATCH_ID, _IF_MATCH, _IDEMPOTENCY],
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("BringSavedHand")}}},
            "responses": {"200": _json(_ref("ActionAccepted"), "Brought.", _ETAG),
                          **_problem_responses(*_CREDENTIAL, "hand_not_found", "not_in_collection", "match_not_found",
                                               "match_not_started", "not_your_turn", "illegal_action",
                                               "version_conflict", "precondition_required", "idempotency_key_reused",
                                               "unsupported_media_type", *_ON_MATCH)},
        }},
        "/v1/trades": {"post": {
            "operationId": "offerTrade", "summary": "Offer a trade: what you give for what you get.", **me,
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("OfferTrade")}}},
            "responses": {"201": _json(_ref("Trade"), "Offered: nothing moves until it is accepted."),
                          **_problem_responses(*mine, "invalid_trade", "player_not_found", "not_in_collection",
                                               "unsupported_media_type")},
        }},
        "/v1/players/me/trades": {"get": {
            "operationId": "myTrades", "summary": "Your trades, made and received, newest first.", **me,
            "parameters": [_CURSOR, _LIMIT],
            "responses": {"200": _json(_ref("TradeList"), "A page of trades."), **_problem_responses(*mine)},
        }},
        "/v1/trades/{trade_id}": {"get": {
            "operationId": "getTrade", "summary": "A trade of yours (one being carried out is finished first).", **me,
            "parameters": [_TRADE_ID],
            "responses": {"200": _json(_ref("Trade"), "The trade."), **_problem_responses(*mine, "trade_not_found")},
        }},
        "/v1/trades/{trade_id}/accept": {"post": {
            "operationId": "acceptTrade", "summary": "Accept a trade offered to you: the swap is made, atomically.",
            **me, "parameters": [_TRADE_ID],
            "responses": {"200": _json(_ref("Trade"), "Completed."),
                          **_problem_responses(*mine, "trade_not_found", "not_your_trade", "trade_closed",
                                               "not_in_collection", "trade_failed")},
        }},
        "/v1/trades/{trade_id}/decline": {"post": {
            "operationId": "declineTrade", "summary": "Decline a trade offered to you.", **me,
            "parameters": [_TRADE_ID],
            "responses": {"200": _json(_ref("Trade"), "Declined."),
                          **_problem_responses(*mine, "trade_not_found", "not_your_trade", "trade_closed")},
        }},
        "/v1/trades/{trade_id}/cancel": {"post": {
            "operationId": "cancelTrade", "summary": "Take back a trade you offered.", **me,
            "parameters": [_TRADE_ID],
            "responses": {"200": _json(_ref("Trade"), "Cancelled."),
                          **_problem_responses(*mine, "trade_not_found", "not_your_trade", "trade_closed")},
        }},
    }
