"""Computes the parity fixtures of the extra encoders of the registry
(internal/scoring/onnx/registry.go) with the reference pipeline: the Hugging
Face `tokenizers` library on each encoder's tokenizer.json, ONNX Runtime's
Python package on its model.onnx, and the model card's pooling ([CLS] for
bge-small-en-v1.5, the mask-weighted mean for e5-small-v2) and L2
normalisation, one text per call (no padding). Run once; outputs committed:

  internal/scoring/wordpiece/testdata/registry_tokens.json   token ids
  internal/scoring/onnx/testdata/registry_reference.json     embeddings

    ~/.cache/dmar/venv/bin/pip install tokenizers onnxruntime numpy
    DMAR_ENCODERS=all scripts/setup/30-encoders.sh
    ~/.cache/dmar/venv/bin/python models/encoder/reference_registry.py [MODELS [SHARED_DATA]]

MODELS defaults to ~/.cache/dmar/models, SHARED_DATA to ../shared/data.
Real texts are not copied: each item names its source (data set, file,
line, field) with the sha256 of the text; the tests read it from the shared
data. Vectors are stored as base64 little-endian float32.
"""
import base64
import hashlib
import json
import os
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_embeddings import TRICKY  # noqa: E402

BGE_Q = "Represent this sentence for searching relevant passages: "
# name: (pooling, query prefix, passage prefix); keep in step with registry.go
ENCODERS = {
    "bge-small-en-v1.5": ("cls", BGE_Q, ""),
    "bge-small-en-v1.5-int8": ("cls", BGE_Q, ""),
    "e5-small-v2-int8": ("mean", "query: ", "passage: "),
}
MAX_LEN = 512     # the models' positions
DOC_TOKENS = 128  # dmar's default doc_tokens


def sha_bytes(b):
    return hashlib.sha256(b).hexdigest()


def sha(s):
    return sha_bytes(s.encode("utf-8"))


def lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def ref(dataset, file, line, field, text):
    return {"dataset": dataset, "file": file, "line": line, "field": field, "sha256": sha(text)}, text


