"""D4's permission matrix, the one place that says which key type may do what."""

from __future__ import annotations

from enum import StrEnum

from vpx.auth.keys import LABELS, PREFIXES, KeyType


class Capability(StrEnum):
    # search, view contacts and signals, signal batch, account and ledger
    read = "read"
    # reveal, batch reveal, purchase signals, contribute, decision-makers, CSV export
    buy = "buy"
    # signal stream, auto-buy, webhooks, enrichment, key management, visitors, sequences
    manage = "manage"


MATRIX: dict[Capability, frozenset[KeyType]] = {
    Capability.read: frozenset({KeyType.ro, KeyType.live, KeyType.full}),
    Capability.buy: frozenset({KeyType.live, KeyType.full}),
    Capability.manage: frozenset({KeyType.full}),
}


def allows(key_type: KeyType, capability: Capability) -> bool:
    return key_type in MATRIX[capability]


def needed_key_types(capability: Capability) -> str:
    """Human words for the key types that hold a capability, e.g. 'Standard (vpx_live_) or Full…'."""
    order = [KeyType.ro, KeyType.live, KeyType.full]
    names = [f"{LABELS[t]} ({PREFIXES[t]})" for t in order if t in MATRIX[capability]]
    return " or ".join(names)
