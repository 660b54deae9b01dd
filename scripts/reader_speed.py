#!/usr/bin/env python3
"""How fast llama.cpp reads and writes the reader's prompts, by weight format, server setting and build.

    python3 scripts/reader_speed.py [--threads 1] [--prompts 4] [--port 8095] [--no-cache] [--questions FILE]
                                    [VARIANT ...]      (default: q4_k_m q8_0 q4_0)

A variant is FORMAT[:SETTING[+SETTING...]], e.g. q4_0, q4_k_m:threads=2, q4_0:fa=on+ubatch=128.
It starts one llama.cpp server per variant at once (xllamacpp from the venv
scripts/services/llm.sh installs, on ports PORT, PORT+1, ...), sends each server a warm-up prompt
(the fixed instruction and worked example, read once, as a serving reader does), then the same
distinct prompts to every server in turn, rotating the order each round (A B C, B C A, ...) so
that a busy machine's bursts fall on every variant alike, and stops the servers. A prompt
is the reader's (internal/answer: instruction, worked example, three sources' first 500 characters,
the question) on a HotpotQA question's two supporting paragraphs and one other; each prompt is
sent once per server, so llama.cpp restores only the shared prefix from its cache (--no-cache:
nothing, cache_prompt false). The figures are llama.cpp's own timings: prefill (prompt tokens
read a second) and decode (reply tokens written a second), pooled over the prompts, and their
ratio to the first variant's, measured in the same run. One line per variant; the last column
says how many replies equal the first variant's. Formats are the 1.5B model files in
$DMAR_CACHE/llm/models (DMAR_LLM_MODEL=1.5b-FORMAT scripts/services/llm.sh install writes them),
named by the last part of their alias in models/llm/MODELS. Settings: threads=N (default
--threads), fa=on|off|auto (flash attention), ubatch=N (n_ubatch = n_batch = N), kv=q8_0|f16 (KV
cache type; a q8_0 V cache needs fa=on), poll=N (busy-wait of idle threads, 0-100), repack=off (no
load-time repacking of weights into the CPU's interleaved layouts), build=native: llama.cpp compiled
for this CPU by PyPI llama-cpp-python (in $DMAR_CACHE/llm/venv-native, where
DMAR_LLM_BUILD=native scripts/services/llm.sh install puts it), served by its llama_cpp.server,
which takes threads=, fa= and ubatch= only. That server reports no timings, so its figures are
the ones llama.cpp prints to its log after each request (llama_perf_context_print), and it always
reuses the previous prompt's prefix (no --no-cache). Per-request figures go to stderr as they
come; wall_s is a request's mean time as the client sees it (template, tokenizer and sampling
included).
Standard library only; the servers run in the venv's Python.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.environ.get("DMAR_CACHE", os.path.expanduser("~/.cache/dmar"))
VENV_PY = os.path.join(CACHE, "llm", "venv", "bin", "python")
NATIVE_PY = os.path.join(CACHE, "llm", "venv-native", "bin", "python")
MODELS_DIR = os.path.join(CACHE, "llm", "models")
MANIFEST = os.path.join(HERE, "..", "models", "llm", "MODELS")
DATA = os.environ.get("DMAR_SHARED_DATA", os.path.join(HERE, "..", "..", "shared", "data"))

# internal/answer's instruction and worked example, byte for byte (answer.SystemPrompt,
# exampleUser, exampleReply): the prefix a serving reader restores from its cache.
SYSTEM = ("You answer a question using only the sources given. Each source starts with its id in square "
          "brackets. Reply with a short answer, one sentence at most, and cite the ids of the sources you used in square "
          "brackets after it, as they appear before the sources. If the sources do not answer the question, say that "
          "they do not.")
EXAMPLE_USER = ("Sources:\n[Q90] Paris: Paris is the capital and largest city of France.\n[Q142] France: France is a "
                "country in Western Europe.\n\nQuestion: What is the capital of France?\nAnswer:")
EXAMPLE_REPLY = "Paris [Q90]"
SOURCE_CHARS = 500  # answer.Config.SourceChars's default
MAX_TOKENS = 48  # answer.DefaultMaxTokens

# The server: llm.sh's, plus the settings under test. Its argv is JSON.
SERVER = r"""
import json, sys, threading, xllamacpp  # reader-speed
a = json.loads(sys.argv[1])
p = xllamacpp.CommonParams()
p.model.path = a["gguf"]
p.model_alias = {a["alias"]}
p.n_ctx = 4096
p.cpuparams.n_threads = p.cpuparams_batch.n_threads = int(a["settings"].get("threads", 1))
p.hostnames = ["127.0.0.1"]
p.port = a["port"]
p.n_gpu_layers = 0
p.use_jinja = True
p.n_parallel = 1
p.verbosity = 4  # the load log then names the repacked buffer
s = a["settings"]
if "fa" in s:
    p.flash_attn_type = getattr(xllamacpp.llama_flash_attn_type, "LLAMA_FLASH_ATTN_TYPE_" + {"on": "ENABLED", "off": "DISABLED", "auto": "AUTO"}[s["fa"]])
