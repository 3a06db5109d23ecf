"""How long /docs takes to render: `vpx serve` on an empty database, the page opened in headless
Chromium (Debian's, through Playwright) with an empty cache each time, timed from the navigation to
the first operation Swagger UI draws; then a second load of the same browser (its cache warm), and
the OpenAPI document alone: its size as sent, the time to fetch it with and without gzip, and the
time to parse it.

    .venv/bin/python bench/docs_render.py [--runs 5]

Run it on a quiet machine: it measures the page, not the neighbours. Takes well under a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

CHROMIUM = "/usr/bin/chromium"
VPX = str(Path(sys.executable).with_name("vpx"))
SECRET_KEY = "iU-A_8wuCLlpPOQMs6T-0CdF2CeDSoT9utja-yhfznc="  # seals nothing real


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("VPX_")},
        "VPX_DATABASE_URL": f"sqlite+aiosqlite:///{folder / 'vpx.db'}",
        "VPX_DATA_DIR": str(folder),
        "VPX_SECRET_KEYS": SECRET_KEY,
        "VPX_LOG_LEVEL": "WARNING",
    }
    command = [VPX, "serve", "--port", str(port), "--no-worker"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("vpx serve did not start")


def render_times(url: str, runs: int, *, identity: bool = False) -> tuple[list[float], list[float]]:
    """Seconds from navigation to the first drawn operation: each run in a new browser context (an
    empty cache), then the same page loaded again in that context (its cache warm). ``identity``:
    the browser asks for nothing compressed (as the service sent everything before it compressed)."""
    from playwright.sync_api import sync_playwright

    cold: list[float] = []
    warm: list[float] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            for _ in range(runs):
                context = browser.new_context()
                if identity:
                    context.set_extra_http_headers({"Accept-Encoding": "identity"})
                page = context.new_page()
                for times in (cold, warm):
                    started = time.perf_counter()
                    page.goto(f"{url}/docs", wait_until="commit")
                    page.wait_for_selector(".opblock", timeout=60_000)
                    times.append(time.perf_counter() - started)
                context.close()
        finally:
            browser.close()
    return cold, warm


def document_figures(url: str, runs: int) -> dict[str, object]:
    address = f"{url}/api/v1/openapi.json"
    plain: list[float] = []
    zipped: list[float] = []
    parse: list[float] = []
    sizes: dict[str, int] = {}
    with httpx.Client(timeout=30) as client:
        for _ in range(runs):
            started = time.perf_counter()
            answer = client.get(address, headers={"Accept-Encoding": "identity"})
            plain.append(time.perf_counter() - started)
            sizes["identity"] = len(answer.content)
            started = time.perf_counter()
            squeezed = client.get(address, headers={"Accept-Encoding": "gzip"})
            zipped.append(time.perf_counter() - started)
            sizes["gzip_sent"] = int(squeezed.headers.get("content-length") or len(squeezed.content))
            encoded = squeezed.headers.get("content-encoding") == "gzip"
            started = time.perf_counter()
            json.loads(answer.content)
            parse.append(time.perf_counter() - started)
        headers = {k: v for k, v in squeezed.headers.items() if k in ("etag", "cache-control", "content-encoding")}
    return {
        "bytes": sizes["identity"],
        "bytes_gzip_sent": sizes["gzip_sent"],
        "served_gzipped": encoded,
        "headers": headers,
        "fetch_ms": round(statistics.median(plain) * 1000, 1),
        "fetch_gzip_ms": round(statistics.median(zipped) * 1000, 1),
        "parse_ms": round(statistics.median(parse) * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vpx-docs-bench-") as folder:
        process, url = start_server(Path(folder))
        try:
            load = os.getloadavg()[0]
            document = document_figures(url, args.runs)
            plain_cold, plain_warm = render_times(url, args.runs, identity=True)
            cold, warm = render_times(url, args.runs)
        finally:
            process.terminate()
            process.wait(timeout=20)
    print(json.dumps({
        "load_average_1m_at_start": round(load, 2),
        "cpus": os.cpu_count(),
        "document": document,
        "render_cold_s": {"median": round(statistics.median(cold), 2), "runs": [round(t, 2) for t in cold]},
        "render_warm_s": {"median": round(statistics.median(warm), 2), "runs": [round(t, 2) for t in warm]},
        "render_cold_uncompressed_s": {"median": round(statistics.median(plain_cold), 2),
                                       "runs": [round(t, 2) for t in plain_cold]},
        "render_warm_uncompressed_s": {"median": round(statistics.median(plain_warm), 2),
                                       "runs": [round(t, 2) for t in plain_warm]},
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
