"""The one text rule (vpx.fields) and the line breaks beyond ASCII: U+0085 (next line), U+2028 (line
separator) and U+2029 (paragraph separator) end a line for email headers, Python's splitlines and
many readers, so single-line fields refuse them as they refuse newline; multi-line fields keep them.
A subject that took one used to pass and then stop every send of its step as a line break."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, Field, ValidationError

from tests.conftest import test_settings
from tests.factories import Factory
from vpx.config import Settings
from vpx.fields import (
    CONTROL_CHARACTERS,
    MULTI_LINE_PATTERN,
    SINGLE_LINE_MESSAGE,
    SINGLE_LINE_PATTERN,
    MultiLine,
    SingleLine,
)

LINE_BREAKS = ["a\u0085b", "a\u2028b", "a\u2029b"]


class Body(BaseModel):
    name: SingleLine = Field(max_length=200)
    text: MultiLine = Field(max_length=200)


@pytest.fixture
def settings(database_url: str) -> Settings:
    return test_settings(database_url, mailbox_allow_private=True, worker_in_process=False)


@pytest.mark.parametrize("text", LINE_BREAKS)
def test_single_line_text_refuses_unicode_line_breaks_multi_line_keeps_them(text: str) -> None:
    with pytest.raises(ValidationError, match=SINGLE_LINE_MESSAGE):
        Body(name=text, text="ok")
    assert Body(name="ok", text=text).text == text
    # The pattern the document states is the rule applied (as a JSON Schema reader would run it).
    assert not re.fullmatch(SINGLE_LINE_PATTERN.encode().decode("unicode_escape"), text)
    assert re.fullmatch(MULTI_LINE_PATTERN.encode().decode("unicode_escape"), text)
    assert CONTROL_CHARACTERS.search(text)


def test_other_unicode_stays_single_line_text() -> None:
    for text in ("Café Zürich", "東京 plumbing", "emoji 🚰", "a\u00a0b", "a\u200bb", "a\u0084b"):
        assert Body(name=text, text=text).name == text


@pytest.mark.parametrize("text", LINE_BREAKS)
async def test_a_sequence_name_subject_or_sender_name_with_a_line_break_is_422(
    client: httpx.AsyncClient, factory: Factory, text: str
) -> None:
    account = await factory.account()
    full = account.headers("full")
    mailbox: dict[str, Any] = {
        "email": "sam@seller.example",
        "smtp_host": "127.0.0.1",
        "smtp_port": 2525,
        "smtp_security": "none",
        "postal_address": "Seller Inc\u2028Denver CO 80202",  # multi-line: kept
    }
    refused = await client.post("/api/v1/mailboxes", json={**mailbox, "from_name": text}, headers=full)
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "from_name", refused.text
    created = await client.post("/api/v1/mailboxes", json=mailbox, headers=full)
    assert created.status_code == 201, created.text
    step = {"type": "email", "subject": "Hello", "body": f"Hi{text}there"}  # a body has lines
    sequence = {"name": "Intro", "mailbox_id": created.json()["id"], "steps": [step]}
    for body, field in (
        ({**sequence, "name": text}, "name"),
        ({**sequence, "steps": [{**step, "subject": text}]}, "steps[0].email.subject"),
    ):
        response = await client.post("/api/v1/sequences", json=body, headers=full)
        assert response.status_code == 422, response.text
        assert {"field": field, "message": SINGLE_LINE_MESSAGE} in response.json()["errors"]
    assert (await client.post("/api/v1/sequences", json=sequence, headers=full)).status_code == 201
