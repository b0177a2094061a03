"""``grimoire``: run the service, export the API contracts.

``grimoire serve``            run the service (embedded Redis when REDIS_URL is unset)
``grimoire export-schema``    write schema/schema.graphql and openapi/openapi.yaml
"""

import argparse
import logging
import sys

import uvicorn

from service.settings import Settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="grimoire", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", default=None)
    serve.add_argument("--port", type=int, default=None)
    commands.add_parser("export-schema", help="write schema/schema.graphql and openapi/openapi.yaml")
    args = parser.parse_args(argv)

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    if args.command == "serve":
        from service.app import create_app

        settings = Settings.from_env()
        uvicorn.run(create_app(settings), host=args.host or settings.host, port=args.port or settings.port,
                    log_level="info", timeout_graceful_shutdown=10)
    elif args.command == "export-schema":
        from service.contracts import write_contracts

        for path in write_contracts():
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
