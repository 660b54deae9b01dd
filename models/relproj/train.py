"""Trains the relation projection (relproj.onnx): question features under the
encoder -> a vector in the relation encoder's space.

The projection is linear. It is fitted in two steps, on kgqa/train only:
1. distillation: ridge regression (a bias column unpenalised) onto the
   relation encoder's own vectors of the same texts (kgqa/train's questions,
   as asked and masked as the graph channel masks them, and seeded codexm
   sentences with a random span cut); the penalty is chosen on a seeded tenth
   of the rows held out;
2. the relations: from there, Adam on the distillation loss plus alpha times
   the cross-entropy of the gold relation steps (those from the question's
   linked entities to its gold entity in one hop) among all the relation
   texts' (softmax of cosines / tau), on the rows the graph channel reads;
   alpha and the number of steps are chosen by 5-fold cross-validation over
   the training questions (mean reciprocal rank of the gold step).
--eval (kgqa/dev) is only scored for the model card, never used to choose.
The weights are stored as float16 (the file stays under 1 MiB; the figures are
the stored model's).
Input: the export of `dmar graph relproj-features` (x.npy, y.npy,
texts.jsonl, rels.json, relvec.npy).
"""
import argparse, json
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


TAU = 0.05  # the softmax temperature of the relation step (relprior's)


def load(d):
    texts = [json.loads(l) for l in open(d + "/texts.jsonl")]
    return np.load(d + "/x.npy").astype(np.float64), np.load(d + "/y.npy").astype(np.float64), texts


def labelled(d, X, texts):
    """The rows with gold steps: features with a bias column, the steps'
    one-hot targets and the relation texts' vectors."""
    R = np.load(d + "/relvec.npy").astype(np.float64)
    rows = [i for i, t in enumerate(texts) if t.get("steps")]
    T = np.zeros((len(rows), len(R)))
    for r, i in enumerate(rows):
        T[r, texts[i]["steps"]] = 1
    return np.hstack([X[rows], np.ones((len(rows), 1))]), T, R, rows


def tune(Wb, Xb, Y, Xs, Ts, R, alpha, steps, lr=1e-3, batch=2048):
    """Adam from Wb on the distillation loss (minibatches of Xb, Y) plus alpha
    times the gold steps' cross-entropy on (Xs, Ts)."""
    W = Wb.copy()
    m, v = np.zeros_like(W), np.zeros_like(W)
    rng = np.random.default_rng(0)
    for t in range(1, steps + 1):
        idx = rng.choice(len(Xb), min(batch, len(Xb)), replace=False)
        G = 2 * Xb[idx].T @ (Xb[idx] @ W - Y[idx]) / len(idx)
        Z = Xs @ W
        nz = np.linalg.norm(Z, axis=1, keepdims=True)
        P = Z / nz
        S = P @ R.T / TAU
        S -= S.max(1, keepdims=True)
        E = np.exp(S)
        Sm = E / E.sum(1, keepdims=True)
        Q = Sm * Ts
        Q /= Q.sum(1, keepdims=True)
        dP = ((Sm - Q) / len(Xs)) @ R / TAU
        G += alpha * Xs.T @ ((dP - (dP * P).sum(1, keepdims=True) * P) / nz)
        m = 0.9 * m + 0.1 * G
        v = 0.999 * v + 0.001 * G * G
        W -= lr * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    return W


def ranks(V, T, R):
    """The rank of the best gold step among the relation texts, per row."""
    S = unit(V) @ R.T
    return np.array([1 + (s > s[t > 0].max()).sum() for s, t in zip(S, T)])


def step_metrics(V, T, R):
    r = ranks(V, T, R)
    return {"questions": len(r), "mrr": float((1 / r).mean()), "hit1": float((r == 1).mean()), "hit3": float((r <= 3).mean())}


def unit(x):
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def fit(X, Y, lam):
    Xb = np.hstack([X, np.ones((len(X), 1))])
    A = Xb.T @ Xb + lam * np.eye(Xb.shape[1])
    A[-1, -1] -= lam  # the bias is not penalised
    return np.linalg.solve(A, Xb.T @ Y)


def stored(Wb):
    return Wb[:-1].astype(np.float16).astype(np.float64), Wb[-1].astype(np.float32).astype(np.float64)


