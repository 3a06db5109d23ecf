"""`vpx search check`: the search postings compared with the contacts table, whole or by sample, and
with --repair what is wrong rewritten from the table (vpx.contacts.search.checks). --json prints one
object; the exit status is 1 while terms are wrong (found and not repaired), else 0."""

from __future__ import annotations

import random
from typing import Annotated, Any

import typer

from vpx.cli.output import JsonOption, console, emit, emit_rows, run_with_database
from vpx.clock import Clock
from vpx.config import Settings
from vpx.contacts.search import checks
from vpx.db import Database

search_app = typer.Typer(no_args_is_help=True, help="The search index: check it against the contacts, repair it.")
COLUMNS = (
    ("term", "term"),
    ("chunk", "chunk"),
    ("missing_count", "missing"),
    ("extra_count", "extra"),
    ("missing", "missing ids (first 20)"),
    ("extra", "extra ids (first 20)"),
)


@search_app.command("check")
def check(
    repair: Annotated[bool, typer.Option("--repair", help="Rewrite the terms found wrong from the table.")] = False,
    sample: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=10_000_000,
            help="Check this many random contacts (and 100 random rows of the index) instead of everything.",
        ),
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """Compare the search index with the contacts table: each term's contacts as the index holds them
    and as the table says. Contacts with changes still waiting to be indexed are left out (the index
    holds them as they were). Prints each wrong term with its ids; --repair rewrites them."""

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        if sample is None:
            report = await checks.check_all(database)
        else:
            report = await checks.check_sample(database, contacts=sample, rng=random.Random())
        if repair and report.mismatches:
            report.repaired = await checks.repair(database, report.mismatches)
        await checks.record(database, report, now=Clock().now())
        return report.as_dict()

    found = run_with_database(work, as_json=as_json)
    mismatches = found["mismatches"]
    if as_json:
        emit(found, as_json=True)
    else:
        emit({k: v for k, v in found.items() if k != "mismatches"}, as_json=False, title="search check")
        if mismatches:
            emit_rows(
                ({**m, "missing": " ".join(map(str, m["missing"])), "extra": " ".join(map(str, m["extra"]))}
                 for m in mismatches),
                COLUMNS,
                title="wrong terms",
                noun="wrong term",
            )  # fmt: skip
        else:
            console.print("the index agrees with the table")
    if mismatches and not found["repaired"]:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(search_app, name="search")
