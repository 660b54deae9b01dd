"""Trains the question -> relation prior (relprior.onnx) on kgqa/train only.

The model is a soft nearest-neighbour classifier over the training
questions: p(r | Q) = sum_j softmax_j(cos(Q, Q_j) / tau) * y_j(r), where y_j
spreads question j's mass over the (relation, direction) steps that lead from
its linked entities to its gold entity in one hop. Input: the export of
`dmar graph features` (questions.jsonl, qvec.npy, rels.json). tau is chosen
by leave-one-out log-likelihood on the training questions themselves; dev
is only scored for the report (--eval), never used to choose anything.
"""
import argparse, json
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def load(d):
    qs = [json.loads(l) for l in open(d + "/questions.jsonl")]
    return qs, np.load(d + "/qvec.npy").astype(np.float64), json.load(open(d + "/rels.json"))


def labels(qs, rels):
    out = []
    for q in qs:
        gold, s = set(q["gold"]), set()
        for c in q["cands"]:
            if c["e"] in gold:
                for p in c.get("p1", []):
                    s.add("%s|%d" % (rels[p[1]]["pid"], p[2]))
        out.append(s)
    return out


def unit(x):
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def posterior(X, Xt, Y, tau, loo=False):
    S = X @ Xt.T / tau
    if loo:
        np.fill_diagonal(S, -np.inf)
    S -= S.max(1, keepdims=True)
    P = np.exp(S)
    P /= P.sum(1, keepdims=True)
    return P @ Y


def score(P, L, ci):
    """Mean log-likelihood and top-1 accuracy of the gold steps."""
    ll, acc, n = 0.0, 0, 0
    for i, s in enumerate(L):
        if not s:
            continue
        n += 1
        ll += np.log(max(sum(P[i, ci[c]] for c in s if c in ci), 1e-6))
        acc += int(np.argmax(P[i]) in {ci[c] for c in s if c in ci})
    return ll / max(n, 1), acc / max(n, 1), n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True)
    ap.add_argument("--eval")
    ap.add_argument("--out", required=True)
    ap.add_argument("--metrics", required=True)
    ap.add_argument("--encoder", default="all-MiniLM-L6-v2", help="the registry name of the encoder that wrote qvec.npy")
    a = ap.parse_args()
    qt, Xt, rels = load(a.train)
    Lt = labels(qt, rels)
    classes = sorted({c for s in Lt for c in s})
    ci = {c: i for i, c in enumerate(classes)}
    keep = [i for i, s in enumerate(Lt) if s]  # unlabelled questions carry no evidence
    Xk, Y = unit(Xt[keep]), np.zeros((len(keep), len(classes)))
    for r, i in enumerate(keep):
        for c in Lt[i]:
            Y[r, ci[c]] = 1.0 / len(Lt[i])
    Lk = [Lt[i] for i in keep]
    grid = {}
    for tau in [0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3]:
        grid[tau] = score(posterior(Xk, Xk, Y, tau, loo=True), Lk, ci)
    tau = max(grid, key=lambda t: grid[t][0])
    metrics = {"train_questions": len(qt), "labelled": len(keep), "classes": len(classes), "tau": tau,
               "loo_train": {str(t): {"loglik": g[0], "top1": g[1]} for t, g in grid.items()}}
    if a.eval:
        qd, Xd, relsd = load(a.eval)
        Ld = labels(qd, relsd)
        ll, acc, n = score(posterior(unit(Xd), Xk, Y, tau), Ld, ci)
        metrics["dev"] = {"labelled": n, "loglik": ll, "top1": acc}
    # ONNX: q [B,D] -> L2 normalise -> cosines with the training questions ->
    # /tau -> softmax -> mass per class [B,C].
    D = Xt.shape[1]
    inits = [numpy_helper.from_array(Xk.T.astype(np.float32), "xt"), numpy_helper.from_array(Y.astype(np.float32), "y"),
             numpy_helper.from_array(np.array(1.0 / tau, np.float32), "inv_tau")]
    nodes = [helper.make_node("LpNormalization", ["q"], ["qn"], axis=1, p=2),
             helper.make_node("MatMul", ["qn", "xt"], ["sims"]), helper.make_node("Mul", ["sims", "inv_tau"], ["logits"]),
             helper.make_node("Softmax", ["logits"], ["w"], axis=-1), helper.make_node("MatMul", ["w", "y"], ["prior"])]
    g = helper.make_graph(nodes, "dmar_relprior", [helper.make_tensor_value_info("q", TensorProto.FLOAT, ["B", D])],
                          [helper.make_tensor_value_info("prior", TensorProto.FLOAT, ["B", len(classes)])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="dmar models/relprior/train.py")
    m.ir_version = 8  # what the ONNX Runtime dmar loads (1.2x) reads
    helper.set_model_props(m, {"classes": json.dumps(classes), "encoder": a.encoder})
    onnx.checker.check_model(m)
    onnx.save(m, a.out)
    json.dump(metrics, open(a.metrics, "w"), indent=1)
    print(json.dumps({k: v for k, v in metrics.items() if k != "loo_train"}))


if __name__ == "__main__":
    main()
