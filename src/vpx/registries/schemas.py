"""The decision-maker resources of the API (D31)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class DecisionMakerSource(BaseModel):
    registry: str = Field(examples=["nppes"])
    record_id: str = Field(examples=["1497758544"], description="The registry's own identifier (NPI, licence number).")


class DecisionMakerView(BaseModel):
    id: str = Field(examples=["dm_17"])
    name: str
    title: str | None
    role: str = Field(
        description="authorized_official (NPPES), owner or partner (a licence's named personnel), officer, qualifier."
    )
    source: DecisionMakerSource
    phone: str | None = Field(
        description="E.164; only for an account that revealed the contact, else null (see phone_available)."
    )
    phone_available: bool = Field(description="The registry gives this person a phone; revealing the contact shows it.")


class DecisionMakerList(BaseModel):
    contact_id: str
    revealed: bool = Field(description="Whether this account revealed the contact (then direct details are shown).")
    decision_makers: list[DecisionMakerView]
