"""A whole bot: it plays its first legal action, against the service's greedy bot.

    python examples/bot_first_legal.py http://127.0.0.1:8000
    grimoire bot --url http://127.0.0.1:8000 --game spells-and-potions --against greedy \
        --strategy examples.bot_first_legal:first_legal      # the same strategy, run by grimoire bot
"""
import sys
from typing import Any

from grimoire.client import Bot, Client


def first_legal(view: dict[str, Any], legal_actions: list[dict[str, Any]]) -> dict[str, Any]:
    return legal_actions[0]  # a real bot reads its view (the game's JSON) and chooses


def main(url: str) -> None:
    with Client(url) as grimoire:
        match = grimoire.create_match("spells-and-potions", variant="practice-1", bots=[Bot("greedy", seat=1)])
        me = grimoire.join(match.id, "first legal", seat=0)  # keeps the seat's token
        for notice in me.turns():  # whenever the match waits on this seat, and once at its end
            if notice.your_turn:
                legal = me.legal_actions()
                me.submit(first_legal(me.view().view, legal.actions), version=legal.version)
        print(match.id, me.view().result)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000")
