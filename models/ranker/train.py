"""Trains dmar's learned ranker of the final pool (option final_rank learned)
with numpy only.

Each candidate of a request's final pool gets a score s = f(standardised
scoring.RankInput), f linear or a ReLU MLP; the results are the pool
ordered by s. Loss: the listwise softmax cross-entropy of each question's
gold documents among its pool, -mean_gold log(exp(s_g) / sum_j exp(s_j)),
each question weighted so that every training set counts the same in total
(a benchmark with more questions does not outweigh the others), plus L2 on
the weights.

Input: folders written by `dmar gate ranker` (feat.npy, rows.npy, ngold.npy,
features.json, questions.json), one per benchmark part, named NAME=DIR.
Fitting, early stopping and the choice of the model's shape use the --train
sets only (a seeded 20% of each one's questions is held out for that);
--eval sets are only reported, after the choice.
"""
import argparse
import hashlib
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def load(spec):
    name, folder = spec.split("=", 1)
    d = {k: np.load(os.path.join(folder, k + ".npy")) for k in ("feat", "rows", "ngold")}
    d["names"] = json.load(open(os.path.join(folder, "features.json")))
    d["ids"] = json.load(open(os.path.join(folder, "questions.json")))
    d["name"] = name
    return d


class Set:
    """One or more exported folders as one array of rows, with each
    question's row range (rows are written question by question)."""

    def __init__(self, parts):
        self.names = parts[0]["names"]
        feats, labels, qid, part, ngold, ids = [], [], [], [], [], []
        base = 0
        for i, p in enumerate(parts):
            if p["names"] != self.names:
                raise SystemExit(f"{p['name']}: features {p['names']} differ from {self.names}")
            feats.append(p["feat"].astype(np.float64))
            labels.append(p["rows"][:, 1] == 1)
            qid.append(p["rows"][:, 0].astype(np.int64) + base)
            part += [i] * len(p["ngold"])
            ngold.append(p["ngold"])
            ids += p["ids"]
            base += len(p["ngold"])
        self.x = np.concatenate(feats)
        self.y = np.concatenate(labels)
        self.q = np.concatenate(qid)
        self.part = np.array(part)
        self.ngold = np.concatenate(ngold)
        self.parts = [p["name"] for p in parts]
        self.ids = ids
        starts = np.flatnonzero(np.r_[True, np.diff(self.q) != 0])
        self.bounds = np.r_[starts, len(self.q)]
        self.qs = self.q[starts]
        self.seg = np.repeat(np.arange(len(starts)), np.diff(self.bounds))


class Model:
    """s = f(xn): linear (hidden=()) or ReLU layers of the given widths."""

    def __init__(self, nf, hidden, rng):
        self.p = {}
        dims = [nf, *hidden]
        for i in range(len(hidden)):
            self.p[f"W{i}"] = rng.normal(0, np.sqrt(2 / dims[i]), (dims[i], dims[i + 1]))
            self.p[f"b{i}"] = np.zeros(dims[i + 1])
        self.p["w"] = np.zeros(dims[-1])
        self.p["b"] = np.zeros(1)
        self.layers = len(hidden)

    def forward(self, xn):
        hs = [xn]
        for i in range(self.layers):
            hs.append(np.maximum(hs[-1] @ self.p[f"W{i}"] + self.p[f"b{i}"], 0))
        return hs[-1] @ self.p["w"] + self.p["b"][0], hs

    def loss_grad(self, xn, st, wq, l2):
        """The weighted listwise loss over st's questions (wq: each
        question's weight, 0 for the questions left out) and its gradient."""
        s, hs = self.forward(xn)
        starts, seg = st.bounds[:-1], st.seg
        z = s - np.maximum.reduceat(s, starts)[seg]
        e = np.exp(z)
        sume = np.add.reduceat(e, starts)
        ng = np.maximum(np.add.reduceat(st.y.astype(float), starts), 1)
        loss = np.sum(wq * (np.log(sume) - np.add.reduceat(z * st.y, starts) / ng))
        ds = wq[seg] * (e / sume[seg] - st.y / ng[seg])
        g = {"w": hs[-1].T @ ds, "b": np.array([ds.sum()])}
        dh = np.outer(ds, self.p["w"])
        for i in reversed(range(self.layers)):
            dh = dh * (hs[i + 1] > 0)
            g[f"W{i}"], g[f"b{i}"] = hs[i].T @ dh, dh.sum(0)
            dh = dh @ self.p[f"W{i}"].T
        for k in self.p:
            if k.startswith("W") or k == "w":
                loss += 0.5 * l2 * np.sum(self.p[k] ** 2)
                g[k] = g[k] + l2 * self.p[k]
        return loss, g


