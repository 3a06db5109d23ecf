"""The signal stream as an iterator of events that reconnects by itself (D23).

A connection that ends (the server's connection lifetime, a proxy, a network failure, a silence past
the read timeout) is opened again with `Last-Event-ID`: the service replays what was missed, and an
event at or below the last id already yielded is dropped, so none is yielded twice. A stream started
without an id starts after the newest matching signal (one `GET /signals?limit=1` first), so that
every connection, the first included, names where it resumes.

A stream whose access ended while it was open (key revoked, account suspended…) gets a last
`closed` event naming the reason: that is the end, not a disconnection. The stream raises
`StreamClosed` and connects no more (a new connection would only be refused).
"""

from __future__ import annotations

import json
import logging
import random
from collections import deque
from collections.abc import AsyncGenerator, Mapping
from types import TracebackType

import httpx

from vpx_client._async._transport import AsyncTransport
from vpx_client._io import async_sleep
from vpx_client._meta import ResponseMeta, attach
from vpx_client._sse import EventParser, RawEvent, SignalEvent
from vpx_client.errors import ConnectionFailed, RateLimited, ServerError, StreamClosed
from vpx_client.models import SignalPage, SignalView

log = logging.getLogger("vpx_client")

# The wait before reconnecting when the server named none (`retry:`), in seconds.
DEFAULT_RECONNECT_DELAY = 1.0
_RECENT_IDS = 1000


class AsyncSignalStream:
    """Iterate it for `SignalEvent`s; ``last_event_id`` is the id to resume from (keep it to resume
    in another process: ``client.signals.stream(last_event_id=...)``). Close it, or use it as a
    context manager, to end the connection. When the service closes the stream for good (its access
    ended), iterating raises `StreamClosed` and ``closed_reason`` keeps its reason."""

    def __init__(
        self,
        transport: AsyncTransport,
        params: Mapping[str, str],
        *,
        last_event_id: str | None,
        read_timeout: float,
        max_failures: int,
    ) -> None:
        self.last_event_id = last_event_id
        self.connections = 0
        self.closed_reason: str | None = None
        self._transport = transport
        self._params = dict(params)
        self._timeout = httpx.Timeout(10.0, read=read_timeout)
        self._max_failures = max_failures
        self._recent: deque[str] = deque(maxlen=_RECENT_IDS)
        self._rng = random.Random()
        self._events = self._run()

    def __aiter__(self) -> AsyncSignalStream:
        return self

    async def __anext__(self) -> SignalEvent:
        return await self._events.__anext__()

    async def __aenter__(self) -> AsyncSignalStream:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._events.aclose()

    def _is_new(self, event_id: str | None) -> bool:
        if event_id is None:
            return True
        last = self.last_event_id
        if last is not None and event_id.isdigit() and last.isdigit():
            return int(event_id) > int(last)
        return event_id not in self._recent

    async def _run(self) -> AsyncGenerator[SignalEvent, None]:
        failures = 0
        while True:
            try:
                if self.last_event_id is None:
                    self.last_event_id = await self._newest_sequence()
                answer = await self._transport.send(
                    "GET",
                    "/signals/stream",
                    params=self._params,
                    headers={"Last-Event-ID": self.last_event_id},
                    stream=True,
                    accept="text/event-stream",
                    timeouts=self._timeout,
                )
            except (ConnectionFailed, ServerError, RateLimited) as exc:
                failures += 1
                if failures > self._max_failures:
                    raise
                delay = self._transport.retry.backoff_delay(failures, self._rng)
                log.info("vpx signal stream: %s; reconnecting in %.2f s", exc, delay)
                await async_sleep(delay)
                continue
            failures = 0
            self.connections += 1
            parser = EventParser(last_event_id=self.last_event_id)
            response = answer.response
            try:
                async for line in response.aiter_lines():
                    raw = parser.feed(line)
                    if raw is None:
                        continue
                    if raw.event == "closed":
                        # The access ended: no reconnection, whatever the connection does next.
                        closed = self._closed(raw, answer.meta)
                        self.closed_reason = closed.reason
                        raise closed
                    if raw.event != "signal" or not self._is_new(raw.id):
                        continue
                    event = self._event(raw, answer.meta)
                    if raw.id is not None:
                        self.last_event_id = raw.id
                        self._recent.append(raw.id)
                    yield event
            except httpx.TransportError as exc:
                log.info("vpx signal stream: connection lost (%s); resuming after %s", exc, self.last_event_id)
            finally:
                await response.aclose()
            delay = parser.retry_ms / 1000 if parser.retry_ms is not None else DEFAULT_RECONNECT_DELAY
            await async_sleep(delay)

    async def _newest_sequence(self) -> str:
        """Where a stream that starts "from now" starts: after the newest signal its filters match
        (0 when none does). Every connection then carries a Last-Event-ID, so a reconnection before
        the first event misses nothing either."""
        page = await self._transport.call("GET", "/signals", SignalPage, params={**self._params, "limit": "1"})
        return str(page.signals[0].sequence) if page.signals else "0"

    @staticmethod
    def _closed(raw: RawEvent, meta: ResponseMeta) -> StreamClosed:
        """The error for the `closed` event, whose data is {"reason", "detail"} (read leniently: a
        reason this client does not know is kept as it is)."""
        try:
            data = json.loads(raw.data)
        except ValueError:
            data = None
        fields = data if isinstance(data, dict) else {}
        reason = fields.get("reason") if isinstance(fields.get("reason"), str) else "unknown"
        detail = fields.get("detail") if isinstance(fields.get("detail"), str) else None
        message = f"the service closed the signal stream: {reason}" + (f" ({detail})" if detail else "")
        return StreamClosed(message, problem={"code": reason, "detail": detail}, meta=meta)

    @staticmethod
    def _event(raw: RawEvent, meta: ResponseMeta) -> SignalEvent:
        signal = SignalView.model_validate_json(raw.data)
        attach(signal, meta)
        return SignalEvent(id=raw.id, event=raw.event, signal=signal)
