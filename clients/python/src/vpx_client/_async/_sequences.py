"""`client.sequences` and `client.mailboxes`: outbound sequences through the account's own mailbox (D34)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from vpx_client import _policy
from vpx_client._async._pages import by_cursor
from vpx_client._async._transport import AsyncTransport, parsed
from vpx_client._meta import ResponseMeta
from vpx_client._policy import UNSET, Unset
from vpx_client._policy import segment as seg
from vpx_client.models import (
    EmailStep,
    EnrollmentList,
    EnrollmentView,
    EnrollResponse,
    InboundAccepted,
    MailboxList,
    MailboxView,
    SendWindow,
    SequenceList,
    SequenceView,
    TaskStep,
    VerifyResult,
)

Step = EmailStep | TaskStep | Mapping[str, Any]
Window = SendWindow | Mapping[str, Any]


def _steps(steps: Sequence[Step]) -> list[dict[str, Any]]:
    return [_policy.body_of(step, {}) for step in steps]


class AsyncSequences:
    def __init__(self, transport: AsyncTransport) -> None:
        self._t = transport

    async def create(
        self, name: str, mailbox_id: str, steps: Sequence[Step], *, send_window: Window | None = None
    ) -> SequenceView:
        """A sequence of email, wait and task steps, sent from ``mailbox_id`` within ``send_window``."""
        body = _policy.body_of(
            None,
            {
                "name": name,
                "mailbox_id": mailbox_id,
                "steps": _steps(steps),
                "send_window": _policy.body_of(send_window, {}) if send_window is not None else None,
            },
        )
        return await self._t.call("POST", "/sequences", SequenceView, body=body)

    async def list(self, *, limit: int | None = None, cursor: str | None = None) -> SequenceList:
        """One page of the sequences; the default page holds every sequence an account may have."""
        params = _policy.query(limit=limit, cursor=cursor)
        return await self._t.call("GET", "/sequences", SequenceList, params=params)

    def iterate(self, *, page_size: int = 100) -> AsyncIterator[SequenceView]:
        async def page(at: str | None) -> SequenceList:
            return await self.list(limit=page_size, cursor=at)

        return by_cursor(page, lambda p: p.next_cursor, lambda p: p.sequences)

    async def get(self, sequence_id: str) -> SequenceView:
        return await self._t.call("GET", f"/sequences/{seg(sequence_id)}", SequenceView)

    async def update(
        self,
        sequence_id: str,
        *,
        name: str | Unset = UNSET,
        mailbox_id: str | Unset = UNSET,
        steps: Sequence[Step] | Unset = UNSET,
        send_window: Window | Unset = UNSET,
    ) -> SequenceView:
        body = _policy.changes(
            name=name,
            mailbox_id=mailbox_id,
            steps=_steps(steps) if not isinstance(steps, Unset) else UNSET,
            send_window=_policy.body_of(send_window, {}) if not isinstance(send_window, Unset) else UNSET,
        )
        return await self._t.call("PATCH", f"/sequences/{seg(sequence_id)}", SequenceView, body=body)

    async def delete(self, sequence_id: str) -> ResponseMeta:
        """Deletes the sequence with its versions, enrollments and the record of their messages; nothing
        more is sent. The account's unsubscribes stay."""
        return await self._t.call_empty("DELETE", f"/sequences/{seg(sequence_id)}")

    async def pause(self, sequence_id: str) -> SequenceView:
        return await self._t.call("POST", f"/sequences/{seg(sequence_id)}/pause", SequenceView)

    async def resume(self, sequence_id: str) -> SequenceView:
        return await self._t.call("POST", f"/sequences/{seg(sequence_id)}/resume", SequenceView)

    async def enroll(
        self, sequence_id: str, contact_ids: Sequence[str], *, decision_maker: bool | None = None
    ) -> EnrollResponse:
        """Enrolls revealed contacts (or their decision-maker); one result per contact."""
        body = _policy.body_of(None, {"contact_ids": [*contact_ids], "decision_maker": decision_maker})
        return await self._t.call("POST", f"/sequences/{seg(sequence_id)}/enrollments", EnrollResponse, body=body)

    async def enrollments(
        self, sequence_id: str, *, status: str | None = None, cursor: str | None = None, limit: int | None = None
    ) -> EnrollmentList:
        params = _policy.query(status=status, cursor=cursor, limit=limit)
        return await self._t.call("GET", f"/sequences/{seg(sequence_id)}/enrollments", EnrollmentList, params=params)

    def iterate_enrollments(
        self, sequence_id: str, *, status: str | None = None, page_size: int = 100
    ) -> AsyncIterator[EnrollmentView]:
        async def page(at: str | None) -> EnrollmentList:
            return await self.enrollments(sequence_id, status=status, cursor=at, limit=page_size)

        return by_cursor(page, lambda p: p.next_cursor, lambda p: p.enrollments)

    async def stop_enrollment(self, enrollment_id: str) -> ResponseMeta:
        return await self._t.call_empty("DELETE", f"/enrollments/{seg(enrollment_id)}")


