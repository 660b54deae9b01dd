"""Trains DMAR's gating network with numpy (hand-written gradients) and
exports it to ONNX.

Gate (docs/method.md): [alpha, beta] = softmax(MLP(concat(enc(Q), enc(D)))),
MLP 768 -> 32 -> ReLU -> 32 -> ReLU -> 2. The fused score is
fused = alpha * z_sem + beta * z_ent, with z_sem and z_ent the pipeline's own
z-scored semantic and structural scores of the stage-1 candidates (exported
by `dmar gate features`). Loss: pairwise logistic ranking loss
log(1 + exp(-(fused_pos - fused_neg))) averaged over every (gold, non-gold)
candidate pair of the same question, plus L2 weight decay.

Questions whose structural branch is off (z_ent all 0: the pipeline then
fixes alpha=1 and never asks the gate) are left out of training. A seeded
20% of the TRAINING questions is held out for early stopping; kgqa/dev is
only ever read by --eval.
"""
import argparse
import json
import os
import sys

import numpy as np

D_IN, H = 768, 32


def load(d):
    q = np.load(os.path.join(d, "qvec.npy")).astype(np.float64)
    dv = np.load(os.path.join(d, "dvec.npy")).astype(np.float64)
    f = np.load(os.path.join(d, "feat.npy")).astype(np.float64)
    r = np.load(os.path.join(d, "rows.npy"))
    ng = np.load(os.path.join(d, "ngold.npy"))
    qi, lab = r[:, 0].astype(np.int64), r[:, 1].astype(np.int64)
    x = np.concatenate([q[qi], dv], axis=1)
    return dict(x=x, zs=f[:, 0], ze=f[:, 1], qi=qi, y=lab, ngold=ng, nq=len(q))


def load_all(dirs):
    """Concatenates several feature directories (comma-separated)."""
    parts = [load(d) for d in dirs.split(",")]
    if len(parts) == 1:
        return parts[0]
    out = {k: np.concatenate([p[k] for p in parts]) for k in ("x", "zs", "ze", "y", "ngold")}
    off = np.cumsum([0] + [p["nq"] for p in parts[:-1]])
    out["qi"] = np.concatenate([p["qi"] + o for p, o in zip(parts, off)])
    out["nq"] = int(sum(p["nq"] for p in parts))
    out["sets"] = [(os.path.basename(d), p["nq"]) for d, p in zip(dirs.split(","), parts)]
    return out


def init(rng):
    he = lambda i, o: rng.normal(0, np.sqrt(2.0 / i), (i, o))
    return {"w1": he(D_IN, H), "b1": np.zeros(H), "w2": he(H, H), "b2": np.zeros(H),
            "w3": rng.normal(0, 0.01, (H, 2)), "b3": np.zeros(2)}


def forward(p, x):
    z1 = x @ p["w1"] + p["b1"]; h1 = np.maximum(z1, 0)
    z2 = h1 @ p["w2"] + p["b2"]; h2 = np.maximum(z2, 0)
    lo = h2 @ p["w3"] + p["b3"]
    lo = lo - lo.max(axis=1, keepdims=True)
    e = np.exp(lo); s = e / e.sum(axis=1, keepdims=True)
    return s, (x, z1, h1, z2, h2, s)


def pairs_of(qi, y, keep):
    """(pos, neg) row indices of every gold/non-gold pair within a question."""
    pos, neg = [], []
    order = np.argsort(qi, kind="stable")
    bounds = np.flatnonzero(np.diff(qi[order])) + 1
    for rows in np.split(order, bounds):
        if not keep[qi[rows[0]]]:
            continue
        P, N = rows[y[rows] == 1], rows[y[rows] == 0]
        if len(P) and len(N):
            pp, nn = np.meshgrid(P, N, indexing="ij")
            pos.append(pp.ravel()); neg.append(nn.ravel())
    if not pos:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(pos), np.concatenate(neg)


