#!/usr/bin/python3
"""A small numpy evaluator for the ONNX ops tools/skl2onnx_shapes.py emits (no ONNX runtime
is installable here).

    run(model, feeds) -> {output name: value}

Semantics follow the ONNX operator specifications (docs/Operators.md, docs/Operators-ml.md), with
the arithmetic in float32 wherever the spec's type constraints make the op compute in float32
(Scaler, Normalizer, LinearClassifier, TreeEnsembleClassifier, MatMul/Add/... on float tensors).
Where Operators-ml.md leaves the behaviour open (TreeEnsembleClassifier with two classes but
weights for one class id, LinearClassifier's scores, Normalizer's norms, ArrayFeatureExtractor
on a 1-D tensor) the evaluator does what onnxruntime's CPU kernels do, which is what a
skl2onnx graph is written for; each such place says so.

String tensors are numpy object arrays of str. ZipMap returns a list of dicts.
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

F32 = np.float32

_NP = {
    TensorProto.FLOAT: np.float32,
    TensorProto.DOUBLE: np.float64,
    TensorProto.INT64: np.int64,
    TensorProto.INT32: np.int32,
    TensorProto.BOOL: np.bool_,
    TensorProto.STRING: object,
}


def _attrs(node):
    out = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode("utf-8")
        elif isinstance(v, list) and v and isinstance(v[0], bytes):
            v = [s.decode("utf-8") for s in v]
        out[a.name] = v
    return out


def _initializer(t):
    if t.data_type == TensorProto.STRING:
        vals = [s.decode("utf-8") for s in t.string_data]
        return np.array(vals, dtype=object).reshape(tuple(t.dims))
    return numpy_helper.to_array(t)


def _logistic(x):
    # onnxruntime's ComputeLogistic, in float32: 1/(1+exp(-|x|)), mirrored for x < 0
    x = np.asarray(x, dtype=F32)
    v = F32(1) / (F32(1) + np.exp(-np.abs(x)).astype(F32))
    return np.where(x < 0, F32(1) - v, v).astype(F32)


def _softmax_rows(x):
    x = np.asarray(x, dtype=F32)
    e = np.exp(x - x.max(axis=-1, keepdims=True)).astype(F32)
    return (e / e.sum(axis=-1, keepdims=True, dtype=F32)).astype(F32)


# --- default domain ------------------------------------------------------------------------------

def op_Identity(node, a, x):
    return [x]


def op_Cast(node, a, x):
    to = a["to"]
    if to == TensorProto.STRING:
        return [np.vectorize(str, otypes=[object])(x)]
    if to == TensorProto.BOOL:
        return [np.asarray(x) != 0]
    return [np.asarray(x).astype(_NP[to])]


def op_CastLike(node, a, x, like):
    return [np.asarray(x).astype(np.asarray(like).dtype)]


def op_Concat(node, a, *xs):
    return [np.concatenate(xs, axis=a["axis"])]


def op_Reshape(node, a, x, shape):
    shape = [int(s) for s in shape]
    shape = [x.shape[i] if s == 0 and not a.get("allowzero", 0) else s for i, s in enumerate(shape)]
    return [np.reshape(x, shape)]


def op_Gather(node, a, x, idx):
    return [np.take(x, np.asarray(idx, dtype=np.int64), axis=a.get("axis", 0))]


def op_Where(node, a, c, x, y):
    return [np.where(c, x, y)]


def _arith(fn):
    def op(node, a, x, y):
        r = fn(x, y)
        if np.asarray(x).dtype == F32 and np.asarray(y).dtype == F32:
            r = r.astype(F32)
        return [r]
    return op


op_Add = _arith(lambda x, y: x + y)
op_Sub = _arith(lambda x, y: x - y)
op_Mul = _arith(lambda x, y: x * y)
op_Div = _arith(lambda x, y: x / y)


def op_MatMul(node, a, x, y):
    # float32 x float32 stays float32 (numpy calls sgemm)
    return [np.matmul(x, y)]


def op_Relu(node, a, x):
    return [np.maximum(x, np.zeros((), dtype=x.dtype))]


def op_Tanh(node, a, x):
    return [np.tanh(x)]


def op_Sigmoid(node, a, x):
    x = np.asarray(x)
    one = np.ones((), dtype=x.dtype)
    return [(one / (one + np.exp(-x))).astype(x.dtype)]


def op_Softmax(node, a, x):
    axis = a.get("axis", -1)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return [(e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)]


def op_ArgMax(node, a, x):
    axis = a.get("axis", 0)
    if a.get("select_last_index", 0):
        flipped = np.flip(x, axis=axis)
        r = x.shape[axis] - 1 - np.argmax(flipped, axis=axis)
    else:
        r = np.argmax(x, axis=axis)
    if a.get("keepdims", 1):
        r = np.expand_dims(r, axis)
    return [r.astype(np.int64)]


def op_Split(node, a, x, split=None):
    axis = a.get("axis", 0)
    if split is None:
        n = len(node.output)
        split = [x.shape[axis] // n] * n
    bounds = np.cumsum([int(s) for s in split])[:-1]
    return list(np.split(x, bounds, axis=axis))


def op_ReduceSum(node, a, x, axes=None):
    keep = bool(a.get("keepdims", 1))
    if axes is None or len(axes) == 0:
        if a.get("noop_with_empty_axes", 0):
            return [x]
        return [np.sum(x, keepdims=keep).astype(x.dtype)]
    return [np.sum(x, axis=tuple(int(i) for i in axes), keepdims=keep).astype(x.dtype)]


def op_Clip(node, a, x, lo=None, hi=None):
    if lo is not None:
        x = np.maximum(x, lo)
    if hi is not None:
        x = np.minimum(x, hi)
    return [x]


def op_Less(node, a, x, y):
    return [np.less(x, y)]


# --- ai.onnx.ml ----------------------------------------------------------------------------------

def ml_ArrayFeatureExtractor(node, a, x, idx):
    idx = np.asarray(idx, dtype=np.int64).ravel()
    if x.ndim == 1:
        # onnxruntime: a 1-D input gives shape [1, len(indices)]
        return [x[idx].reshape(1, -1)]
    return [x[..., idx]]


def ml_Scaler(node, a, x):
    # Y = (X - offset) * scale, computed in float32 (output tensor(float); onnxruntime converts
    # an integer input element to float before the subtraction)
    offset = np.asarray(a.get("offset", [0.0]), dtype=F32)
    scale = np.asarray(a.get("scale", [1.0]), dtype=F32)
    xf = np.asarray(x).astype(F32)
    return [((xf - offset).astype(F32) * scale).astype(F32)]


def ml_OneHotEncoder(node, a, x):
    zeros = a.get("zeros", 1)
    if "cats_strings" in a:
        cats = list(a["cats_strings"])
        keys = np.asarray(x).astype(str)
    else:
        cats = [int(c) for c in a["cats_int64s"]]
        keys = np.asarray(x).astype(np.int64)
    pos = {c: i for i, c in enumerate(cats)}
    out = np.zeros(keys.shape + (len(cats),), dtype=F32)
    flat = out.reshape(-1, len(cats))
    for i, k in enumerate(keys.ravel().tolist()):
        j = pos.get(k)
        if j is None:
            if not zeros:
                raise ValueError("OneHotEncoder: unknown category %r and zeros=0" % (k,))
            continue
        flat[i, j] = 1.0
    return [out]


def ml_Imputer(node, a, x):
    x = np.array(x, copy=True)
    if "imputed_value_floats" in a:
        vals = np.asarray(a["imputed_value_floats"], dtype=x.dtype)
        rep = a.get("replaced_value_float", 0.0)
        mask = np.isnan(x) if np.isnan(rep) else (x == rep)
    else:
        vals = np.asarray(a["imputed_value_int64s"], dtype=x.dtype)
        mask = x == a.get("replaced_value_int64", 0)
    full = np.broadcast_to(vals if vals.size > 1 else vals[0], x.shape)
    x[mask] = full[mask]
    return [x]


def ml_LabelEncoder(node, a, x):
    if "keys_strings" in a:
        keys = list(a["keys_strings"])
        xs = [str(v) for v in np.asarray(x).ravel().tolist()]
    elif "keys_int64s" in a:
        keys = [int(k) for k in a["keys_int64s"]]
        xs = [int(v) for v in np.asarray(x).ravel().tolist()]
    else:
        keys = [float(F32(k)) for k in a["keys_floats"]]
        xs = [float(F32(v)) for v in np.asarray(x).ravel().tolist()]
    if "values_strings" in a:
        vals, default, dtype = list(a["values_strings"]), a.get("default_string", "_Unused"), object
    elif "values_int64s" in a:
        vals, default, dtype = [int(v) for v in a["values_int64s"]], a.get("default_int64", -1), np.int64
    else:
        vals, default, dtype = list(a["values_floats"]), a.get("default_float", -0.0), F32
    table = dict(zip(keys, vals))
    return [np.array([table.get(v, default) for v in xs], dtype=dtype).reshape(np.shape(x))]


def ml_CategoryMapper(node, a, x):
    strings = list(a["cats_strings"])
    ints = [int(i) for i in a["cats_int64s"]]
    x = np.asarray(x)
    if x.dtype == object:
        table = dict(zip(strings, ints))
        d = a.get("default_int64", -1)
        return [np.array([table.get(str(v), d) for v in x.ravel()], dtype=np.int64).reshape(x.shape)]
    table = dict(zip(ints, strings))
    d = a.get("default_string", "_Unused")
    return [np.array([table.get(int(v), d) for v in x.ravel()], dtype=object).reshape(x.shape)]


def ml_Binarizer(node, a, x):
    t = a.get("threshold", 0.0)
    x = np.asarray(x)
    thr = np.asarray(t, dtype=x.dtype) if x.dtype.kind == "f" else t
    return [np.where(x > thr, 1, 0).astype(x.dtype)]


def ml_Normalizer(node, a, x):
    # onnxruntime: MAX divides by max(x) (not max |x|), L1 by sum |x|, L2 keeps the sign of
    # sqrt(x^2 / sum x^2); a zero divisor leaves the row unchanged. float32 throughout.
    norm = a.get("norm", "MAX")
    x = np.asarray(x).astype(F32)
    x2 = x.reshape(1, -1) if x.ndim == 1 else x
    out = np.empty_like(x2)
    for r in range(x2.shape[0]):
        row = x2[r]
        if norm == "MAX":
            d = row.max()
            out[r] = row / d if d != 0 else row
        elif norm == "L1":
            d = F32(0)
            for v in np.abs(row):
                d = F32(d + v)
            out[r] = row / d if d != 0 else row
        else:
            sq = (row * row).astype(F32)
            d = F32(0)
            for v in sq:
                d = F32(d + v)
            out[r] = np.sign(row) * np.sqrt(sq / d) if d != 0 else row
    return [out.reshape(x.shape)]


def ml_FeatureVectorizer(node, a, *xs):
    dims = list(a.get("inputdimensions", []))
    cols = []
    for x, d in zip(xs, dims):
        x = np.asarray(x).astype(F32)
        x = x.reshape(x.shape[0], -1) if x.ndim > 1 else x.reshape(1, -1)
        if x.shape[1] < d:
            x = np.concatenate([x, np.zeros((x.shape[0], d - x.shape[1]), F32)], axis=1)
        cols.append(x[:, :d])
    return [np.concatenate(cols, axis=1)]


def _post_transform(scores, pt):
    if pt == "LOGISTIC":
        return _logistic(scores)
    if pt == "SOFTMAX":
        return _softmax_rows(scores)
    if pt == "NONE":
        return scores
    raise NotImplementedError("post_transform %s" % pt)


def ml_LinearClassifier(node, a, x):
    x = np.asarray(x).astype(F32)
    if x.ndim == 1:
        x = x.reshape(1, -1)
    coef = np.asarray(a["coefficients"], dtype=F32)
    icpt = np.asarray(a.get("intercepts", []), dtype=F32)
    n_targets = len(icpt)
    w = coef.reshape(n_targets, -1)
    scores = (np.matmul(x, w.T) + icpt).astype(F32)
    labels = a.get("classlabels_strings") or [int(i) for i in a.get("classlabels_ints", [])]
    strings = "classlabels_strings" in a
    if n_targets == 1:
        # onnxruntime: one score column, label = classlabels[1] if score > 0 else classlabels[0]
        pos, neg = (labels[1], labels[0]) if len(labels) == 2 else (("1", "0") if strings else (1, 0))
        y = [pos if s > 0 else neg for s in scores[:, 0]]
        if len(labels) == 2:
            pt = a.get("post_transform", "NONE")
            s = scores[:, 0]
            if pt == "LOGISTIC":
                p = _logistic(s)
                scores = np.stack([F32(1) - p, p], axis=1).astype(F32)
            else:
                scores = np.stack([-s, s], axis=1).astype(F32)
            return [np.array(y, dtype=object if strings else np.int64), scores]
    else:
        idx = np.argmax(scores, axis=1)  # first maximum, as onnxruntime
        y = [labels[i] for i in idx]
    probs = _post_transform(scores, a.get("post_transform", "NONE"))
    return [np.array(y, dtype=object if strings else np.int64), probs]


def ml_TreeEnsembleClassifier(node, a, x):
    """onnxruntime's TreeEnsembleClassifier (opset 1 attributes): thresholds and leaf weights are
    float32, features are compared as float32, leaf weights are summed in float32 per class in
    tree order, base_values are added, then the binary / post_transform rules below."""
    x = np.asarray(x).astype(F32)
    if x.ndim == 1:
        x = x.reshape(1, -1)
    tree_ids = list(a["nodes_treeids"])
    node_ids = list(a["nodes_nodeids"])
    feats = list(a["nodes_featureids"])
    modes = list(a["nodes_modes"])
    values = np.asarray(a["nodes_values"], dtype=F32)
    trues = list(a["nodes_truenodeids"])
    falses = list(a["nodes_falsenodeids"])
    missing_true = list(a.get("nodes_missing_value_tracks_true", [0] * len(node_ids)))
    labels = a.get("classlabels_strings") or [int(i) for i in a["classlabels_int64s"]]
    strings = "classlabels_strings" in a
    n_classes = len(labels)
    pt = a.get("post_transform", "NONE")
    base = np.asarray(a.get("base_values", []), dtype=F32)
    index = {(t, n): i for i, (t, n) in enumerate(zip(tree_ids, node_ids))}
    leaf_w = {}
    for t, n, c, w in zip(a["class_treeids"], a["class_nodeids"], a["class_ids"],
                          np.asarray(a["class_weights"], dtype=F32)):
        leaf_w.setdefault((t, n), []).append((int(c), w))
    class_ids = set(int(c) for c in a["class_ids"])
    all_positive = all(w >= 0 for w in np.asarray(a["class_weights"], dtype=F32))
    binary_case = n_classes == 2 and len(class_ids) == 1
    roots = []
    for t in sorted(set(tree_ids)):
        roots.append(index[(t, min(n for tt, n in zip(tree_ids, node_ids) if tt == t))])
    N = x.shape[0]
    score = np.zeros((N, n_classes), dtype=F32)
    has = np.zeros((N, n_classes), dtype=bool)
    for r in range(N):
        row = x[r]
        for root in roots:
            i = root
            t = tree_ids[i]
            while modes[i] != "LEAF":
                v = row[feats[i]]
                th = values[i]
                m = modes[i]
                if np.isnan(v):
                    go = bool(missing_true[i])
                elif m == "BRANCH_LEQ":
                    go = v <= th
                elif m == "BRANCH_LT":
                    go = v < th
                elif m == "BRANCH_GTE":
                    go = v >= th
                elif m == "BRANCH_GT":
                    go = v > th
                elif m == "BRANCH_EQ":
                    go = v == th
                else:
                    go = v != th
                i = index[(t, trues[i] if go else falses[i])]
            for c, w in leaf_w.get((t, node_ids[i]), []):
                score[r, c] = F32(score[r, c] + w)
                has[r, c] = True
    y = []
    out = np.zeros((N, n_classes), dtype=F32)
    for r in range(N):
        s = score[r].copy()
        h = has[r].copy()
        if n_classes > 2:
            for k in range(len(base)):
                s[k] = F32(s[k] + base[k]) if h[k] else base[k]
                h[k] = True
            best = -1
            for k in range(n_classes):
                if h[k] and (best == -1 or s[k] > s[best]):
                    best = k
            y.append(labels[best])
            out[r] = _post_transform(np.where(h, s, F32(0)).reshape(1, -1), pt)[0]
            continue
        # two classes (onnxruntime TreeAggregatorClassifier::FinalizeScores)
        write = -1
        if len(base) == 2:
            if h[1]:
                s[1] = F32(base[1] + s[0])
                s[0] = -s[1]
                h[1] = True
            else:
                s[1] = F32(s[1] + base[1])
                s[0] = F32(s[0] + base[0])
            two = True
        elif len(base) == 1:
            s[0] = F32(s[0] + base[0])
            two = bool(h[1])
        else:
            write = 3
            two = bool(h[1])
        pos_weight = s[1] if (two and h[1]) else (s[0] if h[0] else F32(0))
        if binary_case:
            if all_positive:
                if pos_weight > 0.5:
                    write, lab = 0, labels[1]
                else:
                    write, lab = 1, labels[0]
            else:
                if pos_weight > 0:
                    write, lab = 2, labels[1]
                else:
                    write, lab = 3, labels[0]
        else:
            lab = labels[1] if pos_weight > 0 else labels[0]
        y.append(lab)
        if two:
            out[r] = _post_transform(s.reshape(1, -1), pt)[0]
        else:
            v = s[0]
            if pt == "PROBIT":
                raise NotImplementedError("PROBIT")
            if write in (0, 1):
                out[r] = [F32(1) - v, v]
            elif write == 2 or write == 3:
                if pt == "LOGISTIC":
                    out[r] = [_logistic(-v), _logistic(v)]
                elif write == 2:
                    out[r] = [-v, v]
                else:
                    out[r] = [v, -v]
            else:
                out[r] = [v, 0]
    return [np.array(y, dtype=object if strings else np.int64), out]


def ml_TreeEnsemble(node, a, x):
    """ai.onnx.ml 5 TreeEnsemble, from its specification: interior nodes in nodes_*, leaves in
    leaf_*; a child id is a leaf index where nodes_trueleafs/falseleafs is 1. A NaN feature goes
    the way nodes_missing_value_tracks_true says (false when absent), whatever the mode. The
    BRANCH_MEMBER sets are the NaN-separated runs of membership_values, in node order. Compares in
    the input's type (splits have it too); sums leaf weights in float64, in tree order."""
    x = np.asarray(x)
    if x.ndim == 1:
        x = x.reshape(1, -1)
    splits = np.asarray(numpy_helper.to_array(a["nodes_splits"]), dtype=np.float64)
    modes = [int(m) for m in numpy_helper.to_array(a["nodes_modes"])]
    weights = np.asarray(numpy_helper.to_array(a["leaf_weights"]), dtype=np.float64)
    targets = list(a["leaf_targetids"])
    feats = list(a["nodes_featureids"])
    trues, falses = list(a["nodes_truenodeids"]), list(a["nodes_falsenodeids"])
    true_leaf, false_leaf = list(a["nodes_trueleafs"]), list(a["nodes_falseleafs"])
    missing = list(a.get("nodes_missing_value_tracks_true", [0] * len(feats)))
    roots = list(a["tree_roots"])
    n_targets = int(a.get("n_targets", max(targets) + 1))
    agg = int(a.get("aggregate_function", 1))
    pt = int(a.get("post_transform", 0))
    sets, current = [], []
    if "membership_values" in a:
        for v in np.asarray(numpy_helper.to_array(a["membership_values"]), dtype=np.float64):
            if np.isnan(v):
                sets.append(current)
                current = []
            else:
                current.append(v)
        if current:
            sets.append(current)
    member_set = {}
    for i, m in enumerate(modes):
        if m == 6:
            member_set[i] = set(sets[len(member_set)])
    out = np.zeros((x.shape[0], n_targets))
    for r in range(x.shape[0]):
        row = x[r].astype(np.float64)
        acc = [None] * n_targets
        for root in roots:
            i, leaf = root, False
            while not leaf:
                v, th, m = row[feats[i]], splits[i], modes[i]
                if np.isnan(v):
                    go = bool(missing[i])
                else:
                    go = [v <= th, v < th, v >= th, v > th, v == th, v != th, v in member_set.get(i, ())][m]
                i, leaf = (trues[i], true_leaf[i]) if go else (falses[i], false_leaf[i])
            t, w = targets[i], weights[i]
            if acc[t] is None:
                acc[t] = w
            elif agg in (0, 1):
                acc[t] += w
            else:
                acc[t] = min(acc[t], w) if agg == 2 else max(acc[t], w)
        vals = np.array([0.0 if v is None else v for v in acc])
        if agg == 0:
            vals /= len(roots)
        out[r] = vals
    if pt == 1:
        e = np.exp(out - out.max(axis=1, keepdims=True))
        out = e / e.sum(axis=1, keepdims=True)
    elif pt == 2:
        out = 1.0 / (1.0 + np.exp(-out))
    elif pt != 0:
        raise NotImplementedError("post_transform %d" % pt)
    return [out]


def ml_ZipMap(node, a, x):
    keys = a.get("classlabels_strings") or [int(i) for i in a["classlabels_int64s"]]
    return [[{k: float(v) for k, v in zip(keys, row)} for row in np.asarray(x)]]


_OPS = {("", k[3:]): v for k, v in globals().items() if k.startswith("op_")}
_OPS.update({("ai.onnx.ml", k[3:]): v for k, v in globals().items() if k.startswith("ml_")})


def run(model, feeds):
    """Evaluates model.graph on the feeds (name -> numpy array); returns the graph outputs."""
    g = model.graph
    env = {}
    for t in g.initializer:
        env[t.name] = _initializer(t)
    for k, v in feeds.items():
        env[k] = v
    for node in g.node:
        fn = _OPS.get((node.domain or "", node.op_type))
        if fn is None:
            raise NotImplementedError("%s:%s" % (node.domain, node.op_type))
        args = [env[n] if n else None for n in node.input]
        outs = fn(node, _attrs(node), *args)
        for name, val in zip(node.output, outs):
            env[name] = val
    return {o.name: env[o.name] for o in g.output}
