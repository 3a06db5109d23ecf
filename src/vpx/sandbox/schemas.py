"""The test balance's resource."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from vpx.accounts.schemas import BalanceView
from vpx.money import Credits


class TestBalanceReset(BaseModel):
    __test__ = False  # not a test class, whatever its name

    livemode: Literal[False] = Field(description="Always false: the test balance is test mode's.")
    balance: BalanceView = Field(description="The test balance after the reset.")
    test_credits: Credits = Field(description="Granted credits a test balance starts with and is reset to.")
    reset_at: datetime