def loss_grad(p, data, pos, neg, wd, rows=None):
    """Loss and gradients. rows: the rows the pairs index (all if None)."""
    x, zs, ze = data["x"], data["zs"], data["ze"]
    s, cache = forward(p, x)
    fused = s[:, 0] * zs + s[:, 1] * ze
    m = fused[pos] - fused[neg]
    loss = np.mean(np.logaddexp(0, -m)) + 0.5 * wd * sum(np.sum(p[k] ** 2) for k in ("w1", "w2", "w3"))
    dm = -1.0 / (1.0 + np.exp(m)) / len(pos)  # d loss / d margin
    dfused = np.zeros(len(x))
    np.add.at(dfused, pos, dm)
    np.add.at(dfused, neg, -dm)
    # fused = s0*zs + s1*ze; d s_k / d lo_j = s_k (delta_kj - s_j)
    ds = np.stack([dfused * zs, dfused * ze], axis=1)
    dlo = s * (ds - np.sum(ds * s, axis=1, keepdims=True))
    _, z1, h1, z2, h2, _ = cache
    g = {"w3": h2.T @ dlo + wd * p["w3"], "b3": dlo.sum(0)}
    dz2 = (dlo @ p["w3"].T) * (z2 > 0)
    g["w2"] = h1.T @ dz2 + wd * p["w2"]; g["b2"] = dz2.sum(0)
    dz1 = (dz2 @ p["w2"].T) * (z1 > 0)
    g["w1"] = x.T @ dz1 + wd * p["w1"]; g["b1"] = dz1.sum(0)
    return loss, g


def subset(data, qmask):
    r = qmask[data["qi"]]
    d = {k: data[k][r] for k in ("x", "zs", "ze", "y")}
    # renumber questions
    old = np.flatnonzero(qmask)
    remap = -np.ones(data["nq"], np.int64); remap[old] = np.arange(len(old))
    d["qi"] = remap[data["qi"][r]]
    d["ngold"] = data["ngold"][old]; d["nq"] = len(old)
    return d


def struct_on(data):
    on = np.zeros(data["nq"], bool)
    np.logical_or.at(on, data["qi"], data["ze"] != 0)
    return on


def rank_metrics(data, alpha):
    """MRR and Recall@5 of the candidates sorted by fused score (stable: ties
    keep stage-1 order). alpha: per-row semantic weight. Questions with the
    structural branch off use alpha=1, as the pipeline does."""
    on = struct_on(data)
    a = np.where(on[data["qi"]], alpha, 1.0)
    fused = a * data["zs"] + (1 - a) * data["ze"]
    rr, rec = np.zeros(data["nq"]), np.zeros(data["nq"])
    order = np.argsort(data["qi"], kind="stable")
    bounds = np.flatnonzero(np.diff(data["qi"][order])) + 1
    for rows in np.split(order, bounds):
        q = data["qi"][rows[0]]
        ranked = rows[np.argsort(-fused[rows], kind="stable")]
        hits = np.flatnonzero(data["y"][ranked] == 1)
        if len(hits):
            rr[q] = 1.0 / (hits[0] + 1)
        rec[q] = np.sum(data["y"][ranked[:5]]) / max(data["ngold"][q], 1)
    return float(rr.mean()), float(rec.mean())


