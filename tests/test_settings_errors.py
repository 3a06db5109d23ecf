"""Bad settings stop every command at start with one line naming the setting and the rule, never a
traceback, and never the value of a setting that holds a secret (tokens, keys, URLs with passwords)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from vpx.config import InvalidSettings, get_settings

VPX = str(Path(sys.executable).with_name("vpx"))
SECRET = "Pa55wordMarker"  # in every bad value below; it must never be printed


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """The process's settings read afresh from a clean VPX_ environment."""
    for name in list(os.environ):
        if name.startswith("VPX_"):
            monkeypatch.delenv(name)
    get_settings.cache_clear()
    yield monkeypatch
    get_settings.cache_clear()


@pytest.mark.parametrize(
    ("name", "value", "rule"),
    [
        ("VPX_ADMIN_TOKEN", "x", "at least 16 characters"),
        ("VPX_ADMIN_TOKEN", SECRET, "at least 16 characters"),
        ("VPX_ADMIN_TOKENS", f"alice={SECRET}", "at least 16 characters"),
        ("VPX_ADMIN_TOKENS", f"{SECRET}-without-a-name-0123456789", "name=token"),
        ("VPX_DATABASE_URL", f"postgresql+asyncpg://vpx:{SECRET}@db.example:notaport/vpx", "database URL"),
        ("VPX_DATABASE_URL", f"postgresql://vpx:{SECRET}@db.example/vpx", "postgresql+asyncpg://"),
        ("VPX_DATABASE_URL", f"{SECRET}", "database URL"),
        ("VPX_SMTP_URL", f"ftp://mailer:{SECRET}@smtp.example", "smtp://"),
        ("VPX_REDIS_URL", f"http://:{SECRET}@redis.example:6379/0", "redis://"),
        ("VPX_REDIS_URL", f"redis://:{SECRET}@redis.example:port/0", "redis://"),
    ],
)
def test_a_bad_secret_setting_is_named_with_its_rule_but_never_echoed(
    environment: pytest.MonkeyPatch, name: str, value: str, rule: str
) -> None:
    # (Unusable VPX_SECRET_KEYS stop the server when the keys are loaded, never quoted either:
    # tests/test_secrets.py.)
    environment.setenv(name, value)
    with pytest.raises(InvalidSettings) as raised:
        get_settings()
    message = str(raised.value)
    assert message.startswith(f"{name}: ") and rule in message, message
    assert "\n" not in message
    assert SECRET not in message and "input_value" not in message
    # Nothing chained to it would print the value either (a traceback shows the chain).
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_a_plain_setting_error_names_the_setting(environment: pytest.MonkeyPatch) -> None:
    environment.setenv("VPX_POOL_SIZE", "many")
    environment.setenv("VPX_RATE_LIMIT", "lots")
    with pytest.raises(InvalidSettings) as raised:
        get_settings()
    message = str(raised.value)
    assert "VPX_POOL_SIZE: " in message and "VPX_RATE_LIMIT: " in message and "\n" not in message


def test_good_operator_tokens_still_load(environment: pytest.MonkeyPatch) -> None:
    environment.setenv("VPX_ADMIN_TOKEN", "  " + "a" * 16 + "  ")
    environment.setenv("VPX_ADMIN_TOKENS", "alice=" + "b" * 16)
    assert get_settings().named_admin_tokens() == {"admin": "a" * 16, "alice": "b" * 16}
    environment.setenv("VPX_ADMIN_TOKEN", "")  # empty: the admin API is off, as when unset
    get_settings.cache_clear()
    assert get_settings().named_admin_tokens() == {"alice": "b" * 16}


def _run(args: list[str], environment: dict[str, str], tmp_path: Path) -> subprocess.Popen[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("VPX_")}
    return subprocess.Popen(
        [VPX, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**clean, "VPX_DATA_DIR": str(tmp_path / "var"), **environment},
    )


def test_commands_refuse_bad_settings_with_one_line_and_no_traceback(tmp_path: Path) -> None:
    database = f"sqlite+aiosqlite:///{tmp_path / 'vpx.db'}"
    runs = {
        "serve": _run(["serve", "--port", "1"], {"VPX_DATABASE_URL": database, "VPX_ADMIN_TOKEN": "x"}, tmp_path),
        "worker": _run(
            ["worker", "--json"], {"VPX_DATABASE_URL": f"postgresql://vpx:{SECRET}@127.0.0.1:1/vpx"}, tmp_path
        ),
        # Settings made in the command itself, next to the environment's.
        "openapi": _run(["openapi"], {"VPX_ADMIN_TOKENS": f"ops:{SECRET}"}, tmp_path),
    }
    named = {"serve": "VPX_ADMIN_TOKEN: ", "openapi": "VPX_ADMIN_TOKENS: "}
    for command, run in runs.items():
        stdout, stderr = run.communicate(timeout=30)
        assert run.returncode == 2, (command, stdout, stderr)
        assert "Traceback" not in stdout + stderr and SECRET not in stdout + stderr, (command, stdout, stderr)
        if command == "worker":  # --json: the one JSON object on stdout
            assert stderr == "" and stdout.count("\n") == 1, stdout
            assert '"code": "invalid_settings"' in stdout and "VPX_DATABASE_URL: " in stdout
        else:
            assert stdout == "" and stderr.count("\n") == 1 and named[command] in stderr, (command, stderr)
    assert not (tmp_path / "vpx.db").exists()  # nothing ran before the settings were checked
