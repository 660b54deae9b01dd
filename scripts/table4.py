#!/usr/bin/env python3
"""The paper's Table 4 here: end-to-end results on five benchmarks against the baselines.

    python3 scripts/table4.py [--out docs/eval/table4] [--run] [--check] [--readme README.md] [--doc docs/eval/end-to-end.md]
                              [--reader-url URL --reader-model NAME --reader-k 3] [--limit N]

Reads OUT/{nq,triviaqa,kgqa,hotpotqa,fever}/results.json (dmar eval's), prints the table
(rows: systems; columns: the five benchmarks; cells: Recall@5 / the end metric, F1 or FEVER
label accuracy), the paired intervals of dmar against the best baseline, the reader's cost,
and the dmar eval command behind each column. With --readme it rewrites the README's section
between <!-- table4 --> and <!-- /table4 --> with a summary (the table and a link), and the same
section of --doc (the evaluation's page, docs/eval/end-to-end.md) with all of it. With --run it first runs the dmar eval
commands whose results.json is missing (bin/dmar). Every reply of the reader is kept in
OUT/replies.jsonl, keyed by the model file's sha256 (models/llm/MODELS) and the request's, synced
as it comes: an interrupted run resumes where it stopped, systems that show the reader the same
prompt pay once, and a rerun costs no reader call; the file is committed with the results. With
--check it reruns each committed column with the reader unreachable (every reply must come from
the committed cache) and fails unless the per-question answers and metrics, and the rendered
section, equal the committed ones. Standard library only.
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
DATA_SHOWN = "../shared/data"  # the data path the docs print, wherever this machine keeps it
DATA = os.environ.get("DMAR_SHARED_DATA", DATA_SHOWN)

# name, column title, dataset flag, extra flags, end metric, the paper's figure and its metric.
# NQ's and TriviaQA's report halves (454 and 315 questions) are sampled to 200 by a fixed rule
# (dmar eval --sample: the 200 smallest sha256 of seed 1 and the id); the others are whole.
BENCHMARKS = [
    ("nq", "NQ-open (report half, 200 sampled)", f"nq-open:{DATA}/nq-open/dev.jsonl", ["--half", "report", "--sample", "200"], "f1", ".583 F1"),
    ("triviaqa", "TriviaQA (report half, 200 sampled)", f"triviaqa:{DATA}/triviaqa/dev.jsonl", ["--half", "report", "--sample", "200"], "f1", ".790 F1"),
    ("kgqa", "KGQA dev (WebQSP's place)", f"kgqa:{DATA}/kgqa/dev.jsonl", [], "f1", ".576 F1 (WebQSP)"),
    ("hotpotqa", "HotpotQA-100 pooled", f"hotpotqa:{DATA}/hotpotqa-100", [], "f1", ".625 F1"),
    ("fever", "FEVER (report half)", f"fever:{DATA}/fever/dev.jsonl", ["--half", "report"], "label_acc", ".813 acc."),
]
# The order --run runs them in: the cheap and telling columns first.
RUN_ORDER = ["kgqa", "hotpotqa", "fever", "nq", "triviaqa"]
MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "llm", "MODELS")
METRIC_NAMES = {"f1": "F1", "label_acc": "label accuracy"}
BEGIN, END = "<!-- table4 -->", "<!-- /table4 -->"
DOC = "docs/eval/end-to-end.md"
RUN_ALL = f"python3 scripts/table4.py --run --readme README.md --doc {DOC}"


def model_sha(alias):
    """The sha256 of the local model file named alias, from models/llm/MODELS."""
    with open(MODELS) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 7 and not line.startswith("#") and parts[1] == alias:
                return parts[6]
    sys.exit(f"table4: {alias} is not in {MODELS}: give its file's sha256 with --reader-model-sha256")


def command(args, name, dataset, extra, out=None, reader_url=None):
    cmd = ["bin/dmar", "eval", "--data", f"{DATA}/codexm", "--dataset", dataset, *extra,
           "--systems", ",".join(SYSTEMS), "--baselines", BASELINES,
           "--reader-url", reader_url or args.reader_url, "--reader-model", args.reader_model, "--reader-k", str(args.reader_k),
           "--reader-cache", os.path.join(args.out, "replies.jsonl"),
           "--reader-model-sha256", args.reader_model_sha256 or model_sha(args.reader_model)]
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    return cmd + ["--out", out or os.path.join(args.out, name)]


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
    w("| dmar with graph answers | " + " | ".join(graph_cell(runs[b[0]], b[4]) for b in cols) + " |")
    w("| the paper (7B-class reader, its own corpora) | " + " | ".join(f"– / {b[5]}" for b in cols) + " |")
    w("")
    w("Cells: Recall@5 / F1 (FEVER: Recall@5 over the verifiable claims / label accuracy over all). "
      f"Reader: {gen}. `\\*`: the paired-bootstrap 95% interval of the difference from the best "
      f"baseline ({BASELINES.replace(',', ', ')}, per metric) excludes 0.")


def graph_cell(run, metric):
    """dmar's F1 where a trusted graph path answers without the reader, and the share it answers."""
    m = run.get("means", {}).get("dmar", {})
    if metric != "f1" or "f1_graph" not in m:
        return "–"
    # graph_answered is averaged over the questions the graph proposed an answer for; the share
    # shown is of all the column's questions.
    n = run.get("counts", {}).get("dmar", {}).get("graph_answered", 0)
    answered = round(m.get("graph_answered", 0) * n)
    total = run["dataset"]["questions"]
    return f"– / {fmt(m['f1_graph'])} ({answered} of {total} by the graph)"


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
    w("Reader cost per question in the run that wrote each column (mean ms, generator calls, cache hits; systems that "
      "show the reader the same documents share a call; a reply already in the committed cache, from an earlier "
      "interrupted run, costs nothing here):")
    w("")
    for b in cols:
        rc, errs = runs[b[0]].get("reader_cost") or {}, runs[b[0]].get("errors") or {}
        w(f"- {b[1]}: " + "; ".join(f"{s} {rc[s]['mean_ms']:.0f} ms, {rc[s]['calls_per_question']:.2f} calls, "
                                   f"{rc[s]['cache_hits_per_question']:.2f} hits" +
                                   (f", {errs[s]} failed (a reader timeout or a search error: no end metric)" if errs.get(s) else "")
                                   for s in SYSTEMS if s in rc) + ".")
    w("")
    reading(args, runs, cols, w)
    w("What differs from the paper: the reader (the model above, 4-bit, where the paper's is 7B-class; "
      "FEVER's verdict from the same documents' sentences through POST /v1/verify's path), the corpus (CoDEx-M's 16,352 Wikipedia "
      "extracts; NQ's 2,600 gold passages pooled with them; HotpotQA-100's 994 paragraphs), and the splits "
      "(the report halves of our dev files for NQ, TriviaQA and FEVER, of which a larger part is held back; "
      "kgqa dev, which was partly tuned on; HotpotQA-100, a train sample, pooled). The paper's column for "
      "KGQA is WebQSP.")
    w("")
    commands(args, runs, w)
    return "\n".join(out) + "\n"


