"""One place for every setting; each comes from the environment with the prefix ``VPX_``."""

from __future__ import annotations

import ipaddress
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal, Self
from urllib.parse import urlsplit

from limits import parse as parse_rate_limit
from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from pydantic_settings import SettingsError as SourceError

from vpx.nameservers import parse_servers
from vpx.validation_messages import error_message

DEFAULT_SQLITE_URL = "sqlite+aiosqlite:///./var/vpx.db"
# Operator tokens are guessed at the admin budget's pace only; short ones would still fall.
MIN_ADMIN_TOKEN_LENGTH = 16
# Settings whose values are secrets (or hold a password): an error about them never quotes the value.
SECRET_SETTINGS = frozenset(
    {
        "admin_token",
        "admin_tokens",
        "secret_keys",
        "database_url",
        "database_replica_urls",
        "sandbox_database_url",
        "smtp_url",
        "redis_url",
    }
)
DATABASE_URL_FORMS = "sqlite+aiosqlite:///path/to/vpx.db or postgresql+asyncpg://user:password@host:5432/database"
REPLICA_URL_FORM = "postgresql+asyncpg://user:password@host:5432/database"


class InvalidSettings(Exception):
    """Settings the service cannot start with; the message is one line, naming each setting and its
    rule, and never quotes a value."""


