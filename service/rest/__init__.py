"""REST handlers (``/v1``), request schemas and problem responses."""

from .routes import routes

__all__ = ["routes"]
