"""The `vpx` command: its tree of commands, each kept in a module of its own (serve, demo, status, the
database, the operator's account, key, credit and suppression tools, and the rest)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from vpx.cli import accounts as accounts_cli
from vpx.cli import credits as credits_cli
from vpx.cli import database as database_cli
from vpx.cli import demo as demo_cli
from vpx.cli import dnc as dnc_cli
from vpx.cli import drop as drop_cli
from vpx.cli import keys as keys_cli
from vpx.cli import mcp as mcp_cli
from vpx.cli import privacy as privacy_cli
from vpx.cli import quality as quality_cli
from vpx.cli import registries as registries_cli
from vpx.cli import search as search_cli
from vpx.cli import secrets as secrets_cli
from vpx.cli import serve as serve_cli
from vpx.cli import signals as signals_cli
from vpx.cli import sources as sources_cli
from vpx.cli import status as status_cli
from vpx.cli import suppression as suppression_cli
from vpx.cli import visitors as visitors_cli
from vpx.cli.words import PlainWordsGroup
from vpx.cli.worker import worker
from vpx.config import Settings
from vpx.secrets import generate_key

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="vpx: Contact and Intent Signal API.",
    cls=PlainWordsGroup,
)
db_app = typer.Typer(no_args_is_help=True, help="Database schema.")
accounts_app = typer.Typer(no_args_is_help=True, help="Customer accounts.")
keys_app = typer.Typer(no_args_is_help=True, help="API keys.")
credits_app = typer.Typer(no_args_is_help=True, help="Credits.")
suppress_app = typer.Typer(
    no_args_is_help=True,
    help="The suppression list: contacts, phones and emails no reveal may show (opt-outs, do-not-contact, "
    "FCRA-regulated records).",
)
app.add_typer(db_app, name="db")
app.add_typer(accounts_app, name="accounts")
app.add_typer(keys_app, name="keys")
app.add_typer(credits_app, name="credits")
app.add_typer(suppress_app, name="suppress")
# In this order: help lists a group's commands as they were added.
app.command("worker")(worker)
accounts_cli.register(accounts_app)
mcp_cli.register(app)
dnc_cli.register(app)
drop_cli.register(app)
privacy_cli.register(app)
quality_cli.register(app)
search_cli.register(app)
registries_cli.register(app)
secrets_cli.register(app)
signals_cli.register(app)
sources_cli.register(app)
visitors_cli.register(app)
database_cli.register(db_app)
serve_cli.register(app)
demo_cli.register(app)
keys_cli.register(keys_app)
credits_cli.register(credits_app)
suppression_cli.register(suppress_app)
status_cli.register(app)


@app.command("openapi")
def openapi(
    output: Annotated[Path | None, typer.Option(help="Write to this file instead of stdout.")] = None,
) -> None:
    """Print (or write) the OpenAPI document; the repository keeps a copy in openapi.json."""
    from vpx.app import create_app

    # An in-memory database and a throwaway secret key: the document needs neither. The app's
    # start-up warnings (no SMTP…) concern a server, not this document: kept out of its output.
    settings = Settings(database_url="sqlite+aiosqlite:///:memory:", secret_keys=generate_key(), log_level="ERROR")
    document = create_app(settings).openapi()
    text = json.dumps(document, indent=2, sort_keys=True) + "\n"
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text)
