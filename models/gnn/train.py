"""Train dmar's Siamese GNN on triplets written by models/gnn/traindata and
export it as ONNX (models/gnn/gnn.onnx). numpy only: the gradients of the
3 GraphSAGE layers, the pooling, the linear layer, the L2 normalisation and
the triplet loss are written out by hand (and checked against finite
differences with --gradcheck). See models/gnn/README.md.

    python models/gnn/train.py --data DIR --out models/gnn/gnn.onnx
"""
import argparse
import json
import os
import sys
import time

import numpy as np

F = 64


def load_split(d):
    g = {k: np.load(os.path.join(d, k + ".npy")) for k in
         ["x", "off", "aout", "aout_val", "ain", "ain_val", "triplets"]}
    # Adjacency non-zeros grouped by graph for fast batch assembly.
    for name in ["aout", "ain"]:
        idx = g[name]
        order = np.argsort(idx[:, 0], kind="stable")
        g[name] = idx[order]
        g[name + "_val"] = g[name + "_val"][order]
        g[name + "_ptr"] = np.searchsorted(g[name][:, 0], np.arange(len(g["off"])))
    return g


def dense(split, gids):
    """Dense X, AdjOut, AdjIn, mask of graphs gids, padded to their largest size."""
    off = split["off"]
    sizes = off[gids + 1] - off[gids]
    n = max(int(sizes.max()), 1)
    B = len(gids)
    X = np.zeros((B, n, F), np.float32)
    M = np.zeros((B, n), np.float32)
    Ao = np.zeros((B, n, n), np.float32)
    Ai = np.zeros((B, n, n), np.float32)
    for b, g in enumerate(gids):
        s = sizes[b]
        X[b, :s] = split["x"][off[g]:off[g + 1]]
        M[b, :s] = 1
        for name, A in (("aout", Ao), ("ain", Ai)):
            lo, hi = split[name + "_ptr"][g], split[name + "_ptr"][g + 1]
            idx = split[name][lo:hi]
            A[b, idx[:, 1], idx[:, 2]] = split[name + "_val"][lo:hi]
    return X, Ao, Ai, M


def init_params(rng, hidden, out):
    p = {}
    din = F
    for l in range(1, 4):
        p[f"sage{l}_w"] = (rng.standard_normal((3 * din, hidden)) * np.sqrt(2.0 / (3 * din))).astype(np.float64)
        p[f"sage{l}_b"] = np.zeros(hidden)
        din = hidden
    p["out_w"] = rng.standard_normal((hidden, out)) * np.sqrt(1.0 / hidden)
    p["out_b"] = np.zeros(out)
    return p


def forward(p, X, Ao, Ai, M):
    cache = []
    H = X.astype(np.float64)
    for l in range(1, 4):
        cat = np.concatenate([H, Ao @ H, Ai @ H], axis=-1)
        Z = cat @ p[f"sage{l}_w"] + p[f"sage{l}_b"]
        cache.append((H, cat, Z))
        H = np.maximum(Z, 0)
    cnt = np.maximum(M.sum(1, keepdims=True), 1.0)
    P = (H * M[:, :, None]).sum(1) / cnt
    Y = P @ p["out_w"] + p["out_b"]
    nrm = np.maximum(np.linalg.norm(Y, axis=1, keepdims=True), 1e-12)
    E = Y / nrm
    return E, (cache, H, cnt, P, Y, nrm)


def backward(p, Ao, Ai, M, E, st, dE):
    cache, H, cnt, P, Y, nrm = st
    g = {}
    dY = (dE - E * (E * dE).sum(1, keepdims=True)) / nrm
    g["out_w"] = P.T @ dY
    g["out_b"] = dY.sum(0)
    dP = dY @ p["out_w"].T
    dH = (M / cnt)[:, :, None] * dP[:, None, :]
    for l in range(3, 0, -1):
        Hin, cat, Z = cache[l - 1]
        dZ = dH * (Z > 0)
        g[f"sage{l}_w"] = cat.reshape(-1, cat.shape[-1]).T @ dZ.reshape(-1, dZ.shape[-1])
        g[f"sage{l}_b"] = dZ.sum((0, 1))
        dcat = dZ @ p[f"sage{l}_w"].T
        d = Hin.shape[-1]
        dH = (dcat[..., :d] + np.swapaxes(Ao, 1, 2) @ dcat[..., d:2 * d]
              + np.swapaxes(Ai, 1, 2) @ dcat[..., 2 * d:])
    return g


def triplet_loss(E, ia, ip, ineg, margin):
    sp = (E[ia] * E[ip]).sum(1)
    sn = (E[ia] * E[ineg]).sum(1)
    s = sn - sp + margin
    act = (s > 0).astype(np.float64) / len(ia)
    dE = np.zeros_like(E)
    np.add.at(dE, ia, act[:, None] * (E[ineg] - E[ip]))
    np.add.at(dE, ip, -act[:, None] * E[ia])
    np.add.at(dE, ineg, act[:, None] * E[ia])
    return np.maximum(s, 0).mean(), dE


