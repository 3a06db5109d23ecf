"""Precision and recall of entity resolution on labelled pairs built from the shared samples.

    python bench/registries_matching.py

Prints, for each name threshold, the pairs found and missed, and the naive "same phone" rule for
comparison (vpx/registries/evaluation.py says how the pairs are built and labelled).
"""

from __future__ import annotations

import json
from pathlib import Path

from vpx.registries import evaluation
from vpx.registries.matching import NAME_THRESHOLD, PHONE_NAME_FLOOR

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> None:
    records = evaluation.sample_records(SHARED)
    pairs = evaluation.labelled_pairs(records)
    same = sum(p.same for p in pairs)
    counts = {"records": len(records), "pairs": len(pairs), "same": same, "different": len(pairs) - same}
    print(json.dumps(counts))
    print(f"{'threshold':>9} {'precision':>9} {'recall':>7} {'F1':>6} {'TP':>4} {'FP':>4} {'FN':>4}")
    for threshold in range(70, 101, 2):
        score = evaluation.score(pairs, threshold=float(threshold))
        f1 = 2 * score.precision * score.recall / (score.precision + score.recall)
        mark = "  <- chosen" if threshold == int(NAME_THRESHOLD) else ""
        print(
            f"{threshold:>9} {score.precision:>9.3f} {score.recall:>7.3f} {f1:>6.3f} "
            f"{score.true_positive:>4} {score.false_positive:>4} {score.false_negative:>4}{mark}"
        )
    naive = evaluation.phone_only_score(pairs)
    print(
        f"same phone alone: precision {naive.precision:.3f}, recall {naive.recall:.3f} "
        f"(TP {naive.true_positive}, FP {naive.false_positive}); phone rule name floor: {PHONE_NAME_FLOOR}"
    )


if __name__ == "__main__":
    main()