if "ubatch" in s:
    p.n_batch = p.n_ubatch = int(s["ubatch"])
if "kv" in s:
    p.cache_type_k = p.cache_type_v = getattr(xllamacpp.ggml_type, "GGML_TYPE_" + s["kv"].upper())
if "poll" in s:
    p.cpuparams.poll = p.cpuparams_batch.poll = int(s["poll"])
if s.get("repack") == "off":
    p.no_extra_bufts = True
server = xllamacpp.Server(p)
threading.Event().wait()
"""

SETTING_VALUES = {"fa": {"on", "off", "auto"}, "kv": {"q8_0", "f16"}, "repack": {"off"}, "build": {"native"}}
NUMERIC = ("threads", "ubatch", "poll")
NATIVE_SETTINGS = {"threads", "fa", "ubatch", "build"}


def parse_variant(text: str, formats: dict, threads: int) -> tuple:
    """'q4_0:fa=on+ubatch=128' -> ('q4_0', {'threads': '1', 'fa': 'on', 'ubatch': '128'})."""
    fmt, _, rest = text.partition(":")
    if fmt not in formats:
        raise ValueError(f"variant {text!r}: format {fmt!r} is not in {MANIFEST} (known: {', '.join(sorted(formats))})")
    setting = {"threads": str(threads)}
    for part in filter(None, rest.split("+")):
        key, sep, value = part.partition("=")
        if not sep or key not in SETTING_VALUES and key not in NUMERIC:
            raise ValueError(f"variant {text!r}: setting {part!r}: want threads=, fa=, ubatch=, kv=, poll=, repack= or build=")
        if key in SETTING_VALUES and value not in SETTING_VALUES[key]:
            raise ValueError(f"variant {text!r}: {key} takes {'|'.join(sorted(SETTING_VALUES[key]))}")
        if key in NUMERIC and not (value.isdigit() and int(value) > 0 or key == "poll" and value == "0"):
            raise ValueError(f"variant {text!r}: {key} takes a whole number above 0")
        setting[key] = value
    if setting.get("build") == "native" and not set(setting) <= NATIVE_SETTINGS:
        raise ValueError(f"variant {text!r}: build=native takes only {', '.join(sorted(NATIVE_SETTINGS - {'build'}))}")
    if setting.get("build") == "native" and setting.get("fa") == "auto":
        raise ValueError(f"variant {text!r}: build=native takes fa=on or fa=off")
    return fmt, setting


def formats() -> dict:
    """Format name (the alias's last part, e.g. q8_0) -> alias, for the 1.5B entries of MODELS."""
    out = {}
    with open(MANIFEST) as f:
        for line in f:
            fields = line.split()
            if fields and not line.startswith("#") and fields[0].startswith("1.5b"):
                out[fields[1].rsplit("-", 1)[1]] = fields[1]
    return out


def source(title: str, sentences: list, i: int) -> str:
    text = " ".join("".join(sentences).split())[:SOURCE_CHARS]
    return f"[D{i}] {title}: {text}"


def messages(user: str) -> list:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": EXAMPLE_USER},
            {"role": "assistant", "content": EXAMPLE_REPLY}, {"role": "user", "content": user}]


def prompts(path: str, n: int) -> list:
    """n distinct reader prompts from HotpotQA questions: the two supporting paragraphs and one other."""
    with open(path) as f:
        questions = json.load(f)
    out = []
    for q in questions[:n]:
        gold = {title for title, _ in q["supporting_facts"]}
        paras = [p for p in q["context"] if p[0] in gold] + [p for p in q["context"] if p[0] not in gold][:1]
        lines = [source(title, sentences, i) for i, (title, sentences) in enumerate(paras[:3], 1)]
        out.append(messages("Sources:\n" + "\n".join(lines) + f"\n\nQuestion: {q['question'].strip()}\nAnswer:"))
    if len(out) < n:
        raise ValueError(f"{path}: {len(out)} questions, need {n}")
    return out


