"""A tiny game with hidden hands and simultaneous moves, for testing the
store and the APIs apart from any real game's rules.

Each of two seats is dealt three cards from 1-9; each round both seats play
one card face down at the same time; the higher card wins the round; after
three rounds the seat with more rounds wins.
"""

from service.engine import Game, Rng, Variant

SCHEMA = {
    "options": {"type": "object", "properties": {"rounds": {"type": "integer", "minimum": 1, "maximum": 3,
                                                            "default": 3}},
                "additionalProperties": False},
    "actions": {
        "play": {"type": "object", "properties": {"type": {"const": "play"}, "card": {"type": "integer"}},
                 "required": ["type", "card"], "additionalProperties": False},
    },
    "view": {
        "type": "object",
        "properties": {
            "round": {"type": "integer"},
            "hand": {"type": ["array", "null"], "items": {"type": "integer"}},
            "hand_sizes": {"type": "array", "items": {"type": "integer"}},
            "played": {"type": "array", "items": {"type": "boolean"}},
            "wins": {"type": "array", "items": {"type": "integer"}},
            "last": {"type": ["object", "null"], "title": "Round",
                     "properties": {"cards": {"type": "array", "items": {"type": "integer"}},
                                    "winner": {"type": ["integer", "null"]}},
                     "required": ["cards", "winner"], "additionalProperties": False},
        },
        "required": ["round", "hand", "hand_sizes", "played", "wins", "last"],
        "additionalProperties": False,
    },
}


class HighCard(Game):
    id = "high-card"
    title = "High Card"
    variants = (Variant("standard", "Standard", "Three rounds."),)
    summary = "Play your cards face down at the same time; the higher card wins the round."
    schema = SCHEMA

    def setup(self, options, seats, seed):
        rng = Rng(seed)
        deck = list(range(1, 10))
        rng.shuffle(deck)
        return {"rng": rng.state, "hands": [sorted(deck[:3]), sorted(deck[3:6])], "played": [None, None],
                "round": 1, "rounds": options["rounds"], "wins": [0, 0], "last": None}

    def legal_actions(self, state, seat):
        if seat not in self.to_act(state):
            return []
        return [{"type": "play", "card": c} for c in state["hands"][seat]]

    def play(self, state, seat, action):
        state["hands"][seat].remove(action["card"])
        state["played"][seat] = action["card"]
        events = [{"type": "played", "seat": seat}, {"type": "played_card", "card": action["card"], "audience": [seat]}]
        if None not in state["played"]:
            a, b = state["played"]
            winner = None if a == b else (0 if a > b else 1)
            if winner is not None:
                state["wins"][winner] += 1
            state["last"] = {"cards": [a, b], "winner": winner}
            state["played"] = [None, None]
            state["round"] += 1
            events.append({"type": "round", "cards": [a, b], "winner": winner})
        return events

    def view(self, state, seat):
        return {"round": state["round"], "hand": None if seat is None else list(state["hands"][seat]),
                "hand_sizes": [len(h) for h in state["hands"]], "played": [p is not None for p in state["played"]],
                "wins": list(state["wins"]), "last": state["last"]}

    def to_act(self, state):
        if self.result(state) is not None:
            return set()
        return {s for s in (0, 1) if state["played"][s] is None}

    def result(self, state):
        if state["round"] <= state["rounds"]:
            return None
        a, b = state["wins"]
        return {"winners": [0] if a > b else [1] if b > a else [], "scores": [a, b], "reason": "rounds played"}


GAME = HighCard()
