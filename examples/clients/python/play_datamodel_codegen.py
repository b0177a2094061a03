"""One match of each game over REST, with httpx and the pydantic models datamodel-code-generator makes.

    datamodel-codegen --input openapi/openapi.yaml --input-file-type openapi --output grimoire_models.py \
        (and the options in docs/api.md, "Generate a client")
    python play_datamodel_codegen.py http://127.0.0.1:8000

Each match: create it with random bots in the other seats, take the free seat, then until the match is
over read it and, when it waits on our seat, send back one of the legal actions as they came. Once per
match a write names a stale version on purpose: its answer parses as the generated ``Problem`` with
``ProblemCode.VERSION_CONFLICT``. Prints ``finished <game> <match id> <version>`` per match.
"""

import sys
import time
from typing import NoReturn

import httpx

from grimoire_models import (
    AddBot,
    AddBotLevel,
    CreateCastingStonesMatch,
    CreateCastingStonesMatchVariant,
    CreateMatch,
    CreateQuidditchMatch,
    CreateQuidditchMatchVariant,
    CreateSorcerersStoneMatch,
    CreateSorcerersStoneMatchVariant,
    CreateSpellsAndPotionsMatch,
    CreateSpellsAndPotionsMatchVariant,
    GameAction,
    JoinSeat,
    LegalActions,
    Match,
    Problem,
    ProblemCode,
    SeatJoined,
    SubmitAction,
)

BOT = [AddBot(level=AddBotLevel.RANDOM, seat=1)]
MATCHES = [
    CreateMatch(CreateCastingStonesMatch(game="casting-stones", variant=CreateCastingStonesMatchVariant.BASIC,
                                         bots=BOT)),
    CreateMatch(CreateQuidditchMatch(game="quidditch", variant=CreateQuidditchMatchVariant.STANDARD, bots=BOT)),
    CreateMatch(CreateSpellsAndPotionsMatch(game="spells-and-potions",
                                            variant=CreateSpellsAndPotionsMatchVariant.PRACTICE_1, bots=BOT)),
    CreateMatch(CreateSorcerersStoneMatch(game="sorcerers-stone", variant=CreateSorcerersStoneMatchVariant.SPROUT,
                                          bots=BOT)),
]
JSON = {"Content-Type": "application/json"}
DEADLINE = 300.0  # seconds a match may take


def fail(what: str, response: httpx.Response) -> NoReturn:
    raise SystemExit(f"{what}: {response.status_code} {response.text}")


def play(http: httpx.Client, new_match: CreateMatch) -> None:
    created = http.post("/v1/matches", content=new_match.model_dump_json(by_alias=True, exclude_none=True),
                        headers=JSON)
    if created.status_code != 201:
        fail("create the match", created)
    match_id = Match.model_validate_json(created.content).root.id
    answer = http.post(f"/v1/matches/{match_id}/seats", content=JoinSeat(name="datamodel-codegen", seat=0)
                       .model_dump_json(by_alias=True, exclude_none=True), headers=JSON)
    if answer.status_code != 201:
        fail("join", answer)
    joined = SeatJoined.model_validate_json(answer.content)
    me = {"Authorization": f"Bearer {joined.token}"}
    stale_write_refused = False
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        read = http.get(f"/v1/matches/{match_id}", headers=me)
        if read.status_code != 200:
            fail("read the match", read)
        match = Match.model_validate_json(read.content).root
        if match.status == "finished":
            if not stale_write_refused:
                raise SystemExit(f"{match_id}: finished before our stale write")
            print("finished", match.game, match.id, match.version, flush=True)
            return
        if joined.seat not in [seat.root for seat in match.to_act]:
            time.sleep(0.05)  # the bot is thinking: poll gently
            continue
        answer = http.get(f"/v1/matches/{match_id}/legal-actions", headers=me)
        if answer.status_code != 200:
            fail("read the legal actions", answer)
        legal = LegalActions.model_validate_json(answer.content).root
        if not legal.actions:  # the match moved on between the two reads
            continue
        chosen = legal.actions[legal.version % len(legal.actions)]
        body = SubmitAction(action=GameAction(chosen)).model_dump_json(by_alias=True, exclude_unset=True)
        if not stale_write_refused and legal.version > 0:
            stale = http.post(f"/v1/matches/{match_id}/actions", content=body,
                              headers={**me, "If-Match": f'"{legal.version - 1}"', **JSON})
            conflict = stale.status_code == 412 and Problem.model_validate_json(stale.content).code
            if conflict is not ProblemCode.VERSION_CONFLICT:
                fail("a stale write was not refused as a version conflict", stale)
            stale_write_refused = True
        sent = http.post(f"/v1/matches/{match_id}/actions", content=body,
                         headers={**me, "If-Match": f'"{legal.version}"', **JSON})
        if sent.status_code != 200:
            if Problem.model_validate_json(sent.content).code is not ProblemCode.VERSION_CONFLICT:
                fail("submit", sent)  # a conflict: a bot acted at the same time; read again
    raise SystemExit(f"{match_id}: not finished within {DEADLINE} s")


if __name__ == "__main__":
    with httpx.Client(base_url=sys.argv[1], timeout=30.0) as client:
        for match in MATCHES:
            play(client, match)
