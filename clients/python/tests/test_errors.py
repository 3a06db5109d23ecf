"""Exceptions typed from the problem document's `code`, each with the problem and the request id."""

from __future__ import annotations

import inspect
import uuid

import pytest
from tests.factories import Factory
from vpx import errors as server_errors

import vpx_client
from vpx_client._meta import ResponseMeta
from vpx_client.errors import BY_CODE, error_for


async def test_insufficient_credits_carries_the_balance(factory: Factory, connect) -> None:
    account = await factory.account()
    client = connect(account.keys["live"])
    hot = [
        await factory.contact(phone=f"+1720555{n:04d}", business_name=f"Hot {uuid.uuid4().hex[:6]}") for n in range(5)
    ]
    for contact_id in hot:
        await factory.set_intent(contact_id, "hot")
    for contact_id in hot[:4]:
        await client.contacts.reveal(contact_id)  # 4 x 6 of the 25 free credits

    with pytest.raises(vpx_client.InsufficientCredits) as refused:
        await client.contacts.reveal(hot[4])

    error = refused.value
    assert isinstance(error, vpx_client.PaymentRequired) and isinstance(error, vpx_client.VpxError)
    assert error.status == 402 and error.code == "insufficient_credits"
    assert error.problem["type"] == "urn:vpx:problem:insufficient_credits"
    assert error.request_id and error.request_id == error.meta.request_id
    assert error.meta.credits_remaining == 1
    assert error.request_id in str(error)


async def test_a_suppressed_reveal_is_refused_and_not_retried(factory: Factory, connect) -> None:
    account = await factory.account()
    contact_id = await factory.contact(phone="+13035550199", business_name=f"Opted Out {uuid.uuid4().hex[:6]}")
    await factory.suppress("phone", "+13035550199")
    client = connect(account.keys["live"])

    with pytest.raises(vpx_client.Suppressed) as refused:
        await client.contacts.reveal(contact_id)

    assert refused.value.status == 451 and refused.value.meta.retries == ()
    assert (await client.account.balances()).total == 25


async def test_not_found_permission_and_key_errors(factory: Factory, connect) -> None:
    account = await factory.account()
    contact_id = await factory.contact(phone="+13035550198", business_name=f"Private {uuid.uuid4().hex[:6]}")

    with pytest.raises(vpx_client.NotFound) as missing:
        await connect(account.keys["ro"]).contacts.get("ct_987654321")
    with pytest.raises(vpx_client.PermissionDenied) as denied:
        await connect(account.keys["ro"]).contacts.reveal(contact_id)
    with pytest.raises(vpx_client.InvalidApiKey) as unknown:
        await connect("vpx_live_not-a-real-key").contacts.search("x")

    assert missing.value.status == 404
    assert isinstance(denied.value, vpx_client.Forbidden) and "Standard" in (denied.value.detail or "")
    assert isinstance(unknown.value, vpx_client.Unauthorized)


async def test_validation_failed_lists_the_fields(factory: Factory, connect) -> None:
    account = await factory.account()
    client = connect(account.keys["ro"])

    with pytest.raises(vpx_client.ValidationFailed) as refused:
        await client.contacts.search("plumbers", limit=101)

    error = refused.value
    assert error.status == 422 and error.code == "invalid_parameters"
    assert [e.field for e in error.errors] == ["limit"]
    assert error.fields == {"limit": "must be at most 100"}


def test_every_code_the_service_defines_has_its_class() -> None:
    """The service's problem codes (vpx.errors) each map to a class of that code, under the class of
    the code's HTTP status."""
    problems = [
        kind
        for kind in vars(server_errors).values()
        if inspect.isclass(kind) and issubclass(kind, server_errors.ProblemError) and kind.code != "internal_error"
    ]
    client_side = {"invalid_admin_token", "admin_forbidden"}  # operator-only: the status class is enough
    for kind in problems:
        error = error_for(kind.status, f'{{"code": "{kind.code}", "status": {kind.status}}}'.encode(), ResponseMeta())
        if kind.code in client_side:
            assert type(error) is vpx_client.errors.BY_STATUS[kind.status], kind.code
        else:
            assert kind.code in BY_CODE, (
                f"the service answers code {kind.code!r}: give it a class in clients/python/src/vpx_client/errors.py"
            )
            assert type(error) is BY_CODE[kind.code]
            assert isinstance(error, vpx_client.errors.BY_STATUS[kind.status])


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (409, b'{"code": "a_new_conflict", "detail": "x"}', vpx_client.Conflict),
        (403, b'{"code": "something_new"}', vpx_client.Forbidden),
        (418, b'{"code": "teapot"}', vpx_client.VpxError),
        (500, b"<html>proxy error</html>", vpx_client.ServerError),
        (502, b"", vpx_client.ServerError),
    ],
)
def test_unknown_codes_fall_back_to_the_status(status: int, body: bytes, expected: type) -> None:
    error = error_for(status, body, ResponseMeta(request_id="req_x"))
    assert type(error) is expected
    assert error.status == status and error.request_id == "req_x"