def post(url: str, body: dict, timeout: float) -> dict:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.load(r)


def wait_ready(port: int, proc: subprocess.Popen, log: str, limit: float = 600) -> None:
    deadline = time.time() + limit
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server on port {port} exited ({proc.returncode}); see {log}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2).read()
            return
        except (urllib.error.URLError, OSError):
            time.sleep(1)
    raise RuntimeError(f"server on port {port} not ready after {limit:.0f} s; see {log}")


def native_argv(gguf: str, alias: str, setting: dict, port: int) -> list:
    """llama_cpp.server's command line for llm.sh's settings. Its defaults differ from llama.cpp's
    server where it matters: logits_all (logits of every prompt token) off, flash attention on
    (llama.cpp's auto picks it on a CPU), as many threads for reading as for writing."""
    n, ubatch = setting.get("threads", "1"), setting.get("ubatch", "512")
    return [NATIVE_PY, "-m", "llama_cpp.server", "--model", gguf, "--model_alias", alias, "--n_ctx", "4096",
            "--n_threads", n, "--n_threads_batch", n, "--n_batch", ubatch, "--n_ubatch", ubatch,
            "--flash_attn", "false" if setting.get("fa") == "off" else "true", "--logits_all", "false",
            "--n_gpu_layers", "0", "--host", "127.0.0.1", "--port", str(port), "--verbose", "true"]


