"""The web dashboard at /dashboard: server-rendered pages for the signed-in account, acting through
the same services as the API (docs/dashboard.md)."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).resolve().parent / "static"


def install_dashboard(app: FastAPI) -> None:
    """Adds the dashboard's pages and its static files to the app."""
    from vpx.dashboard import mailing
    from vpx.dashboard.router import router
    from vpx.dashboard.web import install_page_errors

    # Whether sign-up and password reset are offered, and where their links go, said at start.
    mailing.announce(app.state.settings)

    # The static files first: the dashboard's catch-all 404 page would otherwise answer for them.
    app.mount("/dashboard/static", StaticFiles(directory=STATIC_DIR), name="dashboard-static")
    app.include_router(router)
    install_page_errors(app)
