"""Where an export is written: a path (written beside it, then moved into place) or an open binary file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from vpx_client._meta import ResponseMeta

Destination = str | os.PathLike[str] | IO[bytes]


@dataclass(frozen=True)
class ExportResult:
    """A finished export: where it went, how many bytes, and the response's metadata."""

    path: Path | None
    bytes_written: int
    meta: ResponseMeta


class Sink:
    """Writes chunks to the destination; ``commit`` makes a path appear only once complete."""

    def __init__(self, destination: Destination) -> None:
        self.written = 0
        if isinstance(destination, str | os.PathLike):
            self.path: Path | None = Path(destination)
            self._partial: Path | None = self.path.with_name(self.path.name + ".part")
            self._file: IO[bytes] = self._partial.open("wb")
            self._owned = True
        else:
            self.path = self._partial = None
            self._file = destination
            self._owned = False

    def write(self, chunk: bytes) -> None:
        self._file.write(chunk)
        self.written += len(chunk)

    def commit(self) -> None:
        if self._owned:
            self._file.close()
            assert self._partial is not None and self.path is not None
            os.replace(self._partial, self.path)

    def abandon(self) -> None:
        if self._owned:
            self._file.close()
            assert self._partial is not None
            self._partial.unlink(missing_ok=True)
