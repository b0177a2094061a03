"""STUB: the snape board, to be written (see .board for the interface)."""

from service.engine import load_data

NAME = "snape"
SCHEMA = load_data(__package__, "snape.schema.json")


def new_board(rng, seats, mode, options):
    return {}


def arrive(board, seat, rng, player):
    return []


def turn_owner(board):
    return None


def can_play(board, seat):
    return True


def begin_turn(board, seat, rng):
    return []


def legal_actions(board, seat):
    raise NotImplementedError


def play(board, seat, action, rng):
    raise NotImplementedError


def view(board, seat):
    return {}


def determinise(board_view, seat, rng):
    raise NotImplementedError
