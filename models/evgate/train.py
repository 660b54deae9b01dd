"""Trains DMAR's evidence-aware gate (option gate=evidence) with numpy only.

Per candidate document, alpha = sigmoid(f(standardised evidence)) and the
pipeline ranks by alpha * z_sem + (1 - alpha) * z_ent + offset, the offset
being what it adds itself (graph_boost x the graph channel's score). f is
linear (logistic gate) or a one-hidden-layer ReLU MLP. Loss: the pairwise
logistic ranking loss log(1 + exp(-(s_pos - s_neg))) over every (gold,
non-gold) pair of one question's candidates in one scoring stage, averaged
within each (question, stage) group and then over groups (a question with
many gold documents does not outweigh the others), plus L2 on the weights.

Input: folders written by `dmar gate evidence` (feat.npy, offset.npy,
rows.npy, ngold.npy, features.json). Fitting, early stopping and the choice
between the two model shapes use kgqa TRAIN only (a seeded 20% of its
questions is held out for that); --eval folders are only reported.
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def load(folder):
    d = {k: np.load(os.path.join(folder, k + ".npy")) for k in ("feat", "offset", "rows", "ngold")}
    d["names"] = json.load(open(os.path.join(folder, "features.json")))
    return d


def groups_of(rows, keep_q):
    """(question, stage) groups with at least one gold and one other row, as
    (pos index array, neg index array)."""
    out = []
    key = rows[:, 0].astype(np.int64) * 2 + rows[:, 2]
    order = np.argsort(key, kind="stable")
    bounds = np.flatnonzero(np.diff(key[order])) + 1
    for idx in np.split(order, bounds):
        if not keep_q[rows[idx[0], 0]]:
            continue
        lab = rows[idx, 1] == 1
        if lab.any() and (~lab).any():
            out.append((idx[lab], idx[~lab]))
    return out


def pair_arrays(groups):
    P, N, W = [], [], []
    for pos, neg in groups:
        pp, nn = np.meshgrid(pos, neg, indexing="ij")
        P.append(pp.ravel())
        N.append(nn.ravel())
        W.append(np.full(pp.size, 1.0 / pp.size))
    return np.concatenate(P), np.concatenate(N), np.concatenate(W) / len(groups)


class Gate:
    """alpha = sigmoid(f(xn)); hidden=0: f linear; else one ReLU layer."""

    def __init__(self, nf, hidden, rng):
        self.hidden = hidden
        if hidden:
            self.p = {"W1": rng.normal(0, np.sqrt(2 / nf), (nf, hidden)), "b1": np.zeros(hidden),
                      "w2": np.zeros(hidden), "b2": np.zeros(1)}
        else:
            self.p = {"w": np.zeros(nf), "b": np.zeros(1)}

    def logit(self, xn):
        if self.hidden:
            h = np.maximum(xn @ self.p["W1"] + self.p["b1"], 0)
            return h @ self.p["w2"] + self.p["b2"][0], h
        return xn @ self.p["w"] + self.p["b"][0], None

    def loss_grad(self, xn, zs, ze, off, P, N, W, l2):
        z, h = self.logit(xn)
        a = 1 / (1 + np.exp(-z))
        s = a * zs + (1 - a) * ze + off
        m = s[P] - s[N]
        loss = np.sum(W * np.logaddexp(0, -m))
        dm = -W / (1 + np.exp(m))  # d loss / d margin
        ds = np.bincount(P, dm, len(s)) - np.bincount(N, dm, len(s))
        dz = ds * a * (1 - a) * (zs - ze)
        g = {}
        if self.hidden:
            g["w2"], g["b2"] = h.T @ dz, np.array([dz.sum()])
            dh = np.outer(dz, self.p["w2"]) * (h > 0)
            g["W1"], g["b1"] = xn.T @ dh, dh.sum(0)
            reg = ("W1", "w2")
        else:
            g["w"], g["b"] = xn.T @ dz, np.array([dz.sum()])
            reg = ("w",)
        for k in reg:
            loss += 0.5 * l2 * np.sum(self.p[k] ** 2)
            g[k] = g[k] + l2 * self.p[k]
        return loss, g

    def alpha(self, xn):
        return 1 / (1 + np.exp(-self.logit(xn)[0]))


def fit(gate, data, P, N, W, hP, hN, hW, l2, lr, epochs, patience):
    xn, zs, ze, off = data
    m = {k: np.zeros_like(v) for k, v in gate.p.items()}
    v = {k: np.zeros_like(x) for k, x in gate.p.items()}
    best, best_p, best_ep, since = np.inf, None, 0, 0
    for ep in range(1, epochs + 1):
        _, g = gate.loss_grad(xn, zs, ze, off, P, N, W, l2)
        for k in gate.p:
            m[k] = 0.9 * m[k] + 0.1 * g[k]
            v[k] = 0.999 * v[k] + 0.001 * g[k] ** 2
            gate.p[k] = gate.p[k] - lr * (m[k] / (1 - 0.9 ** ep)) / (np.sqrt(v[k] / (1 - 0.999 ** ep)) + 1e-8)
        hl, _ = gate.loss_grad(xn, zs, ze, off, hP, hN, hW, 0.0)
        if hl < best - 1e-7:
            best, best_p, best_ep, since = hl, {k: x.copy() for k, x in gate.p.items()}, ep, 0
        else:
            since += 1
            if since >= patience:
                break
    gate.p = best_p
    return best, best_ep


def stage_groups(d, stage=1):
    """Each question's row indices in one stage (second: the results), in
    the pipeline's order, for rank_metrics."""
    rows = d["rows"]
    idx = np.flatnonzero(rows[:, 2] == stage)
    q = rows[idx, 0]
    order = np.argsort(q, kind="stable")
    idx, q = idx[order], q[order]
    return [(int(q[b[0]]), idx[b]) for b in np.split(np.arange(idx.size), np.flatnonzero(np.diff(q)) + 1) if b.size]