class AsyncMailboxes:
    def __init__(self, transport: AsyncTransport) -> None:
        self._t = transport

    async def create(
        self,
        email: str,
        *,
        smtp_host: str,
        smtp_port: int,
        smtp_security: str,
        postal_address: str,
        smtp_username: str | None = None,
        smtp_password: str | None = None,
        from_name: str | None = None,
        imap_host: str | None = None,
        imap_port: int | None = None,
        imap_security: str | None = None,
        imap_username: str | None = None,
        imap_password: str | None = None,
        daily_limit: int | None = None,
        send_interval_seconds: int | None = None,
    ) -> MailboxView:
        """The account's own SMTP (and optionally IMAP) mailbox; passwords are stored encrypted."""
        body = _policy.body_of(
            None,
            {
                "email": email, "smtp_host": smtp_host, "smtp_port": smtp_port, "smtp_security": smtp_security,
                "postal_address": postal_address, "smtp_username": smtp_username, "smtp_password": smtp_password,
                "from_name": from_name, "imap_host": imap_host, "imap_port": imap_port,
                "imap_security": imap_security, "imap_username": imap_username, "imap_password": imap_password,
                "daily_limit": daily_limit, "send_interval_seconds": send_interval_seconds,
            },
        )  # fmt: skip
        return await self._t.call("POST", "/mailboxes", MailboxView, body=body)

    async def list(self, *, limit: int | None = None, cursor: str | None = None) -> MailboxList:
        """One page of the mailboxes; the default page holds every mailbox an account may have."""
        params = _policy.query(limit=limit, cursor=cursor)
        return await self._t.call("GET", "/mailboxes", MailboxList, params=params)

    def iterate(self, *, page_size: int = 100) -> AsyncIterator[MailboxView]:
        async def page(at: str | None) -> MailboxList:
            return await self.list(limit=page_size, cursor=at)

        return by_cursor(page, lambda p: p.next_cursor, lambda p: p.mailboxes)

    async def get(self, mailbox_id: str) -> MailboxView:
        return await self._t.call("GET", f"/mailboxes/{seg(mailbox_id)}", MailboxView)

    async def update(
        self,
        mailbox_id: str,
        *,
        status: str | Unset = UNSET,
        smtp_host: str | Unset = UNSET,
        smtp_port: int | Unset = UNSET,
        smtp_security: str | Unset = UNSET,
        smtp_username: str | Unset | None = UNSET,
        smtp_password: str | Unset | None = UNSET,
        postal_address: str | Unset = UNSET,
        from_name: str | Unset | None = UNSET,
        imap_host: str | Unset | None = UNSET,
        imap_port: int | Unset | None = UNSET,
        imap_security: str | Unset | None = UNSET,
        imap_username: str | Unset | None = UNSET,
        imap_password: str | Unset | None = UNSET,
        daily_limit: int | Unset = UNSET,
        send_interval_seconds: int | Unset = UNSET,
    ) -> MailboxView:
        """Changes the fields given; ``status`` is `active` or `paused`."""
        body = _policy.changes(
            status=status, smtp_host=smtp_host, smtp_port=smtp_port, smtp_security=smtp_security,
            smtp_username=smtp_username, smtp_password=smtp_password, postal_address=postal_address,
            from_name=from_name, imap_host=imap_host, imap_port=imap_port, imap_security=imap_security,
            imap_username=imap_username, imap_password=imap_password, daily_limit=daily_limit,
            send_interval_seconds=send_interval_seconds,
        )  # fmt: skip
        return await self._t.call("PATCH", f"/mailboxes/{seg(mailbox_id)}", MailboxView, body=body)

    async def delete(self, mailbox_id: str) -> ResponseMeta:
        return await self._t.call_empty("DELETE", f"/mailboxes/{seg(mailbox_id)}")

    async def verify(self, mailbox_id: str) -> VerifyResult:
        """Connects to the mailbox's servers and says whether sending (and reading) works."""
        return await self._t.call("POST", f"/mailboxes/{seg(mailbox_id)}/verify", VerifyResult)

    async def inbound(self, mailbox_id: str, message: bytes) -> InboundAccepted:
        """Hands in a received email (RFC 822 bytes): a reply or bounce stops its enrollment."""
        answer = await self._t.send("POST", f"/mailboxes/{seg(mailbox_id)}/inbound", raw=(message, "message/rfc822"))
        return parsed(answer, InboundAccepted.model_validate_json)
