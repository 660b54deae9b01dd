#!/usr/bin/env python3
"""Paired comparison of systems within one `dmar eval` run, for runs with no baseline system
(e.g. dmar-no-reform, dmar, dmar-chat): each pair's mean difference and the 95% percentile
interval over 1,000 bootstrap resamples of the questions (seed 1), from per_question.jsonl;
then the run's latency and the chat reformulator's fallbacks.

    python3 scripts/eval_pair.py RUN [--pairs dmar:dmar-chat,dmar-no-reform:dmar-chat] [--metrics recall@5,ndcg@10]
"""
import argparse
import json
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--pairs", default="dmar:dmar-chat,dmar-no-reform:dmar-chat,dmar-no-reform:dmar")
    ap.add_argument("--metrics", default="recall@5,ndcg@10")
    args = ap.parse_args()
    pq = {}
    with open(f"{args.run}/per_question.jsonl") as f:
        for line in f:
            o = json.loads(line)
            pq.setdefault(o["system"], {})[o["id"]] = o["metrics"]
    for m in args.metrics.split(","):
        means = {s: sum(q[m] for q in qs.values()) / len(qs) for s, qs in pq.items()}
        print(m, " ".join(f"{s} {v:.3f}" for s, v in means.items()))
        for pair in args.pairs.split(","):
            a, b = pair.split(":")
            ids = sorted(set(pq[a]) & set(pq[b]))
            d = [pq[b][i][m] - pq[a][i][m] for i in ids]
            rng = random.Random(1)
            bs = sorted(sum(rng.choice(d) for _ in d) / len(d) for _ in range(1000))
            star = "*" if bs[25] > 0 or bs[974] < 0 else ""
            print(f"  {b} - {a}: {sum(d) / len(d):+.3f} [{bs[25]:+.3f}, {bs[974]:+.3f}]{star} (n={len(ids)})")
    with open(f"{args.run}/results.json") as f:
        r = json.load(f)
    for s, l in r["latency_ms"].items():
        print(f"latency {s}: p50 {l['p50']:.1f} ms, mean {l['mean']:.1f} ms")
    print("reformulators:", json.dumps(r.get("reformulators")))
    print("fallbacks:", json.dumps(r.get("fallbacks")))


if __name__ == "__main__":
    main()
