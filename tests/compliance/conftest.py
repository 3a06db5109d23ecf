"""Fixtures for the compliance tests: the fake DROP on 127.0.0.1, settings that point at it, a real
webhook receiver (past buyers are told of deletions), registry imports."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.compliance.fake_drop import API_KEY, BROKER, FakeDrop, start_fake_drop
from tests.registries.conftest import run_import
from tests.webhooks.support import receiver, webhook_settings
from vpx.compliance.drop.client import DropClient
from vpx.config import Settings

__all__ = ["receiver", "run_import"]


@pytest.fixture
def drop() -> Iterator[FakeDrop]:
    fake = start_fake_drop()
    fake.reset()
    yield fake
    fake.reset()


@pytest.fixture
def settings(database_url: str, drop: FakeDrop) -> Settings:
    return webhook_settings(
        database_url, drop_url=drop.base_url, drop_api_key=API_KEY, drop_broker_id=BROKER, mailbox_allow_private=True
    )


def drop_client(drop: FakeDrop, *, key: str = API_KEY) -> DropClient:
    return DropClient(drop.base_url, key, timeout=10)
