# Generated from the async client by clients/python/scripts/unasync.py. Do not edit: regenerate.
"""`client.contacts`: search, reveal (single and batch), reports of wrong fields, decision-makers, enrichment."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pydantic import TypeAdapter

from vpx_client import _policy
from vpx_client._blocking._pages import by_offset
from vpx_client._blocking._transport import AUTO, Transport, parsed
from vpx_client._policy import segment as seg
from vpx_client.models import (
    BatchEnrichAccepted,
    BatchEnrichProgress,
    BatchRevealAccepted,
    BatchRevealProgress,
    BatchRevealResult,
    ContactPreview,
    ContactReportView,
    DecisionMakerList,
    EnrichmentView,
    EnrichResult,
    RevealedContact,
    RevealedContactView,
    SearchResult,
)

_CONTACT = TypeAdapter(RevealedContactView | ContactPreview)


class Contacts:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def search(
        self,
        q: str | None = None,
        *,
        state: str | None = None,
        city: str | None = None,
        industry: str | None = None,
        specialty: str | None = None,
        license_type: str | None = None,
        email_status: str | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> SearchResult:
        """One page of free previews (D13), best matches first; typos and word prefixes match.
        ``email_status`` keeps the contacts whose email has that status (`mx_found`, `bounced`, …)."""
        params = _policy.query(
            q=q, state=state, city=city, industry=industry, specialty=specialty,
            license_type=license_type, email_status=email_status, limit=limit, offset=offset,
        )  # fmt: skip
        return self._t.call("GET", "/contacts/search", SearchResult, params=params)

    def iterate(
        self,
        q: str | None = None,
        *,
        state: str | None = None,
        city: str | None = None,
        industry: str | None = None,
        specialty: str | None = None,
        license_type: str | None = None,
        email_status: str | None = None,
        page_size: int = 100,
        offset: int = 0,
    ) -> Iterator[ContactPreview]:
        """Every preview the search finds, page after page (by offset, up to the service's limit)."""

        def page(at: int) -> SearchResult:
            return self.search(
                q, state=state, city=city, industry=industry, specialty=specialty,
                license_type=license_type, email_status=email_status, limit=page_size, offset=at,
            )  # fmt: skip

        return by_offset(page, lambda p: p.contacts, lambda p: p.total, lambda c: c.id, offset=offset)

    def get(self, contact_id: str) -> RevealedContactView | ContactPreview:
        """The full record when this account revealed the contact (free), else its preview."""
        answer = self._t.send("GET", f"/contacts/{seg(contact_id)}")
        return parsed(answer, _CONTACT.validate_json)

    def reveal(self, contact_id: str, *, idempotency_key: str | None = None) -> RevealedContact:
        """Unlocks the contact for its price (D9), once (D10). ``meta.credits_charged`` and
        ``meta.credits_remaining`` carry the charge; sent with an Idempotency-Key (made unless given)."""
        return self._t.call(
            "POST", f"/contacts/{seg(contact_id)}/reveal", RevealedContact, idempotency_key=idempotency_key or AUTO
        )

    def report(self, contact_id: str, field: str, problem: str, *, note: str | None = None) -> ContactReportView:
        """Reports a wrong ``field`` (phone, email, website, address) of a contact this account revealed:
        ``problem`` is wrong, disconnected or closed_business. Once the field is found bad the reveal's
        share for it is refunded (``credits_refunded``). One report per contact and field: sending it
        again answers the first as it stands. `NotRevealed` when the account did not reveal the contact."""
        body = _policy.body_of(None, {"field": field, "problem": problem, "note": note})
        return self._t.call("POST", f"/contacts/{seg(contact_id)}/report", ContactReportView, body=body)

    def batch_reveal(
        self,
        contact_ids: Sequence[str],
        *,
        webhook_url: str | None = None,
        idempotency_key: str | None = None,
    ) -> BatchRevealResult | BatchRevealAccepted:
        """1–100 contacts at once (D16): the results, or with ``webhook_url`` the accepted batch."""
        body = _policy.body_of(None, {"contact_ids": list(contact_ids), "webhook_url": webhook_url})
        answer = self._t.send(
            "POST", "/contacts/batch-reveal", body=body, idempotency_key=idempotency_key or AUTO
        )
        if answer.response.status_code == 202:
            return parsed(answer, BatchRevealAccepted.model_validate_json)
        return parsed(answer, BatchRevealResult.model_validate_json)

    def batch_reveal_status(self, batch_id: str) -> BatchRevealProgress:
        return self._t.call("GET", f"/contacts/batch-reveal/{seg(batch_id)}", BatchRevealProgress)

    def decision_makers(self, contact_id: str) -> DecisionMakerList:
        """The people with authority at the business, from the registries (D31)."""
        return self._t.call("GET", f"/contacts/{seg(contact_id)}/decision-makers", DecisionMakerList)

    def enrich(
        self,
        contact_id: str,
        *,
        fields: Sequence[str] | None = None,
        providers: Sequence[str] | None = None,
        refresh: bool | None = None,
        dry_run: bool | None = None,
    ) -> EnrichResult:
        """Asks the account's own providers, in its order, for what is missing (D32); no credits."""
        body = _policy.body_of(
            None,
            {
                "fields": list(fields) if fields is not None else None,
                "providers": list(providers) if providers is not None else None,
                "refresh": refresh,
                "dry_run": dry_run,
            },
        )
        return self._t.call("POST", f"/contacts/{seg(contact_id)}/enrich", EnrichResult, body=body)

    def enrichment(self, contact_id: str) -> EnrichmentView:
        """What enrichment found for the contact so far, with each value's provider."""
        return self._t.call("GET", f"/contacts/{seg(contact_id)}/enrichment", EnrichmentView)

    def batch_enrich(
        self,
        contact_ids: Sequence[str],
        *,
        fields: Sequence[str] | None = None,
        providers: Sequence[str] | None = None,
        webhook_url: str | None = None,
        idempotency_key: str | None = None,
    ) -> BatchEnrichAccepted:
        """1–100 contacts enriched by the worker; progress with ``batch_enrich_status``."""
        body = _policy.body_of(
            None,
            {
                "contact_ids": list(contact_ids),
                "fields": list(fields) if fields is not None else None,
                "providers": list(providers) if providers is not None else None,
                "webhook_url": webhook_url,
            },
        )
        return self._t.call(
            "POST", "/contacts/batch-enrich", BatchEnrichAccepted, body=body, idempotency_key=idempotency_key or AUTO
        )

    def batch_enrich_status(self, batch_id: str) -> BatchEnrichProgress:
        return self._t.call("GET", f"/contacts/batch-enrich/{seg(batch_id)}", BatchEnrichProgress)
