"""The operator's command-line tool (D35). Every command takes --json and then prints one JSON
object on stdout."""

from __future__ import annotations

from vpx.cli.app import app


def main() -> None:
    app()


__all__ = ["app", "main"]
