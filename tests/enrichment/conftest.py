"""Fixtures for enrichment tests: the local fakes of Hunter, People Data Labs and Apollo."""

from __future__ import annotations

import pytest

from tests.enrichment.fakes import FakeProviders, start_fakes


@pytest.fixture(scope="session")
def fake_providers() -> FakeProviders:
    """The three fakes, started once per session (their state carries over between tests; take
    ``fakes`` for a clean slate)."""
    return start_fakes()


@pytest.fixture
def fakes(fake_providers: FakeProviders) -> FakeProviders:
    """The three fakes, reset: sample data, no failures, no latency, no recorded requests."""
    fake_providers.reset()
    return fake_providers