def rank_metrics(d, alpha, groups):
    """Recall@5 and MRR of one stage's candidates ranked by the fused score
    plus offset, over the questions with rows in it (ties keep the
    pipeline's order)."""
    f = d["feat"]
    s = alpha * f[:, 0] + (1 - alpha) * f[:, 1] + d["offset"]
    r5, mrr = 0.0, 0.0
    for q, idx in groups:
        lab = d["rows"][idx, 1][np.argsort(-s[idx], kind="stable")]
        r5 += lab[:5].sum() / max(d["ngold"][q], 1)
        hit = np.flatnonzero(lab)
        mrr += 1 / (hit[0] + 1) if hit.size else 0
    n = max(len(groups), 1)
    return {"recall@5": r5 / n, "mrr": mrr / n, "questions": len(groups)}


def learned(d, al):
    """What the gate learned: its mean alpha by the evidence that moves it."""
    f, names = d["feat"], d["names"]
    col = {n: f[:, i] for i, n in enumerate(names)}
    conf = col["link_conf_mean"]
    cut = np.percentile(conf, [33, 67])
    out = {}
    for name, m in {
        "reached": col["reached"] == 1, "not reached": col["reached"] == 0,
        "stage first": d["rows"][:, 2] == 0, "stage second": d["rows"][:, 2] == 1,
        "not reached, link confidence low third": (col["reached"] == 0) & (conf <= cut[0]),
        "not reached, link confidence high third": (col["reached"] == 0) & (conf > cut[1]),
        "query entity a hub": col["query_hub_share"] > 0, "query entity not a hub": col["query_hub_share"] == 0,
        "z_ent > 1": col["z_ent"] > 1, "z_ent < -1": col["z_ent"] < -1,
        "ent = 0": col["ent"] == 0,
    }.items():
        out[name] = {"rows": int(m.sum()), "alpha_mean": float(al[m].mean()) if m.any() else None}
    return out


