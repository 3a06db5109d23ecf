"""Running async services from commands and printing their results."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from vpx.config import Settings, get_settings
from vpx.db import Database
from vpx.errors import ProblemError

T = TypeVar("T")
console = Console(stderr=False)
err_console = Console(stderr=True)

JsonOption = typer.Option(False, "--json", help="Print one JSON object on stdout.")


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def emit(data: dict[str, Any], *, as_json: bool, title: str | None = None) -> None:
    if as_json:
        sys.stdout.write(json.dumps(data, default=_default) + "\n")
        return
    table = Table(title=title, show_header=False)
    for key, value in data.items():
        if isinstance(value, dict | list):
            value = json.dumps(value, default=_default)
        table.add_row(
            str(key),
            "" if value is None else str(_default(value) if isinstance(value, Decimal | datetime | date) else value),
        )
    console.print(table)


def cell(value: Any) -> str:
    """A value as a table cell: blank for nothing, yes or no, a time to the second (UTC as stored)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, datetime):
        return f"{value:%Y-%m-%d %H:%M:%S}"
    if isinstance(value, Decimal | date):
        return str(_default(value))
    return str(value)


def emit_rows(
    rows: Iterable[dict[str, Any]], columns: Sequence[tuple[str, str]], *, title: str | None = None, noun: str = "row"
) -> None:
    """Rows as one table under a header, one line each: ``columns`` are (field, heading) pairs; a count
    of them (``noun``, pluralised with an s) below."""
    table = Table(title=title)
    for _, heading in columns:
        table.add_column(heading)
    count = 0
    for row in rows:
        table.add_row(*(cell(row.get(name)) for name, _ in columns))
        count += 1
    table.caption = f"{count} {noun}{'' if count == 1 else 's'}"
    console.print(table)


# Exit statuses (docs/operator-guide.md): 2 when the command cannot take what it was given (usage errors,
# refused values, files it cannot read or use, bad settings), as click's own usage errors; 1 when it was
# understood and failed (not found, a conflict, a failed run, a port taken, a database out of reach).
BAD_INPUT = 2
FAILED = 1
BAD_INPUT_CODES = frozenset({"invalid_parameters", "invalid_file", "unreadable_file", "invalid_settings"})


def file_problem(exc: OSError | UnicodeDecodeError) -> str:
    """Why a file named on the command line could not be read, in words (never "[Errno 2] …")."""
    if isinstance(exc, UnicodeDecodeError):
        return "it is not UTF-8 text"
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "it is a directory, not a file"
    if isinstance(exc, PermissionError):
        return "it cannot be read (permission denied)"
    return f"it cannot be read ({(exc.strerror or type(exc).__name__).lower()})"


def fail(message: str, *, as_json: bool, code: str = "error", status: int | None = None) -> NoReturn:
    """Ends the command with one error (a JSON object on stdout under --json, a line on stderr
    otherwise); the exit status follows the code unless ``status`` says otherwise."""
    if status is None:
        status = BAD_INPUT if code in BAD_INPUT_CODES else FAILED
    if as_json:
        sys.stdout.write(json.dumps({"error": {"code": code, "message": message}}) + "\n")
    else:
        err_console.print(f"[red]error:[/red] {message}")
    raise typer.Exit(status)


def run_with_database(
    work: Callable[[Database, Settings], Awaitable[T]], *, as_json: bool, settings: Settings | None = None
) -> T:
    """Runs ``work`` against the configured database; known errors end the command cleanly."""
    settings = settings or get_settings()

    async def go() -> T:
        database = Database(settings, pool=False)
        try:
            return await work(database, settings)
        finally:
            await database.dispose()

    try:
        return asyncio.run(go())
    except ProblemError as exc:
        fail(exc.detail, as_json=as_json, code=exc.code)
