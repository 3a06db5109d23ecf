"""Why an entry is on the suppression list: the operator's reasons, and the small fixed vocabulary
buyers are told (an entry's note, free text, stays with the operator)."""

from __future__ import annotations

from enum import StrEnum


class SuppressionReason(StrEnum):
    """The reasons an operator gives an entry."""

    fcra = "fcra"
    opt_out = "opt_out"
    do_not_contact = "do_not_contact"
    # The person's own request not to be called: an entry on the phone channel only (its kind is
    # do_not_call), which flags the phone and leaves the contact on sale.
    do_not_call = "do_not_call"


# Reasons consumers' requests give entries (vpx.compliance): buyers are told them as opt_out (the person
# asked), the class every such request belongs to.
DROP_DELETION = "drop_deletion"
DROP_OPT_OUT = "drop_opt_out"
DELETION_REQUEST = "deletion_request"
# The reasons whose entries erase what they cover: the contact's personal fields emptied, now and at
# every later write (migration 20261203_compliance's trigger).
ERASING = frozenset({DROP_DELETION, DELETION_REQUEST})
_PERSON_ASKED = frozenset({DROP_DELETION, DROP_OPT_OUT, DELETION_REQUEST})


class ReasonClass(StrEnum):
    """What buyers are told of an entry's reason: the operator's reasons, and ``unsubscribed`` for a
    sequence's unsubscribe made service-wide (VPX_UNSUBSCRIBE_SUPPRESSES=all)."""

    opt_out = "opt_out"
    do_not_contact = "do_not_contact"
    fcra = "fcra"
    unsubscribed = "unsubscribed"


def reason_class(stored: str) -> ReasonClass:
    """The class of a stored reason; one outside the vocabulary (none is written) is told as
    do_not_contact, the plainest. Consumers' deletions and opt-outs are the person asking: opt_out."""
    if stored in _PERSON_ASKED:
        return ReasonClass.opt_out
    try:
        return ReasonClass(stored)
    except ValueError:
        return ReasonClass.do_not_contact
