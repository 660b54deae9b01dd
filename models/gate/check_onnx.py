"""Runs the gate with ONNX Runtime on fixed inputs (seeded unit vectors, as
the encoder produces) and writes them with the outputs, for the Go tests
(internal/scoring/onnx/gate_test.go): the pure-Go reference must agree to
1e-4 without any ML framework."""
import argparse
import hashlib
import json

import numpy as np
import onnxruntime as ort

ap = argparse.ArgumentParser()
ap.add_argument("--model", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--docs", type=int, default=8)
a = ap.parse_args()
rng = np.random.default_rng(20261129)
unit = lambda n: (lambda v: v / np.linalg.norm(v, axis=1, keepdims=True))(rng.normal(size=(n, 384)))
q, d = unit(1).astype(np.float32), unit(a.docs).astype(np.float32)
x = np.concatenate([np.repeat(q, a.docs, axis=0), d], axis=1)
w = ort.InferenceSession(a.model, providers=["CPUExecutionProvider"]).run(["weights"], {"x": x})[0]
sha = hashlib.sha256(open(a.model, "rb").read()).hexdigest()
with open(a.out, "w") as f:
    json.dump({"model_sha256": sha, "query": q[0].tolist(), "docs": d.tolist(), "weights": w.tolist()}, f)
print(f"{a.out}: {a.docs} documents, alpha {w[:, 0].min():.4f}..{w[:, 0].max():.4f}")
