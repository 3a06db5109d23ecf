"""The web dashboard at /dashboard: server-rendered pages for the signed-in account, acting through
the same services as the API (docs/dashboard.md). ``vpx.dashboard.router.install_dashboard`` adds it
to the app."""

from __future__ import annotations

from pathlib import Path

STATIC_DIR = Path(__file__).resolve().parent / "static"
