"""``grimoire verify RECORD.json``: check a finished match's record offline, without Redis.

A record (service/store/records.py, docs/fairness.md) verifies when, in this order:

1. its seed is committed: the SHA-256 of ``revealed_seed`` is ``seed_commitment``;
2. the RNG seed follows from it: for ``commitment``, HMAC-SHA256 keyed with the revealed seed over the
   seats' entropies gives ``rng_seed``; for ``creator``, ``rng_seed`` is the revealed seed itself;
3. setting the match up from ``rng_seed`` with the record's game, rules version, variant, options and
   seats gives a state whose hash is ``initial_state_hash``;
4. every action, applied in order (versions 1, 2, ...) by its seat with that rules version, is legal and
   leaves a state whose chained hash is the action's ``state_hash``;
5. the last state's result is the record's ``result``.

The first check that fails is reported, naming the action (its version) where it failed: a changed
action, two swapped, an edited hash or another seed are each refused. A record forged whole -- another
seed with a commitment and hashes made up to match -- is consistent in itself; what gives it away is the
commitment the match published at creation, before any draw: pass the one you saw (``--commitment``),
and your own seat's entropy (``--entropy SEAT=TEXT``), and they are checked too. Exit codes: 0 verified, 1 not
verified, 2 the record cannot be checked here (not a record, a match still in progress, or a rules
version this installation does not have).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

from service.engine import Game, RuleError, seeds
from service.engine.versions import rules_by_version

VERIFIED, NOT_VERIFIED, UNUSABLE = 0, 1, 2


class Unusable(Exception):
    """The record cannot be checked by this installation (exit 2); not a verdict on the match."""


@dataclass
class Verdict:
    """What :func:`verify_record` found: ``ok``, the checks passed, and the first failure if any."""

    ok: bool
    match_id: str
    game: str
    rules_version: str
    actions: int
    passed: list[str] = field(default_factory=list)
    #: The version of the action that failed (0: the set-up; None: the record as a whole), and why.
    failed_at: int | None = None
    failure: str | None = None

    def summary(self) -> str:
        head = f"{self.game} match {self.match_id} (rules version {self.rules_version}, {self.actions} actions)"
        if self.ok:
            return f"verified: {head}\n" + "".join(f"  ok  {check}\n" for check in self.passed)
        where = ("the record" if self.failed_at is None else "the set-up (version 0)" if self.failed_at == 0
                 else f"action {self.failed_at}")
        return (f"NOT verified: {head}\n" + "".join(f"  ok  {check}\n" for check in self.passed)
                + f"  FAILED at {where}: {self.failure}\n")


def _canonical(data: Any) -> str:
    return seeds.dumps(data)


def _get(record: dict, key: str, kind: type | tuple) -> Any:
    if key not in record:
        raise Unusable(f"not a match record: no {key!r}")
    value = record[key]
    if not isinstance(value, kind):
        raise Unusable(f"not a match record: {key!r} is not {getattr(kind, '__name__', kind)}")
    return value


def verify_record(record: Any, rules: dict[tuple[str, str], Game] | None = None, *, commitment: str | None = None,
                  entropies: dict[int, str] | None = None) -> Verdict:
    """Check ``record`` (parsed JSON); raise :class:`Unusable` when it cannot be checked here.

    ``rules``: the (game id, rules version) -> game this installation has; by default every hosted
    game and the older versions installed beside them (service/engine/versions.py). ``commitment``: the
    seed commitment the match published at creation, as the caller saw it; ``entropies``: seat -> the
    entropy that seat brought, as its player knows it. Both, when given, must be the record's."""
    if not isinstance(record, dict) or record.get("format") != seeds.RECORD_FORMAT:
        raise Unusable(f"not a match record of format {seeds.RECORD_FORMAT!r}")
    if record.get("status") != "finished" or record.get("disclosure") != "everything":
        raise Unusable("the match is not over: its record withholds the seed and hidden actions until the end")
    if rules is None:
        from service.games import all_games

        rules = rules_by_version(all_games())
    game_id, version = _get(record, "game", str), _get(record, "rules_version", str)
    game = rules.get((game_id, version))
    if game is None:
        have = sorted(v for g, v in rules if g == game_id)
        raise Unusable(f"{game_id} rules version {version} is not installed here (installed: "
                       f"{', '.join(have) or 'none'}); see docs/operations.md, 'Rolling out a rules change'")
    actions = _get(record, "actions", list)
    verdict = Verdict(ok=False, match_id=str(record.get("match_id")), game=game_id, rules_version=version,
                      actions=len(actions))

    def fail(at: int | None, why: str) -> Verdict:
        verdict.failed_at, verdict.failure = at, why
        return verdict

    source = record.get("seed_source")
    if source not in ("commitment", "creator"):
        return fail(None, f"seed source {source!r}: the match predates seed commitments, so nothing proves "
                          "its seed (only 'commitment' and 'creator' records can be verified)")
    revealed, committed = record.get("revealed_seed"), record.get("seed_commitment")
    if not isinstance(revealed, str) or not isinstance(committed, str):
        return fail(0, "the record lacks the revealed seed or its commitment")
    if commitment is not None:
        if commitment.strip().lower() != committed:
            return fail(0, "the record's seed commitment is not the one the match published when you saw it")
        verdict.passed.append("the seed commitment is the one you saw at creation")
    if seeds.commitment(revealed) != committed:
        return fail(0, "the revealed seed is not the one committed to: its SHA-256 is not seed_commitment")
    verdict.passed.append("the revealed seed matches the commitment published at creation")

    rng_seed = record.get("rng_seed")
    if not isinstance(rng_seed, str) or not rng_seed.isdigit():
        return fail(0, "rng_seed is not a decimal string")
    if source == "commitment":
        listed = record.get("entropies")
        seats = record.get("seats")
        if (not isinstance(listed, list) or not isinstance(seats, int)
                or [e.get("seat") if isinstance(e, dict) else None for e in listed] != list(range(seats))
                or not all(isinstance(e.get("entropy"), str) for e in listed)):
            return fail(0, "the seat entropies are not listed once per seat, in seat order")
        for seat, mine in sorted((entropies or {}).items()):
            if not 0 <= seat < len(listed) or listed[seat]["entropy"] != mine:
                return fail(0, f"seat {seat}'s entropy in the record is not the one you gave")
            verdict.passed.append(f"seat {seat}'s entropy is the one you gave")
        derived = seeds.derive_rng_seed(revealed, [e["entropy"] for e in listed])
        if str(derived) != rng_seed:
            return fail(0, "rng_seed is not the HMAC-SHA256 of the revealed seed over the seat entropies")
        verdict.passed.append(f"the RNG seed derives from the revealed seed and the {len(listed)} seat entropies")
    else:
        if rng_seed != revealed:
            return fail(0, "a creator's seed is the RNG seed itself, and rng_seed is not the revealed seed")
        verdict.passed.append("the RNG seed is the creator's (seed_source creator: chosen, not random)")

    options, seats = record.get("options"), record.get("seats")
    if not isinstance(options, dict) or not isinstance(seats, int):
        raise Unusable("not a match record: options or seats missing")
    try:
        state = game.setup(options, seats, int(rng_seed))
    except Exception as error:  # options a game refuses: the record is not one of its matches
        return fail(0, f"the game cannot be set up with the record's options and seats ({error})")
    chained = seeds.state_hash(revealed, committed, _canonical(state).encode())
    if record.get("initial_state_hash") != chained:
        return fail(0, "the set-up's state hash is not initial_state_hash: the seed, options or set-up differ")
    verdict.passed.append("the set-up's state hash matches")

    for expected, entry in enumerate(actions, start=1):
        if not isinstance(entry, dict) or entry.get("version") != expected:
            found = entry.get("version") if isinstance(entry, dict) else entry
            return fail(expected, f"action {expected} is missing or out of order (found version {found!r})")
        if not isinstance(entry.get("action"), dict) or not isinstance(entry.get("seat"), int):
            return fail(expected, "the action or its seat is missing")
        try:
            state, _ = game.apply(state, entry["seat"], entry["action"])
        except RuleError as error:
            return fail(expected, f"the action of seat {entry['seat']} is refused by the rules ({error.code}): "
                                  "it was changed, moved or never legal here")
        chained = seeds.state_hash(revealed, chained, _canonical(state).encode())
        if entry.get("state_hash") != chained:
            return fail(expected, f"the state after the action of seat {entry['seat']} does not hash to its "
                                  "state_hash: an action, their order or a hash was changed")
    if actions:
        verdict.passed.append(f"all {len(actions)} actions are legal and every state hash matches")

    result = game.result(state)
    if result is None:
        return fail(len(actions), "the match is not over after the last action, yet the record says it is")
    if _canonical(result) != _canonical(record.get("result")):
        return fail(len(actions), "the result re-computed from the actions is not the record's result")
    verdict.passed.append(f"the result matches: {result.get('reason', result)}")
    verdict.ok = True
    return verdict


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("record", help="the record's JSON file (GET /v1/matches/{id}/record), or - for stdin")
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    parser.add_argument("--commitment", help="the seed_commitment the match showed you at creation: checked too")
    parser.add_argument("--entropy", action="append", default=[], metavar="SEAT=TEXT",
                        help="the entropy your seat brought (repeatable): checked too")


def run(args: argparse.Namespace) -> int:
    """``grimoire verify``: print the verdict; return the exit code."""
    try:
        text = sys.stdin.read() if args.record == "-" else open(args.record, encoding="utf-8").read()
    except OSError as error:
        print(f"grimoire verify: cannot read {args.record}: {error.strerror}", file=sys.stderr)
        return UNUSABLE
    known = {}
    for given in args.entropy:
        seat, sep, entropy = given.partition("=")
        if not sep or not seat.isdigit():
            print(f"grimoire verify: --entropy takes SEAT=TEXT, not {given!r}", file=sys.stderr)
            return UNUSABLE
        known[int(seat)] = entropy
    try:
        verdict = verify_record(json.loads(text), commitment=args.commitment, entropies=known)
    except json.JSONDecodeError as error:
        print(f"grimoire verify: {args.record} is not JSON: {error}", file=sys.stderr)
        return UNUSABLE
    except Unusable as error:
        print(f"grimoire verify: cannot verify {args.record}: {error}", file=sys.stderr)
        return UNUSABLE
    print(json.dumps(asdict(verdict), indent=1) if args.json else verdict.summary(), end="\n" if args.json else "")
    return VERIFIED if verdict.ok else NOT_VERIFIED
