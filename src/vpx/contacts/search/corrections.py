"""Typo corrections of a question's words: the vocabulary words one edit away (looked up exactly), or
two for a long word (found through shared trigrams), nearest first."""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz.distance import OSA

MAX_CORRECTIONS = 3


def max_edits(word: str) -> int:
    return 1 if len(word) < 8 else 2


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def one_edit(word: str) -> set[str]:
    """Every string one edit from ``word``: a letter deleted, two neighbours swapped, a letter
    replaced or inserted (the optimal string alignment distance 1)."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deleted = {a + b[1:] for a, b in splits if b}
    swapped = {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    replaced = {a + c + b[1:] for a, b in splits if b for c in _LETTERS}
    inserted = {a + c + b for a, b in splits for c in _LETTERS}
    return (deleted | swapped | replaced | inserted) - {word}


def closest(word: str, candidates: list[str]) -> tuple[str, ...]:
    """Candidates within the edit budget, nearest first (optimal string alignment distance)."""
    budget = max_edits(word)
    scored = []
    for term in candidates:
        if term == word:
            continue
        distance = OSA.distance(word, term, score_cutoff=budget)
        if distance <= budget:
            scored.append((distance, abs(len(term) - len(word)), term))
    scored.sort()
    return tuple(term for _, _, term in scored[:MAX_CORRECTIONS])


@dataclass(frozen=True)
class Candidates:
    """What the vocabulary had for a query word: a word it starts (no correction then), the words one
    edit from it, or (none of those and a long word) those sharing trigrams with it."""

    prefixed: bool
    near: tuple[str, ...]
    far: tuple[str, ...] = ()
