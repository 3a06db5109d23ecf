"""Prometheus metrics: requests by route and status, latency, reveals and credits spent; each
source's freshness, runs, rows and failures (read from the database at each scrape, whichever
process ran the source).

With several server processes, set PROMETHEUS_MULTIPROC_DIR (``vpx serve --workers N`` does it) and
/metrics aggregates every process.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import REGISTRY, CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

REQUESTS = Counter("vpx_http_requests_total", "HTTP requests", ["method", "route", "status"])
LATENCY = Histogram(
    "vpx_http_request_duration_seconds",
    "HTTP request latency",
    ["method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
REVEALS = Counter("vpx_reveals_total", "Contact reveals", ["outcome"])
CREDITS_SPENT = Counter("vpx_credits_spent_total", "Credits spent on reveals")


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    REQUESTS.labels(method, route, str(status)).inc()
    LATENCY.labels(method, route).observe(seconds)


def observe_reveal(outcome: str, charged: Decimal) -> None:
    REVEALS.labels(outcome).inc()
    if charged:
        CREDITS_SPENT.inc(float(charged))


@dataclass(frozen=True)
class SourceFigures:
    """One source's figures as the database holds them (vpx.sources)."""

    name: str
    age_seconds: float | None
    failing: bool
    stale: bool
    runs: dict[str, int] = field(default_factory=dict)  # by status: ok, not_modified, failed
    rows: dict[str, int] = field(default_factory=dict)  # by change: created, updated, deactivated


_sources: list[SourceFigures] = []


def set_sources(figures: list[SourceFigures]) -> None:
    """The sources' figures the next scrape shows (the /metrics route reads them just before)."""
    global _sources
    _sources = list(figures)


class _SourceCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        figures = _sources
        age = GaugeMetricFamily(
            "vpx_source_age_seconds", "Seconds since the source's last successful run", labels=["source"]
        )
        failing = GaugeMetricFamily("vpx_source_failing", "1 while the source's last run failed", labels=["source"])
        stale = GaugeMetricFamily(
            "vpx_source_stale", "1 while the source is older than twice its interval", labels=["source"]
        )
        runs = CounterMetricFamily("vpx_source_runs", "Source runs by outcome", labels=["source", "status"])
        rows = CounterMetricFamily(
            "vpx_source_rows", "Rows the source's runs created, updated or deactivated", labels=["source", "change"]
        )
        failures = CounterMetricFamily("vpx_source_failures", "Failed source runs", labels=["source"])
        for source in figures:
            if source.age_seconds is not None:
                age.add_metric([source.name], source.age_seconds)
            failing.add_metric([source.name], 1.0 if source.failing else 0.0)
            stale.add_metric([source.name], 1.0 if source.stale else 0.0)
            for status, count in sorted(source.runs.items()):
                runs.add_metric([source.name, status], count)
            for change, count in sorted(source.rows.items()):
                rows.add_metric([source.name, change], count)
            failures.add_metric([source.name], source.runs.get("failed", 0))
        yield from (age, failing, stale, runs, rows, failures)


_SOURCE_COLLECTOR = _SourceCollector()
REGISTRY.register(_SOURCE_COLLECTOR)


@dataclass(frozen=True)
class SearchIndexFigures:
    """The search index's state as the database holds it (vpx.contacts.search.checks)."""

    mismatches: int | None  # wrong terms the last check found; None before any check
    waiting_changes: int
    check_age_seconds: float | None


_search_index = SearchIndexFigures(mismatches=None, waiting_changes=0, check_age_seconds=None)


def set_search_index(figures: SearchIndexFigures) -> None:
    global _search_index
    _search_index = figures


class _SearchIndexCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        figures = _search_index
        mismatches = GaugeMetricFamily(
            "vpx_search_index_mismatches", "Wrong terms the last check of the search index against the contacts found"
        )
        if figures.mismatches is not None:
            mismatches.add_metric([], figures.mismatches)
        waiting = GaugeMetricFamily(
            "vpx_search_waiting_changes", "Changes to contacts not folded into the search index yet"
        )
        waiting.add_metric([], figures.waiting_changes)
        age = GaugeMetricFamily("vpx_search_index_check_age_seconds", "Seconds since the search index was last checked")
        if figures.check_age_seconds is not None:
            age.add_metric([], figures.check_age_seconds)
        yield from (mismatches, waiting, age)


_SEARCH_INDEX_COLLECTOR = _SearchIndexCollector()
REGISTRY.register(_SEARCH_INDEX_COLLECTOR)


@dataclass(frozen=True)
class ComplianceFigures:
    """Where the operator stands with the law (vpx.compliance.overview): the DROP deadlines, the
    privacy requests waiting, the Do-Not-Call data's age by area code."""

    drop_deadline_seconds: float | None  # until the open batch must be answered; None without one
    drop_undecided: int
    drop_last_pull_age_seconds: float | None
    drop_must_access_seconds: float | None  # until the law needs DROP accessed again
    requests_open: int
    requests_overdue: int
    dnc_age_days: dict[str, int]


_compliance = ComplianceFigures(None, 0, None, None, 0, 0, {})


def set_compliance(figures: ComplianceFigures) -> None:
    global _compliance
    _compliance = figures


class _ComplianceCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        figures = _compliance
        deadline = GaugeMetricFamily(
            "vpx_drop_batch_deadline_seconds", "Seconds left to answer the open DROP batch (negative: overdue)"
        )
        if figures.drop_deadline_seconds is not None:
            deadline.add_metric([], figures.drop_deadline_seconds)
        undecided = GaugeMetricFamily("vpx_drop_batch_undecided_items", "Work items of the open DROP batch not decided")
        undecided.add_metric([], figures.drop_undecided)
        pulled = GaugeMetricFamily("vpx_drop_last_pull_age_seconds", "Seconds since DROP was last downloaded from")
        if figures.drop_last_pull_age_seconds is not None:
            pulled.add_metric([], figures.drop_last_pull_age_seconds)
        access = GaugeMetricFamily(
            "vpx_drop_access_deadline_seconds", "Seconds left before the law needs DROP accessed again"
        )
        if figures.drop_must_access_seconds is not None:
            access.add_metric([], figures.drop_must_access_seconds)
        requests = GaugeMetricFamily("vpx_privacy_requests_open", "Privacy requests not answered yet")
        requests.add_metric([], figures.requests_open)
        overdue = GaugeMetricFamily("vpx_privacy_requests_overdue", "Privacy requests past their 45 days")
        overdue.add_metric([], figures.requests_overdue)
        dnc = GaugeMetricFamily(
            "vpx_dnc_data_age_days",
            "Days since the Do-Not-Call registry version held of an area code",
            labels=["area_code"],
        )
        for area_code, days in sorted(figures.dnc_age_days.items()):
            dnc.add_metric([area_code], days)
        yield from (deadline, undecided, pulled, access, requests, overdue, dnc)


_COMPLIANCE_COLLECTOR = _ComplianceCollector()
REGISTRY.register(_COMPLIANCE_COLLECTOR)


def render() -> tuple[bytes, str]:
    """The exposition text of this process, or of every process in multiprocess mode."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        registry.register(_SOURCE_COLLECTOR)
        registry.register(_SEARCH_INDEX_COLLECTOR)
        registry.register(_COMPLIANCE_COLLECTOR)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(), CONTENT_TYPE_LATEST
