"""A download in progress, kept on disk so that it may go on after a cut connection or a crash."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

CHUNK = 1024 * 1024


@dataclass
class PartFile:
    """``dest.part`` and beside it what the server said of the file (``.part.json``), so that a later
    request, in this run or the next, may go on where the bytes stop."""

    dest: Path
    etag: str | None = None
    last_modified: str | None = None
    size: int = 0
    _handle: IO[bytes] | None = None
    _hash: Any = field(default=None)

    @property
    def path(self) -> Path:
        return self.dest.with_name(self.dest.name + ".part")

    @property
    def meta(self) -> Path:
        return self.dest.with_name(self.dest.name + ".part.json")

    @property
    def if_range(self) -> str:
        return self.etag or self.last_modified or ""

    def resumable_from(self, url: str) -> int:
        """Bytes held of ``url`` that the server may continue (a strong ETag or a Last-Modified to
        tie them to the same file); 0 when none."""
        try:
            meta = json.loads(self.meta.read_text())
            held = self.path.stat().st_size
        except (OSError, ValueError):
            return 0
        etag = meta.get("etag")
        self.etag = etag if etag and not etag.startswith("W/") else None
        self.last_modified = meta.get("last_modified")
        if meta.get("url") != url or not (self.etag or self.last_modified):
            return 0
        self.size = held
        return held

    def open(self, url: str, etag: str | None, last_modified: str | None, offset: int) -> None:
        self.dest.parent.mkdir(parents=True, exist_ok=True)
        self.etag, self.last_modified = etag, last_modified
        self._hash = hashlib.sha256()
        if offset:
            with self.path.open("rb") as held:
                while chunk := held.read(CHUNK):
                    self._hash.update(chunk)
            self._handle = self.path.open("r+b")
            self._handle.truncate(offset)
            self._handle.seek(offset)
        else:
            self._handle = self.path.open("wb")
        self.size = offset
        meta = {"url": url, "etag": etag, "last_modified": last_modified}
        self.meta.write_text(json.dumps(meta))

    def write(self, chunk: bytes) -> None:
        assert self._handle is not None
        self._handle.write(chunk)
        self._hash.update(chunk)
        self.size += len(chunk)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def finish(self) -> tuple[str, int]:
        """The complete file moved into place; its SHA-256 and size."""
        os.replace(self.path, self.dest)
        self.meta.unlink(missing_ok=True)
        return self._hash.hexdigest(), self.size

    def discard(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)
        self.meta.unlink(missing_ok=True)
        self.size = 0
