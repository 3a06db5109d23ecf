from __future__ import annotations

import pytest

from tests.webhooks.support import receiver, webhook_settings
from vpx.config import Settings

__all__ = ["receiver"]


@pytest.fixture
def settings(database_url: str) -> Settings:
    return webhook_settings(database_url)
