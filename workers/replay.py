"""Re-applying a finished match's action log to its seed (pure: no I/O).

The store keeps the current state and the action log (seat, action, events,
at, status, to_act per entry). A replay re-computes every state from the seed
and checks what was stored against it: each entry's events, ``to_act`` and
status, and the final state. A mismatch is reported in the replay, never
hidden.

A replay for seat A is the sequence of A's views, each with the events A saw
between them and A's own actions only: nothing A could not see at that
moment. The spectator replay (``seat`` None) shows everything -- every seat's
view, every event and action -- which is why it exists only for finished
matches, and it says so (``disclosure: "everything"``).
"""

from __future__ import annotations

import json
from typing import Any

from service.engine import Game, RuleError, events_for


def _norm(data: Any) -> Any:
    return json.loads(json.dumps(data, sort_keys=True))


def build_replay(game: Game, *, match_id: str, options: dict, seats: int, seed: int, entries: list[dict],
                 final_state: dict, seat: int | None) -> dict[str, Any]:
    """The replay of a match for ``seat`` (None: the spectator, everything shown).

    ``entries`` are the log entries in order: ``{"version", "seat", "action", "events",
    "status", "to_act", "at"}``, and ``"auto"``, the record of a default action the
    service played for a late seat (turn timers), where there is one.
    """
    state = game.setup(options, seats, seed)
    frames = [_frame(game, state, seat, seats, version=0, entry=None, events=[])]
    mismatches: list[dict[str, Any]] = []
    for expected_version, entry in enumerate(entries, start=1):
        version = entry["version"]
        if version != expected_version:
            mismatches.append({"version": version, "what": "log",
                               "detail": f"expected log entry {expected_version}, found {version}"})
            break
        try:
            state, events = game.apply(state, entry["seat"], entry["action"])
        except RuleError as error:
            mismatches.append({"version": version, "what": "action",
                               "detail": f"the logged action is refused on the re-computed state: {error.code}"})
            break
        if _norm(events) != _norm(entry["events"]):
            mismatches.append({"version": version, "what": "events", "detail": "stored events differ"})
        if sorted(game.to_act(state)) != sorted(entry["to_act"]):
            mismatches.append({"version": version, "what": "to_act", "detail": "stored to_act differs"})
        status = "finished" if game.result(state) is not None else "active"
        if status != entry["status"]:
            mismatches.append({"version": version, "what": "status",
                               "detail": f"stored status {entry['status']}, re-computed {status}"})
        frames.append(_frame(game, state, seat, seats, version=version, entry=entry, events=events))
    else:
        if _norm(state) != _norm(final_state):
            mismatches.append({"version": len(entries), "what": "state",
                               "detail": "the stored state differs from the re-computed one"})
    everything = seat is None
    return {
        "match_id": match_id,
        "game": game.id,
        "seat": seat,
        "disclosure": "everything" if everything else "seat",
        "note": ("The match is over: this spectator replay shows every seat's view, every event and every "
                 "action." if everything else
                 f"What seat {seat} could see at each moment: its views, the events it saw and its own actions."),
        "seed": seed if everything else None,
        "verified": not mismatches,
        "mismatches": mismatches,
        "frames": frames,
    }


def _frame(game: Game, state: dict, seat: int | None, seats: int, *, version: int, entry: dict | None,
           events: list) -> dict[str, Any]:
    acting = entry["seat"] if entry else None
    frame = {
        "version": version,
        "seat": acting,
        "action": entry["action"] if entry and (seat is None or acting == seat) else None,
        "events": events if seat is None else events_for(events, seat),
        "view": game.view(state, seat),
        "to_act": sorted(game.to_act(state)),
        "auto": entry.get("auto") if entry else None,
    }
    if seat is None:
        frame["views"] = [game.view(state, s) for s in range(seats)]
    return frame
