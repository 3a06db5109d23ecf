"""Fixtures for the data-quality tests: a real HTTP receiver for contact.corrected and a real SMTP
server (aiosmtpd) that answers 550 for the addresses a test refuses; deliveries, sends and the
worker's bounce reviews driven by the tests (or a real `vpx worker`)."""

from __future__ import annotations

import pytest

from tests.quality.support import ADMIN_TOKEN
from tests.sequences.smtp_server import smtp_sink
from tests.webhooks.support import receiver, webhook_settings
from vpx.config import Settings

__all__ = ["receiver", "smtp_sink"]


@pytest.fixture
def settings(database_url: str) -> Settings:
    # The test client is a trusted proxy: each buyer reports from a network of its own (support.report).
    return webhook_settings(
        database_url, mailbox_allow_private=True, admin_token=ADMIN_TOKEN, trusted_proxies=["127.0.0.1/32"]
    )
