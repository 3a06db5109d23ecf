"""A real IMAP server for tests: a private Dovecot (Debian's dovecot-imapd) on 127.0.0.1, with its own
configuration, users and Maildirs in a temporary directory, stopped at the end of the session.

Plain IMAP and STARTTLS on one port, IMAP over TLS on another, both with a self-signed certificate for
127.0.0.1. Each test takes a mailbox of its own (a new user), so tests never see each other's mail.

Use from a test module:

    from tests.sequences.dovecot import Mailbox, dovecot_server, fresh_mailbox  # noqa: F401 (fixtures)

    def test_something(imap_mailbox: Mailbox) -> None:
        uid = imap_mailbox.deliver(raw)

The session's ``dovecot`` fixture also answers for one shared mailbox of its own (``dovecot.username``,
``dovecot.password``, ``dovecot.deliver(raw)``, ``dovecot.flags_of(uid)``, ``dovecot.account()``).

The fixtures skip, saying why, when Dovecot is missing and cannot be installed (apt-get, as root) or
does not start.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import grp
import ipaddress
import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from imapclient import IMAPClient  # type: ignore[import-untyped]

from vpx.mailboxes.imap import ImapAccount

DOVECOT = "/usr/sbin/dovecot"
PACKAGE = "dovecot-imapd"
INSTALL_SECONDS = 600
START_SECONDS = 10.0
# Users are written before Dovecot starts: one added later waits a second to be seen.
USERS_PER_BATCH = 64
_install_lock = threading.Lock()
_install_result: list[str | None] = []


def ensure_installed() -> str | None:
    """None when Dovecot is there (installing Debian's package first when missing and we are root);
    else why not, for a skip."""
    with _install_lock:
        if not _install_result:
            _install_result.append(_install())
        return _install_result[0]


def _install() -> str | None:
    if Path(DOVECOT).exists():
        return None
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return f"{DOVECOT} is missing; install Debian's {PACKAGE} (apt-get install {PACKAGE}) to run these tests"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    command = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", PACKAGE]
    output = ""
    # The first try works when the package lists are fresh; otherwise fetch them and try again.
    for before in ([], ["apt-get", "update", "-qq"]):
        try:
            if before:
                subprocess.run(before, env=env, capture_output=True, timeout=INSTALL_SECONDS, check=False)
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=INSTALL_SECONDS)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"could not install {PACKAGE}: {exc}"
        output = (done.stdout + done.stderr).strip()
        if done.returncode == 0 and Path(DOVECOT).exists():
            return None
    return f"could not install {PACKAGE}: {output[-400:]}"


def version() -> str:
    """Dovecot's version, e.g. "2.3.19.1"."""
    done = subprocess.run([DOVECOT, "--version"], capture_output=True, text=True, timeout=10, check=True)
    return done.stdout.split()[0]


@dataclass(frozen=True)
class Mailbox:
    """One user's mailbox on the test server; the test side may change it, vpx's code may not."""

    host: str
    port: int
    tls_port: int
    username: str
    password: str

    def account(self, **changes: Any) -> ImapAccount:
        """The account vpx would be given: plain IMAP on 127.0.0.1 unless ``changes`` say otherwise."""
        account = ImapAccount(
            host=self.host, port=self.port, security="none", username=self.username, password=self.password,
            timeout=5.0, allow_private=True,
        )  # fmt: skip
        return replace(account, **changes)

    @contextlib.contextmanager
    def client(self) -> Iterator[Any]:
        """A logged-in IMAPClient for the test side."""
        client = IMAPClient(self.host, port=self.port, ssl=False, timeout=5)
        try:
            client.login(self.username, self.password)
            yield client
        finally:
            with contextlib.suppress(Exception):
                client.logout()

    def deliver(self, raw: bytes, folder: str = "INBOX", flags: tuple[str, ...] = ()) -> int:
        """Puts a message in ``folder`` (IMAP APPEND) and returns its UID."""
        with self.client() as client:
            answer = client.append(folder, raw, flags=flags)
        found = re.search(rb"APPENDUID \d+ (\d+)", answer)
        assert found is not None, answer
        return int(found.group(1))

    def flags_of(self, uid: int, folder: str = "INBOX") -> tuple[str, ...]:
        """The message's flags, read without changing them."""
        with self.client() as client:
            client.select_folder(folder, readonly=True)
            data = client.fetch([uid], ["FLAGS"])
        return tuple(flag.decode() for flag in data[uid][b"FLAGS"])

    def uidvalidity(self, folder: str = "INBOX") -> int:
        with self.client() as client:
            return int(client.folder_status(folder, [b"UIDVALIDITY"])[b"UIDVALIDITY"])

    def create_folder(self, folder: str) -> None:
        with self.client() as client:
            client.create_folder(folder)

    def recreate_folder(self, folder: str) -> None:
        """Deletes ``folder`` and makes it again: a new UIDVALIDITY, its UIDs starting over."""
        with self.client() as client:
            client.delete_folder(folder)
            client.create_folder(folder)


class Dovecot:
    """A private Dovecot: start() it, take new_mailbox()es, stop() it."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="vpx-dovecot-"))
        self.root.chmod(0o755)  # the mail processes run as another user and must reach their homes
        self.host = "127.0.0.1"
        self.port = 0
        self.tls_port = 0
        self.version = version()
        self.process: subprocess.Popen[bytes] | None = None
        self._users = 0
        self._users_lock = threading.Lock()
        self._free: dict[bool, list[Mailbox]] = {False: [], True: []}
        self.shared = Mailbox(self.host, 0, 0, "", "")
        self._mail_uid, self._mail_gid = _mail_user()

    # The shared mailbox, for tests that need only one.
    @property
    def username(self) -> str:
        return self.shared.username

    @property
    def password(self) -> str:
        return self.shared.password

    def account(self, **changes: Any) -> ImapAccount:
        return self.shared.account(**changes)

    def deliver(self, raw: bytes, folder: str = "INBOX", flags: tuple[str, ...] = ()) -> int:
        return self.shared.deliver(raw, folder, flags)

    def flags_of(self, uid: int, folder: str = "INBOX") -> tuple[str, ...]:
        return self.shared.flags_of(uid, folder)

    @property
    def log(self) -> str:
        paths = [self.root / "stderr.log", self.root / "dovecot.log"]
        return "".join(path.read_text(errors="replace") for path in paths if path.exists())

    def start(self) -> None:
        """Starts Dovecot in the foreground of a child process; RuntimeError with its log when it fails."""
        for directory in ("run", "state", "home"):
            (self.root / directory).mkdir(exist_ok=True)
        os.chown(self.root / "home", self._mail_uid, self._mail_gid)
        self._add_users()
        _write_certificate(self.root)
        for _attempt in range(3):  # a free port can be taken between finding and binding it
            self.port, self.tls_port = _free_port(), _free_port()
            config = self.root / "dovecot.conf"
            config.write_text(self._config())
            with (self.root / "stderr.log").open("ab") as stderr:
                self.process = subprocess.Popen([DOVECOT, "-F", "-c", str(config)], stdout=stderr, stderr=stderr)
            if self._ready():
                self.shared = self.new_mailbox()
                return
            self.stop()
        raise RuntimeError(f"dovecot {self.version} did not start:\n{self.log[-2000:]}")

    def _ready(self) -> bool:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                return False
            with contextlib.suppress(OSError), socket.create_connection((self.host, self.port), timeout=1) as sock:
                if sock.recv(64).startswith(b"* OK"):
                    return True
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        """Stops the Dovecot this object started (its master process ends its children)."""
        process, self.process = self.process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def new_mailbox(self, *, non_ascii_password: bool = False) -> Mailbox:
        """A user no one has used, with an empty mailbox (INBOX and a \\Sent-marked Sent)."""
        with self._users_lock:
            if not self._free[non_ascii_password]:
                self._add_users()
                # Dovecot looks at a changed passwd-file at most once a second.
                time.sleep(1.1)
            mailbox = self._free[non_ascii_password].pop()
        return replace(mailbox, port=self.port, tls_port=self.tls_port)

    def _add_users(self) -> None:
        """Writes USERS_PER_BATCH users to the passwd-file, a few with passwords beyond ASCII."""
        lines = []
        for number in range(self._users + 1, self._users + USERS_PER_BATCH + 1):
            non_ascii = number % 16 == 0
            username = f"user{number}@example.test"
            password = f"{'pässwörd-' if non_ascii else 'pw-'}{secrets.token_hex(8)}"
            lines.append(f"{username}:{{PLAIN}}{password}::::::\n")
            self._free[non_ascii].append(Mailbox(self.host, self.port, self.tls_port, username, password))
        self._users += USERS_PER_BATCH
        with (self.root / "users").open("a", encoding="utf-8") as users:
            users.writelines(lines)

    def _config(self) -> str:
        settings = {
            "root": self.root,
            "port": self.port,
            "tls_port": self.tls_port,
            "uid": self._mail_uid,
            "gid": self._mail_gid,
            "instance": f"vpx-test-{self.root.name}",
            "login_chroot": "",
        }
        rootless = ""
        if os.geteuid() != 0:
            # Without root every process runs as us: no chroot, no switching users.
            settings["login_chroot"] = "chroot ="
            user, group = pwd.getpwuid(os.geteuid()).pw_name, grp.getgrgid(os.getegid()).gr_name
            rootless = _ROOTLESS.format(user=user, group=group)
        template = _CONFIG_24 if self.version.startswith("2.4") else _CONFIG_23
        return template.format(**settings) + rootless


def _mail_user() -> tuple[int, int]:
    """The user the mail processes run as: ourselves, or "nobody" when root (Dovecot refuses UID 0)."""
    if os.geteuid() != 0:
        return os.geteuid(), os.getegid()
    nobody = pwd.getpwnam("nobody")
    return nobody.pw_uid, nobody.pw_gid


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _write_certificate(root: Path) -> None:
    """A self-signed certificate for 127.0.0.1 and localhost, for TLS and STARTTLS."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "vpx test IMAP")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.IPv4Address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    (root / "cert.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (root / "key.pem").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    (root / "key.pem").chmod(0o600)


@pytest.fixture(scope="session", name="dovecot")
def dovecot_server() -> Iterator[Dovecot]:
    """A running private Dovecot for the session; skips, saying why, when there is none to be had."""
    missing = ensure_installed()
    if missing is not None:
        pytest.skip(missing)
    try:
        server = Dovecot()
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"{DOVECOT} does not run: {exc}")
    try:
        server.start()
    except RuntimeError as exc:
        server.remove()
        pytest.skip(str(exc))
    try:
        yield server
    finally:
        server.stop()
        server.remove()


