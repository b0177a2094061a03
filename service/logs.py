"""Structured logs: one JSON object per line, carrying the request id.

Every HTTP request gets a request id: the caller's ``X-Request-ID`` when it is
a sane one (1 to 128 of ``A-Z a-z 0-9 - _ . : /``), else a new random one. It
is echoed in the response's ``X-Request-ID`` header, held in the
:data:`request_id` context variable for the request's lifetime, and written
into every log line emitted meanwhile.

Jobs started by a request carry it on: pass :func:`job_meta` as an RQ job's
``meta`` when enqueuing (``queue.enqueue(f, ..., meta=job_meta())``), and run
the job inside :func:`job_context` (or use :class:`RequestIdJob` as the
worker's ``job_class``): the job's log lines then carry the same id.

Secrets stay out: a log line never holds a game state or a view (only ids,
codes and timings are logged), and the formatter masks anything shaped like a
seat token or a bearer credential, wherever it appears.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import re
import sys
import time
import traceback
import uuid
from typing import Any, Iterator

from service import wire

#: The id of the request (or of the request that started the job) being served.
request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("grimoire_request_id", default=None)

REQUEST_ID_HEADER = "x-request-id"
META_KEY = "request_id"
_VALID_ID = re.compile(r"^[A-Za-z0-9\-_.:/]{1,128}$")
_SECRETS = [
    (re.compile(r"gt\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]{8,}"), "gt.***"),  # seat tokens
    (re.compile(r"(?i)(bearer\s+)[^\s,;\"']+"), r"\1***"),
    (re.compile(r"(?i)(redis(?:s)?://[^:/@\s]*:)[^@\s]+@"), r"\1***@"),  # passwords in Redis URLs
]
# LogRecord attributes that are not "extra" fields.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}


def _stamp_request_id(factory):
    """Every log record carries the request id current when it was made (even if formatted later)."""
    if getattr(factory, "_grimoire", False):
        return factory

    def make(*args, **kwargs):
        record = factory(*args, **kwargs)
        if not hasattr(record, "request_id"):
            record.request_id = request_id.get()
        return record

    make._grimoire = True
    return make


logging.setLogRecordFactory(_stamp_request_id(logging.getLogRecordFactory()))


def new_request_id() -> str:
    return uuid.uuid4().hex


def accept_request_id(value: str | None) -> str:
    """The caller's request id if it is a sane one, else a new one."""
    if value and _VALID_ID.match(value):
        return value
    return new_request_id()


def redact(text: str) -> str:
    """``text`` with seat tokens, bearer credentials and Redis passwords masked."""
    # Every secret above holds one of these; most text holds none, and looking costs a tenth of the
    # three substitutions (each access line redacts its message, method and path). ASCII only: the
    # patterns' case-insensitive match also takes a few other letters as i and s (U+0130, U+0131, U+017F).
    if text.isascii():
        lowered = text.lower()
        if "gt." not in lowered and "bearer" not in lowered and "redis" not in lowered:
            return text
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``ts``, ``level``, ``logger``, ``msg``, ``request_id``, extras."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": redact(record.getMessage()),
        }
        rid = getattr(record, "request_id", None) or request_id.get()
        if rid:
            entry["request_id"] = rid
        for key, value in record.__dict__.items():
            if key not in _STANDARD and key not in entry and key != "request_id" and not key.startswith("_"):
                entry[key] = value if isinstance(value, (int, float, bool)) or value is None else redact(str(value))
        if record.exc_info:
            entry["exc"] = redact("".join(traceback.format_exception(*record.exc_info)))
        return wire.dumps(entry).decode("utf-8")


class TextFormatter(logging.Formatter):
    """The classic one-line format, with the request id and secrets masked (for a developer's terminal)."""

    def __init__(self):
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        rid = getattr(record, "request_id", None) or request_id.get()
        return redact(f"{text} [{rid}]" if rid else text)


def configure_logging(fmt: str = "json", level: str = "INFO") -> None:
    """Send every log line (ours, uvicorn's, RQ's) to stderr in ``fmt``: ``json`` or ``text``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(TextFormatter() if fmt == "text" else JsonFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "rq.worker"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    logging.getLogger("uvicorn.access").disabled = True  # the access log below has the route and request id
    # Neither format writes where a line was logged from, nor its thread or process: skip finding
    # them, a quarter of an access line's cost (the logging HOWTO's "Optimization" section).
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False


# -- HTTP -----------------------------------------------------------------------

access_log = logging.getLogger("grimoire.access")


class RequestIdMiddleware:
    """Give each HTTP request and websocket a request id; log one access line per HTTP request."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers", ()))
        rid = accept_request_id(headers.get(REQUEST_ID_HEADER.encode(), b"").decode("latin-1"))
        token = request_id.set(rid)
        started = time.perf_counter()
        status = 0

        async def send_with_id(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message = {**message, "headers": [*message.get("headers", []),
                                                  (REQUEST_ID_HEADER.encode(), rid.encode())]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            if scope["type"] == "http":
                access_log.info("%s %s %s", scope["method"], scope["path"], status, extra={
                    "method": scope["method"], "path": scope["path"], "status": status,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 2)})
            request_id.reset(token)


# -- jobs -----------------------------------------------------------------------

def job_meta(meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """``meta`` for an RQ job enqueued now, with the current request id in it."""
    meta = dict(meta or {})
    rid = request_id.get()
    if rid and META_KEY not in meta:
        meta[META_KEY] = rid
    return meta


@contextlib.contextmanager
def job_context(job: Any) -> Iterator[str]:
    """Run a job's body under the request id it was enqueued with (a new one if none)."""
    meta = getattr(job, "meta", None) or {}
    rid = meta.get(META_KEY) or new_request_id()
    token = request_id.set(rid)
    try:
        yield rid
    finally:
        request_id.reset(token)


def _rq_job_class():
    from rq.job import Job

    class RequestIdJob(Job):
        """An RQ job whose body runs under the request id in its meta: ``Worker(..., job_class=RequestIdJob)``."""

        def perform(self):
            with job_context(self):
                return super().perform()

    return RequestIdJob


def __getattr__(name: str):  # RequestIdJob imports rq only when asked for
    if name == "RequestIdJob":
        cls = _rq_job_class()
        globals()["RequestIdJob"] = cls
        return cls
    raise AttributeError(name)
