"""Prometheus metrics: requests by route and status, latency, reveals and credits spent.

With several server processes, set PROMETHEUS_MULTIPROC_DIR (``vpx serve --workers N`` does it) and
/metrics aggregates every process.
"""

from __future__ import annotations

import os
from decimal import Decimal

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)

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


def render() -> tuple[bytes, str]:
    """The exposition text of this process, or of every process in multiprocess mode."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(), CONTENT_TYPE_LATEST
