"""Operational endpoints: liveness, readiness, Prometheus metrics."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse

from vpx import metrics
from vpx.compliance.overview import figures as compliance_figures
from vpx.contacts.search import checks as search_checks
from vpx.sources import service as source_service
from vpx.worker import status as worker_status

router = APIRouter(tags=["operations"])
log = logging.getLogger("vpx.metrics")


@router.get("/healthz", summary="The process is up")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get(
    "/readyz",
    summary="Ready to serve: the database answers, and waiting work has a live worker",
    responses={503: {"description": "Database unreachable, or work waiting with no live worker"}},
)
async def readyz(request: Request) -> Response:
    """`ready` is false (503) when the database does not answer, or when work waits (due webhook
    deliveries, unfinished batch reveals) and no worker has beaten in the last 30 seconds: a server
    without `vpx worker` processes next to it would accept the work and never do it."""
    state = request.app.state
    try:
        async with state.database.read_sessions() as session:
            found = await worker_status.report(session, state.clock.now())
    except Exception as exc:  # any failure to reach the database means not ready
        return JSONResponse({"status": "unavailable", "detail": type(exc).__name__}, status_code=503)
    body = {"status": "ok" if found["ready"] else "no_worker", "database": state.database.dialect, **found}
    return JSONResponse(jsonable_encoder(body), status_code=200 if found["ready"] else 503)


@router.get("/metrics", summary="Prometheus metrics", include_in_schema=False)
async def prometheus(request: Request) -> Response:
    state = request.app.state
    try:
        async with state.database.read_sessions() as session:
            metrics.set_sources(await source_service.figures(session, state.clock.now()))
            metrics.set_search_index(await search_checks.figures(session, state.clock.now()))
            metrics.set_compliance(await compliance_figures(session, state.settings, now=state.clock.now()))
    except Exception:  # the request metrics still answer when the database does not
        log.warning("reading the sources' figures for /metrics failed", exc_info=True)
    body, content_type = metrics.render()
    return Response(body, media_type=content_type)
