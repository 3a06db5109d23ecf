"""The box customer secrets are sealed in: Fernet (AES-128-CBC with HMAC-SHA256, from
``cryptography``) under the service's keys, MultiFernet so that keys rotate: the first key seals,
every key opens.

The keys come from ``VPX_SECRET_KEYS`` (comma-separated Fernet keys, as ``vpx secrets generate``
prints them). When it is unset, a key is generated on first run into ``VPX_DATA_DIR/secret.keys``
(mode 0600), so a single box needs no set-up; several processes (PostgreSQL deployments) must then
share that file or set the variable. A value that is set but unusable stops the service at start,
saying why — never a silent fallback that would seal secrets no other process can open.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from vpx.config import Settings

log = logging.getLogger("vpx.secrets")
KEY_FILE = "secret.keys"
# Every sealed value starts so: a Fernet token's version byte 0x80, then a timestamp whose top bytes
# are zero until 2106.
SEALED_PREFIX = "gAAAAA"


class SecretsUnavailable(Exception):
    """The service's secret keys are missing or unusable, or a sealed value opens with none of them."""


def is_sealed(value: str) -> bool:
    """Whether a stored value is a sealed one rather than plain text (JSON, a ``whsec_`` secret…)."""
    return value.startswith(SEALED_PREFIX)


def generate_key() -> str:
    """A new Fernet key (urlsafe base64 of 32 random bytes)."""
    return Fernet.generate_key().decode()


@dataclass(frozen=True)
class SecretBox:
    """Seals and opens customer secrets. ``origin`` says where the keys came from (for messages; never
    the keys themselves)."""

    fernet: MultiFernet
    key_count: int
    origin: str
    # The first key's bytes, from which ``derive_key`` derives keys for other purposes.
    _root: bytes = field(repr=False, compare=False, kw_only=True)

    @classmethod
    def from_keys(cls, keys: Sequence[str], *, origin: str) -> SecretBox:
        if not keys:
            raise SecretsUnavailable(f"{origin}: no key")
        fernets = []
        for position, key in enumerate(keys, start=1):
            try:
                fernets.append(Fernet(key.strip().encode()))
            except (ValueError, TypeError):
                raise SecretsUnavailable(
                    f"{origin}: key {position} of {len(keys)} is not a Fernet key (urlsafe base64 of 32 bytes; "
                    "`vpx secrets generate` prints one)"
                ) from None
        return cls(MultiFernet(fernets), len(fernets), origin, _root=keys[0].strip().encode())

    def derive_key(self, purpose: str) -> bytes:
        """A key for ``purpose`` (a keyed hash every process must compute alike, such as a rate-limit
        counter's name), derived from the sealing key: the same wherever the keys are, another after a
        rotation, and no use for opening secrets."""
        return hmac.new(self._root, f"vpx derived key: {purpose}".encode(), hashlib.sha256).digest()

    def seal(self, plaintext: str) -> str:
        return self.fernet.encrypt(plaintext.encode()).decode()

    def open(self, sealed: str) -> str:
        try:
            return self.fernet.decrypt(sealed.encode()).decode()
        except InvalidToken:
            raise SecretsUnavailable(
                f"a stored secret opens with none of the keys of {self.origin}: was a key removed before "
                "`vpx secrets rotate` re-sealed everything with the new one?"
            ) from None

    def reseal(self, sealed: str) -> str:
        """The same secret sealed with the first key (rotation)."""
        try:
            return self.fernet.rotate(sealed.encode()).decode()
        except InvalidToken:
            raise SecretsUnavailable(f"a stored secret opens with none of the keys of {self.origin}") from None


def load_box(settings: Settings) -> SecretBox:
    """The box for these settings: VPX_SECRET_KEYS, else the key file in the data directory (made on
    first run). Raises SecretsUnavailable, saying why, when the keys cannot be used."""
    if settings.secret_keys is not None:
        keys = [k for k in settings.secret_keys.split(",") if k.strip()]
        if not keys:
            raise SecretsUnavailable("VPX_SECRET_KEYS is set but empty: unset it, or give Fernet keys")
        return SecretBox.from_keys(keys, origin="VPX_SECRET_KEYS")
    path = Path(settings.data_dir) / KEY_FILE
    if not path.exists():
        _write_new_key(path)
        if not settings.is_sqlite:
            log.warning(
                "generated a secret key in %s: every server and worker process must use the same key "
                "(set VPX_SECRET_KEYS to it everywhere, or share the file)",
                path,
            )
    try:
        keys = [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    except OSError as exc:
        raise SecretsUnavailable(f"cannot read the secret key file {path}: {exc.strerror or exc}") from None
    return SecretBox.from_keys(keys, origin=str(path))


def _write_new_key(path: Path) -> None:
    """Writes a new key file, mode 0600, atomically: a process that races this one reads either no
    file or the whole of one (the file is linked into place only once written)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(prefix=".secret-", dir=path.parent)
    except OSError as exc:
        raise SecretsUnavailable(f"cannot create the secret key file {path}: {exc.strerror or exc}") from None
    try:
        os.fchmod(descriptor, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(
                "# vpx customer-secret keys (Fernet), one a line: the first seals, all open. Keep it private.\n"
            )
            handle.write(generate_key() + "\n")
        with contextlib.suppress(FileExistsError):  # another process made it first: theirs stands
            os.link(temporary, path)
    finally:
        os.unlink(temporary)
