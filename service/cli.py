"""``grimoire``: run the service, export the API contracts.

``grimoire serve``            run the service (embedded Redis when REDIS_URL is unset)
``grimoire export-schema``    write schema/schema.graphql and openapi/openapi.yaml
``grimoire worker``           work the bot, timer and replay queues (RQ; see docs/bots.md)
``grimoire bot``              play a match with your own strategy (clients/python/grimoire/bot.py; docs/api.md, "Write a bot")
``grimoire verify``           check a finished match's record offline (service/fairness/verify.py; docs/fairness.md)
``grimoire freeze-rules``     package a game's current rules to keep installed beside newer ones (docs/operations.md)
``grimoire grant-refill``     grant a player Refill Sets beyond the daily allowance (docs/operations.md, "Collections")
"""

import argparse
import gc
import socket
import sys

import uvicorn

from grimoire.bot import add_arguments as bot_arguments
from service.settings import Settings


#: Collections of the middle generation between two full collections (CPython's default is 10).
FULL_COLLECTION_EVERY = 100


def settle_garbage_collector() -> None:
    """Keep the garbage collector's pauses out of what a serving process answers (issue 18).

    What is built before serving (the schema, the games' data, the libraries' own) lives as long as the
    process: it is frozen, kept out of every later collection. A full collection walked it all, about 60 ms
    during which every request in flight waited.

    A full collection still walks everything made since: with 1,000 live followers, 30-70 ms during which no
    update is delivered. CPython considers one after every 10 collections of the middle generation, which a
    process fanning updates out reached every second or two (the objects of updates in flight are promoted,
    then die); p99 of delivery was those pauses (86-107 ms for SSE at 1,000 followers, 232 ms on the
    websocket, tests/benchmarks/bench_live.py). Considered after every 100, none fell in a 60-second window
    (p99 40-58 and 73-92 ms; docs/operations.md, "Session 24"). Cycles that outlive the middle generation
    wait longer to be freed; everything else is freed as ever.
    """
    gc.collect()
    gc.freeze()
    youngest, middle, _ = gc.get_threshold()
    gc.set_threshold(youngest, middle, FULL_COLLECTION_EVERY)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="grimoire", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", default=None)
    serve.add_argument("--port", type=int, default=None)
    commands.add_parser("export-schema", help="write schema/schema.graphql and openapi/openapi.yaml")
    worker = commands.add_parser("worker", help="work the bot, timer and replay queues (needs REDIS_URL)")
    worker.add_argument("--burst", action="store_true", help="stop when the queues are empty")
    worker.add_argument("--name", default=None, help="the worker's name (default: RQ picks one)")
    bot_arguments(commands.add_parser("bot", help="play a match with your strategy: module:function"))
    grant = commands.add_parser("grant-refill", help="grant a player Refill Sets beyond the daily allowance")
    grant.add_argument("player", help="the player's id (one starting with \"-\", made by an earlier release, goes after --)")
    grant.add_argument("--count", type=int, default=1, help="how many (default 1)")
    from service.fairness import freeze, verify

    verify.add_arguments(commands.add_parser("verify", help="check a finished match's record offline (no Redis)"))
    freeze.add_arguments(commands.add_parser("freeze-rules", help="write an installable package of a game's "
                                                                  "current rules version"))
    args = parser.parse_args(argv)
    if args.command == "verify":  # offline: no settings, no logging set-up, nothing but the record
        return verify.run(args)
    if args.command == "freeze-rules":
        return freeze.run(args)

    from service.logs import configure_logging

    logged = Settings.from_env()
    configure_logging(logged.log_format, logged.log_level)  # JSON lines with request ids (service/logs.py)
    if args.command == "bot":
        from grimoire.bot import run as run_bot

        return run_bot(args)
    if args.command == "serve":
        from service.app import create_app

        settings = Settings.from_env()
        host, port = args.host or settings.host, args.port or settings.port
        app = create_app(settings)
        settle_garbage_collector()
        config = uvicorn.Config(app, host=host, port=port, log_config=None, access_log=False,
                                timeout_graceful_shutdown=settings.shutdown_timeout,
                                server_header=False,  # the server's name and version help nobody but an attacker
                                # per-message deflate keeps ~50 KiB of zlib state per websocket: live updates are
                                # small JSON, and memory per subscriber is what bounds a process's followers
                                ws_per_message_deflate=False)
        # GRIMOIRE_METRICS_PORT: one process listens on both ports; the app tells them apart (service/guards.py)
        sockets = [socket.create_server((host, p)) for p in (port, settings.metrics_port)] \
            if settings.metrics and settings.metrics_port else None
        uvicorn.Server(config).run(sockets=sockets)
    elif args.command == "export-schema":
        from service.contracts import write_contracts

        for path in write_contracts():
            print(f"wrote {path}")
    elif args.command == "grant-refill":
        from service.store.collections import grant_refill

        return grant_refill(Settings.from_env(), args.player, args.count)
    elif args.command == "worker":
        from workers.runtime import run_worker

        settings = Settings.from_env()
        if not settings.redis_url:
            print("grimoire worker needs REDIS_URL: the Redis the service uses (serve without it runs its own "
                  "worker).", file=sys.stderr)
            return 2
        if settings.worker_metrics_port:  # probes and Prometheus for a worker pod (service/metrics.py)
            import redis

            from service.metrics import start_worker_metrics_server
            from service.store.connect import queue_url

            queue = redis.Redis.from_url(queue_url(settings.redis_url, settings.queue_redis_url,
                                                   settings.redis_cluster), socket_timeout=2)
            start_worker_metrics_server(settings.worker_metrics_port, ready=queue.ping)
        run_worker(settings, burst=args.burst, name=args.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