def start(alias: str, setting: dict, port: int, log: str) -> subprocess.Popen:
    gguf = os.path.join(MODELS_DIR, alias + ".gguf")
    if not os.path.isfile(gguf):
        raise FileNotFoundError(f"{gguf} is missing: DMAR_LLM_MODEL=1.5b-FORMAT scripts/services/llm.sh install")
    if setting.get("build") == "native":
        argv = native_argv(gguf, alias, setting, port)
    else:
        argv = [VENV_PY, "-c", SERVER, json.dumps({"gguf": gguf, "alias": alias, "settings": setting, "port": port})]
    with open(log, "w") as lf:
        return subprocess.Popen(argv, stdout=lf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def repacked(log: str) -> str:
    """The size of the weights llama.cpp repacked at load (its CPU_REPACK buffer), from the log."""
    with open(log, errors="replace") as f:
        for line in f:
            if "CPU_REPACK" in line and "buffer size" in line:
                return line.split("=")[-1].strip().replace(" ", "")
    return "0MiB"


# llama_perf_context_print's lines, which llama_cpp.server prints after each request.
PERF_PROMPT = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
PERF_EVAL = re.compile(r"^\S+:\s+eval time =\s*([\d.]+) ms /\s*(\d+) runs", re.M)


def log_timings(log: str, offset: int) -> dict:
    """The timings llama.cpp printed to log after offset (a native server's request)."""
    for _ in range(50):  # the lines are written before the reply; allow for a slow flush
        with open(log, errors="replace") as f:
            f.seek(offset)
            text = f.read()
        p, e = PERF_PROMPT.findall(text), PERF_EVAL.findall(text)
        if p and e:
            return {"pn": int(p[-1][1]), "pms": float(p[-1][0]), "dn": int(e[-1][1]), "dms": float(e[-1][0])}
        time.sleep(0.1)
    raise RuntimeError(f"{log}: no llama_perf_context_print timings after the request")


def ask(port: int, alias: str, msgs: list, cache: bool, max_tokens: int = MAX_TOKENS, native_log: str = "") -> dict:
    body = {"model": alias, "messages": msgs, "temperature": 0, "max_tokens": max_tokens}
    if native_log:
        body["repeat_penalty"] = 1.0  # llama.cpp's server default; llama_cpp.server's is 1.1
        offset = os.path.getsize(native_log)
    else:
        body["cache_prompt"] = cache
    t0 = time.monotonic()
    reply = post(f"http://127.0.0.1:{port}/v1/chat/completions", body, timeout=1200)
    wall = time.monotonic() - t0
    if native_log:
        x = log_timings(native_log, offset)
    else:
        t = reply["timings"]
        x = {"pn": t["prompt_n"], "pms": t["prompt_ms"], "dn": t["predicted_n"], "dms": t["predicted_ms"]}
    return x | {"wall": wall, "text": reply["choices"][0]["message"]["content"].strip()}


def measure(variants: list, names: dict, args) -> list:
    """Runs every variant's server at once and returns one line per variant."""
    servers = []  # (label, fmt, port, proc, log, native_log)
    try:
        for i, (label, fmt, setting) in enumerate(variants):
            port = args.port + i
            log = os.path.join(args.logdir, f"{port}.log")
            native_log = log if setting.get("build") == "native" else ""
            servers.append((label, fmt, port, start(names[fmt], setting, port, log), log, native_log))
        for _, _, port, proc, log, _ in servers:
            wait_ready(port, proc, log)
        warm = messages("Sources:\n[D1] Warm-up: nothing.\n\nQuestion: Ready?\nAnswer:")
        for _, fmt, port, _, _, native_log in servers:
            ask(port, names[fmt], warm, True, max_tokens=1, native_log=native_log)
        res = {label: [] for label, *_ in servers}
        for r, msgs in enumerate(prompts(args.questions, args.prompts)):
            for k in range(len(servers)):
                label, fmt, port, _, _, native_log = servers[(r + k) % len(servers)]
                x = ask(port, names[fmt], msgs, not args.no_cache, native_log=native_log)
                res[label].append(x)
                print(f"# prompt {r + 1} {label}: {x['pn']} tokens in {x['pms'] / 1000:.1f} s, "
                      f"{x['dn']} in {x['dms'] / 1000:.1f} s, {x['wall']:.1f} s in all: {x['text'][:60]!r}",
                      file=sys.stderr, flush=True)
        lines, base = [], None
        for label, _, _, _, log, _ in servers:
            rs = res[label]
            pre = sum(x["pn"] for x in rs) / sum(x["pms"] for x in rs) * 1000
            dec = sum(x["dn"] for x in rs) / max(sum(x["dms"] for x in rs), 1e-9) * 1000
            texts = [x["text"] for x in rs]
            base = base or (pre, dec, texts)
            same = sum(a == b for a, b in zip(base[2], texts))
            lines.append(f"variant={label:<26} prefill_tps={pre:6.1f} ({pre / base[0]:.2f}x) "
                         f"decode_tps={dec:5.1f} ({dec / base[1]:.2f}x) "
                         f"prompt_tokens={sum(x['pn'] for x in rs) / len(rs):.0f} "
                         f"wall_s={sum(x['wall'] for x in rs) / len(rs):.1f} repacked={repacked(log)} "
                         f"same_replies={same}/{len(rs)}")
        return lines
    finally:
        for _, _, _, proc, _, _ in servers:
            stop(proc)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("variants", nargs="*", default=["q4_k_m", "q8_0", "q4_0"],
                    help="FORMAT[:SETTING+...]; the first is the baseline")
    ap.add_argument("--threads", type=int, default=1, help="threads of a variant that names none")
    ap.add_argument("--prompts", type=int, default=4, help="prompts per variant, after the warm-up")
    ap.add_argument("--port", type=int, default=8095, help="first port; one per variant")
    ap.add_argument("--no-cache", action="store_true", help="cache_prompt false: read every prompt whole")
    ap.add_argument("--questions", default=os.path.join(DATA, "hotpotqa-100", "questions.json"))
    ap.add_argument("--logdir", default=os.path.join(CACHE, "llm", "log", "reader-speed"))
    args = ap.parse_args()
    names = formats()
    try:
        variants = [(v,) + parse_variant(v, names, args.threads) for v in args.variants]
    except ValueError as e:
        ap.error(str(e))
    if len({v for v, _, _ in variants}) != len(variants):
        ap.error("a variant is named twice")
    if args.prompts < 1 or args.threads < 1:
        ap.error("--prompts and --threads must be at least 1")
    if not os.path.isfile(VENV_PY):
        ap.error(f"{VENV_PY} is missing: scripts/services/llm.sh install")
    if any(s.get("build") == "native" for _, _, s in variants):
        if args.no_cache:
            ap.error("--no-cache: build=native's server always reuses the previous prompt's prefix")
        if not os.path.isfile(NATIVE_PY):
            ap.error(f"{NATIVE_PY} is missing: DMAR_LLM_BUILD=native scripts/services/llm.sh install")
    os.makedirs(args.logdir, exist_ok=True)
    # A terminated run still stops its servers (the finally in measure).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    print(f"# load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; {args.prompts} prompts each; "
          f"cache_prompt {'false' if args.no_cache else 'true (distinct prompts)'}", flush=True)
    for line in measure(variants, names, args):
        print(line, flush=True)
    print(f"# load {os.getloadavg()[0]:.2f} at the end", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
