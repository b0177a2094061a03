"""grimoire.client against a running service: typed refusals, version handling, idempotent retries, async."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest

from examples.bot_first_legal import first_legal
from tests.client.conftest import READY_TIMEOUT
from tests.support.processes import Service
from grimoire.client import AsyncClient, Bot, Client
from grimoire.errors import (NotFound, NotYourTurn, ProblemError, RuleViolation, SeatUnavailable, Unauthorized,
                             VersionConflict, problem_error)

GAME, VARIANT = "spells-and-potions", "practice-1"  # 40 actions, seat 1 leads with seed 1


def two_seats(grimoire: Client):
    match = grimoire.create_match(GAME, variant=VARIANT, seed=1)
    return match, grimoire.join(match.id, "Ann", seat=0), grimoire.join(match.id, "Bob", seat=1)


def test_games_and_a_match_read_through_a_seat(stack):
    with Client(stack.url) as grimoire:
        games = {g.id: g for g in grimoire.games()}
        assert VARIANT in [v.id for v in games[GAME].variants]
        match, ann, bob = two_seats(grimoire)
        assert match.status == "waiting" and match.version == 0
        read = bob.view()
        assert (read.status, read.my_seat, read.to_act, read.game) == ("active", 1, [1], GAME)
        legal = bob.legal_actions()
        assert legal.version == 0 and legal.seat == 1 and legal.actions
        assert ann.legal_actions().actions == []  # not Ann's turn
        spectator = grimoire.watch(match.id)
        assert spectator.view().my_seat is None and spectator.legal_actions().actions == []


def test_refusals_raise_the_exception_of_their_problem_code(stack):
    with Client(stack.url) as grimoire:
        match, ann, bob = two_seats(grimoire)
        with pytest.raises(NotFound) as missing:
            grimoire.watch("no-such-match")
        assert missing.value.code == "match_not_found" and missing.value.status == 404
        with pytest.raises(NotFound) as unknown:
            grimoire.create_match("no-such-game")
        assert unknown.value.code == "unknown_game"
        with pytest.raises(SeatUnavailable) as taken:
            grimoire.join(match.id, "Cat", seat=0)
        assert taken.value.code == "seat_taken"
        with pytest.raises(NotYourTurn) as turn:
            ann.submit(bob.legal_actions().actions[0])
        assert turn.value.code == "not_your_turn" and turn.value.status == 409
        not_in_hand = {"type": "play", "card": "no-such-card", "for": bob.legal_actions().actions[0]["for"]}
        with pytest.raises(RuleViolation) as illegal:
            bob.submit(not_in_hand)
        assert illegal.value.code == "illegal_action" and illegal.value.status == 409 and illegal.value.detail
        with pytest.raises(Unauthorized) as stranger:
            grimoire.seat(match.id, "gt.not-a-token")
        assert stranger.value.code == "invalid_token"
        assert bob.history() == []  # nothing refused was applied


def test_an_unknown_code_takes_the_family_of_its_status_and_a_page_that_is_no_problem_keeps_it():
    # no hosted game has a rule code of its own yet (all refuse with illegal_action): the mapping alone
    own = problem_error(409, {"code": "snitch_already_caught", "status": 409, "detail": "The Snitch is caught."})
    assert isinstance(own, RuleViolation) and own.code == "snitch_already_caught"
    later = problem_error(401, {"code": "stream_ticket_expired", "status": 401, "detail": "Ask for another."})
    assert isinstance(later, Unauthorized) and later.code == "stream_ticket_expired"  # a code newer than the client
    page = problem_error(502, None)
    assert type(page) is ProblemError and (page.code, page.status) == ("http_502", 502)


def test_a_stale_version_is_a_typed_conflict_and_the_match_is_read_again(stack):
    with Client(stack.url) as grimoire:
        match, ann, bob = two_seats(grimoire)
        stale = bob.legal_actions()
        other_device = grimoire.seat(match.id, bob.token)  # the same seat, acting from elsewhere
        other_device.play_turn(first_legal)
        with pytest.raises(VersionConflict) as conflict:
            bob.submit(stale.actions[-1])
        assert conflict.value.code == "version_conflict" and conflict.value.current_version == 1
        assert conflict.value.match is not None and conflict.value.match.version == 1
        assert bob.version == 1  # the next submit is based on what was read again
        assert [e.version for e in bob.history()] == [1]


def test_play_turn_chooses_again_after_a_conflict(stack):
    with Client(stack.url) as grimoire:
        match, ann, bob = two_seats(grimoire)
        rival = grimoire.seat(match.id, bob.token)
        asked: list[int] = []

        def racing(view, actions):
            """The first time, the same seat acts from elsewhere and the match comes back to it: stale."""
            asked.append(len(actions))
            if len(asked) == 1:
                rival.play_turn(first_legal)
                while 1 not in ann.view().to_act:
                    ann.play_turn(first_legal)
            return actions[0]

        accepted = bob.play_turn(racing)
        assert len(asked) == 2, "play_turn did not ask the strategy again after the conflict"
        assert accepted is not None and accepted.version > 2 and not accepted.duplicate
        assert accepted.version == bob.view().version
        versions = [e.version for e in bob.history()]
        assert versions == list(range(1, accepted.version + 1))


class LoseFirstAnswer(httpx.BaseTransport):
    """Sends every request; the first answer to an action is lost on the way back (the connection drops)."""

    def __init__(self):
        self.inner = httpx.HTTPTransport()
        self.keys: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.url.path.endswith("/actions"):
            self.keys.append(request.headers["idempotency-key"])
            if len(self.keys) == 1:
                response.read()
                response.close()
                raise httpx.ReadError("connection reset by peer", request=request)
        return response

    def close(self) -> None:
        self.inner.close()


def test_an_action_whose_answer_was_lost_is_sent_again_and_applied_once(stack):
    transport = LoseFirstAnswer()
    with Client(stack.url, transport=transport) as grimoire:
        match, ann, bob = two_seats(grimoire)
        action = bob.legal_actions().actions[0]
        accepted = bob.submit(action)
        assert len(transport.keys) == 2 and transport.keys[0] == transport.keys[1]
        assert accepted.duplicate and accepted.version == 1
        again = bob.submit(action, version=0, key=transport.keys[0])  # a repeat by hand: the first outcome
        assert again.duplicate and again.version == 1
        entries = bob.history()
        assert [(e.version, e.action) for e in entries] == [(1, action)]


def test_a_rate_limited_request_is_sent_again_once_its_retry_after_has_passed(stack, tmp_path, caplog):
    """The service's default limit (50 requests a second per token) is met by a bot at full speed; a 429
    did nothing, so any request, an action included, is sent again after Retry-After."""
    caplog.set_level(logging.WARNING, logger="grimoire.client")
    limited = Service(stack.redis_url, stack.prefix, tmp_path / "serve.log", ready_timeout=READY_TIMEOUT,
                      GRIMOIRE_RATE_LIMIT_PER_TOKEN=3, GRIMOIRE_RATE_LIMIT_PER_ADDRESS=4)
    try:
        with Client(limited.base) as grimoire:
            for _ in range(4):
                grimoire.games()  # this address's window spent: creating and joining meet 429s, sent again too
            match, ann, bob = two_seats(grimoire)
            assert [bob.view().version for _ in range(7)] == [0] * 7
            accepted = bob.submit(bob.legal_actions().actions[0])
            assert accepted.version == 1 and not accepted.duplicate
            assert [e.version for e in bob.history()] == [1]
    finally:
        limited.stop()
    assert sum(": 429; trying again" in r.getMessage() for r in caplog.records) >= 2


def test_the_async_client_plays_a_match_against_greedy_and_follows_it(stack):
    async def play():
        async with AsyncClient(stack.url) as grimoire:
            match = await grimoire.create_match(GAME, variant=VARIANT, bots=[Bot("greedy", seat=1)])
            me = await grimoire.join(match.id, "async", seat=0)
            played = 0
            async for notice in me.turns():
                if notice.your_turn:
                    played += (await me.play_turn(first_legal)) is not None
            final = await me.view()
            updates = [u async for u in me.follow(after=0)]  # a finished match: its whole log, then the end
            return played, final, updates

    played, final, updates = asyncio.run(play())
    assert final.status == "finished" and final.result is not None
    assert [u.version for u in updates] == list(range(1, final.version + 1))
    assert played == sum(1 for u in updates if u.seat == 0) > 0
    assert {u.seat for u in updates} == {0, 1}
    assert all(u.action is not None for u in updates if u.seat == 0)  # its own actions, and only those
    assert all(u.action is None for u in updates if u.seat == 1)
