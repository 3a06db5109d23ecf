"""Every dashboard page, under /dashboard and outside the OpenAPI document; and the site's /favicon.ico."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.responses import FileResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from vpx.dashboard import (
    STATIC_DIR,
    account,
    capabilities,
    contacts,
    credits,
    keys,
    mailing,
    reset,
    rules,
    signup,
    webhooks,
)
from vpx.dashboard.pages import dashboard_router
from vpx.dashboard.web import PageRefused, install_page_errors

router = APIRouter(include_in_schema=False)
for part in (account, signup, reset, keys, credits, contacts, webhooks, rules, capabilities):
    router.include_router(part.router)


@router.get("/favicon.ico")
async def favicon() -> Response:
    """The icon browsers ask every site for (the dashboard's pages name it; other pages do not)."""
    return FileResponse(
        STATIC_DIR / "favicon.svg", media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"}
    )


# Last, so that it answers only what no page did: an HTML 404 rather than problem+json.
catch_all = dashboard_router()


@catch_all.get("/{path:path}")
async def not_found(request: Request, path: str) -> Response:
    if path == "":
        return RedirectResponse("/dashboard", status_code=308)
    raise PageRefused(404, "Page not found", f"There is no dashboard page {request.url.path}.")


router.include_router(catch_all)


def install_dashboard(app: FastAPI) -> None:
    """Adds the dashboard's pages and its static files to the app."""
    # Whether sign-up and password reset are offered, and where their links go, said at start.
    mailing.announce(app.state.settings)

    # The static files first: the dashboard's catch-all 404 page would otherwise answer for them.
    app.mount("/dashboard/static", StaticFiles(directory=STATIC_DIR), name="dashboard-static")
    app.include_router(router)
    install_page_errors(app)