@pytest.fixture(name="imap_mailbox")
def fresh_mailbox(dovecot: Dovecot) -> Mailbox:
    """An empty mailbox of its own for each test."""
    return dovecot.new_mailbox()


# Debian 12's Dovecot. Everything lives under the temporary directory; only imap is served.
_CONFIG_23 = """\
base_dir = {root}/run
state_dir = {root}/state
instance_name = {instance}
log_path = {root}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = yes
ssl_cert = <{root}/cert.pem
ssl_key = <{root}/key.pem
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_failure_delay = 0
first_valid_uid = 1
passdb {{
  driver = passwd-file
  args = scheme=PLAIN {root}/users
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={root}/home/%u
}}
mail_location = maildir:~/Maildir
namespace inbox {{
  inbox = yes
  separator = /
  mailbox Sent {{
    special_use = \\Sent
    auto = subscribe
  }}
}}
# No growing delay before logins after the wrong-password tests: Dovecot's auth penalty off.
service anvil {{
  {login_chroot}
  unix_listener anvil-auth-penalty {{
    mode = 0
  }}
}}
service imap-login {{
  {login_chroot}
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {tls_port}
    ssl = yes
  }}
}}
"""

# Dovecot 2.4 (Debian 13) renamed most of these settings. Written from its documentation; this machine
# runs 2.3, so a failure here shows as a skip with Dovecot's own log.
_CONFIG_24 = """\
dovecot_config_version = 2.4.0
dovecot_storage_version = 2.4.0
base_dir = {root}/run
state_dir = {root}/state
instance_name = {instance}
log_path = {root}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = yes
ssl_server_cert_file = {root}/cert.pem
ssl_server_key_file = {root}/key.pem
auth_allow_cleartext = yes
auth_mechanisms = plain login
auth_failure_delay = 0
first_valid_uid = 1
passdb passwd-file {{
  passwd_file_path = {root}/users
}}
userdb static {{
  fields {{
    uid = {uid}
    gid = {gid}
    home = {root}/home/%{{user}}
  }}
}}
mail_driver = maildir
mail_path = ~/Maildir
namespace inbox {{
  inbox = yes
  separator = /
  mailbox Sent {{
    special_use = \\Sent
    auto = subscribe
  }}
}}
# No growing delay before logins after the wrong-password tests: Dovecot's auth penalty off.
service anvil {{
  {login_chroot}
  unix_listener anvil-auth-penalty {{
    mode = 0
  }}
}}
service imap-login {{
  {login_chroot}
  inet_listener imap {{
    listen = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    listen = 127.0.0.1
    port = {tls_port}
    ssl = yes
  }}
}}
"""

_ROOTLESS = """\
default_internal_user = {user}
default_internal_group = {group}
default_login_user = {user}
"""