def gradcheck(data, seed):
    rng = np.random.default_rng(seed)
    keep = np.zeros(data["nq"], bool); keep[:8] = True
    d = subset(data, keep)
    pos, neg = pairs_of(d["qi"], d["y"], np.ones(d["nq"], bool))
    p = init(rng)
    p["w3"] = rng.normal(0, 0.5, (H, 2))  # non-trivial softmax
    _, g = loss_grad(p, d, pos, neg, 1e-3)
    worst, eps, kinks = 0.0, 1e-6, 0

    def pattern():  # which ReLUs are on, for every row
        _, (_, z1, _, z2, _, _) = forward(p, d["x"])
        return np.concatenate([(z1 > 0).ravel(), (z2 > 0).ravel()])

    for k in p:
        for _ in range(6):
            idx = tuple(rng.integers(0, s) for s in p[k].shape)
            old = p[k][idx]
            p[k][idx] = old + eps; lp, _ = loss_grad(p, d, pos, neg, 1e-3); on_p = pattern()
            p[k][idx] = old - eps; lm, _ = loss_grad(p, d, pos, neg, 1e-3); on_m = pattern()
            p[k][idx] = old
            if not np.array_equal(on_p, on_m):
                # A ReLU of some row switches inside [-eps, +eps]: the loss has a
                # kink there and the central difference is not its derivative.
                kinks += 1
                continue
            num = (lp - lm) / (2 * eps)
            rel = abs(num - g[k][idx]) / max(1e-8, abs(num) + abs(g[k][idx]))
            if rel > worst:
                worst, at = rel, (k, idx, num, g[k][idx])
    print(f"gradcheck: worst relative error {worst:.2e} over {6 * len(p) - kinks} weights "
          f"({at[0]}{list(at[1])}: numeric {at[2]:.6e}, analytic {at[3]:.6e}); "
          f"{kinks} skipped where a ReLU switches within +-eps (a kink)")
    return worst


