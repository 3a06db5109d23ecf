"""Fixtures for the suppression tests: a real HTTP receiver for webhooks and a real SMTP server for
the sequences a suppression stops; webhook deliveries and sends driven by the tests."""

from __future__ import annotations

import pytest

from tests.sequences.smtp_server import smtp_sink
from tests.webhooks.support import receiver, webhook_settings
from vpx.config import Settings

__all__ = ["receiver", "smtp_sink"]


@pytest.fixture
def settings(database_url: str) -> Settings:
    return webhook_settings(database_url, mailbox_allow_private=True)