# What a committed column keeps of each per_question.jsonl record: the check's
# answers and metrics, and the reading's question, gold and the documents shown.
KEEP = ("id", "system", "question", "gold", "answers", "prediction", "metrics", "error", "graph")


def slim(args, name):
    """Cuts a column's per_question.jsonl to KEEP (ranked ids to the first 10), so that the
    committed file stays small; the run's other outputs keep everything."""
    path = os.path.join(args.out, name, "per_question.jsonl")
    out = []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            k = {key: r[key] for key in KEEP if key in r}
            k["ranked_ids"] = r.get("ranked_ids", [])[:10]
            if len(k.get("answers") or []) > 4:  # TriviaQA lists dozens of aliases; the reading shows 4
                k["answers"], k["answers_total"] = k["answers"][:4], len(k["answers"])
            out.append(json.dumps(k, ensure_ascii=False))
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(out) + "\n")
    os.replace(path + ".tmp", path)


def pairs(args, name):
    """(id, system) -> record of a column's per_question.jsonl, for the reading."""
    out = {}
    path = os.path.join(args.out, name, "per_question.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                out[(r["id"], r["system"])] = r
    return out


def shown_gold(r, k):
    """Whether the reader's k documents held a gold one."""
    return bool(set(r.get("ranked_ids", [])[:k]) & set(r.get("gold") or []))


def titles(ids):
    """The titles of the documents named, from the corpora the columns search (an id not found stays)."""
    want, out = set(ids), {}
    for path in (f"{DATA}/codexm/corpus.jsonl", f"{DATA}/nq-open/corpus.jsonl"):
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                head = line[:400]  # the id and title lead each line; the text is not parsed
                for i in list(want):
                    if f'"id": "{i}"' in head or f'"id":"{i}"' in head:
                        out[i] = json.loads(line).get("title") or i
                        want.discard(i)
    return out


def reading(args, runs, cols, w):
    """Where dmar's retrieval differs from the best baseline's in what the reader saw (a gold document
    among the k shown), and whether the answer followed; with traced examples each way."""
    w("Where retrieval became an answer: the questions on which dmar showed the reader a gold document "
      f"among its {args.reader_k} and the best baseline did not (and the reverse), and how dmar's answer "
      "compared with the baseline's on them (the end metric; graph answers left out, the reader's own):")
    w("")
    traced = []
    for b in cols:
        run, metric = runs[b[0]], b[4]
        best = run.get("best_baseline", {}).get(metric)
        recs = pairs(args, b[0])
        if not best or not recs:
            continue
        counts = {"dmar": [0, 0, 0], best: [0, 0, 0]}
        for qid in sorted({q for q, _ in recs}):
            d, o = recs.get((qid, "dmar")), recs.get((qid, best))
            if not d or not o or d.get("error") or o.get("error"):
                continue
            gd, go = shown_gold(d, args.reader_k), shown_gold(o, args.reader_k)
            if gd == go:
                continue
            md, mo = d["metrics"].get(metric, 0), o["metrics"].get(metric, 0)
            c = counts["dmar" if gd else best]
            c[0 if md > mo else 1 if md == mo else 2] += 1
            traced.append((b, best, gd, md - mo, d, o))
        w(f"- {b[1]}: dmar only, {sum(counts['dmar'])} questions (dmar's answer better on {counts['dmar'][0]}, "
          f"equal on {counts['dmar'][1]}, worse on {counts['dmar'][2]}); {best} only, {sum(counts[best])} "
          f"(dmar better on {counts[best][0]}, equal on {counts[best][1]}, worse on {counts[best][2]}).")
    w("")
    # One example of each kind per column, the first in question order: the gain and the gain lost
    # (dmar showed the gold and answered no better).
    for title, keep in (("Better retrieval, better answer", lambda t: t[2] and t[3] > 0),
                        ("Better retrieval, no better answer", lambda t: t[2] and t[3] <= 0)):
        chosen, seen = [], set()
        for t in traced:
            if keep(t) and t[0][0] not in seen:
                chosen.append(t)
                seen.add(t[0][0])
        if not chosen:
            continue
        name = titles(i for t in chosen for r in t[4:] for i in r["ranked_ids"][:args.reader_k])
        shown = lambda r: ", ".join(f"[{name.get(i, i)}]" for i in r["ranked_ids"][:args.reader_k])
        w(f"{title}:")
        w("")
        for b, best, _, _, d, o in chosen:
            golds = d.get("answers") or d.get("gold") or []
            total = d.get("answers_total", len(golds))
            gold = ", ".join(golds[:4]) + (f" and {total - 4} other forms" if total > 4 else "")
            w(f"- {b[1]}, `{d['id']}`: \"{d['question']}\" (gold: {gold}). dmar showed "
              f"{shown(d)} and answered \"{d.get('prediction', '')}\"; "
              f"{best} showed {shown(o)} and answered \"{o.get('prediction', '')}\".")
        w("")


def commands(args, runs, w):
    """Writes the dmar eval command of each column: the one a run recorded, else the one --run would run."""
    w("The commands (from the repository root, after `make build` and `scripts/services.sh start llm`); "
      f"`{RUN_ALL}` runs the missing ones and rewrites this section and the README's summary:")
    w("")
    w("```sh")
    for name, _, dataset, extra, *_ in BENCHMARKS:
        cmd = runs[name]["extra"]["command"] if name in runs and "command" in runs[name].get("extra", {}) else \
            " ".join(shlex.quote(c) for c in command(args, name, dataset, extra)).replace(DATA, DATA_SHOWN)
        w("bin/" + cmd if cmd.startswith("dmar ") else cmd)  # a run records its arguments after "dmar"
    w("```")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="docs/eval/table4")
    ap.add_argument("--check", action="store_true", help="rerun the committed columns with the reader unreachable and "
                    "fail unless answers, metrics and the rendered section equal the committed ones")
    ap.add_argument("--reader-model-sha256", help="the reader's model file's sha256 (default: from models/llm/MODELS)")
    ap.add_argument("--run", action="store_true", help="run the dmar eval commands whose results.json is missing")
    ap.add_argument("--readme", help="rewrite this file's section between the table4 markers with the summary")
    ap.add_argument("--doc", default=DOC, help="with --readme, rewrite this file's table4 section with the whole of it "
                    "(empty: only the README)")
    ap.add_argument("--reader-url", default="http://127.0.0.1:8091/v1")
    ap.add_argument("--reader-model", default="qwen2.5-coder-1.5b-instruct-q4_k_m")
    ap.add_argument("--reader-k", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="only the first N questions of each (a smoke run)")
    args = ap.parse_args()
    if args.check:
        sys.exit(check(args))
    if args.run:
        for name, _, dataset, extra, *_ in sorted(BENCHMARKS, key=lambda b: RUN_ORDER.index(b[0])):
            done = os.path.join(args.out, name, "results.json")
            if os.path.exists(done):
                with open(done) as f:
                    # A column whose reader failed somewhere is run again: the cache answers
                    # what it already has, and the reader the rest.
                    if not any((json.load(f).get("errors") or {}).values()):
                        continue
            cmd = command(args, name, dataset, extra)
            print("table4: " + " ".join(shlex.quote(c) for c in cmd), file=sys.stderr)
            subprocess.run(cmd, check=True)
            slim(args, name)
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