def export(p, path, encoder):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    inits = [numpy_helper.from_array(v.astype(np.float32), name=k) for k, v in p.items()]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["m1"]), helper.make_node("Add", ["m1", "b1"], ["z1"]),
        helper.make_node("Relu", ["z1"], ["h1"]),
        helper.make_node("MatMul", ["h1", "w2"], ["m2"]), helper.make_node("Add", ["m2", "b2"], ["z2"]),
        helper.make_node("Relu", ["z2"], ["h2"]),
        helper.make_node("MatMul", ["h2", "w3"], ["m3"]), helper.make_node("Add", ["m3", "b3"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["weights"], axis=-1),
    ]
    g = helper.make_graph(nodes, "dmar_gate", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", D_IN])],
                          [helper.make_tensor_value_info("weights", TensorProto.FLOAT, ["B", 2])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="dmar models/gate/train.py")
    m.ir_version = 8
    # dmar refuses a gate trained on another encoder's vectors (internal/scoring/onnx/gate.go)
    helper.set_model_props(m, {"encoder": encoder})
    onnx.checker.check_model(m)
    onnx.save(m, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True, help="dmar gate features output dirs (comma-separated): kgqa/train, HotpotQA, MuSiQue")
    ap.add_argument("--eval", help="features of the evaluation set (kgqa/dev): reported, never used to fit or select")
    ap.add_argument("--out", help="gate.onnx to write")
    ap.add_argument("--metrics", help="metrics.json to write")
    ap.add_argument("--encoder", required=True, help="the registry name of the encoder whose vectors the features hold (recorded in the model)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--wd", type=float, default=1e-3)
    ap.add_argument("--holdout", type=float, default=0.2)
    ap.add_argument("--patience", type=int, default=50, help="stop after this many epochs without a better held-out loss")
    ap.add_argument("--gradcheck", action="store_true")
    a = ap.parse_args()
    data = load_all(a.train)
    if a.gradcheck:
        sys.exit(0 if gradcheck(data, a.seed) < 1e-4 else 1)
    rng = np.random.default_rng(a.seed)
    on = struct_on(data)
    perm = rng.permutation(data["nq"])
    hold = np.zeros(data["nq"], bool); hold[perm[: int(a.holdout * data["nq"])]] = True
    tr, va = subset(data, ~hold), subset(data, hold)
    ptr = pairs_of(tr["qi"], tr["y"], struct_on(tr))
    pva = pairs_of(va["qi"], va["y"], struct_on(va))
    print(f"train: {data['nq']} questions ({on.sum()} with the structural branch on); "
          f"fit {tr['nq']} q / {len(ptr[0])} pairs, held out {va['nq']} q / {len(pva[0])} pairs")
    p = init(rng)
    mom = {k: np.zeros_like(v) for k, v in p.items()}; vel = {k: np.zeros_like(v) for k, v in p.items()}
    best, best_p, best_ep = np.inf, None, 0
    for ep in range(1, a.epochs + 1):
        loss, g = loss_grad(p, tr, *ptr, a.wd)
        for k in p:  # Adam
            mom[k] = 0.9 * mom[k] + 0.1 * g[k]; vel[k] = 0.999 * vel[k] + 0.001 * g[k] ** 2
            p[k] -= a.lr * (mom[k] / (1 - 0.9 ** ep)) / (np.sqrt(vel[k] / (1 - 0.999 ** ep)) + 1e-8)
        vl, _ = loss_grad(p, va, *pva, 0.0)
        if vl < best:
            best, best_p, best_ep = vl, {k: v.copy() for k, v in p.items()}, ep
        if ep - best_ep >= a.patience:
            print(f"epoch {ep}: no better held-out loss for {a.patience} epochs, stopping")
            break
        if ep % 25 == 0 or ep == 1:
            print(f"epoch {ep}: train loss {loss:.4f}, held-out pair loss {vl:.4f}")
    p = best_p
    print(f"kept epoch {best_ep} (held-out pair loss {best:.4f})")
    m = {"train_sets": data.get("sets", [(os.path.basename(a.train), data["nq"])]), "seed": a.seed, "epochs": a.epochs, "kept_epoch": best_ep, "lr": a.lr, "weight_decay": a.wd,
         "holdout": a.holdout, "patience": a.patience, "train_questions": int(data["nq"]), "heldout_pair_loss": best}
    # Fixed-alpha sweep on TRAIN (all training questions).
    sweep = {round(al, 2): rank_metrics(data, np.full(len(data["x"]), al)) for al in np.arange(0, 1.0001, 0.05)}
    best_alpha = max(sweep, key=lambda al: (sweep[al][0], -abs(al - 0.5)))
    m["fixed_alpha_sweep_train_mrr"] = {str(k): v[0] for k, v in sweep.items()}
    m["best_fixed_alpha_train"] = best_alpha
    ga_tr = forward(p, data["x"])[0][:, 0]
    m["train"] = {"gold_in_candidates": int(sum(1 for q in range(data["nq"]) if data["y"][data["qi"] == q].any())),
                  "structural_on": int(on.sum()), "gate": rank_metrics(data, ga_tr), "fixed_0.5": sweep[0.5], "fixed_best": sweep[best_alpha]}
    if a.eval:
        ev = load(a.eval)
        ga = forward(p, ev["x"])[0][:, 0]
        on_e = struct_on(ev)
        m["dev"] = {"questions": int(ev["nq"]), "structural_on": int(on_e.sum()),
                    "gold_in_candidates": int(sum(1 for q in range(ev["nq"]) if ev["y"][ev["qi"] == q].any())),
                    "gate": rank_metrics(ev, ga), "fixed_0.5": rank_metrics(ev, np.full(len(ev["x"]), 0.5)),
                    "fixed_best": rank_metrics(ev, np.full(len(ev["x"]), best_alpha)),
                    "semantic_only": rank_metrics(ev, np.ones(len(ev["x"]))),
                    "gate_alpha_mean": float(ga[on_e[ev["qi"]]].mean()), "gate_alpha_std": float(ga[on_e[ev["qi"]]].std())}
    for split in ("train", "dev"):
        if split in m:
            for k in ("gate", "fixed_0.5", "fixed_best", "semantic_only"):
                if k in m[split]:
                    mrr, r5 = m[split][k]
                    m[split][k] = {"mrr": round(mrr, 4), "recall@5": round(r5, 4)}
                    print(f"{split} {k:14s} MRR {mrr:.4f}  Recall@5 {r5:.4f}")
    print(f"best fixed alpha on train: {best_alpha}")
    if a.out:
        export(p, a.out, a.encoder)
        print(f"wrote {a.out}")
    if a.metrics:
        with open(a.metrics, "w") as f:
            json.dump(m, f, indent=1)


if __name__ == "__main__":
    main()
