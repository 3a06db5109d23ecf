"""/api/v1/admin/sources: the same sources as `vpx sources`, behind the operator token; refusals as
problem documents; a run asked for over HTTP done by the worker; the sources' figures in /metrics."""

from __future__ import annotations

from pathlib import Path

import httpx
from fastapi import FastAPI

from tests.registries.formats import write_nucc
from tests.sources.conftest import ADMIN, source_row
from tests.sources.publisher import Publisher
from tests.sources.test_runs import MAPPING
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.secrets import load_box
from vpx.sources import runner

HEADERS = {"X-Admin-Token": ADMIN}
BASE = "/api/v1/admin/sources"


async def test_add_list_show_pause_resume_remove(
    client: httpx.AsyncClient, publisher: Publisher, tmp_path: Path
) -> None:
    publisher.serve("/nucc.csv", write_nucc(tmp_path / "nucc.csv").read_bytes())
    created = await client.post(
        BASE, json={"name": "nucc", "kind": "nucc", "url": publisher.url("/nucc.csv"), "every": "1w"}, headers=HEADERS
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert (body["name"], body["state"], body["every"], body["last_run"], body["running"]) == (
        "nucc", "active", "1w", None, False,
    )  # fmt: skip
    listed = (await client.get(BASE, headers=HEADERS)).json()
    assert [s["name"] for s in listed["sources"]] == ["nucc"] and listed["sources"][0] == body
    assert (await client.get(f"{BASE}/nucc", headers=HEADERS)).json() == body
    paused = (await client.post(f"{BASE}/nucc/pause", headers=HEADERS)).json()
    assert (paused["state"], paused["next_run_at"]) == ("paused", None)
    resumed = (await client.post(f"{BASE}/nucc/resume", headers=HEADERS)).json()
    assert resumed["state"] == "active" and resumed["next_run_at"] == body["next_run_at"]
    removed = await client.delete(f"{BASE}/nucc", headers=HEADERS)
    assert removed.status_code == 200 and removed.json()["removed"] is True
    gone = await client.get(f"{BASE}/nucc", headers=HEADERS)
    assert (gone.status_code, gone.json()["code"]) == (404, "not_found")


async def test_refusals_are_problems(client: httpx.AsyncClient) -> None:
    url = "http://127.0.0.1:9/f.csv"
    assert (await client.get(BASE)).status_code == 401
    assert (await client.get(BASE, headers={"X-Admin-Token": "x" * 30})).status_code == 403
    cases = [
        ({"name": "x", "kind": "nucc", "url": url, "every": "10s"}, "every", "must be at least 1m (a minute)"),
        ({"name": "x", "kind": "gopher", "url": url}, "kind", "'gopher' is not a kind of source"),
        ({"name": "x", "kind": "nucc", "url": "file:///etc/passwd"}, "url", "must be an http:// or https:// URL"),
        ({"name": "x", "kind": "nucc", "url": url, "options": {"a": "b"}}, "options.a", "nucc takes no such option"),
        ({"name": "x", "kind": "permits-csv", "url": url}, "mapping", "permits-csv needs a mapping"),
        ({"name": "x", "kind": "nucc", "url": url, "mapping": MAPPING}, "mapping", "nucc takes no mapping"),
        ({"name": "x", "kind": "permits-csv", "url": url, "mapping": "city ="}, "mapping", "the mapping of source x"),
    ]
    for body, field, message in cases:
        refused = await client.post(BASE, json=body, headers=HEADERS)
        assert refused.status_code == 422, refused.text
        problem = refused.json()
        assert problem["code"] == "invalid_parameters" and problem["errors"][0]["field"] == field
        assert problem["errors"][0]["message"].startswith(message) or message in problem["detail"], problem
    unknown = await client.post(BASE, json={"name": "x", "kind": "nucc", "url": url, "extra": 1}, headers=HEADERS)
    assert unknown.status_code == 422
    first = await client.post(BASE, json={"name": "x", "kind": "nucc", "url": url}, headers=HEADERS)
    assert first.status_code == 201
    again = await client.post(BASE, json={"name": "x", "kind": "nucc", "url": url}, headers=HEADERS)
    assert (again.status_code, again.json()["code"]) == (409, "conflict")
    for path in (f"{BASE}/nope", f"{BASE}/nope/run", f"{BASE}/nope/pause"):
        method = client.get if path.endswith("nope") else client.post
        assert (await method(path, headers=HEADERS)).status_code == 404


async def test_a_secret_option_is_sealed_and_never_shown(client: httpx.AsyncClient, app: FastAPI) -> None:
    body = {
        "name": "ogden", "kind": "permits-csv", "url": "https://data.example.org/permits.csv", "mapping": MAPPING,
        "mapping_name": "ogden", "options": {"app_token": "tok-0123456789"},
    }  # fmt: skip
    created = await client.post(BASE, json=body, headers=HEADERS)
    assert created.status_code == 201, created.text
    assert created.json()["options"] == {"app_token": "(secret)"} and "tok-0123" not in created.text
    source = await source_row(app, "ogden")
    assert source.options == {"app_token": None} and source.options_sealed and "tok-" not in source.options_sealed
    from vpx.sources.service import config_of

    assert config_of(source, load_box(app.state.settings)).options == {"app_token": "tok-0123456789"}


async def test_a_run_asked_over_http_is_done_by_the_worker_and_shows_in_metrics(
    client: httpx.AsyncClient, app: FastAPI, settings: Settings, clock: FixedClock, publisher: Publisher,
    tmp_path: Path,
) -> None:  # fmt: skip
    publisher.serve("/nucc.csv", write_nucc(tmp_path / "nucc.csv").read_bytes())
    await client.post(BASE, json={"name": "nucc", "kind": "nucc", "url": publisher.url("/nucc.csv")}, headers=HEADERS)
    await client.post(f"{BASE}/nucc/pause", headers=HEADERS)
    box = load_box(settings)
    assert await runner.run_due(app.state.database, settings, owner="w", box=box, clock=clock) == 0  # paused
    asked = await client.post(f"{BASE}/nucc/run", headers=HEADERS)
    assert asked.status_code == 202 and asked.json()["run_requested"] is True
    assert await runner.run_due(app.state.database, settings, owner="w", box=box, clock=clock) == 1
    shown = (await client.get(f"{BASE}/nucc", headers=HEADERS)).json()
    assert shown["last_run"]["status"] == "ok" and shown["last_run"]["created"] == 8
    assert (shown["run_requested"], shown["state"], shown["age_seconds"]) == (False, "paused", 0)
    metrics = (await client.get("/metrics")).text
    assert 'vpx_source_age_seconds{source="nucc"} 0.0' in metrics
    assert 'vpx_source_runs_total{source="nucc",status="ok"} 1.0' in metrics
    assert 'vpx_source_rows_total{change="created",source="nucc"} 8.0' in metrics
    assert 'vpx_source_failures_total{source="nucc"} 0.0' in metrics
