"""Server-Sent Events, read line by line as the WHATWG event-stream rules say (only what the signal
stream uses: `id`, `event`, `data`, `retry` and comments)."""

from __future__ import annotations

from dataclasses import dataclass, field

from vpx_client.models import SignalView


@dataclass(frozen=True)
class RawEvent:
    id: str | None  # the id this event set (None: it set none)
    event: str
    data: str


@dataclass
class EventParser:
    """Feed it lines (without their ends); it returns an event at each blank line that ends one."""

    last_event_id: str | None = None
    retry_ms: int | None = None
    _event: str = ""
    _data: list[str] = field(default_factory=list)
    _has_data: bool = False
    _id: str | None = None

    def feed(self, line: str) -> RawEvent | None:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment: keep-alive pings, the stream's greeting
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
            self._has_data = True
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = self._id = value
        elif name == "retry" and value.isdigit():
            self.retry_ms = int(value)
        return None

    def _dispatch(self) -> RawEvent | None:
        event, data, has_data, event_id = self._event or "message", "\n".join(self._data), self._has_data, self._id
        self._event, self._data, self._has_data, self._id = "", [], False, None
        if not has_data:
            return None
        return RawEvent(id=event_id, event=event, data=data)


@dataclass(frozen=True)
class SignalEvent:
    """One message of the signal stream: ``id`` is the signal's ``sequence`` (what resuming sends back)."""

    id: str | None
    event: str
    signal: SignalView
