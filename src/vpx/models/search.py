"""The catalogue's vocabulary: every word that occurs in a searchable field, for typo correction."""

from __future__ import annotations

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base


class SearchTerm(Base):
    __tablename__ = "search_terms"

    term: Mapped[str] = mapped_column(String(64), primary_key=True)