def fidelity(W, b, X, Y, texts):
    """Mean cosine between the projection and the relation encoder's vector,
    over all rows and over the masked ones."""
    cos = (unit(X @ W + b) * Y).sum(1)
    masked = np.array([t["masked"] for t in texts])
    q = np.array([t["source"] == "question" for t in texts])
    out = {"rows": len(cos), "cosine": float(cos.mean())}
    if q.any():
        out["question_rows"] = int(q.sum())
        out["question_cosine"] = float(cos[q].mean())
    if (q & masked).any():
        out["masked_question_cosine"] = float(cos[q & masked].mean())
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True)
    ap.add_argument("--eval")
    ap.add_argument("--out", required=True)
    ap.add_argument("--metrics", required=True)
    ap.add_argument("--encoder", required=True, help="registry name of the encoder whose states the features are")
    ap.add_argument("--target", required=True, help="registry name of the relation encoder imitated")
    a = ap.parse_args()
    X, Y, texts = load(a.train)
    rng = np.random.default_rng(1)
    hold = rng.random(len(X)) < 0.1
    grid = {}
    for lam in [0.01, 0.1, 1.0, 10.0, 100.0]:
        W, b = stored(fit(X[~hold], Y[~hold], lam))
        grid[lam] = fidelity(W, b, X[hold], Y[hold], [t for t, h in zip(texts, hold) if h])["cosine"]
    lam = max(grid, key=grid.get)
    Wb0 = fit(X, Y, lam)
    Xb = np.hstack([X, np.ones((len(X), 1))])
    Xs, Ts, R, rows = labelled(a.train, X, texts)
    folds = np.random.default_rng(1).integers(0, 5, len(Xs))
    cv = {}
    for alpha in [0.1, 0.3, 1.0]:
        for steps in [100, 300]:
            rr = []
            for f in range(5):
                Wf = tune(Wb0, Xb, Y, Xs[folds != f], Ts[folds != f], R, alpha, steps)
                rr.append((1 / ranks(Xs[folds == f] @ Wf, Ts[folds == f], R)).mean())
            cv[(alpha, steps)] = float(np.mean(rr))
            print("cv alpha %g steps %d: mrr %.4f" % (alpha, steps, cv[(alpha, steps)]), flush=True)
    alpha, steps = max(cv, key=cv.get)
    W, b = stored(tune(Wb0, Xb, Y, Xs, Ts, R, alpha, steps))
    W0, b0 = stored(Wb0)
    metrics = {"train_rows": len(X), "features": X.shape[1], "outputs": Y.shape[1], "lambda": lam,
               "heldout_cosine_by_lambda": {str(k): v for k, v in grid.items()},
               "alpha": alpha, "steps": steps, "tau": TAU,
               "cv_mrr": {"alpha=%g steps=%d" % k: v for k, v in cv.items()},
               "train": fidelity(W, b, X, Y, texts),
               "train_relation_steps": {"relation encoder": step_metrics(Y[rows], Ts, R),
                                        "distilled only": step_metrics(X[rows] @ W0 + b0, Ts, R),
                                        "projection": step_metrics(X[rows] @ W + b, Ts, R)}}
    if a.eval:
        Xd, Yd, td = load(a.eval)
        metrics["dev"] = fidelity(W, b, Xd, Yd, td)
        Xds, Tds, Rd, rows_d = labelled(a.eval, Xd, td)
        metrics["dev_relation_steps"] = {"relation encoder": step_metrics(Yd[rows_d], Tds, Rd),
                                         "distilled only": step_metrics(Xd[rows_d] @ W0 + b0, Tds, Rd),
                                         "projection": step_metrics(Xd[rows_d] @ W + b, Tds, Rd)}
    # ONNX: features [B,F] -> MatMul (float16 weights cast to float32) + bias
    # -> L2 normalise -> relvec [B,D].
    F, D = W.shape
    inits = [numpy_helper.from_array(W.astype(np.float16), "w16"), numpy_helper.from_array(b.astype(np.float32), "b")]
    nodes = [helper.make_node("Cast", ["w16"], ["w"], to=TensorProto.FLOAT),
             helper.make_node("MatMul", ["features", "w"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["y"]),
             helper.make_node("LpNormalization", ["y"], ["relvec"], axis=1, p=2)]
    g = helper.make_graph(nodes, "dmar_relproj", [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["B", F])],
                          [helper.make_tensor_value_info("relvec", TensorProto.FLOAT, ["B", D])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="dmar models/relproj/train.py")
    m.ir_version = 8  # what the ONNX Runtime dmar loads (1.2x) reads
    helper.set_model_props(m, {"encoder": a.encoder, "target": a.target})
    onnx.checker.check_model(m)
    onnx.save(m, a.out)
    json.dump(metrics, open(a.metrics, "w"), indent=1)
    print(json.dumps({k: v for k, v in metrics.items() if k not in ("heldout_cosine_by_lambda", "cv_mrr")}, indent=1))


if __name__ == "__main__":
    main()
