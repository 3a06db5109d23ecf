"""The operator page's sign-in sessions."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, UtcDateTime


class OperatorSession(Base):
    """A browser signed in to the operator page with an admin token. The cookie holds a random token;
    only its SHA-256 is stored here, so signing out (deleting the row) ends every copy of the cookie."""

    __tablename__ = "operator_sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    # The admin token's name and a keyed hash of its value (never the token): a session whose token
    # is no longer configured with the same value opens nothing.
    token_name: Mapped[str] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(64))
    # The synchronizer token the session's forms (sign-out) must send back.
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime(), index=True)
