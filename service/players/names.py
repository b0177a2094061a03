"""Player names: what a name may be, and the key that makes two names "the same" (impersonation).

A name is 2 to 24 characters of letters, digits, spaces and ``_ - . '``, with no
leading, trailing or doubled space. Two names are the same when their NFKC
case-folded forms with spaces, ``_``, ``-``, ``.`` and ``'`` removed are equal:
"Harry Potter", "harry_potter" and "ＨａｒｒｙＰｏｔｔｅｒ" (full-width) are one name,
so nobody can take a name that reads as another player's.
"""

from __future__ import annotations

import re
import unicodedata

MIN_LENGTH = 2
MAX_LENGTH = 24
_SEPARATORS = " _-.'"
#: The rules below as one regular expression, for the API contracts (a valid name matches it; the code's checks
#: are the reference: a name also has a letter or digit, and its length is counted after NFC normalisation).
NAME_PATTERN = r"^[^\W_][\w.'-]*( [\w.'-]+)*$"
_ALLOWED = re.compile(r"^[\w .'-]+$")  # \w: letters and digits of every script, and "_"


class InvalidName(ValueError):
    """Why a name is refused: a sentence for the person who chose it."""


def check_name(name: object) -> str:
    """``name`` in its canonical form (NFC, as typed otherwise); raises InvalidName."""
    if not isinstance(name, str):
        raise InvalidName("A name is a string.")
    name = unicodedata.normalize("NFC", name)
    if not MIN_LENGTH <= len(name) <= MAX_LENGTH:
        raise InvalidName(f"A name is {MIN_LENGTH} to {MAX_LENGTH} characters long.")
    if not _ALLOWED.match(name) or any(unicodedata.category(c).startswith("C") for c in name):
        raise InvalidName("A name holds letters, digits, spaces and _ - . ' only.")
    if name != name.strip() or "  " in name:
        raise InvalidName("A name has no leading, trailing or doubled spaces.")
    if not any(c.isalnum() for c in name):
        raise InvalidName("A name holds at least one letter or digit.")
    return name


def name_key(name: str) -> str:
    """The form two names share when one would pass for the other."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return "".join(c for c in folded if c not in _SEPARATORS)
