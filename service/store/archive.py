"""A match's action log, compacted: recent entries in a stream, older ones compressed.

Streams cost Redis about 280 bytes per entry of a typical game; a whole
in-progress match would weigh 20 to 40 KB. So every ``every`` accepted actions
(and when the match ends), the entries older than the ``keep`` newest are
moved out of the stream ``<prefix>:m:{ID}:log`` into one compressed string,
``<prefix>:m:{ID}:log:z`` = ``b"<last archived version>:" + zlib(JSON list of
[version, fields])``; a whole log compresses about 15 to 1.

The move is one atomic script (``compact.lua``): it checks that the archive
still ends where this process read it, writes the new archive with the log's
TTL, and rebuilds the stream with only the entries after the archived version. Entries are never in
neither place; they may briefly be in both, which readers handle.

Once a log outgrows DEFLATE's 32 KB window, a compaction *appends* to the archive (:func:`encode`)
instead of compressing the whole log again, which cost a long match a level-6 compression of all of it
every ``every`` actions: the encoding's CPU grew with the match (``tests/benchmarks/bench_archive.py``:
appending is 2.6 to 3.2 times cheaper for matches of 300 to 600 actions, issue 18). The archive stays one
ordinary zlib stream, readable by ``zlib.decompress`` as every release wrote and read it: its
compressed blocks end on a byte boundary, and it closes with a stored block holding the list's last
``]`` and the checksum (:data:`_CLOSE`). To append, that close is cut off, the new entries are
compressed against the last 32 KB of the log (what DEFLATE's window would hold, so they compress
nearly as well) and a new close is written. An archive that does not end that way (written by an older
release) is compressed whole once. When the match ends, it is compressed whole: a finished archive is
as small as before; an appended one is up to about 10% larger.

Readers go through :func:`entries`: the stream alone when it covers the range
asked for (the usual case: followers and clients read recent versions), else
the archive then the stream, retrying when a compaction moved entries between
the two reads (versions are contiguous, so a gap shows it). :func:`log_update`
reads a raw entry; history, live updates and replays all go through it.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from redis.client import NEVER_DECODE

from service.engine import events_for

if TYPE_CHECKING:
    from .matches import MatchStore

Entry = tuple[str, dict[str, str]]  # (stream entry id "<version>-0", fields), as XRANGE returns them


@dataclass(frozen=True)
class Update:
    """One accepted action as logged, unfiltered."""

    match_id: str
    version: int
    seat: int
    action: dict[str, Any]
    events: list[dict[str, Any]]
    status: str
    to_act: list[int]
    at: int
    auto: dict[str, Any] | None  # a turn timer's record (public), see MatchStore.submit
    #: what was derived from this update once for every follower of the process (see :meth:`shared`)
    _shared: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def for_seat(self, seat: int | None) -> dict[str, Any]:
        """What ``seat`` (None: a spectator) may see of this update: one dict per seat, shared; don't mutate it."""
        return self.shared(("view", seat), lambda: {
            "match_id": self.match_id, "version": self.version, "seat": self.seat,
            "action": self.action if seat == self.seat else None,
            "events": events_for(self.events, seat),
            "status": self.status, "to_act": self.to_act if self.status == "active" else [],
            "at": self.at, "auto": self.auto,
        })

    def shared(self, key: Any, make: Callable[[], Any]) -> Any:
        """``make()``, computed once per ``key`` for this update and handed to every caller after.

        A thousand followers of a match each send one update: filtering and encoding it per
        follower was most of the fan-out's CPU. The key must name everything the value depends
        on beyond the update itself (the seat, the wire format), or one seat gets another's view.
        """
        try:
            return self._shared[key]
        except KeyError:
            value = self._shared[key] = make()
            return value


def published_update(match_id: str, data: dict[str, Any]) -> Update:
    """The update commit.lua publishes (a log entry's fields, already decoded), read into an :class:`Update`."""
    return Update(
        match_id=match_id, version=int(data["version"]), seat=int(data["seat"]), action=data["action"],
        events=data["events"], status=data["status"], to_act=data["to_act"], at=int(data["at"]),
        auto=data.get("auto"),
    )


def log_update(match_id: str, entry_id: str, fields: dict[str, str]) -> Update:
    """A raw log entry (``MatchStore.log_entries``) read into an :class:`Update`."""
    return Update(
        match_id=match_id, version=int(entry_id.split("-")[0]), seat=int(fields["seat"]),
        action=json.loads(fields["action"]), events=json.loads(fields["events"]),
        status=fields.get("status", "active"), to_act=json.loads(fields.get("to_act", "[]")), at=int(fields["at"]),
        auto=json.loads(fields["auto"]) if "auto" in fields else None,
    )


def _version(entry_id: str) -> int:
    return int(entry_id.split("-")[0])


def decode(raw: bytes | None) -> tuple[int, list[Entry]]:
    """The last archived version and the archived entries of an archive value."""
    if not raw:
        return 0, []
    head, _, body = raw.partition(b":")
    return int(head), [(f"{v}-0", fields) for v, fields in json.loads(zlib.decompress(body))]


