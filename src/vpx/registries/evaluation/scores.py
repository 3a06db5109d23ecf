"""Pairwise precision, recall and F1 of a matcher on labelled pairs: overall, per category of pair,
and per rule (the pairs each rule joins)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from vpx.registries.evaluation.pairs import Pair
from vpx.registries.matching import NAME_THRESHOLD, MatchKeys, match_rule

# A matcher: the rule by which two records are one business, or None when they are not.
Matcher = Callable[[MatchKeys, MatchKeys], str | None]


@dataclass(frozen=True)
class Score:
    threshold: float
    true_positive: int
    false_positive: int
    false_negative: int

    @property
    def precision(self) -> float:
        found = self.true_positive + self.false_positive
        return self.true_positive / found if found else 1.0

    @property
    def recall(self) -> float:
        wanted = self.true_positive + self.false_negative
        return self.true_positive / wanted if wanted else 1.0

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0


def rules(threshold: float = NAME_THRESHOLD) -> Matcher:
    """vpx's rules (vpx.registries.matching) as a matcher."""

    def matcher(a: MatchKeys, b: MatchKeys) -> str | None:
        found = match_rule(a, b, threshold=threshold)
        return found[0] if found is not None else None

    return matcher


def score_with(pairs: Iterable[Pair], matcher: Matcher, *, threshold: float = 0.0) -> Score:
    tp = fp = fn = 0
    for pair in pairs:
        predicted = matcher(pair.a.keys, pair.b.keys) is not None
        tp += predicted and pair.same
        fp += predicted and not pair.same
        fn += (not predicted) and pair.same
    return Score(threshold, tp, fp, fn)


def score(pairs: Iterable[Pair], *, threshold: float) -> Score:
    return score_with(pairs, rules(threshold), threshold=threshold)


def by_category(pairs: Iterable[Pair], matcher: Matcher) -> dict[str, tuple[int, int]]:
    """Per category: (pairs, pairs the matcher joins)."""
    total: Counter[str] = Counter()
    joined: Counter[str] = Counter()
    for pair in pairs:
        total[pair.category] += 1
        joined[pair.category] += matcher(pair.a.keys, pair.b.keys) is not None
    return {category: (total[category], joined[category]) for category in total}


def by_rule(pairs: Iterable[Pair], matcher: Matcher) -> dict[str, Score]:
    """Per rule: the pairs it joins that are the same (TP) and not (FP), and the same pairs it does
    not join (FN: every same pair another rule or none joins)."""
    pairs = list(pairs)
    positives = sum(p.same for p in pairs)
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    for pair in pairs:
        rule = matcher(pair.a.keys, pair.b.keys)
        if rule is not None:
            (tp if pair.same else fp)[rule] += 1
    return {rule: Score(0.0, tp[rule], fp[rule], positives - tp[rule]) for rule in sorted(set(tp) | set(fp))}


def phone_only_score(pairs: Iterable[Pair]) -> Score:
    """The naive rule "same phone, same business", for comparison."""
    return score_with(pairs, lambda a, b: "phone" if a.phone and a.phone == b.phone else None)