def batches(split, size, rng):
    """Triplet batches of similar graph sizes (padding costs N^2), in random order."""
    trips = split["triplets"]
    sizes = np.diff(split["off"])[trips[:, :3]].max(1)
    order = np.lexsort((rng.random(len(trips)), sizes))
    out = [order[lo:lo + size] for lo in range(0, len(order), size)]
    return [out[i] for i in rng.permutation(len(out))]


def batch_of(split, trips):
    gids, inv = np.unique(trips[:, :3].ravel(), return_inverse=True)
    inv = inv.reshape(-1, 3)
    return gids, inv[:, 0], inv[:, 1], inv[:, 2]


def embed_all(p, split, gids, chunk=512):
    """Embeddings of gids, computed in chunks of similar size."""
    order = np.argsort(np.diff(split["off"])[gids], kind="stable")
    out = np.zeros((len(gids), p["out_w"].shape[1]))
    for lo in range(0, len(gids), chunk):
        sel = order[lo:lo + chunk]
        X, Ao, Ai, M = dense(split, gids[sel])
        out[sel] = forward(p, X, Ao, Ai, M)[0]
    return out


def evaluate(p, split):
    trips = split["triplets"]
    gids, ia, ip, ineg = batch_of(split, trips)
    E = embed_all(p, split, gids)
    sp = (E[ia] * E[ip]).sum(1)
    sn = (E[ia] * E[ineg]).sum(1)
    kind = trips[:, 3]
    res = {"triplets": int(len(trips)), "triplet_accuracy": float((sp > sn).mean()),
           "mean_sim_positive": float(sp.mean())}
    for k, name in [(0, "random"), (1, "perturbed"), (2, "rewired"), (3, "permuted"), (4, "order")]:
        sel = kind == k
        if not sel.any():
            continue
        res[f"triplets_{name}"] = int(sel.sum())
        res[f"mean_sim_positive_{name}"] = float(sp[sel].mean())
        res[f"mean_sim_negative_{name}"] = float(sn[sel].mean())
        res[f"triplet_accuracy_{name}"] = float((sp[sel] > sn[sel]).mean())
    hard = (kind > 0) & (kind < 4)
    res["mean_sim_negative_hard"] = float(sn[hard].mean())
    res["triplet_accuracy_hard"] = float((sp[hard] > sn[hard]).mean())
    ego = kind < 4  # the ego-graph anchors' triplets, comparable with earlier models
    res["triplet_accuracy_ego"] = float((sp[ego] > sn[ego]).mean())
    return res


def probe(p, d):
    """Ordering probe on a dense fixture of (path, reordered, one-edge-dropped)
    graph triples: the cosines of the first triple, and over all triples the
    share where cos(path, reordered) < cos(path, dropped) - 0.1."""
    X, Ao, Ai, M = (np.load(os.path.join(d, k + ".npy")) for k in ["x", "adj_out", "adj_in", "mask"])
    E = forward(p, X, Ao, Ai, M)[0].reshape(-1, 3, p["out_w"].shape[1])
    reord, drop = (E[:, 0] * E[:, 1]).sum(1), (E[:, 0] * E[:, 2]).sum(1)
    return {"reordered": round(float(reord[0]), 3), "dropped": round(float(drop[0]), 3),
            "share_apart": round(float((reord < drop - 0.1).mean()), 3), "triples": len(E)}


def gradcheck(rng):
    p = init_params(rng, 8, 6)
    B, n = 6, 5
    X = rng.standard_normal((B, n, F))
    Ao = rng.random((B, n, n)) * (rng.random((B, n, n)) < 0.4)
    Ai = rng.random((B, n, n)) * (rng.random((B, n, n)) < 0.4)
    M = np.ones((B, n)); M[:, -1] = 0
    ia, ip, ineg = np.array([0, 3]), np.array([1, 4]), np.array([2, 5])
    def loss(p):
        E, _ = forward(p, X, Ao, Ai, M)
        return triplet_loss(E, ia, ip, ineg, 1.5)[0]
    E, st = forward(p, X, Ao, Ai, M)
    _, dE = triplet_loss(E, ia, ip, ineg, 1.5)
    g = backward(p, Ao, Ai, M, E, st, dE)
    worst = 0.0
    for k in p:
        for idx in [tuple(rng.integers(0, s) for s in p[k].shape) for _ in range(5)]:
            old = p[k][idx]
            p[k][idx] = old + 1e-6; lp = loss(p)
            p[k][idx] = old - 1e-6; lm = loss(p)
            p[k][idx] = old
            num = (lp - lm) / 2e-6
            worst = max(worst, abs(num - g[k][idx]) / max(1e-8, abs(num) + abs(g[k][idx])))
    print(f"gradcheck: worst relative error {worst:.2e}")
    return worst < 1e-5


