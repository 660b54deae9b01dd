#!/usr/bin/env python3
"""Where a multi-hop run loses its gold passages: Recall@5 / Recall@20 of each system's gold
passages grouped by what the question gives of them, from a `dmar eval` run's per_question.jsonl.

    python3 scripts/miss_trace.py RUN --musique ../shared/data/musique-100/questions.json
    python3 scripts/miss_trace.py RUN            # HotpotQA (either setting), or any run

--musique groups MuSiQue's gold passages by their hop in the question's decomposition (the
first hop, middle hops, the last hop: a later hop's passage names the previous hop's answer,
which the question does not say). Without it, a gold passage is "named" when its title (less a
parenthesised qualifier) occurs in the question, "unnamed" otherwise. A question whose gold
titles cannot be told apart (two gold passages with one title) is skipped and counted.
"""
import argparse
import json
import re
from collections import defaultdict

SUFFIX = re.compile(r" #[0-9a-f]{8}$")  # dmar eval's id for a title the corpus repeats
QUALIFIER = re.compile(r"\s*\([^)]*\)$")


def norm(s):
    return " " + " ".join(re.findall(r"[a-z0-9]+", s.lower())) + " "


def groups_musique(path):
    qs = {q["id"]: q for q in json.load(open(path))}

    def groups(rec):
        q = qs[rec["id"]]
        hops = [q["paragraphs"][d["paragraph_support_idx"]]["title"] for d in q["question_decomposition"]]
        titles = [SUFFIX.sub("", g) for g in rec["gold"]]
        if len(set(hops)) != len(hops) or sorted(titles) != sorted(hops):
            return None
        out = {}
        for h, t in enumerate(hops):
            out[rec["gold"][titles.index(t)]] = "first hop" if h == 0 else "last hop" if h == len(hops) - 1 else "middle hops"
        return out

    return groups, ["first hop", "middle hops", "last hop"]


def groups_named(rec):
    q = norm(rec["question"])
    titles = [QUALIFIER.sub("", SUFFIX.sub("", g)) for g in rec["gold"]]
    if len(set(titles)) != len(titles):
        return None
    return {g: "named in Q" if norm(t) in q else "not named" for g, t in zip(rec["gold"], titles)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--musique", default="", help="MuSiQue's questions.json: group by hop")
    a = ap.parse_args()
    if a.musique:
        groups, order = groups_musique(a.musique)
    else:
        groups, order = groups_named, ["named in Q", "not named"]
    acc = defaultdict(lambda: [0, 0, 0])  # (system, group) -> in top 5, in top 20, gold passages
    skipped = defaultdict(int)
    for line in open(f"{a.run}/per_question.jsonl"):
        rec = json.loads(line)
        g = groups(rec)
        if g is None:
            skipped[rec["system"]] += 1
            continue
        rank = {d: i for i, d in reversed(list(enumerate(rec["ranked_ids"])))}
        for gold, grp in g.items():
            i = rank.get(gold, 1 << 30)
            c = acc[(rec["system"], grp)]
            c[0] += i < 5
            c[1] += i < 20
            c[2] += 1
    systems = sorted({s for s, _ in acc})
    print("| system | " + " | ".join(f"{g}: R@5 / R@20 (passages)" for g in order) + " |")
    print("|---" * (len(order) + 1) + "|")
    for s in systems:
        cells = []
        for g in order:
            c = acc[(s, g)]
            cells.append(f"{c[0] / c[2]:.3f} / {c[1] / c[2]:.3f} ({c[2]})" if c[2] else "-")
        print(f"| {s} | " + " | ".join(cells) + " |")
    if skipped:
        print("\nquestions skipped (gold titles not told apart): " + ", ".join(f"{s} {n}" for s, n in sorted(skipped.items())))


if __name__ == "__main__":
    main()
