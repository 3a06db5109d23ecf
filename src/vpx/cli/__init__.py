"""The operator's command-line tool (D35). Every command takes --json and then prints one JSON
object on stdout."""

from __future__ import annotations

import json
import sys

from pydantic import ValidationError

from vpx.cli.app import app
from vpx.config import InvalidSettings, settings_problem

# Exit status of a command refused for its settings (1 is a command's own failure).
BAD_SETTINGS_STATUS = 2


def main() -> None:
    try:
        app()
    except (InvalidSettings, ValidationError) as exc:
        if isinstance(exc, ValidationError) and exc.title != "Settings":
            raise
        # One line naming the setting and its rule, no traceback, never the value (a token, a password).
        message = str(exc) if isinstance(exc, InvalidSettings) else settings_problem(exc)
        if "--json" in sys.argv[1:]:
            sys.stdout.write(json.dumps({"error": {"code": "invalid_settings", "message": message}}) + "\n")
        else:
            sys.stderr.write(f"error: {message}\n")
        sys.exit(BAD_SETTINGS_STATUS)


__all__ = ["app", "main"]