def weights(st, keep):
    """Each question's weight: 0 unless kept and its pool holds a gold and
    another document; each part's usable questions weigh 1/(their number)
    together with the other parts'."""
    starts = st.bounds[:-1]
    ngold = np.add.reduceat(st.y.astype(int), starts)
    usable = keep & (ngold > 0) & (ngold < np.diff(st.bounds))
    per = np.bincount(st.part[usable], minlength=len(st.parts)).astype(float)
    w = np.zeros(len(starts))
    w[usable] = 1.0 / (per[st.part[usable]] * np.count_nonzero(per))
    return w


def fit(model, xn, st, fit_w, held_w, l2, lr, epochs, patience):
    m = {k: np.zeros_like(v) for k, v in model.p.items()}
    v = {k: np.zeros_like(x) for k, x in model.p.items()}
    best, best_p, best_ep, since = np.inf, None, 0, 0
    for ep in range(1, epochs + 1):
        _, g = model.loss_grad(xn, st, fit_w, l2)
        for k in model.p:
            m[k] = 0.9 * m[k] + 0.1 * g[k]
            v[k] = 0.999 * v[k] + 0.001 * g[k] ** 2
            model.p[k] = model.p[k] - lr * (m[k] / (1 - 0.9 ** ep)) / (np.sqrt(v[k] / (1 - 0.999 ** ep)) + 1e-8)
        hl, _ = model.loss_grad(xn, st, held_w, 0.0)
        if hl < best - 1e-7:
            best, best_p, best_ep, since = hl, {k: x.copy() for k, x in model.p.items()}, ep, 0
        else:
            since += 1
            if since >= patience:
                break
    model.p = best_p
    return best, best_ep


def metrics(st, s, keep):
    """Recall@5 and nDCG@10 of each part's kept questions ranked by s (ties:
    the pool's order), over the gold documents the question has (a gold
    document missing from the pool counts as missed)."""
    out = {}
    for i, name in enumerate(st.parts):
        r5, nd, n = 0.0, 0.0, 0
        for k, (lo, hi) in enumerate(zip(st.bounds[:-1], st.bounds[1:])):
            if not keep[k] or st.part[k] != i:
                continue
            qn = st.qs[k]
            lab = st.y[lo:hi][np.argsort(-s[lo:hi], kind="stable")]
            g = max(int(st.ngold[qn]), 1)
            r5 += lab[:5].sum() / g
            disc = 1 / np.log2(np.arange(2, 12))
            dcg = (lab[:10] * disc[: min(10, lab.size)]).sum()
            nd += dcg / disc[: min(g, 10)].sum()
            n += 1
        out[name] = {"recall@5": r5 / max(n, 1), "ndcg@10": nd / max(n, 1), "questions": n}
    return out


