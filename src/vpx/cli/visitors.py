"""`vpx visitors …`: the operator's address ranges for visitor identification (D33)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from vpx.cli.output import JsonOption, emit, fail, file_problem, run_with_database
from vpx.clock import Clock
from vpx.config import Settings, get_settings
from vpx.db import Database

visitors_app = typer.Typer(no_args_is_help=True, help="Visitor identification: address ranges.")
Format = Literal["csv", "iptoasn", "mmdb"]
SHOWN_PROBLEMS = 50


@visitors_app.command("import-ranges")
def import_ranges_command(
    path: Annotated[Path, typer.Argument(help="The file of address ranges.", show_default=False)],
    format: Annotated[
        str,
        typer.Option(
            "--format",
            help="csv: ranges mapped to businesses (network or start_ip,end_ip; domain and/or contact_id). "
            "iptoasn: the public ip2asn TSV. mmdb: a MaxMind-format ASN database.",
        ),
    ],
    source: Annotated[
        str | None,
        typer.Option(help="The source's name (default: the file's name); importing a source again replaces it."),
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """Imports address ranges. Ranges mapped to a business identify its visits (`ip_range`); ISP, mobile
    and hosting networks are never reported as a business. A bad row is reported with its line number and
    skipped. The source's old ranges are replaced at once; nothing is downloaded."""
    from vpx.visitors import range_files
    from vpx.visitors.index import import_ranges

    if format not in ("csv", "iptoasn", "mmdb"):
        fail("--format must be csv, iptoasn or mmdb", as_json=as_json, code="invalid_parameters")
    if not path.is_file():
        fail(f"no such file: {path}", as_json=as_json, code="invalid_parameters")
    name = (source or path.name.removesuffix(".gz")).strip()
    if not name or len(name) > 100:
        fail("--source must be 1 to 100 characters", as_json=as_json, code="invalid_parameters")
    settings = get_settings()
    from vpx.migrations import upgrade

    upgrade(settings)
    readers = {"csv": range_files.read_csv, "iptoasn": range_files.read_iptoasn, "mmdb": range_files.read_mmdb}
    problems: list[range_files.FileProblem] = []

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        # Read once before writing: a file of the wrong format (every row a problem) must not replace
        # the source with nothing.
        rows = list(readers[format](path, problems))
        if not rows and problems:
            raise ValueError(range_files.nothing_read(problems, format))
        kinds = Counter(row.kind for row in rows)
        imported = await import_ranges(database, source=name, format=format, rows=rows, now=Clock().now())
        return {
            "source": name,
            "format": format,
            "ranges": imported,
            "by_kind": dict(sorted(kinds.items())),
            "skipped": len(problems),
            "problems": [{"line": p.line, "reason": p.reason, "message": p.message} for p in problems[:SHOWN_PROBLEMS]],
        }

    try:
        result = run_with_database(work, as_json=as_json, settings=settings)
    except OSError as exc:
        fail(f"cannot read {path}: {file_problem(exc)}", as_json=as_json, code="invalid_file")
    except ValueError as exc:
        fail(f"cannot read {path}: {exc}", as_json=as_json, code="invalid_file")
    emit(result if as_json else {k: v for k, v in result.items() if k != "problems"}, as_json=as_json)
    if not as_json:
        for item in result["problems"]:
            typer.echo(f"line {item['line']}: {item['reason']}: {item['message']}", err=True)


def register(app: typer.Typer) -> None:
    app.add_typer(visitors_app, name="visitors")
