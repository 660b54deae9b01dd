#!/usr/bin/env python3
"""Whether two `dmar eval` runs ranked alike, id for id: for every (system, question) the two
runs share, the ranked id lists are compared; prints per system the count identical, the count
that differ (with the first few question ids) and the questions only one run has. Scores are
compared too (a ranking can stay while a score moves in the last bits): the largest absolute
difference is printed. Exit status 1 when any ranking differs or a question is missing.

    python3 scripts/rank_identity.py BEFORE AFTER      (folders holding per_question.jsonl, or the files)
"""
import json
import os
import sys


def load(path):
    if os.path.isdir(path):
        path = os.path.join(path, "per_question.jsonl")
    runs = {}
    with open(path) as f:
        for line in f:
            o = json.loads(line)
            runs[(o["system"], o["id"])] = o
    return runs


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = load(sys.argv[1]), load(sys.argv[2])
    systems = sorted({s for s, _ in a} | {s for s, _ in b})
    bad = False
    for s in systems:
        ka = {q for sys_, q in a if sys_ == s}
        kb = {q for sys_, q in b if sys_ == s}
        same, differ, maxd = 0, [], 0.0
        for q in sorted(ka & kb):
            x, y = a[(s, q)], b[(s, q)]
            if x.get("error") or y.get("error"):
                differ.append(q + "(error)")
                continue
            if x["ranked_ids"] == y["ranked_ids"]:
                same += 1
            else:
                differ.append(q)
            for u, v in zip(x.get("scores") or [], y.get("scores") or []):
                maxd = max(maxd, abs(u - v))
        only = len(ka ^ kb)
        print(f"{s}: {same}/{len(ka & kb)} identical, {len(differ)} differ"
              + (f" ({', '.join(differ[:5])}{' ...' if len(differ) > 5 else ''})" if differ else "")
              + (f", {only} in one run only" if only else "")
              + f", max |score difference| {maxd:.3g}")
        bad = bad or bool(differ) or only > 0
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
