"""The sender connects to the checked address and nowhere else, while TLS is verified against the
URL's host name (sent as SNI): a certificate for another name fails the attempt."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from pathlib import Path

import pytest

from tests.webhooks.receiver import Receiver
from vpx.outbound.guard import check_target
from vpx.webhooks.sender import ReceiverError, WebhookSender

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate"),
]


async def to_loopback(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]


def certificate(folder: Path, name: str) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={name}",
         "-addext", f"subjectAltName=DNS:{name}", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


async def test_https_to_the_checked_address_verifies_the_host_name(tmp_path: Path) -> None:
    cert, key = certificate(tmp_path, "hooks.test")
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(cert, key)
    receiver = Receiver(tls=server_tls).start()
    port = receiver.server.server_address[1]
    sender = WebhookSender(tls=ssl.create_default_context(cafile=str(cert)))
    try:
        target = await check_target(f"https://hooks.test:{port}/hook?a=1", allow_private=True, resolver=to_loopback)
        answer = await sender.post(target, headers={"webhook-id": "msg_1"}, body=b"{}", limit_seconds=5)
        again = await sender.post(target, headers={"webhook-id": "msg_2"}, body=b"{}", limit_seconds=5)
        assert answer.status == again.status == 200 and answer.excerpt == "ok"
        first, second = receiver.received()
        assert first.path == "/hook?a=1" and first.headers["host"] == f"hooks.test:{port}"
        assert second.headers["webhook-id"] == "msg_2"

        wrong = await check_target(f"https://other.test:{port}/hook", allow_private=True, resolver=to_loopback)
        with pytest.raises(ReceiverError, match=r"CERTIFICATE_VERIFY_FAILED|certificate"):
            await sender.post(wrong, headers={}, body=b"{}", limit_seconds=5)
    finally:
        await sender.close()
        receiver.stop()