class Settings(BaseSettings):
    """The service's settings. Documented in docs/operator-guide.md."""

    # hide_input_in_errors: a validation error's text never carries the value (a token, a password).
    model_config = SettingsConfigDict(env_prefix="VPX_", env_file=None, extra="ignore", hide_input_in_errors=True)

    database_url: str = DEFAULT_SQLITE_URL
    # PostgreSQL streaming replicas (comma-separated URLs) that serve the reads a moment's lag cannot
    # hurt: search, previews, signal queries (vpx.replicas). Empty: everything reads from the primary.
    database_replica_urls: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # Addresses or CIDR ranges of reverse proxies whose X-Forwarded-For is believed (D6).
    trusted_proxies: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # Per-key request budget in the `limits` notation, e.g. "600/minute" (D7).
    rate_limit: str = "600/minute"
    # Failed key attempts per client address: stricter than the per-key budget (D7).
    auth_failure_rate_limit: str = "30/minute"
    # Failed operator tokens per client address, a budget apart: customers' bad keys from a shared
    # address never lock the operator out.
    admin_failure_rate_limit: str = "10/minute"
    # When set, rate-limit counters live in Redis and are shared by every server process.
    redis_url: str | None = None
    max_body_bytes: int = 2 * 1024 * 1024

    free_monthly_credits: Decimal = Decimal(25)
    # D9 prices: a contact without a live signal costs `price_default`.
    price_default: Decimal = Decimal(1)
    price_cold: Decimal = Decimal(1)
    price_warm: Decimal = Decimal(3)
    price_hot: Decimal = Decimal(6)
    # D17: share of the reveal price paid to the publisher of a contributed contact, in percent.
    revenue_share_percent: Decimal = Decimal(30)
    # D17: rows an account may contribute per UTC day, every row sent counting (accepted, duplicate
    # or rejected): it bounds the duplicate answers and the email domains the worker is made to ask.
    contribution_rows_per_day: int = Field(default=5000, ge=1, le=10_000_000)
    # Refunds the rules pay an account each UTC month, in credits (reports and bounces; an operator's
    # confirmation is not limited). 0: the rules refund nothing, the operator decides every refund.
    refund_monthly_cap: Decimal = Field(default=Decimal(100), ge=0)
    # The worker's sampled check of the search index against the contacts (vpx.contacts.search.checks):
    # every this many seconds (0: never), this many random contacts; what it finds wrong is repaired.
    search_check_seconds: float = Field(default=600.0, ge=0, le=86_400 * 7)
    search_check_sample: int = Field(default=2_000, ge=1, le=1_000_000)

    # D26 webhooks. Private and loopback targets (and plain http) only for development and tests.
    webhook_allow_private: bool = False
    # Seconds to wait before each retry after a failed attempt; the first attempt is immediate.
    webhook_retry_schedule: Annotated[list[float], NoDecode] = Field(
        default_factory=lambda: [5.0, 300.0, 1800.0, 7200.0, 18000.0, 36000.0, 36000.0]
    )
    # Each retry waits its scheduled delay times a random factor within ±this fraction.
    webhook_retry_jitter: float = Field(default=0.1, ge=0, le=0.5)
    # A receiver that takes longer than this to connect or answer has failed the attempt.
    webhook_timeout_seconds: float = Field(default=10.0, gt=0, le=120)
    # After a secret rotation the previous secret keeps signing (next to the new one) this long.
    webhook_secret_grace_hours: int = Field(default=24, ge=0, le=24 * 30)
    # The background worker inside each server process, on every database (claims with leases make
    # several safe). False (`vpx serve --no-worker`) leaves the work to separate `vpx worker` processes.
    worker_in_process: bool | None = None
    # How often an idle worker looks for due work when no notification wakes it.
    worker_poll_seconds: float = Field(default=0.5, gt=0, le=60)
    # Claimed deliveries return to the queue when their worker has not finished them by then.
    worker_lease_seconds: float = Field(default=60.0, gt=0)
    # Deliveries claimed (and sent concurrently) at a time by one worker.
    worker_batch_size: int = Field(default=50, ge=1, le=1000)

    # D23: the signal stream. A keep-alive comment at least this often; a connection's lifetime cap
    # (then a clean close and the client reconnects with Last-Event-ID); how often a process looks for
    # signals committed by other processes where no notification tells it (SQLite); how many events
    # a slow client may fall behind before it is disconnected (it resumes from the database).
    stream_keepalive_seconds: float = Field(default=15.0, gt=0, le=15)
    stream_max_seconds: float = Field(default=3600.0, gt=0, le=86_400)
    stream_poll_seconds: float = Field(default=0.5, gt=0, le=60)
    stream_queue_size: int = Field(default=1000, ge=10, le=100_000)
    # How often each process re-checks, in one batched read, that every open stream's key, account and
    # dashboard session still allow it (revoked, suspended, deleted, signed out: the stream ends). At
    # most 4 s, so that a stream ends within 5 s of its access.
    stream_access_check_seconds: float = Field(default=2.0, gt=0, le=4)

    idempotency_ttl_hours: int = 24
    key_rotation_days: int = 90
    max_active_keys: int = 5

    # Test mode (vpx.sandbox, docs/test-mode.md): test keys (vpx_test_…) run against a sandbox database
    # of their own, made when the first test key is created. Its URL: unset, a sibling file of a SQLite
    # database (vpx.db -> vpx-sandbox.db) or the database named <name>_sandbox on the same PostgreSQL
    # server. A test balance starts at (and is reset to) test_credits; the sandbox's signal feed adds a
    # few signals every sandbox_feed_seconds (0: none). test_mode=false: test keys are refused.
    test_mode: bool = True
    sandbox_database_url: str | None = None
    test_credits: Decimal = Field(default=Decimal(1000), ge=0, le=1_000_000)
    sandbox_feed_seconds: float = Field(default=300.0, ge=0, le=86_400)
    # The MCP server's spending cap per session, in credits (docs/mcp.md): no tool call passes it.
    # 0: only each spending tool's own max_credits bounds it.
    mcp_max_credits: Decimal = Field(default=Decimal(0), ge=0)

    # At least 16 characters; empty or unset: the admin API is off.
    admin_token: str | None = None
    # More operator tokens, each with a name the account audit trail records: "alice=tok1,ci=tok2".
    # VPX_ADMIN_TOKEN is the token named "admin".
    admin_tokens: str = ""

    # Web dashboard (docs/dashboard.md). Session cookies are Secure unless the deployment is plain
    # http for development (VPX_DASHBOARD_PLAIN_HTTP=1); never set it behind a public address.
    dashboard_plain_http: bool = False
    # A dashboard session ends this many hours after sign-in.
    dashboard_session_hours: int = Field(default=12, ge=1, le=24 * 30)
    # Sign-in attempts, counted per client address and per email address.
    login_rate_limit: str = "10/minute"
    # Sign-ups per client address (each new account gets free credits).
    signup_rate_limit: str = "20/hour"
    # Password reset requests, counted per client address and per email address; how long a reset
    # link works (docs/dashboard.md).
    password_reset_rate_limit: str = "5/hour"
    password_reset_minutes: int = Field(default=30, ge=5, le=24 * 60)
    # The operator's SMTP server for the service's own email (sign-up confirmations, password resets):
    # smtp://user:pass@host:587?starttls=1 or smtps://user:pass@host (vpx.mail.server).
    smtp_url: SecretStr | None = None
    # Development and demos only: with no VPX_SMTP_URL, write those emails, links included, to the log
    # at WARNING. Without either, the dashboard offers no sign-up and no password reset (docs/dashboard.md).
    mail_to_log: bool = False
    # The From of those emails ("vpx <no-reply@example.com>"); empty: no-reply@ the public URL's host.
    mail_from: str = ""
    # One step of the SMTP conversation (connect, each command) may take this long.
    smtp_timeout_seconds: float = Field(default=10.0, gt=0, le=120)
    # Customer secrets (vpx.secrets): comma-separated Fernet keys, the first encrypts, all decrypt.
    # Unset: a key generated on first run into data_dir/secret.keys (mode 0600).
    secret_keys: str | None = None
    # Where the service keeps files of its own (the generated secret key; the SQLite database by default).
    data_dir: Path = Path("var")

    # D32 enrichment with the customer's own provider keys. Base URLs are the operator's alone
    # (accounts cannot aim the service at other hosts): the providers' public API roots by default.
    hunter_base_url: str = "https://api.hunter.io"
    pdl_base_url: str = "https://api.peopledatalabs.com"
    apollo_base_url: str = "https://api.apollo.io"
    # Seconds one provider call may take (connect and answer).
    enrichment_timeout_seconds: float = Field(default=10.0, gt=0, le=120)
    # Requests per provider key, shared by every process when redis_url is set ("limits" notation).
    enrichment_rate_limit: str = "10/second"
    # How long a provider's answer is reused for the same request, found and not found.
    enrichment_cache_hours: int = Field(default=24 * 30, ge=0)
    enrichment_miss_cache_hours: int = Field(default=24 * 7, ge=0)

    # D34 outbound sequencing through customers' own mailboxes. Loopback and private SMTP/IMAP hosts
    # only for development and tests (like VPX_WEBHOOK_ALLOW_PRIVATE).
    mailbox_allow_private: bool = False
    # One SMTP or IMAP conversation's time limit.
    mailbox_timeout_seconds: float = Field(default=30.0, gt=0, le=300)
    # How often the worker reads each mailbox with IMAP for replies and bounces.
    imap_poll_seconds: float = Field(default=60.0, gt=0, le=86_400)
    # What a sequence email's unsubscribe suppresses: the address for every account, on the suppression
    # list, told to each that revealed it (all: an opted-out address is never sold again, CAN-SPAM), or
    # for the sending account only (account: the operator's counsel reads the duty as the sender's).
    unsubscribe_suppresses: Literal["account", "all"] = "all"
    # The service's public base URL: unsubscribe links, the visitor snippet and the address its page
    # views are reported to are built from it. Unset, `vpx serve` sets it from its --host and --port.
    public_url: str = "http://127.0.0.1:8000"
    # Development and demos only (make serve): `vpx serve` runs the demo's mail catcher, an SMTP sink on
    # 127.0.0.1 at this port keeping each message in data_dir/demo-mail/; the demo account's mailboxes
    # alone may point at it (vpx.mail.catcher). Unset: no catcher.
    demo_mail_port: int | None = Field(default=None, ge=1, le=65_535)

    # D33 visitor identification. DNS servers for reverse look-ups ("127.0.0.1:5353,192.0.2.53";
    # empty: the system resolver) and a look-up's whole time budget.
    dns_servers: str = ""
    dns_timeout_seconds: float = Field(default=1.0, gt=0, le=30)
    # Deliverability of the catalogue's emails (vpx.deliverability): the worker's MX look-ups go through
    # the resolver above, at most this many DNS queries a second per worker process (0: no look-ups,
    # emails stay valid_syntax). A domain's answer is kept for its record's TTL, but at least and at
    # most these; a look-up that timed out or failed is tried again after mx_retry_seconds.
    mx_lookups_per_second: float = Field(default=20.0, ge=0, le=10_000)
    mx_cache_min_seconds: int = Field(default=86_400, ge=60, le=365 * 86_400)
    mx_cache_max_seconds: int = Field(default=7 * 86_400, ge=60, le=365 * 86_400)
    mx_retry_seconds: int = Field(default=900, ge=10, le=30 * 86_400)
    # Visits older than this are deleted by the worker.
    visit_retention_days: int = Field(default=90, ge=1, le=3650)
    # Page views the public collection endpoints take per site and per visitor address.
    visitor_site_rate_limit: str = "6000/minute"
    visitor_address_rate_limit: str = "120/minute"

    # California's Delete Request and Opt-out Platform (docs/compliance.md). The API's base URL
    # (https://api.drop.privacy.ca.gov, or its /sandbox); unset: no DROP cycle. The key DROP's portal
    # issued (kept sealed in the database with the customer secrets, vpx.secrets); the broker's
    # 4-digit id; the lists selected in the portal (vpx holds emails and phones); how often the worker
    # downloads, in days (the law: at least every 45); how many days a new batch waits for the
    # operator's exemptions before the worker answers it; one request's time limit.
    drop_url: str | None = None
    drop_api_key: SecretStr | None = None
    drop_broker_id: str | None = None
    drop_lists: Annotated[list[str], NoDecode] = Field(default_factory=lambda: ["Email", "Phone"])
    drop_pull_days: int = Field(default=30, ge=1, le=45)
    drop_hold_days: int = Field(default=0, ge=0, le=40)
    drop_timeout_seconds: float = Field(default=120.0, gt=0, le=3600)
    # Privacy requests (POST /api/v1/privacy-requests, public): how many one client address may send.
    privacy_request_rate_limit: str = "10/hour"

    # The operator's own search vocabulary, added to the built-in one: a file of synonym rules
    # (docs/search.md). A bad line stops the service at start, naming the file and line.
    search_synonyms: Path | None = None

    log_level: str = "INFO"
    log_json: bool = True
    sqlite_busy_timeout_ms: int = 30_000
    # Connections kept open per process (0: a fresh connection per session, no pool). Requests beyond
    # it open as many again, closed when returned; a pool smaller than the requests a process serves
    # at once opens and closes connections all the time (PostgreSQL: 5-10 ms each).
    pool_size: int = 20

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _split_proxies(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("drop_lists", mode="before")
    @classmethod
    def _split_drop_lists(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("drop_lists")
    @classmethod
    def _check_drop_lists(cls, value: list[str]) -> list[str]:
        known = {"email": "Email", "phone": "Phone"}
        lists = []
        for part in value:
            if part.lower() not in known:
                raise ValueError("must be Email, Phone or both, comma-separated: vpx holds no other identifier")
            lists.append(known[part.lower()])
        if not lists:
            raise ValueError("must name at least one list: Email, Phone or both")
        return list(dict.fromkeys(lists))

    @field_validator("drop_broker_id")
    @classmethod
    def _check_drop_broker_id(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if not (value.strip().isdigit() and len(value.strip()) == 4):
            raise ValueError("must be the 4-digit data broker id DROP's portal shows")
        return value.strip()

    @field_validator("drop_url")
    @classmethod
    def _check_drop_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("must be the DROP API's base URL, such as https://api.drop.privacy.ca.gov")
        return value.strip().rstrip("/")

    @field_validator("webhook_retry_schedule", mode="before")
    @classmethod
    def _split_schedule(cls, value: object) -> object:
        if isinstance(value, str):
            return [float(part) for part in value.split(",") if part.strip()]
        return value

    @field_validator("webhook_retry_schedule")
    @classmethod
    def _check_schedule(cls, value: list[float]) -> list[float]:
        if any(delay < 0 for delay in value):
            raise ValueError("retry delays must not be negative")
        return value

    @field_validator("admin_token")
    @classmethod
    def _check_admin_token(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if len(value.strip()) < MIN_ADMIN_TOKEN_LENGTH:
            raise ValueError(
                f"must be at least {MIN_ADMIN_TOKEN_LENGTH} characters (generate one: openssl rand -hex 24), "
                "or empty to turn the admin API off"
            )
        return value.strip()

    @field_validator("admin_tokens")
    @classmethod
    def _check_admin_tokens(cls, value: str) -> str:
        for part in filter(None, (p.strip() for p in value.split(","))):
            name, sep, token = part.partition("=")
            if not sep or not name.strip() or len(token.strip()) < MIN_ADMIN_TOKEN_LENGTH:
                raise ValueError(
                    "must be name=token pairs separated by commas (alice=…,ci=…), "
                    f"each token at least {MIN_ADMIN_TOKEN_LENGTH} characters"
                )
        return value

    @field_validator("database_url")
    @classmethod
    def _check_database_url(cls, value: str) -> str:
        backend = _database_url_backend(value)
        if backend is None:
            raise ValueError(f"is not a database URL such as {DATABASE_URL_FORMS}")
        if backend not in (("sqlite", "aiosqlite"), ("postgresql", "asyncpg")):
            raise ValueError(f"must be {DATABASE_URL_FORMS}")
        return value

    @field_validator("sandbox_database_url")
    @classmethod
    def _check_sandbox_database_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        return cls._check_database_url(value.strip())

    @field_validator("database_replica_urls", mode="before")
    @classmethod
    def _split_replica_urls(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("database_replica_urls")
    @classmethod
    def _check_replica_urls(cls, value: list[str]) -> list[str]:
        for number, url in enumerate(value, start=1):
            if _database_url_backend(url) != ("postgresql", "asyncpg"):
                # Which one by its place in the list: the URL itself may hold a password.
                raise ValueError(
                    f"each replica must be {REPLICA_URL_FORM}, comma-separated (URL {number} of {len(value)} is not)"
                )
        return value

    @model_validator(mode="after")
    def _replicas_need_postgresql(self) -> Self:
        if self.database_replica_urls and self.is_sqlite:
            raise ValueError(
                "VPX_DATABASE_REPLICA_URLS: read replicas need a PostgreSQL VPX_DATABASE_URL "
                "(SQLite has no replicas); leave it empty with SQLite"
            )
        return self

    @model_validator(mode="after")
    def _mx_cache_bounds(self) -> Self:
        if self.mx_cache_min_seconds > self.mx_cache_max_seconds:
            raise ValueError("VPX_MX_CACHE_MIN_SECONDS must not be more than VPX_MX_CACHE_MAX_SECONDS")
        return self

    @field_validator("redis_url")
    @classmethod
    def _check_redis_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        try:
            parts = urlsplit(value.strip())
            parts.port  # noqa: B018
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("redis", "rediss", "unix"):
            raise ValueError("must be a redis://, rediss:// or unix:// URL such as redis://127.0.0.1:6379/0")
        return value.strip()

    @field_validator("search_synonyms")
    @classmethod
    def _check_search_synonyms(cls, value: Path | None) -> Path | None:
        if value is None or not str(value).strip():
            return None
        from vpx.contacts.search.vocabulary import VocabularyError, load

        try:
            load(value)
        except VocabularyError as exc:
            raise ValueError(str(exc)) from None
        return value

    def named_admin_tokens(self) -> dict[str, str]:
        """Operator tokens by name (VPX_ADMIN_TOKEN is "admin")."""
        named = {"admin": self.admin_token} if self.admin_token else {}
        for part in filter(None, (p.strip() for p in self.admin_tokens.split(","))):
            name, _, token = part.partition("=")
            named[name.strip()] = token.strip()
        return named

    @property
    def runs_worker_in_process(self) -> bool:
        return self.worker_in_process is not False

    @field_validator("dns_servers")
    @classmethod
    def _check_dns_servers(cls, value: str) -> str:
        if value.strip():
            parse_servers(value)
        return value

    @field_validator("smtp_url")
    @classmethod
    def _check_smtp_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and value.get_secret_value().strip():
            # Imported here: vpx.mail imports this module. A bad URL raises SmtpUrlError, not a
            # validation error, which would print the URL with its password.
            from vpx.mail.server import parse_smtp_url

            parse_smtp_url(value.get_secret_value())
            return value
        return None

    @field_validator("mail_from")
    @classmethod
    def _check_mail_from(cls, value: str) -> str:
        if value.strip():
            from vpx.mail.server import parse_sender

            parse_sender(value)
        return value.strip()

    @field_validator("trusted_proxies")
    @classmethod
    def _check_proxies(cls, value: list[str]) -> list[str]:
        for item in value:
            ipaddress.ip_network(item, strict=False)
        return value

    @field_validator(
        "rate_limit",
        "auth_failure_rate_limit",
        "admin_failure_rate_limit",
        "login_rate_limit",
        "signup_rate_limit",
        "password_reset_rate_limit",
        "enrichment_rate_limit",
        "visitor_site_rate_limit",
        "visitor_address_rate_limit",
        "privacy_request_rate_limit",
    )
    @classmethod
    def _check_rate_limit(cls, value: str) -> str:
        parse_rate_limit(value)
        return value

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    def sqlite_path(self) -> Path | None:
        """The database file of a SQLite URL (None for in-memory or other databases)."""
        if not self.is_sqlite:
            return None
        _, _, rest = self.database_url.partition(":///")
        if not rest or rest.startswith(":memory:"):
            return None
        return Path(rest.split("?", 1)[0])


def _database_url_backend(value: str) -> tuple[str, str] | None:
    """A database URL's (backend, driver), or None when it does not parse (the parser's own message
    may quote the URL, password included: callers say what is expected instead)."""
    from sqlalchemy.engine import make_url

    try:
        url = make_url(value)
        url.port  # noqa: B018  (a port that is not a number fails here)
    except Exception:
        return None
    return url.get_backend_name(), url.get_driver_name()


def settings_problem(exc: ValidationError) -> str:
    """One line naming each bad setting (as its environment variable) and its rule, without values."""
    problems = []
    for error in exc.errors(include_url=False):
        field = str(error["loc"][0]) if error["loc"] else ""
        message = error_message(error)
        raw = error.get("input")
        # A library's message that quotes the secret (a value of a few characters may appear in any text
        # by chance, and tells nothing: such a token is refused for its length).
        if field in SECRET_SETTINGS and isinstance(raw, str) and len(raw.strip()) >= 6 and raw.strip() in message:
            message = "is not a valid value"
        problems.append(f"VPX_{field.upper()}: {message}" if field else message)
    return "; ".join(" ".join(problem.split()) for problem in problems)


def load_settings() -> Settings:
    """The settings from the environment; InvalidSettings, one line, when they cannot be used."""
    from vpx.mail.server import SmtpUrlError

    try:
        return Settings()
    except ValidationError as exc:
        raise InvalidSettings(settings_problem(exc)) from None
    except SmtpUrlError as exc:  # its own message names VPX_SMTP_URL and never quotes it
        raise InvalidSettings(str(exc).replace("VPX_SMTP_URL ", "VPX_SMTP_URL: ", 1)) from None
    except SourceError as exc:  # a value pydantic-settings could not decode (it names the field only)
        raise InvalidSettings(str(exc)) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()
