"""Run gnn.onnx with the onnxruntime Python package on the dense fixture that
`go run ./models/gnn/traindata -fixture` wrote, and store the embeddings as
the Go reference test's fixture (internal/scoring/gnnref/testdata).

    python models/gnn/check_onnx.py --model models/gnn/gnn.onnx --inputs DIR --out FILE
"""
import argparse
import hashlib
import json
import os

import numpy as np
import onnxruntime as ort

ap = argparse.ArgumentParser()
ap.add_argument("--model", required=True)
ap.add_argument("--inputs", required=True)
ap.add_argument("--out", required=True)
a = ap.parse_args()
feeds = {k: np.load(os.path.join(a.inputs, k + ".npy")) for k in ["x", "adj_out", "adj_in", "mask"]}
sess = ort.InferenceSession(a.model, providers=["CPUExecutionProvider"])
emb = sess.run(["embedding"], feeds)[0]
sha = hashlib.sha256(open(a.model, "rb").read()).hexdigest()
json.dump({"model_sha256": sha, "onnxruntime": ort.__version__,
           "embeddings": [[float(v) for v in row] for row in emb]}, open(a.out, "w"))
print(f"{len(emb)} embeddings of dim {emb.shape[1]} from onnxruntime {ort.__version__}")
