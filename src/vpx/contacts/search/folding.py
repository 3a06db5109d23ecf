"""Folding a backlog where it was found: a search that finds more changes waiting than it applies
(vpx.contacts.search.postings.PENDING_APPLIED) answers with ``exact: false`` and has its own process
fold them, in the background, at once, so that no dead or slow worker leaves answers inexact for
long. One fold at a time per process; on PostgreSQL a fold waits for another process's to end (the
folds' lock) and then finds the changes gone."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from vpx.contacts.search import postings

if TYPE_CHECKING:
    from vpx.db import Database

log = logging.getLogger("vpx.search")


class FoldAssist:
    def __init__(self, database: Database) -> None:
        self.database = database
        self.task: asyncio.Task[None] | None = None

    def request(self) -> None:
        """Starts folding the backlog, unless this process is at it already."""
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        try:
            while await postings.fold_changes(self.database):
                pass
        except Exception:  # the worker, or the next search that finds the backlog, tries again
            log.exception("folding a search backlog failed")

    async def stop(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
