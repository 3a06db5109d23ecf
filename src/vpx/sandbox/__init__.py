"""Test mode: test keys (``vpx_test_…``) and the sandbox they run against.

The sandbox is a database of its own, migrated like the main one, holding the sandbox catalogue and
signal feed (built from the demo generator, the same for every account) and a shadow of each account
that uses test keys: the same account id with its own test balance, ledger, reveals, rules, webhooks
and everything else a request writes. A request with a test key is routed to it by the key's prefix
before anything else runs (``middleware``), so every service runs unchanged there, and nothing of one
mode can be read or written by the other: they are two databases. Keys, sign-ins and the account's
lifecycle stay in the main database.
"""

from vpx.sandbox.world import Sandbox, build_sandbox

__all__ = ["Sandbox", "build_sandbox"]