def export(gate, mu, sd, names, path, meta):
    nf = len(names)
    init = [numpy_helper.from_array(mu.astype(np.float32), "mu"), numpy_helper.from_array(sd.astype(np.float32), "sd")]
    nodes = [helper.make_node("Sub", ["features", "mu"], ["c"]), helper.make_node("Div", ["c", "sd"], ["xn"])]
    last_in = "xn"
    if gate.hidden:
        init += [numpy_helper.from_array(gate.p["W1"].astype(np.float32), "w1"),
                 numpy_helper.from_array(gate.p["b1"].astype(np.float32), "b1")]
        nodes += [helper.make_node("MatMul", ["xn", "w1"], ["h0"]), helper.make_node("Add", ["h0", "b1"], ["h1"]),
                  helper.make_node("Relu", ["h1"], ["h"])]
        last_in, wl, bl = "h", gate.p["w2"], gate.p["b2"][0]
    else:
        wl, bl = gate.p["w"], gate.p["b"][0]
    # Logits [z, 0]: the softmax is [sigmoid(z), 1 - sigmoid(z)].
    W = np.zeros((wl.size, 2), np.float32)
    W[:, 0] = wl
    init += [numpy_helper.from_array(W, "wout"), numpy_helper.from_array(np.array([bl, 0], np.float32), "bout")]
    nodes += [helper.make_node("MatMul", [last_in, "wout"], ["l0"]), helper.make_node("Add", ["l0", "bout"], ["logits"]),
              helper.make_node("Softmax", ["logits"], ["weights"], axis=-1)]
    g = helper.make_graph(nodes, "evgate", [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["B", nf])],
                          [helper.make_tensor_value_info("weights", TensorProto.FLOAT, ["B", 2])], init)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="dmar models/evgate/train.py")
    model.ir_version = 8
    for k, v in {"features": json.dumps(names), **meta}.items():
        e = model.metadata_props.add()
        e.key, e.value = k, v
    onnx.checker.check_model(model)
    onnx.save(model, path)


