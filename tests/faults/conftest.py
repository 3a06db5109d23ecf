from __future__ import annotations

import pytest

from tests.webhooks.support import receiver, webhook_settings
from vpx.config import Settings

__all__ = ["receiver"]


@pytest.fixture
def settings(database_url: str) -> Settings:
    """The test process only writes and reads the database; the `vpx` child processes do the work."""
    return webhook_settings(database_url)
