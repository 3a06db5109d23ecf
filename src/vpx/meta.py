"""Operational endpoints: liveness, readiness, Prometheus metrics."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from sqlalchemy import text

from vpx import metrics

router = APIRouter(tags=["operations"])


@router.get("/healthz", summary="The process is up")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", summary="The database answers", responses={503: {"description": "Database unreachable"}})
async def readyz(request: Request) -> Response:
    try:
        async with request.app.state.database.read_sessions() as session:
            await session.execute(text("SELECT 1"))
    except Exception as exc:  # any failure to reach the database means not ready
        return JSONResponse({"status": "unavailable", "detail": type(exc).__name__}, status_code=503)
    return JSONResponse({"status": "ok", "database": request.app.state.database.dialect})


@router.get("/metrics", summary="Prometheus metrics", include_in_schema=False)
async def prometheus() -> Response:
    body, content_type = metrics.render()
    return Response(body, media_type=content_type)
