"""Random sequences thrown at every game through the real store (real Redis).

A hypothesis state machine per game mixes legal actions with illegal ones,
actions for a seat that is not to act, stale versions, forged tokens and
malformed payloads. Every refusal must be a typed error with a machine code,
and must leave the stored match, byte for byte, as it was.
"""

import asyncio
import json
import os

import pytest
import redis.asyncio as aioredis
from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from service.engine import BOARD_SEAT, RuleError
from service.games import all_games
from service.store import MatchStore, StoreError

EXAMPLES = int(os.environ.get("GRIMOIRE_STATE_MACHINE_EXAMPLES", "8"))
STEPS = int(os.environ.get("GRIMOIRE_STATE_MACHINE_STEPS", "40"))

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def machine_for(game, redis_url: str, prefix: str):
    class StoreMachine(RuleBasedStateMachine):
        """One match of ``game``, driven through MatchStore.submit."""

        @initialize(seed=st.integers(0, 2**32), seats=st.integers(game.min_seats, game.max_seats),
                    variant=st.sampled_from(game.variant_ids()))
        def start(self, seed, seats, variant):
            self.loop = asyncio.new_event_loop()
            self.client = aioredis.Redis.from_url(redis_url, decode_responses=True)
            self.store = MatchStore(self.client, {game.id: game}, prefix=prefix)
            match = self.run(self.store.create(game.id, variant=variant, seats=seats, seed=seed))
            self.tokens = [self.run(self.store.join(match.id, f"P{i}"))[2] for i in range(seats)]
            self.match_id = match.id
            self.accepted = 0

        def teardown(self):
            if hasattr(self, "loop"):
                self.run(self.client.aclose())
                self.loop.close()

        def run(self, coroutine):
            return self.loop.run_until_complete(coroutine)

        def stored(self):
            record = self.run(self.client.hgetall(self.store.key(self.match_id)))
            log = self.run(self.store.log_entries(self.match_id, after=0, limit=10**6))
            return json.dumps([record, log], sort_keys=True)

        def current(self):
            return self.run(self.store.get(self.match_id))

        def refused(self, token, version, action, codes):
            before = self.stored()
            with pytest.raises((RuleError, StoreError)) as error:
                self.run(self.store.submit(self.match_id, token, version, action))
            assert error.value.code in codes, (error.value.code, error.value.message)
            assert isinstance(error.value.message, str) and error.value.message
            assert self.stored() == before, "a refused action changed the stored match"

        def active(self):
            return self.current().status == "active"

        @precondition(lambda self: self.active())
        @rule(data=st.data())
        def legal_action(self, data):
            match = self.current()
            seat = data.draw(st.sampled_from(match.acting))
            action = data.draw(st.sampled_from(match.legal_actions(seat)))
            if seat == BOARD_SEAT:  # the board's own move (McGonagall's chess): played as the bot workers play it
                submitted = self.store.submit(self.match_id, None, match.version, action, acting_seat=BOARD_SEAT)
            else:
                submitted = self.store.submit(self.match_id, self.tokens[seat], match.version, action)
            accepted = self.run(submitted)
            assert accepted.version == match.version + 1
            self.accepted += 1

        @precondition(lambda self: self.active())
        @rule(data=st.data(), offset=st.integers(1, 5))
        def stale_version(self, data, offset):
            match = self.current()
            seat = data.draw(st.sampled_from(match.acting))
            action = data.draw(st.sampled_from(match.legal_actions(seat)))
            version = data.draw(st.sampled_from([match.version - offset, match.version + offset]))
            self.refused(self.tokens[seat], version, action, {"version_conflict"})

        @precondition(lambda self: self.active() and len(self.current().acting) < len(self.tokens))
        @rule(data=st.data())
        def wrong_seat(self, data):
            match = self.current()
            idle = data.draw(st.sampled_from([s for s in range(len(self.tokens)) if s not in match.acting]))
            acting = data.draw(st.sampled_from(match.acting))
            action = data.draw(st.sampled_from(match.legal_actions(acting)))
            self.refused(self.tokens[idle], match.version, action, {"not_your_turn", "illegal_action"})

        @rule(payload=json_values)
        def malformed_payload(self, payload):
            match = self.current()
            codes = {"malformed_action", "illegal_action", "not_your_turn", "match_finished"}
            if isinstance(payload, dict) and payload.get("type") in game.action_schemas:
                return  # could be a real action; the other rules cover those
            self.refused(self.tokens[0], match.version, payload, codes)

        @precondition(lambda self: self.active())
        @rule(data=st.data(), junk=json_values)
        def illegal_variation(self, data, junk):
            """A legal action with one field replaced by junk: refused unless it is still legal."""
            match = self.current()
            seat = data.draw(st.sampled_from(match.acting))
            action = dict(data.draw(st.sampled_from(match.legal_actions(seat))))
            fields = [k for k in action if k != "type"]
            if not fields:
                return
            action[data.draw(st.sampled_from(fields))] = junk
            if action in match.legal_actions(seat):
                return
            self.refused(self.tokens[seat], match.version, action, {"malformed_action", "illegal_action"})

        @rule(token=st.sampled_from(["", "gt.nope.x", "Bearer", "gt_forged"]))
        def forged_token(self, token):
            match = self.current()
            self.refused(token, match.version, {"type": "pass"}, {"invalid_token"})

        @invariant()
        def version_counts_accepted_actions(self):
            if hasattr(self, "match_id"):
                match = self.current()
                assert match.version == self.accepted
                log = self.run(self.store.log_entries(self.match_id, after=0, limit=10**6))
                assert [int(i.split("-")[0]) for i, _ in log] == list(range(1, self.accepted + 1))

    StoreMachine.__name__ = f"StoreMachine_{game.id.replace('-', '_')}"
    return StoreMachine


@pytest.mark.parametrize("game", list(all_games().values()), ids=lambda g: g.id)
def test_refusals_never_change_the_stored_match(game, redis_url, key_prefix):
    machine = machine_for(game, redis_url, key_prefix)
    machine.TestCase.settings = settings(max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None,
                                         suppress_health_check=list(HealthCheck))
    machine.TestCase("runTest").runTest()
