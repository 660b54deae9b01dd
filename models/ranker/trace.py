"""Why the learned ranker's top 5 differs from the cosine's, on exported pools.

    python models/ranker/trace.py --model models/ranker/ranker.onnx NAME=DIR ...
        [--neutral search1,inv_rank1]

DIR is a `dmar gate ranker` export (its rows carry the ranker's inputs). For each pool it
counts the questions whose top 5 by the ranker holds fewer (more) gold documents than the top 5
by the cosine alone; lists, for the questions it loses, the gold documents it pushed out and the
documents it put in their place, each with its rank by the cosine, by the ranker and in the
stage-1 hybrid search; and gives Recall@5 of the ranker with the --neutral inputs set to their
pool mean (so that they order nothing), beside the ranker's and the cosine's.
"""
import argparse
import os
import sys

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train as T  # noqa: E402  (the export reader and the metrics the ranker is fitted by)


def ranks(order):
    r = np.empty(len(order), int)
    r[order] = np.arange(1, len(order) + 1)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--neutral", default="search1,inv_rank1")
    ap.add_argument("pools", nargs="+", help="NAME=DIR of dmar gate ranker exports")
    a = ap.parse_args()
    sess = ort.InferenceSession(a.model)

    def score(x):
        return sess.run(None, {"features": x.astype(np.float32)})[0][:, 0]

    for spec in a.pools:
        st = T.Set([T.load(spec)])
        name, col = st.parts[0], {n: i for i, n in enumerate(st.names)}
        s = score(st.x)
        lost, won, out, into = 0, 0, [], []
        for lo, hi in zip(st.bounds[:-1], st.bounds[1:]):
            y, x = st.y[lo:hi], st.x[lo:hi]
            by_ranker = np.argsort(-s[lo:hi], kind="stable")
            by_cos = np.argsort(-x[:, col["sem"]], kind="stable")
            a5, c5 = y[by_ranker[:5]].sum(), y[by_cos[:5]].sum()
            won += a5 > c5
            if a5 >= c5:
                continue
            lost += 1
            rr, rc = ranks(by_ranker), ranks(by_cos)
            ir = x[:, col["inv_rank1"]]
            hyb = [int(round(1 / v)) if v > 0 else 0 for v in ir]
            out += [(rc[j], rr[j], hyb[j]) for j in np.flatnonzero(y) if rr[j] > 5 and rc[j] <= 5]
            into += [(rc[j], rr[j], hyb[j]) for j in by_ranker[:5] if not y[j] and rc[j] > 5]
        print(f"{name}: {len(st.qs)} questions; the ranker's top 5 holds fewer gold documents than the cosine's on {lost}, more on {won}")
        fmt = lambda l: ", ".join(f"({c}, {r}, {h})" for c, r, h in l[:8]) + (f" ... ({len(l)} in all)" if len(l) > 8 else "")
        print(f"  gold pushed out (rank by cosine, by ranker, in hybrid search): {fmt(out)}")
        print(f"  put in their place: {fmt(into)}")
        if out and into:
            print(f"  mean hybrid rank: pushed-out gold {np.mean([h for *_, h in out]):.1f}, their replacements {np.mean([h for *_, h in into]):.1f}")
        keep = np.ones(len(st.qs), bool)
        x2 = st.x.copy()
        for n in a.neutral.split(","):
            for lo, hi in zip(st.bounds[:-1], st.bounds[1:]):
                x2[lo:hi, col[n]] = x2[lo:hi, col[n]].mean()
        r5 = lambda v: T.metrics(st, v, keep)[name]["recall@5"]
        print(f"  Recall@5: ranker {r5(s):.3f}, with {a.neutral} at the pool mean {r5(score(x2)):.3f}, cosine {r5(st.x[:, col['sem']]):.3f}, hybrid {r5(st.x[:, col['inv_rank1']]):.3f}")


if __name__ == "__main__":
    main()
