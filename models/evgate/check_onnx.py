"""Runs a features-in model (the evidence-aware gate, output "weights"; the
learned ranker, output "scores") with ONNX Runtime on fixed inputs (seeded
rows around the training rows' mean, in the training units) and writes them
with the outputs, for the Go tests (internal/scoring/onnx/evgate_test.go,
ranker_test.go): the pure-Go reference must agree to 1e-4 without any ML
framework. Also writes a copy of the model whose "features" metadata names
other columns, which the runtime must refuse."""
import argparse
import hashlib
import json

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

ap = argparse.ArgumentParser()
ap.add_argument("--model", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--other", required=True, help="where to write the copy with other feature names")
ap.add_argument("--rows", type=int, default=16)
ap.add_argument("--output", default="weights", help="the model's output: weights (evidence gate) or scores (ranker)")
a = ap.parse_args()
m = onnx.load(a.model)
init = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
rng = np.random.default_rng(20261201)
x = (init["mu"] + init["sd"] * rng.normal(size=(a.rows, init["mu"].size))).astype(np.float32)
w = ort.InferenceSession(a.model, providers=["CPUExecutionProvider"]).run([a.output], {"features": x})[0]
sha = hashlib.sha256(open(a.model, "rb").read()).hexdigest()
with open(a.out, "w") as f:
    json.dump({"model_sha256": sha, "features": x.tolist(), a.output: w.tolist()}, f)
for p in m.metadata_props:
    if p.key == "features":
        p.value = json.dumps(list(reversed(json.loads(p.value))))
onnx.save(m, a.other)
print(f"{a.out}: {a.rows} rows, {a.output}[:, 0] {w[:, 0].min():.4f}..{w[:, 0].max():.4f}; {a.other}: features reversed")