def export(model, mu, sd, names, path, meta):
    nf = len(names)
    init = [numpy_helper.from_array(mu.astype(np.float32), "mu"), numpy_helper.from_array(sd.astype(np.float32), "sd")]
    nodes = [helper.make_node("Sub", ["features", "mu"], ["c"]), helper.make_node("Div", ["c", "sd"], ["h_in"])]
    last = "h_in"
    for i in range(model.layers):
        init += [numpy_helper.from_array(model.p[f"W{i}"].astype(np.float32), f"w{i}"),
                 numpy_helper.from_array(model.p[f"b{i}"].astype(np.float32), f"b{i}")]
        nodes += [helper.make_node("MatMul", [last, f"w{i}"], [f"m{i}"]), helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]),
                  helper.make_node("Relu", [f"a{i}"], [f"h{i}"])]
        last = f"h{i}"
    init += [numpy_helper.from_array(model.p["w"].reshape(-1, 1).astype(np.float32), "wout"),
             numpy_helper.from_array(model.p["b"].astype(np.float32), "bout")]
    nodes += [helper.make_node("MatMul", [last, "wout"], ["s0"]), helper.make_node("Add", ["s0", "bout"], ["scores"])]
    g = helper.make_graph(nodes, "ranker", [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["B", nf])],
                          [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["B", 1])], init)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="dmar models/ranker/train.py")
    m.ir_version = 8
    for k, v in {"features": json.dumps(names), **meta}.items():
        e = m.metadata_props.add()
        e.key, e.value = k, v
    onnx.checker.check_model(m)
    onnx.save(m, path)


def gradcheck(model, xn, st, w, l2, rng):
    _, an = model.loss_grad(xn, st, w, l2)
    worst = 0.0
    for k in model.p:
        flat = model.p[k].reshape(-1)
        for i in rng.choice(flat.size, min(6, flat.size), replace=False):
            old, eps = flat[i], 1e-6
            flat[i] = old + eps
            lp, _ = model.loss_grad(xn, st, w, l2)
            flat[i] = old - eps
            lm, _ = model.loss_grad(xn, st, w, l2)
            flat[i] = old
            num, a = (lp - lm) / (2 * eps), an[k].reshape(-1)[i]
            worst = max(worst, abs(num - a) / max(abs(num) + abs(a), 1e-6))  # the bias moves no softmax: both ~0
    return worst


def baselines(st):
    """The orders the ranker competes with, from its own columns: the
    stage-1 hybrid search, the semantic cosine, and the graph channel first
    (its documents by graph score, then the search's)."""
    c = {n: st.x[:, i] for i, n in enumerate(st.names)}
    return {"stage1_search": c["inv_rank1"], "semantic": c["sem"],
            "graph_first": c["reached"] * (100 + c["graph"]) + c["inv_rank1"]}


