#!/usr/bin/env python3
"""Paired comparison of two `dmar eval` runs over the same questions (for example one run per
encoder): for each system and metric, the mean of run B, its difference from run A and the
95% percentile interval of that difference over 1,000 bootstrap resamples of the questions
(seed 1), from the runs' per_question.jsonl. `*` marks an interval that excludes 0.

    python3 scripts/eval_compare.py RUN_A RUN_B [--systems dense,dmar] [--metrics recall@5,ndcg@10]
"""
import argparse
import json
import random
import sys


def per_question(run, system):
    out = {}
    with open(f"{run}/per_question.jsonl") as f:
        for line in f:
            o = json.loads(line)
            if o["system"] == system:
                out[o["id"]] = o["metrics"]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--systems", default="dense,hybrid,kg-walk,dmar,dmar-paper")
    ap.add_argument("--metrics", default="recall@5,ndcg@10")
    ap.add_argument("--resamples", type=int, default=1000)
    a = ap.parse_args()
    print(f"| system | metric | A | B | B - A [95% paired bootstrap] |")
    print("|---|---|---|---|---|")
    for system in a.systems.split(","):
        qa, qb = per_question(a.a, system), per_question(a.b, system)
        ids = sorted(set(qa) & set(qb))
        if not ids:
            print(f"{system}: not in both runs", file=sys.stderr)
            continue
        for metric in a.metrics.split(","):
            if any(metric not in qa[i] or metric not in qb[i] for i in ids):
                continue  # not measured on this dataset (answer recall without answers)
            d = [qb[i][metric] - qa[i][metric] for i in ids]
            rng = random.Random(1)
            n = len(d)
            bs = sorted(sum(d[rng.randrange(n)] for _ in range(n)) / n for _ in range(a.resamples))
            lo, hi = bs[int(0.025 * a.resamples)], bs[int(0.975 * a.resamples) - 1]
            star = "\\*" if lo > 0 or hi < 0 else ""
            ma = sum(qa[i][metric] for i in ids) / n
            mb = sum(qb[i][metric] for i in ids) / n
            print(f"| {system} | {metric} | {ma:.3f} | {mb:.3f} | {mb - ma:+.3f} [{lo:+.3f}, {hi:+.3f}]{star} |")


if __name__ == "__main__":
    main()
