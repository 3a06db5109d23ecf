"""Crawlers, tools and headless browsers by user agent; people's browsers are not bots."""

from __future__ import annotations

import pytest

from vpx.visitors.bots import LONGEST_BROWSER, is_bot

CHROME_DESKTOP = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)


@pytest.mark.parametrize(
    "user_agent",
    [
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) "
        "Chrome/116.0.1938.76 Safari/537.36",
        "curl/8.5.0",
        "python-requests/2.32.3",
        "python-httpx/0.27.0",
        "Wget/1.21.4",
        # Headless Chromium's own user agent: CrawlerDetect's generic pattern contains "headless".
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36",
    ],
)
def test_crawlers_tools_and_headless_browsers_are_bots(user_agent: str) -> None:
    assert is_bot(user_agent)


@pytest.mark.parametrize(
    "user_agent",
    [
        CHROME_DESKTOP,
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/131.0.0.0 Safari/537.36",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "Version/18.1 Safari/605.1.15",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
        "Safari/537.36 Edg/131.0.0.0",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "Version/17.5 Mobile/15E148 Safari/604.1",
        "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/131.0.0.0 Mobile Safari/537.36",
        "Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0",
        "Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) "
        "SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36",
        "Mozilla/5.0 (Linux; Android 13; SM-G991B Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Version/4.0 Chrome/120.0.6099.144 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/445.0.0.34.118;]",
    ],
)
def test_peoples_browsers_are_not_bots(user_agent: str) -> None:
    assert not is_bot(user_agent)


@pytest.mark.parametrize("user_agent", [None, "", "   "])
def test_missing_user_agent_is_not_a_bot(user_agent: str | None) -> None:
    """A server-side identify call may leave the user agent out; that says nothing about the visitor."""
    assert not is_bot(user_agent)


def test_user_agent_longer_than_any_browsers_is_a_bot() -> None:
    assert is_bot(CHROME_DESKTOP + " x" * LONGEST_BROWSER)
    assert not is_bot(f"  {CHROME_DESKTOP}  ")


def test_answer_is_the_same_when_remembered() -> None:
    assert [is_bot("curl/8.5.0") for _ in range(3)] == [True, True, True]
    assert [is_bot(CHROME_DESKTOP) for _ in range(3)] == [False, False, False]
