"""Pages and browser assets the service serves itself: the landing page ``/``, the REST docs page
``/docs`` (Swagger UI), GraphiQL's page (rendered by ``/graphql`` for a browser) and, under
``/explorers/``, their scripts and styles.

Everything ships in the Python package (``pages/``, ``explorers/``; third-party files in
``explorers/vendor/``, pinned in ``vendor.json``, see README.md): no page loads anything from another
host, so the explorers work offline and under a Content-Security-Policy of ``'self'`` (service/guards.py).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

HERE = Path(__file__).resolve().parent


@cache
def page(name: str) -> str:
    """The HTML of ``pages/<name>``, read once."""
    return (HERE / "pages" / name).read_text(encoding="utf-8")


class RevalidatedFiles(StaticFiles):
    """Static files a browser may keep but must revalidate (``no-cache``: a 304 when unchanged), since
    their names carry no version; without a Cache-Control of their own they would get ``no-store``."""

    def file_response(self, *args, **kwargs) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["cache-control"] = "no-cache"
        return response


async def landing_page(request: Request) -> Response:
    return HTMLResponse(page("index.html"))


async def docs_page(request: Request) -> Response:
    return HTMLResponse(page("docs.html"))


routes = [
    Route("/", landing_page, methods=["GET"]),
    Route("/docs", docs_page, methods=["GET"]),
    Mount("/explorers", RevalidatedFiles(directory=HERE / "explorers"), name="explorers"),
]
