#!/usr/bin/env python3
"""The paper's Table 4 here: end-to-end results on five benchmarks against the baselines.

    python3 scripts/table4.py [--out eval-out/table4] [--run] [--readme README.md] [--doc docs/eval/end-to-end.md]
                              [--reader-url URL --reader-model NAME --reader-k 3] [--limit N]

Reads OUT/{nq,triviaqa,kgqa,hotpotqa,fever}/results.json (dmar eval's), prints the table
(rows: systems; columns: the five benchmarks; cells: Recall@5 / the end metric, F1 or FEVER
label accuracy), the paired intervals of dmar against the best baseline, the reader's cost,
and the dmar eval command behind each column. With --readme it rewrites the README's section
between <!-- table4 --> and <!-- /table4 --> with a summary (the table and a link), and the same
section of --doc (the evaluation's page, docs/eval/end-to-end.md) with all of it. With --run it first runs the dmar eval
commands whose results.json is missing (bin/dmar; a rerun reads the reader's replies from the
cache in the state folder). Standard library only.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

import eval_table  # scripts/eval_table.py: the evaluation's retrieval tables, the same cells

SYSTEMS = ["bm25", "dense", "hybrid", "dmar-paper", "dmar"]
BASELINES = "dense,hybrid"
DATA = "../shared/data"

# name, column title, dataset flag, extra flags, end metric, the paper's figure and its metric
BENCHMARKS = [
    ("nq", "NQ-open (report half)", f"nq-open:{DATA}/nq-open/dev.jsonl", ["--half", "report"], "f1", ".583 F1"),
    ("triviaqa", "TriviaQA (report half)", f"triviaqa:{DATA}/triviaqa/dev.jsonl", ["--half", "report"], "f1", ".790 F1"),
    ("kgqa", "KGQA dev (WebQSP's place)", f"kgqa:{DATA}/kgqa/dev.jsonl", [], "f1", ".576 F1 (WebQSP)"),
    ("hotpotqa", "HotpotQA-100 pooled", f"hotpotqa:{DATA}/hotpotqa-100", [], "f1", ".625 F1"),
    ("fever", "FEVER (report half)", f"fever:{DATA}/fever/dev.jsonl", ["--half", "report"], "label_acc", ".813 acc."),
]
METRIC_NAMES = {"f1": "F1", "label_acc": "label accuracy"}
BEGIN, END = "<!-- table4 -->", "<!-- /table4 -->"
DOC = "docs/eval/end-to-end.md"
RUN_ALL = f"python3 scripts/table4.py --run --readme README.md --doc {DOC}"


def command(args, name, dataset, extra):
    cmd = ["bin/dmar", "eval", "--data", f"{DATA}/codexm", "--dataset", dataset, *extra,
           "--systems", ",".join(SYSTEMS), "--baselines", BASELINES,
           "--reader-url", args.reader_url, "--reader-model", args.reader_model, "--reader-k", str(args.reader_k)]
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    return cmd + ["--out", os.path.join(args.out, name)]


def load(args):
    runs = {}
    for name, *_ in BENCHMARKS:
        path = os.path.join(args.out, name, "results.json")
        if os.path.exists(path):
            with open(path) as f:
                runs[name] = json.load(f)
    return runs


def fmt(v):
    return "–" if v is None else f"{v:.3f}".lstrip("0")


def cell(run, system, metric):
    """Recall@5 / the end metric, each marked where its interval against the best baseline excludes 0."""
    return eval_table.cell(run, system, ["recall@5", metric])


def table(runs, cols, w):
    """The systems' table with its smoke-run warning and legend: what the README shows."""
    gen = next((runs[b[0]].get("generator") for b in cols if runs[b[0]].get("generator")), "no reader")
    limited = [b[0] for b in cols if "--limit" in runs[b[0]].get("extra", {}).get("command", "")]
    if limited:
        w(f"**A smoke run, not a result**: {', '.join(limited)} ran with `--limit` (the first questions only); "
          "the figures below check the pipeline end to end and measure nothing.")
        w("")
    w("| system | " + " | ".join(f"{b[1]} ({runs[b[0]]['dataset']['questions']} q)" for b in cols) + " |")
    w("|---|" + "---|" * len(cols))
    for s in SYSTEMS:
        w(f"| {'**dmar**' if s == 'dmar' else s} | " + " | ".join(cell(runs[b[0]], s, b[4]) for b in cols) + " |")
    w("| the paper (7B-class reader, its own corpora) | " + " | ".join(f"– / {b[5]}" for b in cols) + " |")
    w("")
    w("Cells: Recall@5 / F1 (FEVER: Recall@5 over the verifiable claims / label accuracy over all). "
      f"Reader: {gen}. `\\*`: the paired-bootstrap 95% interval of the difference from the best "
      f"baseline ({BASELINES.replace(',', ', ')}, per metric) excludes 0.")


def summary(args, runs):
    """The README's section: the table and where the rest is, or where the commands are."""
    out = []
    w = out.append
    link = f"[{DOC}]({DOC}#the-papers-table-4-five-benchmarks-end-to-end)"
    cols = [b for b in BENCHMARKS if b[0] in runs]
    if not cols:
        w(f"Not run yet (no results.json under {args.out}); the commands, and `{RUN_ALL}` to run them: {link}.")
        return "\n".join(out) + "\n"
    table(runs, cols, w)
    w("")
    w(f"The intervals, FEVER's strict score, the reader's cost, what differs from the paper and the commands: {link}.")
    return "\n".join(out) + "\n"


