#!/usr/bin/env python3
"""The evaluation's retrieval tables (docs/eval/README.md, and the README's summary) from `dmar eval`
runs: one column per run (benchmark), one row per system, each cell the means of the chosen metrics ("R@5 / nDCG@10" by default), marked `*` where
the run's paired-bootstrap interval against its best baseline excludes 0 (the run's
--baselines), and, below, each system's p50 latency over hybrid search's in the same run.

    python3 scripts/eval_table.py --runs "kgqa dev=eval-out/kgqa-dev" "NQ=eval-out/nq" \\
        [--systems dense,hybrid,dmar] [--metrics recall@5,ndcg@10] [--diffs dmar] [--readme docs/eval/README.md --marker NAME]

--diffs adds, for the named systems, a table of the differences from the best baseline with their
intervals. --from adds the ablation table: each named system against the system it starts from
(results.json's diffs_vs_from: dmar-full for the paper's stages, dmar for the question-aware ones),
with the p50 latency it saves or costs. --readme replaces the lines between `<!-- eval_table:NAME -->` and
`<!-- /eval_table:NAME -->` in that file (any Markdown file: docs/eval/README.md holds the tables `six`
and `ablation`, README.md its summary `readme`) with the tables (the command that made them is printed
above them).
"""
import argparse
import json
import shlex
import sys


def cell(run, system, metrics):
    vals = []
    for m in metrics:
        v = run["means"].get(system, {}).get(m)
        if v is None:
            return "-"
        ci = run["diffs_vs_best_baseline"].get(system, {}).get(m)
        star = "\\*" if ci and (ci["lo"] > 0 or ci["hi"] < 0) else ""
        vals.append(f"{v:.3f}".lstrip("0") + star)
    return " / ".join(vals)


def diff(run, system, m):
    ci = run["diffs_vs_best_baseline"].get(system, {}).get(m)
    if not ci:
        return "(best)" if run["best_baseline"].get(m) == system else "-"
    star = "\\*" if ci["lo"] > 0 or ci["hi"] < 0 else ""
    return f"{ci['diff']:+.3f} [{ci['lo']:+.3f}, {ci['hi']:+.3f}]{star}"


def from_cell(run, system, metrics):
    d = run.get("diffs_vs_from", {}).get(system)
    sysinfo = {x["name"]: x for x in run["systems"]}
    if not d or system not in sysinfo:
        return "-"
    vals = []
    for m in metrics:
        ci = d.get(m)
        if not ci:
            vals.append("-")
            continue
        star = "\\*" if ci["lo"] > 0 or ci["hi"] < 0 else ""
        vals.append(f"{ci['diff']:+.3f}{star}")
    lat = run.get("latency_ms", {})
    frm = sysinfo[system].get("from", "")
    ms = ""
    if system in lat and frm in lat:
        ms = f"; {lat[system]['p50'] - lat[frm]['p50']:+.1f} ms"
    return " / ".join(vals) + ms


def latency_ratio(run, system):
    lat = run.get("latency_ms", {})
    if system not in lat or "hybrid" not in lat or not lat["hybrid"].get("p50"):
        return "-"
    return f"{lat[system]['p50'] / lat['hybrid']['p50']:.2f}x"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", nargs="+", required=True, help="COLUMN=RUN_DIR, in column order")
    ap.add_argument("--systems", default="")
    ap.add_argument("--metrics", default="recall@5,ndcg@10")
    ap.add_argument("--diffs", default="", help="systems whose differences from the best baseline get a table of their own")
    ap.add_argument("--from", dest="from_", default="", help="ablations whose differences from their starting system get a table")
    ap.add_argument("--no-main", action="store_true", help="only the --from table")
    ap.add_argument("--readme", default="", help="the Markdown file whose eval_table:MARKER block to rewrite")
    ap.add_argument("--marker", default="")
    a = ap.parse_args()
    cols = []
    for spec in a.runs:
        name, path = spec.split("=", 1)
        with open(f"{path}/results.json") as f:
            cols.append((name, json.load(f)))
    metrics = a.metrics.split(",")
    systems = a.systems.split(",") if a.systems else [s["name"] for s in cols[0][1]["systems"]]
    out = []
    if not a.no_main:
        out = [f"| system | {' | '.join(n for n, _ in cols)} |", "|---|" + "---|" * len(cols)]
        for s in systems:
            out.append(f"| {s} | " + " | ".join(cell(r, s, metrics) for _, r in cols) + " |")
        out += ["", "p50 latency over hybrid search's, in the same run:", "",
                f"| system | {' | '.join(n for n, _ in cols)} |", "|---|" + "---|" * len(cols)]
        for s in systems:
            out.append(f"| {s} | " + " | ".join(latency_ratio(r, s) for _, r in cols) + " |")
    abl = [x for x in a.from_.split(",") if x]
    if abl:
        if out:
            out.append("")
        out += [f"Each ablation against the system it starts from ({' / '.join(metrics)}, the difference; "
                "`*`: the paired interval excludes 0), then its p50 latency minus the starting system's, ms:", "",
                f"| system | from | {' | '.join(n for n, _ in cols)} |", "|---|---|" + "---|" * len(cols)]
        for s in abl:
            frm = next((x.get("from", "") for _, r in cols for x in r["systems"] if x["name"] == s), "")
            out.append(f"| {s} | {frm} | " + " | ".join(from_cell(r, s, metrics) for _, r in cols) + " |")
    for s in [x for x in a.diffs.split(",") if x]:
        out += ["", f"{s} against the best baseline of each run (difference [95% interval]):", "",
                "| metric | " + " | ".join(n for n, _ in cols) + " |", "|---|" + "---|" * len(cols)]
        for m in metrics:
            out.append(f"| {m} | " + " | ".join(diff(r, s, m) for _, r in cols) + " |")
    text = "\n".join(out) + "\n"
    if not a.readme:
        sys.stdout.write(text)
        return
    if not a.marker:
        raise SystemExit("--readme needs --marker")
    start, end = f"<!-- eval_table:{a.marker} -->", f"<!-- /eval_table:{a.marker} -->"
    with open(a.readme) as f:
        doc = f.read()
    if start not in doc or end not in doc:
        raise SystemExit(f"{a.readme} has no {start} ... {end} block")
    cmd = "python3 scripts/eval_table.py " + " ".join(shlex.quote(x) for x in sys.argv[1:])
    head, rest = doc.split(start, 1)
    _, tail = rest.split(end, 1)
    with open(a.readme, "w") as f:
        f.write(head + start + "\n\nRegenerated by `" + cmd + "` from the runs above.\n\n" + text + "\n" + end + tail)
    print(f"{a.readme}: table {a.marker} rewritten ({cmd})")


if __name__ == "__main__":
    main()