def export_onnx(p, path, meta):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    nodes, inits = [], []
    for k, v in p.items():
        inits.append(numpy_helper.from_array(v.astype(np.float32), name=k))
    inits.append(numpy_helper.from_array(np.array([2], np.int64), name="axis2"))
    inits.append(numpy_helper.from_array(np.array([1], np.int64), name="axis1"))
    inits.append(numpy_helper.from_array(np.array(1.0, np.float32), name="one"))
    inits.append(numpy_helper.from_array(np.array(1e-12, np.float32), name="eps"))
    h = "x"
    for l in range(1, 4):
        nodes += [
            helper.make_node("MatMul", ["adj_out", h], [f"ao{l}"]),
            helper.make_node("MatMul", ["adj_in", h], [f"ai{l}"]),
            helper.make_node("Concat", [h, f"ao{l}", f"ai{l}"], [f"cat{l}"], axis=-1),
            helper.make_node("MatMul", [f"cat{l}", f"sage{l}_w"], [f"mm{l}"]),
            helper.make_node("Add", [f"mm{l}", f"sage{l}_b"], [f"z{l}"]),
            helper.make_node("Relu", [f"z{l}"], [f"h{l}"]),
        ]
        h = f"h{l}"
    nodes += [
        helper.make_node("Unsqueeze", ["mask", "axis2"], ["mask3"]),
        helper.make_node("Mul", [h, "mask3"], ["hm"]),
        helper.make_node("ReduceSum", ["hm", "axis1"], ["hsum"], keepdims=0),
        helper.make_node("ReduceSum", ["mask", "axis1"], ["cnt0"], keepdims=1),
        helper.make_node("Max", ["cnt0", "one"], ["cnt"]),
        helper.make_node("Div", ["hsum", "cnt"], ["pool"]),
        helper.make_node("MatMul", ["pool", "out_w"], ["ymm"]),
        helper.make_node("Add", ["ymm", "out_b"], ["y"]),
        helper.make_node("ReduceL2", ["y"], ["nrm0"], axes=[1], keepdims=1),
        helper.make_node("Max", ["nrm0", "eps"], ["nrm"]),
        helper.make_node("Div", ["y", "nrm"], ["embedding"]),
    ]
    E = p["out_w"].shape[1]
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "N", F]),
        helper.make_tensor_value_info("adj_out", TensorProto.FLOAT, ["B", "N", "N"]),
        helper.make_tensor_value_info("adj_in", TensorProto.FLOAT, ["B", "N", "N"]),
        helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["B", "N"]),
    ]
    outputs = [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["B", E])]
    graph = helper.make_graph(nodes, "dmar_gnn", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="dmar models/gnn/train.py")
    model.ir_version = 8
    for k, v in meta.items():
        e = model.metadata_props.add(); e.key = k; e.value = str(v)
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--metrics", help="write held-out metrics JSON here")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64, help="triplets per step")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--margin", type=float, default=0.4)
    ap.add_argument("--gradcheck", action="store_true")
    ap.add_argument("--probe", help="dense fixture dir of (path, reordered, dropped) triples: print the ordering probe per epoch")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    if a.gradcheck:
        sys.exit(0 if gradcheck(rng) else 1)
    train = load_split(os.path.join(a.data, "train"))
    hold = load_split(os.path.join(a.data, "holdout"))
    p = init_params(rng, a.hidden, a.dim)
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v2 = {k: np.zeros_like(v) for k, v in p.items()}
    b1, b2, step = 0.9, 0.999, 0
    print("held-out before training:", json.dumps(evaluate(p, hold)), flush=True)
    T = len(train["triplets"])
    for ep in range(a.epochs):
        t0, tot = time.time(), 0.0
        lr = a.lr * (0.5 ** (ep // 2))
        for bidx in batches(train, a.batch, rng):
            tr = train["triplets"][bidx]
            gids, ia, ip, ineg = batch_of(train, tr)
            X, Ao, Ai, M = dense(train, gids)
            E, st = forward(p, X, Ao, Ai, M)
            loss, dE = triplet_loss(E, ia, ip, ineg, a.margin)
            tot += loss * len(tr)
            g = backward(p, Ao, Ai, M, E, st, dE)
            step += 1
            for k in p:
                m[k] = b1 * m[k] + (1 - b1) * g[k]
                v2[k] = b2 * v2[k] + (1 - b2) * g[k] ** 2
                mh = m[k] / (1 - b1 ** step)
                vh = v2[k] / (1 - b2 ** step)
                p[k] -= lr * mh / (np.sqrt(vh) + 1e-8)
        res = evaluate(p, hold)
        print(f"epoch {ep + 1}: train loss {tot / T:.4f} ({time.time() - t0:.0f}s); held-out {json.dumps(res)}", flush=True)
        if a.probe:
            print(f"epoch {ep + 1}: probe cosines {probe(p, a.probe)}", flush=True)
    res = evaluate(p, hold)
    meta = {"seed": a.seed, "hidden": a.hidden, "dim": a.dim, "epochs": a.epochs, "batch": a.batch,
            "lr": a.lr, "margin": a.margin, "features": F,
            "heldout_triplet_accuracy": round(res["triplet_accuracy"], 4)}
    export_onnx(p, a.out, meta)
    if a.metrics:
        with open(a.metrics, "w") as f:
            json.dump({"hyperparameters": meta, "heldout": res}, f, indent=2)
    print("final held-out:", json.dumps(res))


if __name__ == "__main__":
    main()