def ablate(d, drop, without):
    """d with the named features zeroed and the named sources' candidates
    taken out of each pool."""
    names = d["names"]
    col = {n: i for i, n in enumerate(names)}
    for n in [n for n in drop.split(",") if n]:
        if n not in col:
            raise SystemExit(f"--drop: no feature {n!r} (features: {names})")
        d["feat"][:, col[n]] = 0
    keep = np.ones(len(d["feat"]), bool)
    f = d["feat"]
    only_search2 = (f[:, col["inv_rank1"]] == 0) & (f[:, col["reached"]] == 0) & (f[:, col["own"]] == 0)
    for w in [w for w in without.split(",") if w]:
        if w == "stage2":
            keep &= ~(only_search2 & (f[:, col["inv_rank2"]] > 0))
        elif w == "own":
            keep &= ~((f[:, col["own"]] > 0) & (f[:, col["inv_rank1"]] == 0) & (f[:, col["inv_rank2"]] == 0) & (f[:, col["reached"]] == 0))
        else:
            raise SystemExit(f"--pool-without: unknown source {w!r}")
    d["feat"], d["rows"] = d["feat"][keep], d["rows"][keep]
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", nargs="+", required=True, help="NAME=DIR of dmar gate ranker exports to fit on")
    ap.add_argument("--eval", nargs="*", default=[], help="NAME=DIR exports only reported")
    ap.add_argument("--out", default="")
    ap.add_argument("--metrics", default="")
    ap.add_argument("--encoder", required=True, help="the registry name of the encoder whose scores the rows hold")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--l2", type=float, default=1e-3)
    ap.add_argument("--shapes", default="0;16;32,16", help="hidden widths to choose from, ';'-separated (0: linear)")
    ap.add_argument("--gradcheck", action="store_true")
    ap.add_argument("--drop", default="", help="comma-separated features the ranker may not use (an ablation: the column enters as 0)")
    ap.add_argument("--pool-without", default="", help="comma-separated candidate sources taken out of the pool (an ablation): "
                    "stage2 (found only by the search for Q'), own (the query entities' pages found by nothing else)")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    tr = Set([ablate(load(s), a.drop, a.pool_without) for s in a.train])
    names = tr.names
    mu, sd = tr.x.mean(0), tr.x.std(0)
    sd[sd < 1e-6] = 1.0
    xn = (tr.x - mu) / sd
    nq = len(tr.qs)
    # A fifth of the questions, by a hash of the id and the seed, so that a
    # question exported twice (the pools of two option sets) is held out in
    # both or in neither.
    held = np.array([hashlib.sha256(f"{a.seed}|{tr.ids[q]}".encode()).digest()[0] % 5 == 0 for q in tr.qs])
    fit_w, held_w = weights(tr, ~held), weights(tr, held)
    print(f"train: {nq} questions ({held.sum()} held out) in {tr.parts}, {len(tr.x)} rows")
    shapes = [tuple(int(w) for w in s.split(",") if int(w) > 0) for s in a.shapes.split(";")]
    if a.gradcheck:
        for h in shapes:
            m = Model(len(names), h, rng)
            for k in m.p:
                m.p[k] = m.p[k] + rng.normal(0, 0.3, m.p[k].shape)
            print(f"gradcheck hidden={h}: worst relative error {gradcheck(m, xn, tr, fit_w, a.l2, rng):.2e}")
        return
    runs = {}
    for h in shapes:
        m = Model(len(names), h, np.random.default_rng(a.seed))
        hl, ep = fit(m, xn, tr, fit_w, held_w, a.l2, 0.01, 3000, 100)
        runs[h] = (hl, ep, m)
        hm = metrics(tr, m.forward(xn)[0], held)
        print(f"hidden={h}: held-out train loss {hl:.5f} (epoch {ep}); held-out " +
              ", ".join(f"{p} R@5 {v['recall@5']:.3f} nDCG@10 {v['ndcg@10']:.3f}" for p, v in hm.items()))
    h = min(runs, key=lambda k: runs[k][0])
    model = runs[h][2]
    res = {"model": "linear" if not h else "mlp " + "-".join(map(str, (len(names), *h, 1))), "features": names,
           "held_out_train_loss": {str(k): v[0] for k, v in runs.items()}, "epochs_kept": runs[h][1],
           "l2": a.l2, "seed": a.seed, "trained_on": tr.parts, "mu": mu.tolist(), "sd": sd.tolist()}
    if not h:
        res["weights_raw_units"] = dict(zip(names, (model.p["w"] / sd).tolist()))
    res["train_held_out"] = {"ranker": metrics(tr, model.forward(xn)[0], held),
                             **{b: metrics(tr, v, held) for b, v in baselines(tr).items()}}
    for spec in a.eval:
        ev = Set([ablate(load(spec), a.drop, a.pool_without)])
        s = model.forward((ev.x - mu) / sd)[0]
        allq = np.ones(len(ev.qs), bool)
        res[ev.parts[0]] = {"ranker": metrics(ev, s, allq)[ev.parts[0]],
                            **{b: metrics(ev, v, allq)[ev.parts[0]] for b, v in baselines(ev).items()}}
    print(json.dumps({k: v for k, v in res.items() if k not in ("mu", "sd")}, indent=1))
    if a.out:
        export(model, mu, sd, names, a.out, {"trained_on": ",".join(tr.parts), "loss": "listwise softmax", "model": res["model"], "encoder": a.encoder})
    if a.metrics:
        with open(a.metrics, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
