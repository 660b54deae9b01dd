#!/usr/bin/env python3
"""Compare two dmar eval runs of the same questions and systems, per question:
the embedded run (A) and the Neo4j + Weaviate run (B).

    python3 compare.py EMBEDDED_OUT NEO4J_WEAVIATE_OUT

For each system: how many ranked lists (k_max long) and top-5 lists are
identical, the mean overlap@5 (shared documents among the two top 5s, over
5), and the paired difference B - A of Recall@5, nDCG@10 and
answer_recall@5 with a 95% percentile interval (paired bootstrap over
questions, 1000 resamples, seed 1), the questions whose fallbacks differ
and B's errors, and the latency p50 / p95 of both (ms per question)."""
import json
import random
import sys


def read(path):
    out = {}
    with open(path + "/per_question.jsonl") as f:
        for line in f:
            r = json.loads(line)
            out[(r["system"], r["id"])] = r
    return out


def pctl(xs, p):
    """The p-th percentile, interpolated linearly between order statistics."""
    xs = sorted(xs)
    k = p / 100 * (len(xs) - 1)
    i = int(k)
    return xs[i] if i + 1 >= len(xs) else xs[i] + (xs[i + 1] - xs[i]) * (k - i)


def bootstrap(d, resamples=1000, seed=1):
    rng = random.Random(seed)
    n = len(d)
    means = [sum(d[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples)]
    return sum(d) / n, pctl(means, 2.5), pctl(means, 97.5)


def main(a_dir, b_dir):
    a, b = read(a_dir), read(b_dir)
    if set(a) != set(b):
        sys.exit(f"the runs differ in (system, question): {len(set(a) ^ set(b))} pairs")
    systems = list(dict.fromkeys(s for s, _ in a))
    print("| system | identical lists | identical top 5 | mean overlap@5 | Recall@5 A / B | B - A Recall@5 [95%] | B - A nDCG@10 [95%] | B - A answer_recall@5 [95%] | questions with other fallbacks / errors on B | p50 / p95 ms A | p50 / p95 ms B |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for s in systems:
        ids = [q for sys_, q in a if sys_ == s]
        same = sum(a[s, q]["ranked_ids"] == b[s, q]["ranked_ids"] for q in ids)
        same5 = sum(a[s, q]["ranked_ids"][:5] == b[s, q]["ranked_ids"][:5] for q in ids)
        ov = sum(len(set(a[s, q]["ranked_ids"][:5]) & set(b[s, q]["ranked_ids"][:5])) / 5 for q in ids) / len(ids)
        cells = []
        for m in ("recall@5", "ndcg@10", "answer_recall@5"):
            d = [b[s, q]["metrics"].get(m, 0) - a[s, q]["metrics"].get(m, 0) for q in ids]
            mean, lo, hi = bootstrap(d)
            cells.append(f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}]")
        r5a = sum(a[s, q]["metrics"].get("recall@5", 0) for q in ids) / len(ids)
        r5b = sum(b[s, q]["metrics"].get("recall@5", 0) for q in ids) / len(ids)
        fb = sum(set(b[s, q].get("fallbacks") or []) != set(a[s, q].get("fallbacks") or []) for q in ids)
        err = sum(bool(b[s, q].get("error")) for q in ids)
        la = [a[s, q]["latency_ms"] for q in ids]
        lb = [b[s, q]["latency_ms"] for q in ids]
        print(f"| {s} | {same} / {len(ids)} | {same5} / {len(ids)} | {ov:.3f} | {r5a:.3f} / {r5b:.3f} | {cells[0]} | {cells[1]} | {cells[2]} | {fb} / {err} | {pctl(la, 50):.0f} / {pctl(la, 95):.0f} | {pctl(lb, 50):.0f} / {pctl(lb, 95):.0f} |")
    # Fallbacks that fired on B and not on A for the same question.
    names = {}
    for k, r in b.items():
        for f in set(r.get("fallbacks") or []) - set(a[k].get("fallbacks") or []):
            names[k[0], f] = names.get((k[0], f), 0) + 1
    if names:
        print()
        for (s, f), n in sorted(names.items()):
            print(f"- B {s}: {f} x{n}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
