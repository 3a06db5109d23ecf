"""A Python client for the vpx Contact and Intent Signal API.

    from vpx_client import Client

    with Client("vpx_live_…", base_url="http://127.0.0.1:8000") as client:
        page = client.contacts.search("plumbng", state="CA", limit=3)
        contact = client.contacts.reveal(page.contacts[0].id)
        print(contact.phone, contact.meta.credits_charged, contact.meta.credits_remaining)

`AsyncClient` has the same surface with `await`. See docs/client.md for retries, idempotency,
iterators, the signal stream and webhook verification.
"""

from vpx_client import models, webhooks
from vpx_client._async._client import AsyncClient
from vpx_client._async._stream import AsyncSignalStream
from vpx_client._async._transport import AUTO, RawResponse
from vpx_client._blocking._client import Client
from vpx_client._blocking._stream import SignalStream
from vpx_client._files import ExportResult
from vpx_client._meta import ApiModel, CreditTally, RateLimitState, ResponseMeta, RetryRecord
from vpx_client._policy import UNSET
from vpx_client._sse import SignalEvent
from vpx_client._version import __version__
from vpx_client.errors import (
    AccountSuspended,
    BadRequest,
    Conflict,
    ConnectionFailed,
    FcraBlocked,
    FieldProblem,
    Forbidden,
    IdempotencyInProgress,
    IdempotencyMismatch,
    InsufficientCredits,
    InvalidApiKey,
    IpNotAllowed,
    KeyLimitReached,
    MalformedRequest,
    MethodNotAllowed,
    NotFound,
    NotRevealed,
    PayloadTooLarge,
    PaymentRequired,
    PermissionDenied,
    RateLimited,
    ServerError,
    StreamClosed,
    Suppressed,
    Unauthorized,
    UnavailableForLegalReasons,
    UnprocessableEntity,
    ValidationFailed,
    VpxError,
)
from vpx_client.webhooks import WebhookEvent, WebhookVerificationError

__all__ = [
    "AUTO",
    "UNSET",
    "AccountSuspended",
    "ApiModel",
    "AsyncClient",
    "AsyncSignalStream",
    "BadRequest",
    "Client",
    "Conflict",
    "ConnectionFailed",
    "CreditTally",
    "ExportResult",
    "FcraBlocked",
    "FieldProblem",
    "Forbidden",
    "IdempotencyInProgress",
    "IdempotencyMismatch",
    "InsufficientCredits",
    "InvalidApiKey",
    "IpNotAllowed",
    "KeyLimitReached",
    "MalformedRequest",
    "MethodNotAllowed",
    "NotFound",
    "NotRevealed",
    "PayloadTooLarge",
    "PaymentRequired",
    "PermissionDenied",
    "RateLimitState",
    "RateLimited",
    "RawResponse",
    "ResponseMeta",
    "RetryRecord",
    "ServerError",
    "SignalEvent",
    "SignalStream",
    "StreamClosed",
    "Suppressed",
    "Unauthorized",
    "UnavailableForLegalReasons",
    "UnprocessableEntity",
    "ValidationFailed",
    "VpxError",
    "WebhookEvent",
    "WebhookVerificationError",
    "__version__",
    "models",
    "webhooks",
]