def records(path):
    """(id, system) -> (prediction, metrics) of a run's per_question.jsonl."""
    out = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            out[(r["id"], r["system"])] = (r.get("prediction"), r.get("metrics"), r.get("error"))
    return out


def check(args):
    """Reruns each committed column against the committed cache alone; 0 when all agree."""
    import tempfile
    runs = load(args)
    if not runs:
        print(f"table4: no committed column under {args.out}: nothing to check")
        return 0
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, _, dataset, extra, *_ in BENCHMARKS:
            if name not in runs:
                continue
            out = os.path.join(tmp, name)
            # Port 9 (discard) on loopback: nothing answers, so every reply must come from the cache.
            cmd = command(args, name, dataset, extra, out=out, reader_url="http://127.0.0.1:9/v1") + ["--quiet"]
            print("table4: check " + " ".join(shlex.quote(c) for c in cmd), file=sys.stderr)
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            want, got = records(os.path.join(args.out, name, "per_question.jsonl")), records(os.path.join(out, "per_question.jsonl"))
            diff = [k for k in want if want[k] != got.get(k)]
            if diff or len(got) != len(want):
                bad += 1
                print(f"table4: {name}: {len(diff)} of {len(want)} answers differ from the committed ones (first: {diff[:3]})", file=sys.stderr)
            else:
                print(f"table4: {name}: all {len(want)} answers reproduced from the committed cache", file=sys.stderr)
    if args.doc and os.path.exists(args.doc):
        with open(args.doc) as f:
            doc = f.read()
        if BEGIN in doc and render(args, runs) not in doc:
            bad += 1
            print(f"table4: {args.doc}'s section is not what the committed results render: run {RUN_ALL}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    main()
