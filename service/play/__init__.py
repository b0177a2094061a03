"""``/play``: the reference front end, static files served as they are (plain ES modules, no build step).

The page uses only the public API (GraphQL, the subscription, the REST catalogues and replays), so it is
also the worked example of docs/api.md, "Write a front end". Vendored code: VENDORED.md.
"""

from pathlib import Path

from starlette.responses import RedirectResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

PLAY_DIR = Path(__file__).parent


def _to_index(request):
    # /play -> /play/: the page's modules are imported relative to its URL
    return RedirectResponse("/play/", status_code=308)


def play_routes() -> list:
    """The routes serving /play (``index.html`` at ``/play/``)."""
    return [Route("/play", _to_index, methods=["GET", "HEAD"]),
            Mount("/play", app=StaticFiles(directory=PLAY_DIR, html=True), name="play")]
