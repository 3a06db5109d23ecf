"""/api/v1/admin/sources (`X-Admin-Token`): the same sources as `vpx sources`; refusals are problem
documents (D1, D2: 422 invalid_parameters naming the field, 404, 409)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path

from vpx.admin.auth import ADMIN_REFUSALS, require_admin
from vpx.db import ReadSession, WriteSession
from vpx.deps import AppSettings, Now
from vpx.errors import InvalidParameters, problem_responses
from vpx.secrets import load_box
from vpx.sources import service as source_service
from vpx.sources.kinds import InvalidSource
from vpx.sources.schemas import Source, SourceCreate, SourceList, SourceRemoved

router = APIRouter(prefix="/api/v1/admin/sources", tags=["admin"])
Admin = Annotated[str, Depends(require_admin)]
SourceName = Annotated[str, Path(max_length=63, examples=["nppes"], description="The source's name.")]


@router.get(
    "",
    response_model=SourceList,
    responses={**problem_responses(429), **ADMIN_REFUSALS},
    summary="List sources (operators)",
)
async def list_sources(admin: Admin, session: ReadSession, now: Now) -> SourceList:
    """Every source by name, with its state and freshness: last success, age, the newest record's own
    date, next run, the last run's report and the last error."""
    found = await source_service.list_sources(session)
    return SourceList.model_validate({"sources": [source_service.view(s, now) for s in found]})


@router.post(
    "",
    response_model=Source,
    status_code=201,
    responses={**problem_responses(400, 409, 413, 422, 429), **ADMIN_REFUSALS},
    summary="Add a source (operators)",
)
async def add_source(
    body: SourceCreate, admin: Admin, session: WriteSession, settings: AppSettings, now: Now
) -> Source:
    """Checked now (its kind, URL, interval, options and mapping), due at once, then run by the worker
    every interval. 409 when the name is taken."""
    try:
        new = source_service.check_new(
            name=body.name,
            kind=body.kind,
            url=body.url,
            every=body.every,
            mapping=body.mapping,
            mapping_name=body.mapping_name or body.name,
            options=body.options,
        )
    except InvalidSource as exc:
        raise InvalidParameters.field(exc.field, exc.message) from None
    source = await source_service.add_source(session, new, box=load_box(settings), now=now)
    return Source.model_validate(source_service.view(source, now))


@router.get(
    "/{name}",
    response_model=Source,
    responses={**problem_responses(404, 429), **ADMIN_REFUSALS},
    summary="One source (operators)",
)
async def get_source(name: SourceName, admin: Admin, session: ReadSession, now: Now) -> Source:
    return Source.model_validate(source_service.view(await source_service.get_source(session, name), now))


@router.delete(
    "/{name}",
    response_model=SourceRemoved,
    responses={**problem_responses(404, 429), **ADMIN_REFUSALS},
    summary="Remove a source (operators)",
)
async def remove_source(
    name: SourceName, admin: Admin, session: WriteSession, settings: AppSettings, now: Now
) -> SourceRemoved:
    """Removes the source and its partial downloads; what it imported stays in the catalogue."""
    source = await source_service.remove_source(session, name, data_dir=settings.data_dir)
    return SourceRemoved.model_validate({**source_service.view(source, now), "removed": True})


@router.post(
    "/{name}/run",
    response_model=Source,
    status_code=202,
    responses={**problem_responses(404, 429), **ADMIN_REFUSALS},
    summary="Run a source now (operators)",
)
async def run_source(name: SourceName, admin: Admin, session: WriteSession, now: Now) -> Source:
    """Asks the worker to run the source as soon as it can, paused or not (a run can take minutes: the
    answer does not wait for it). `run_requested` is true until the run ends; its report then shows in
    `last_run`. `vpx sources run NAME` runs it in the foreground instead."""
    return Source.model_validate(source_service.view(await source_service.request_run(session, name, now=now), now))


@router.post(
    "/{name}/pause",
    response_model=Source,
    responses={**problem_responses(404, 429), **ADMIN_REFUSALS},
    summary="Pause a source (operators)",
)
async def pause_source(name: SourceName, admin: Admin, session: WriteSession, now: Now) -> Source:
    """The worker leaves it alone until it is resumed (a run in progress finishes). Pausing a paused
    source changes nothing."""
    return Source.model_validate(source_service.view(await source_service.pause_source(session, name, now=now), now))


@router.post(
    "/{name}/resume",
    response_model=Source,
    responses={**problem_responses(404, 429), **ADMIN_REFUSALS},
    summary="Resume a source (operators)",
)
async def resume_source(name: SourceName, admin: Admin, session: WriteSession, now: Now) -> Source:
    """Scheduled again: due at once if its time came while it was paused."""
    return Source.model_validate(source_service.view(await source_service.resume_source(session, name, now=now), now))
