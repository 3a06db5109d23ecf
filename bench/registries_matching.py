"""Precision and recall of entity resolution on labelled pairs built from the shared samples.

    python bench/registries_matching.py [--shared ../shared/data]

Prints the pairs per category, the threshold sweep (precision with the hard negatives, recall on the
positives, and precision with every negative), what the rules join in each category, pairwise
precision, recall and F1 per rule, and the naive "same phone" rule for comparison
(vpx/registries/evaluation/ says how the pairs are built and labelled).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vpx.registries import evaluation
from vpx.registries.evaluation.scores import rules
from vpx.registries.matching import NAME_THRESHOLD, PHONE_NAME_FLOOR, MatchKeys, unvetoed_rule

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=SHARED, help="the shared samples' directory")
    args = parser.parse_args()
    records = evaluation.sample_records(args.shared)
    pairs = evaluation.all_pairs(records)
    positives = [p for p in pairs if p.same]
    hard = [p for p in pairs if p.category in evaluation.HARD_NEGATIVE]
    counts = {
        "records": len(records),
        "pairs": len(pairs),
        "positives": len(positives),
        "hard_negatives": len(hard),
        "other_negatives": len(pairs) - len(positives) - len(hard),
    }
    print(json.dumps(counts))

    print("\nthreshold sweep: P = precision on positives + hard negatives, R = recall, P_all = with every negative")
    print(f"{'threshold':>9} {'P':>7} {'R':>7} {'F1':>7} {'P_all':>7} {'FP_hard':>8} {'FP_all':>7} {'FN':>4}")
    for threshold in range(70, 101, 2):
        focus = evaluation.score(positives + hard, threshold=float(threshold))
        everything = evaluation.score(pairs, threshold=float(threshold))
        mark = "  <- chosen" if threshold == int(NAME_THRESHOLD) else ""
        print(
            f"{threshold:>9} {focus.precision:>7.4f} {focus.recall:>7.4f} {focus.f1:>7.4f} "
            f"{everything.precision:>7.4f} {focus.false_positive:>8} {everything.false_positive:>7} "
            f"{focus.false_negative:>4}{mark}"
        )

    matcher = rules(NAME_THRESHOLD)
    print(f"\nper category at {NAME_THRESHOLD:g}: pairs, joined")
    table = evaluation.by_category(pairs, matcher)
    for group, names in (
        ("positive", evaluation.POSITIVE),
        ("hard negative", evaluation.HARD_NEGATIVE),
        ("other negative", evaluation.OTHER_NEGATIVE),
    ):
        for name in names:
            total, joined = table.get(name, (0, 0))
            print(f"  {group:<15} {name:<22} {total:>5} {joined:>5}")

    print("\nper rule (all pairs): TP, FP, precision, recall (share of every positive), F1")
    for rule, score in evaluation.by_rule(pairs, matcher).items():
        print(
            f"  {rule:<13} {score.true_positive:>5} {score.false_positive:>4} {score.precision:>7.4f} "
            f"{score.recall:>7.4f} {score.f1:>7.4f}"
        )
    overall = evaluation.score_with(pairs, matcher)
    print(
        f"  {'all rules':<13} {overall.true_positive:>5} {overall.false_positive:>4} {overall.precision:>7.4f} "
        f"{overall.recall:>7.4f} {overall.f1:>7.4f}"
    )

    def without_vetoes(a: MatchKeys, b: MatchKeys) -> str | None:
        found = unvetoed_rule(a, b, NAME_THRESHOLD)
        return found[0] if found is not None else None

    before = evaluation.score_with(positives + hard, without_vetoes)
    every = evaluation.score_with(pairs, without_vetoes)
    print(
        f"\nbaseline, the same rules without vetoes: P {before.precision:.4f}, R {before.recall:.4f} "
        f"(FP on hard negatives {before.false_positive}); P_all {every.precision:.4f} (FP {every.false_positive})"
    )
    naive = evaluation.phone_only_score(pairs)
    print(
        f"\nsame phone alone: precision {naive.precision:.3f}, recall {naive.recall:.3f} "
        f"(TP {naive.true_positive}, FP {naive.false_positive}); phone rule name floor: {PHONE_NAME_FLOOR:g}"
    )


if __name__ == "__main__":
    main()
