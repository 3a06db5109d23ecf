# Generated from the async client by clients/python/scripts/unasync.py. Do not edit: regenerate.
"""`client.exports`: the CSV exports (D30), streamed to a file in constant memory."""

from __future__ import annotations

from datetime import datetime

import httpx

from vpx_client import _policy
from vpx_client._blocking._transport import Transport
from vpx_client._files import Destination, ExportResult, Sink
from vpx_client.errors import ConnectionFailed


class Exports:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def contacts(
        self,
        destination: Destination,
        *,
        q: str | None = None,
        state: str | None = None,
        city: str | None = None,
        industry: str | None = None,
        specialty: str | None = None,
        license_type: str | None = None,
        email_status: str | None = None,
    ) -> ExportResult:
        """The account's revealed contacts (search filters apply) as CSV, written to ``destination``."""
        params = _policy.query(
            q=q, state=state, city=city, industry=industry, specialty=specialty, license_type=license_type,
            email_status=email_status,
        )  # fmt: skip
        return self._download("/exports/contacts.csv", params, destination)

    def signals(
        self,
        destination: Destination,
        *,
        category: str | None = None,
        industry: str | None = None,
        intent_level: str | None = None,
        state: str | None = None,
        source_status: str | None = None,
        since: datetime | str | None = None,
    ) -> ExportResult:
        """The signals a query returns, as CSV, written to ``destination``."""
        params = _policy.query(
            category=category, industry=industry, intent_level=intent_level, state=state,
            source_status=source_status, since=since,
        )  # fmt: skip
        return self._download("/exports/signals.csv", params, destination)

    def _download(self, path: str, params: dict[str, str], destination: Destination) -> ExportResult:
        answer = self._t.send("GET", path, params=params, stream=True, accept="text/csv")
        sink = Sink(destination)
        try:
            for chunk in answer.response.iter_bytes():
                sink.write(chunk)
        except httpx.TransportError as exc:
            sink.abandon()
            raise ConnectionFailed(f"GET {path}: the export was cut off ({exc})", meta=answer.meta) from exc
        except BaseException:
            sink.abandon()
            raise
        finally:
            answer.response.close()
        sink.commit()
        return ExportResult(path=sink.path, bytes_written=sink.written, meta=answer.meta)