def gradcheck(gate, data, P, N, W, l2, rng):
    xn, zs, ze, off = data
    _, g = gate.loss_grad(xn, zs, ze, off, P, N, W, l2)
    worst = 0.0
    for k in gate.p:
        flat = gate.p[k].reshape(-1)
        for i in rng.choice(flat.size, min(8, flat.size), replace=False):
            old, eps = flat[i], 1e-6
            flat[i] = old + eps
            lp, _ = gate.loss_grad(xn, zs, ze, off, P, N, W, l2)
            flat[i] = old - eps
            lm, _ = gate.loss_grad(xn, zs, ze, off, P, N, W, l2)
            flat[i] = old
            num, ana = (lp - lm) / (2 * eps), g[k].reshape(-1)[i]
            worst = max(worst, abs(num - ana) / max(abs(num) + abs(ana), 1e-12))
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True)
    ap.add_argument("--eval", default="")
    ap.add_argument("--out", default="")
    ap.add_argument("--metrics", default="")
    ap.add_argument("--encoder", required=True, help="the registry name of the encoder whose scores the rows hold (recorded in the model)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--l2", type=float, default=1e-3)
    ap.add_argument("--gradcheck", action="store_true")
    ap.add_argument("--drop", default="", help="comma-separated features the gate may not use (their weights stay 0)")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    tr = load(a.train)
    names = tr["names"]
    x = tr["feat"].astype(np.float64)
    mu, sd = x.mean(0), x.std(0)
    sd[sd < 1e-6] = 1.0  # a constant column stays 0 after standardising
    drop = [n for n in a.drop.split(",") if n]
    for n in drop:
        if n not in names:
            raise SystemExit(f"--drop: no feature {n!r} (features: {names})")
    keep = np.array([n not in drop for n in names], float)
    # Dropped columns enter as 0, so their input weights get no gradient;
    # they are zeroed in the exported model (export).
    data = ((x - mu) / sd * keep, x[:, 0], x[:, 1], tr["offset"].astype(np.float64))
    nq = len(tr["ngold"])
    held = np.zeros(nq, bool)
    held[rng.choice(nq, nq // 5, replace=False)] = True
    P, N, W = pair_arrays(groups_of(tr["rows"], ~held))
    hP, hN, hW = pair_arrays(groups_of(tr["rows"], held))
    print(f"train: {nq} questions ({held.sum()} held out), {len(x)} rows, {len(P)} fit pairs, {len(hP)} held-out pairs")
    if a.gradcheck:
        for hidden in (0, 8):
            g = Gate(len(names), hidden, rng)
            for k in g.p:
                g.p[k] = g.p[k] + rng.normal(0, 0.3, g.p[k].shape)
            print(f"gradcheck hidden={hidden}: worst relative error {gradcheck(g, data, P[:4000], N[:4000], W[:4000], a.l2, rng):.2e}")
        return
    # The model's shape is chosen by the held-out TRAIN pair loss.
    runs = {}
    for hidden in (0, 8):
        g = Gate(len(names), hidden, np.random.default_rng(a.seed))
        hl, ep = fit(g, data, P, N, W, hP, hN, hW, a.l2, 0.02, 3000, 100)
        runs[hidden] = (hl, ep, g)
        print(f"hidden={hidden}: held-out train pair loss {hl:.5f} (epoch {ep})")
    half, _ = Gate(len(names), 0, rng).loss_grad(data[0], data[1], data[2], data[3], hP, hN, hW, 0.0)
    print(f"fixed 0.5/0.5: held-out train pair loss {half:.5f}")
    hidden = min(runs, key=lambda h: runs[h][0])
    gate = runs[hidden][2]
    first = "W1" if hidden else "w"
    gate.p[first] = (gate.p[first].T * keep).T  # dropped inputs: weight 0
    res = {"model": "logistic" if hidden == 0 else f"mlp {len(names)}-{hidden}-1", "features": names, "dropped": drop,
           "held_out_train_pair_loss": {**{("logistic" if h == 0 else f"mlp-{h}"): runs[h][0] for h in runs}, "fixed_0.5": half},
           "epochs_kept": runs[hidden][1], "l2": a.l2, "seed": a.seed,
           "mu": mu.tolist(), "sd": sd.tolist()}
    if hidden == 0:
        res["weights_standardised"] = dict(zip(names, gate.p["w"].tolist()))
        res["bias"] = float(gate.p["b"][0])
        res["weights_raw_units"] = dict(zip(names, (gate.p["w"] / sd).tolist()))
    # Best fixed alpha on TRAIN (all its questions), by second-stage Recall@5.
    trg = stage_groups(tr)
    sweep = {float(al): rank_metrics(tr, float(al), trg)["recall@5"] for al in np.round(np.arange(0, 1.0001, 0.05), 2)}
    best_fixed = max(sweep, key=lambda k: (sweep[k], -abs(k - 0.5)))
    res["fixed_alpha_sweep_train_recall@5"] = sweep
    res["best_fixed_alpha_train"] = best_fixed
    sets = {"train": tr}
    if a.eval:
        sets["dev"] = load(a.eval)
    for name, d in sets.items():
        xd = (d["feat"].astype(np.float64) - mu) / sd
        al, dg = gate.alpha(xd), stage_groups(d)
        res[name] = {"alpha_mean": float(al.mean()), "alpha_std": float(al.std()),
                     "alpha_p05_p50_p95": np.percentile(al, [5, 50, 95]).tolist(), "alpha_by_evidence": learned(d, al),
                     "evidence_gate": rank_metrics(d, al, dg), "fixed_0.5": rank_metrics(d, 0.5, dg),
                     f"fixed_{best_fixed}": rank_metrics(d, best_fixed, dg), "semantic_only": rank_metrics(d, 1.0, dg)}
    print(json.dumps({k: v for k, v in res.items() if k not in ("mu", "sd", "fixed_alpha_sweep_train_recall@5")}, indent=1))
    if a.out:
        export(gate, mu, sd, names, a.out, {"trained_on": "kgqa/train.jsonl", "loss": "pairwise logistic", "model": res["model"], "encoder": a.encoder})
    if a.metrics:
        with open(a.metrics, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
