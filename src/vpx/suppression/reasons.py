"""Why an entry is on the suppression list: the operator's reasons, and the small fixed vocabulary
buyers are told (an entry's note, free text, stays with the operator)."""

from __future__ import annotations

from enum import StrEnum


class SuppressionReason(StrEnum):
    """The reasons an operator gives an entry."""

    fcra = "fcra"
    opt_out = "opt_out"
    do_not_contact = "do_not_contact"


class ReasonClass(StrEnum):
    """What buyers are told of an entry's reason: the operator's reasons, and ``unsubscribed`` for a
    sequence's unsubscribe made service-wide (VPX_UNSUBSCRIBE_SUPPRESSES=all)."""

    opt_out = "opt_out"
    do_not_contact = "do_not_contact"
    fcra = "fcra"
    unsubscribed = "unsubscribed"


def reason_class(stored: str) -> ReasonClass:
    """The class of a stored reason; one outside the vocabulary (none is written) is told as
    do_not_contact, the plainest."""
    try:
        return ReasonClass(stored)
    except ValueError:
        return ReasonClass.do_not_contact
