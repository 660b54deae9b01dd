#!/usr/bin/env python3
"""The miss analysis of several `dmar eval` runs side by side: for one system, every gold document
outside the top 5, by the first stage that lost it and its cause (results.json's "misses").

    python3 scripts/miss_table.py [--system dmar] NAME=RUN_DIR [NAME=RUN_DIR ...]

Prints a Markdown table: a row per (stage, cause), a column per run, cells "misses (share)".
Standard library only.
"""
import argparse
import json
import os
import sys

STAGES = ["linking", "recall", "channel", "fusion"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--system", default="dmar")
    ap.add_argument("runs", nargs="+", help="NAME=RUN_DIR")
    args = ap.parse_args()
    tables = []
    for spec in args.runs:
        name, _, path = spec.partition("=")
        with open(os.path.join(path, "results.json")) as f:
            t = json.load(f).get("misses", {}).get(args.system)
        if t is None:
            sys.exit(f"miss_table: {path} has no miss analysis for {args.system}")
        tables.append((name, t))
    rows = sorted({(s, c) for _, t in tables for s in t["counts"] for c in t["counts"][s]},
                  key=lambda sc: (STAGES.index(sc[0]) if sc[0] in STAGES else 9, sc[1]))
    print("| stage | cause | " + " | ".join(n for n, _ in tables) + " |")
    print("|---|---|" + "---|" * len(tables))
    print("| all | gold documents outside the top 5 | " +
          " | ".join(f"{t['misses']} of {t['gold']}" for _, t in tables) + " |")
    print("| all | questions with no gold in the top 5 | " +
          " | ".join(f"{t['empty']} of {t['questions']}" for _, t in tables) + " |")
    for s, c in rows:
        cells = []
        for _, t in tables:
            n = t["counts"].get(s, {}).get(c, 0)
            cells.append(f"{n} ({100 * n / max(t['misses'], 1):.0f}%)")
        print(f"| {s} | {c} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
