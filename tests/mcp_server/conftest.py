"""The MCP tests' fixtures: test mode's (a sandbox beside the main database) and a real HTTP server."""

from __future__ import annotations

from tests.sandbox.conftest import app, client, factory, sandbox_url, served, settings

__all__ = ["app", "client", "factory", "sandbox_url", "served", "settings"]