def token_items(data):
    """About 300 real texts: kgqa questions (train, dev), codexm extracts and titles."""
    out = []
    train = lines(os.path.join(data, "kgqa", "train.jsonl"))
    for i in range(0, len(train), 4):  # 138
        out.append(ref("kgqa", "train.jsonl", i, "question", train[i]["question"]))
    dev = lines(os.path.join(data, "kgqa", "dev.jsonl"))
    for i in range(1, len(dev), 6):  # 35
        out.append(ref("kgqa", "dev.jsonl", i, "question", dev[i]["question"]))
    corpus = lines(os.path.join(data, "codexm", "corpus.jsonl"))
    step = len(corpus) // 100
    for i in range(3, len(corpus), step)[:100]:
        out.append(ref("codexm", "corpus.jsonl", i, "text", corpus[i]["text"]))
    for i in range(7, len(corpus), len(corpus) // 30)[:30]:
        out.append(ref("codexm", "corpus.jsonl", i, "title", corpus[i]["title"]))
    return out


def main(models, data):
    import onnxruntime
    import tokenizers

    tok_path = os.path.join(models, "bge-small-en-v1.5", "tokenizer.json")
    tok_sha = sha_bytes(open(tok_path, "rb").read())
    for name in ENCODERS:
        s = sha_bytes(open(os.path.join(models, name, "tokenizer.json"), "rb").read())
        if s != tok_sha:
            sys.exit(f"{name}: tokenizer.json differs from bge-small-en-v1.5's; the fixture assumes one")

    def tokenizer(max_len):
        t = tokenizers.Tokenizer.from_file(tok_path)
        t.no_padding()
        t.enable_truncation(max_len)
        return t

    tq, tp = tokenizer(MAX_LEN), tokenizer(DOC_TOKENS)
    reals = token_items(data)
    # Tokens: tricky texts as queries of both prefixes and raw; real questions
    # with the query prefixes at 512; extracts with the passage prefix at 128.
    tok_fix = []
    for t in TRICKY:
        for p in ("", BGE_Q, "query: ", "passage: "):
            tok_fix.append({"text": t, "prefix": p, "max_len": MAX_LEN, "ids": tq.encode(p + t.strip()).ids})
        tok_fix.append({"text": t, "prefix": "", "max_len": DOC_TOKENS, "ids": tp.encode(t.strip()).ids})
    for item, t in reals:
        if item["field"] == "text":
            for p in ("", "passage: "):
                tok_fix.append(dict(item, prefix=p, max_len=DOC_TOKENS, ids=tp.encode(p + t.strip()).ids))
            tok_fix.append(dict(item, prefix="", max_len=MAX_LEN, ids=tq.encode(t.strip()).ids))
        else:
            for p in (BGE_Q, "query: "):
                tok_fix.append(dict(item, prefix=p, max_len=MAX_LEN, ids=tq.encode(p + t.strip()).ids))

    # Embeddings: a couple of dozen texts, 12 queries and 12 passages.
    queries = [r for r in reals if r[0]["field"] == "question"][::12][:10] + \
        [({"text": TRICKY[2]}, TRICKY[2]), ({"text": TRICKY[6]}, TRICKY[6])]
    passages = [r for r in reals if r[0]["field"] == "text"][::8][:11] + [({"text": TRICKY[13]}, TRICKY[13])]
    emb = {}
    for name, (pooling, qp, pp) in ENCODERS.items():
        path = os.path.join(models, name, "model.onnx")
        so = onnxruntime.SessionOptions()
        so.intra_op_num_threads = 2
        sess = onnxruntime.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        rows = []
        for kind, group, prefix, t in (("query", queries, qp, tq), ("passage", passages, pp, tp)):
            for item, text in group:
                enc = t.encode(prefix + text.strip())
                ids = np.array([enc.ids], dtype=np.int64)
                feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
                h = sess.run(["last_hidden_state"], feed)[0][0].astype(np.float64)
                v = h[0] if pooling == "cls" else h.mean(axis=0)
                v = v / max(np.linalg.norm(v), 1e-12)
                it = dict(item) if "text" in item else dict(item)
                it["kind"] = kind
                it["vector"] = base64.b64encode(v.astype("<f4").tobytes()).decode()
                rows.append(it)
        emb[name] = {"model_sha256": sha_bytes(open(path, "rb").read()), "items": rows}
        print(name, "done", file=sys.stderr)

    versions = {"tokenizers": tokenizers.__version__, "onnxruntime": onnxruntime.__version__, "numpy": np.__version__}
    note = "computed by models/encoder/reference_registry.py (tokenizers + onnxruntime + the model cards' pooling)"
    out = os.path.join(REPO, "internal", "scoring", "wordpiece", "testdata", "registry_tokens.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"note": note, "versions": versions, "tokenizer_sha256": tok_sha, "items": tok_fix},
                  f, ensure_ascii=False, separators=(",", ":"))
    print("wrote", out, os.path.getsize(out), "bytes", file=sys.stderr)
    out = os.path.join(REPO, "internal", "scoring", "onnx", "testdata", "registry_reference.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"note": note, "versions": versions, "query_max_len": MAX_LEN, "passage_max_len": DOC_TOKENS,
                   "encoders": emb}, f, ensure_ascii=False, separators=(",", ":"))
    print("wrote", out, os.path.getsize(out), "bytes", file=sys.stderr)


if __name__ == "__main__":
    home = os.path.expanduser("~/.cache/dmar/models")
    a = sys.argv[1:]
    main(a[0] if a else os.environ.get("DMAR_CACHE", "") and os.path.join(os.environ["DMAR_CACHE"], "models") or home,
         a[1] if len(a) > 1 else os.path.join(REPO, "..", "shared", "data"))