#: How an appendable archive ends: a final stored block (header byte, LEN 1, NLEN) holding ``]``; its
#: Adler-32 checksum follows.
_CLOSE = b"\x01\x01\x00\xfe\xff]"
_TAIL = len(_CLOSE) + 4
_WINDOW = 32 * 1024  # DEFLATE's own: no match reaches further back
_LEVEL = 6


def encode(upto: int, entries: list[Entry], previous: bytes | None = None, whole: bool = False) -> bytes:
    """An archive ending at ``upto``: ``previous`` (an archive value) followed by ``entries``.

    The new entries' compressed blocks are appended to ``previous`` (see the module docstring), unless
    ``whole`` (the match is over), the log is shorter than DEFLATE's window, or ``previous`` does not end
    as this module closes an archive: then the whole log is compressed again, as one.
    """
    added = json.dumps([[_version(i), f] for i, f in entries], separators=(",", ":")).encode()
    body = previous.partition(b":")[2] if previous else b""
    old = zlib.decompress(body) if body else b""
    if not entries:
        text = old or added
    elif len(old) > 2:
        text = old[:-1] + b"," + added[1:]
    else:
        text = added
    head = f"{upto}:".encode()
    if whole:
        return head + zlib.compress(text, _LEVEL)
    if len(old) >= _WINDOW and body[-_TAIL:-4] == _CLOSE and old.endswith(b"]"):
        kept, new = body[:-_TAIL], text[len(old) - 1:-1]
        compressor = zlib.compressobj(_LEVEL, zlib.DEFLATED, -15, zdict=old[len(old) - 1 - _WINDOW:-1])
    else:
        # Compressed whole, closed so that a later compaction may append. A log shorter than the window would
        # be its own dictionary: appending to it costs what compressing it whole does, and whole is smaller.
        kept, new = b"", text[:-1]
        compressor = zlib.compressobj(_LEVEL, zlib.DEFLATED, 15)
    blocks = compressor.compress(new) + compressor.flush(zlib.Z_SYNC_FLUSH)
    checksum = zlib.adler32(text).to_bytes(4, "big")
    return b"".join((head, kept, blocks, _CLOSE, checksum))


async def read_raw(store: "MatchStore", match_id: str) -> bytes | None:
    return await store.redis.execute_command("GET", store.archive_key(match_id), **{NEVER_DECODE: []})


async def entries(store: "MatchStore", match_id: str, after: int, limit: int) -> list[Entry]:
    """Log entries with versions after ``after``, at most ``limit``, oldest first."""
    recent = await store.redis.xrange(store.log_key(match_id), f"({after}-0", "+", count=limit)
    if not recent or _version(recent[0][0]) == after + 1:
        return recent
    for _ in range(8):
        raw = await read_raw(store, match_id)
        if raw is None:
            return recent  # no archive: the stream is all there is
        upto, archived = decode(raw)
        found = [e for e in archived if _version(e[0]) > after][:limit]
        if len(found) == limit:
            return found
        start = max(after, upto)
        rest = await store.redis.xrange(store.log_key(match_id), f"({start}-0", "+", count=limit - len(found))
        if rest and _version(rest[0][0]) != start + 1:
            continue  # compacted between the two reads: read the archive again
        return found + rest
    raise RuntimeError(f"the log of match {match_id} kept moving while being read")


#: Reads of the archive one compaction makes while other compactions of the match keep moving it.
COMPACT_ATTEMPTS = 4


def due(store: "MatchStore", version: int, finished: bool) -> bool:
    """Whether an accepted action at ``version`` calls for a compaction (:func:`compact`)."""
    return store.compact_every > 0 and (version % store.compact_every == 0 or finished)


async def compact(store: "MatchStore", match_id: str, version: int, finished: bool) -> bool:
    """Archive the entries older than the ``keep`` newest if this version calls for it.

    Called after an accepted action at ``version``. Returns whether the archive moved.
    A concurrent compaction of the same match wins or loses cleanly (nothing is lost).
    """
    if not due(store, version, finished):
        return False
    through = version - store.keep_recent
    # Another compaction of the match may move the archive between the read and the script (the
    # service runs them in the background, so two of one match overlap): read again, and stop once
    # the archive reaches ``through``. Without the retry a match's last compaction could be lost.
    for _ in range(COMPACT_ATTEMPTS):
        raw = await read_raw(store, match_id)
        upto = int(raw.partition(b":")[0]) if raw else 0
        if through <= upto:
            return False
        moving = await store.redis.xrange(store.log_key(match_id), f"({upto}-0", f"{through}-0")
        if not moving or _version(moving[-1][0]) != through:
            return False  # the log is gone, or does not reach this version
        if _version(moving[0][0]) != upto + 1:
            continue  # compacted between the two reads
        blob = encode(through, moving, raw, whole=finished)
        if await store._compact(keys=[store.log_key(match_id), store.archive_key(match_id)],
                                args=[upto, through, blob]):
            return True
    return False
