"""Test keys with the client, unchanged: ``client.livemode`` says the mode, every call sees the sandbox
and spends the test balance, which ``account.reset_test_balance()`` fills again; the live client's
balance never moves."""

from __future__ import annotations

from decimal import Decimal

from tests.factories import Factory


async def test_a_test_key_works_as_a_live_one_on_the_test_balance(factory: Factory, connect) -> None:
    account = await factory.account(credits=10)
    live = connect(account.keys["full"])
    made = await live.account.create_key("live", name="ci", mode="test")
    assert made.secret.startswith("vpx_test_live_") and made.mode == "test"
    test = connect(made.secret)

    assert live.livemode is True and test.livemode is False
    start = (await test.account.get()).balance.total
    assert (await test.account.get()).livemode is False and (await live.account.get()).livemode is True
    found = await test.contacts.search("dental")
    assert found.total > 0
    contact = found.contacts[0]
    revealed = await test.contacts.reveal(contact.id)
    assert revealed.email and revealed.email.endswith(".example")
    assert revealed.meta.credits_charged and revealed.meta.credits_charged > 0
    assert revealed.meta.credits_remaining == start - revealed.meta.credits_charged
    assert (await live.account.get()).balance.total == Decimal(35)  # 25 free + 10 granted: untouched

    reset = await test.account.reset_test_balance()
    assert reset.livemode is False and reset.balance.total == start
    assert (await test.account.get()).balance.total == start
