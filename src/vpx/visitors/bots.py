"""Crawlers, by user agent (D33): a visit from one is never resolved to a business.

CrawlerDetect's patterns (some 1,400 of them, joined into one regular expression) flag search engines
(Googlebot, bingbot), HTTP libraries and tools (curl, python-requests, python-httpx) and headless
browsers: its generic pattern contains ``headless``, so headless Chromium's own user agent
(``... HeadlessChrome/131.0.0.0 Safari/537.36``) is a bot. Tests that drive a headless browser
through the snippet must therefore give it an ordinary desktop Chrome user agent.

The expression is slow by regular-expression standards: some 150 µs for a new desktop browser's user
agent, and on long runs of letters it grows with the square of the length (30 ms at 512 characters,
600 ms at 2,000). Answers are remembered per user agent, and one longer than any browser's is a bot
unread, so that no visit can hold the event loop for long.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

# Desktop Chrome's is some 130 characters, the longest in-app browsers' (Facebook's, LinkedIn's…)
# some 250–350; a longer one is a tool's or an attack on the expression's cost.
LONGEST_BROWSER = 512


@lru_cache(maxsize=1)
def _detector() -> Any:
    """One CrawlerDetect for the process, built on first use: its expression is compiled once (by the
    library, on the first check), and an import of this module costs nothing."""
    from crawlerdetect import CrawlerDetect  # type: ignore[import-untyped]

    return CrawlerDetect()


@lru_cache(maxsize=1 << 14)
def _crawler(user_agent: str) -> bool:
    # The library keeps the last match on the instance; only the answer is read here, so sharing
    # the one instance between requests is safe.
    return bool(_detector().is_crawler(user_agent))


def is_bot(user_agent: str | None) -> bool:
    """Whether the user agent is a crawler's, a tool's or a headless browser's. A missing or blank
    one is not a bot: the snippet always sends the browser's, and a server-side identify call may
    leave it out, which says nothing about who visited. One longer than LONGEST_BROWSER is a bot."""
    if user_agent is None:
        return False
    user_agent = user_agent.strip()
    if len(user_agent) > LONGEST_BROWSER:
        return True
    return bool(user_agent) and _crawler(user_agent)