def render(args, runs):
    out = []
    w = out.append
    cols = [b for b in BENCHMARKS if b[0] in runs]
    if not cols:
        w(f"Not run yet (no results.json under {args.out}).")
        w("")
        commands(args, runs, w)
        return "\n".join(out) + "\n"
    table(runs, cols, w)
    w("")
    w("`dmar` against the best baseline on the end metric, and FEVER's strict score:")
    w("")
    for b in cols:
        run, metric = runs[b[0]], b[4]
        best = run.get("best_baseline", {}).get(metric, "?")
        parts = []
        for s in ("dmar", "dmar-paper"):
            d = run.get("diffs_vs_best_baseline", {}).get(s, {}).get(metric)
            if d:
                parts.append(f"{s} {d['diff']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}]")
        line = f"- {b[1]}: {METRIC_NAMES[metric]} against {best}: " + "; ".join(parts)
        if b[0] == "fever":
            fs = {s: run["means"].get(s, {}).get("fever_score") for s in SYSTEMS}
            fc = {s: run["means"].get(s, {}).get("fever_score_cited") for s in SYSTEMS}
            line += (". FEVER score (right verdict and a whole gold evidence set among the sentences read / among "
                     "those cited): " + ", ".join(f"{s} {fmt(fs[s])} / {fmt(fc[s])}" for s in SYSTEMS))
        w(line + ".")
    w("")
    w("Reader cost per question (mean ms, generator calls, cache hits; systems that show the reader the same "
      "documents share a call):")
    w("")
    for b in cols:
        rc, errs = runs[b[0]].get("reader_cost") or {}, runs[b[0]].get("errors") or {}
        w(f"- {b[1]}: " + "; ".join(f"{s} {rc[s]['mean_ms']:.0f} ms, {rc[s]['calls_per_question']:.2f} calls, "
                                   f"{rc[s]['cache_hits_per_question']:.2f} hits" +
                                   (f", {errs[s]} failed (a reader timeout or a search error: no end metric)" if errs.get(s) else "")
                                   for s in SYSTEMS if s in rc) + ".")
    w("")
    w("What differs from the paper: the reader (the model above, 4-bit, where the paper's is 7B-class; "
      "FEVER's verdict from the same documents' sentences through POST /v1/verify's path), the corpus (CoDEx-M's 16,352 Wikipedia "
      "extracts; NQ's 2,600 gold passages pooled with them; HotpotQA-100's 994 paragraphs), and the splits "
      "(the report halves of our dev files for NQ, TriviaQA and FEVER, of which a larger part is held back; "
      "kgqa dev, which was partly tuned on; HotpotQA-100, a train sample, pooled). The paper's column for "
      "KGQA is WebQSP.")
    w("")
    commands(args, runs, w)
    return "\n".join(out) + "\n"


def commands(args, runs, w):
    """Writes the dmar eval command of each column: the one a run recorded, else the one --run would run."""
    w("The commands (from the repository root, after `make build` and `scripts/services.sh start llm`); "
      f"`{RUN_ALL}` runs the missing ones and rewrites this section and the README's summary:")
    w("")
    w("```sh")
    for name, _, dataset, extra, *_ in BENCHMARKS:
        cmd = runs[name]["extra"]["command"] if name in runs and "command" in runs[name].get("extra", {}) else \
            " ".join(shlex.quote(c) for c in command(args, name, dataset, extra))
        w("bin/" + cmd if cmd.startswith("dmar ") else cmd)  # a run records its arguments after "dmar"
    w("```")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="eval-out/table4")
    ap.add_argument("--run", action="store_true", help="run the dmar eval commands whose results.json is missing")
    ap.add_argument("--readme", help="rewrite this file's section between the table4 markers with the summary")
    ap.add_argument("--doc", default=DOC, help="with --readme, rewrite this file's table4 section with the whole of it "
                    "(empty: only the README)")
    ap.add_argument("--reader-url", default="http://127.0.0.1:8091/v1")
    ap.add_argument("--reader-model", default="qwen2.5-coder-1.5b-instruct-q4_k_m")
    ap.add_argument("--reader-k", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="only the first N questions of each (a smoke run)")
    args = ap.parse_args()
    if args.run:
        for name, _, dataset, extra, *_ in BENCHMARKS:
            if os.path.exists(os.path.join(args.out, name, "results.json")):
                continue
            cmd = command(args, name, dataset, extra)
            print("table4: " + " ".join(shlex.quote(c) for c in cmd), file=sys.stderr)
            subprocess.run(cmd, check=True)
    runs = load(args)
    text = render(args, runs)
    sys.stdout.write(text)
    if args.readme:
        # Both files are checked before either is written, so a missing section changes nothing.
        targets = [(args.readme, summary(args, runs))] + ([(args.doc, text)] if args.doc else [])
        docs = []
        for path, body in targets:
            with open(path) as f:
                doc = f.read()
            if BEGIN not in doc or END not in doc:
                sys.exit(f"table4: {path} has no {BEGIN} ... {END} section")
            docs.append((path, doc, body))
        for path, doc, body in docs:
            head, rest = doc.split(BEGIN, 1)
            _, tail = rest.split(END, 1)
            with open(path, "w") as f:
                f.write(head + BEGIN + "\n" + body + END + tail)


if __name__ == "__main__":
    main()
