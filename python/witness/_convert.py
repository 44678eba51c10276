"""Fitted scikit-learn estimators and PyTorch Sequential networks -> witness models (the model IR),
read directly from their fitted attributes; no file in between."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _witness
from ._pipeline import encode_pipeline
from ._witness import InputError

_ACTIVATIONS = {"relu": "relu", "tanh": "tanh", "logistic": "sigmoid"}


def _input_names(estimator: Any, n: int, feature_names: Optional[Sequence[str]]) -> List[str]:
    if feature_names is not None:
        names = [str(c) for c in feature_names]
    elif hasattr(estimator, "feature_names_in_"):
        names = [str(c) for c in estimator.feature_names_in_]
    else:
        names = [f"x{i}" for i in range(n)]
    if len(names) != n:
        raise InputError(f"feature_names: {len(names)} names for {n} inputs")
    return names


def _float32_splits(t: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """scikit-learn sends x left when float32(x) <= t. The same test on the double x: x below the
    midpoint m between the largest float32 f <= t and the next float32 (x == m rounds to the even
    one of the two, so the test is x <= m then). Returns the modes ("<=" or "<") and the m's."""
    t = np.asarray(t, dtype=np.float64)
    with np.errstate(over="ignore"):
        f = t.astype(np.float32)
    f = np.where(f.astype(np.float64) > t, np.nextafter(f, np.float32(-np.inf)), f).astype(np.float32)
    up = np.nextafter(f, np.float32(np.inf))
    m = (f.astype(np.float64) + up.astype(np.float64)) / 2.0  # exact: two float32 values and their mean fit in a double
    even = (f.view(np.int32) & 1) == 0
    top = ~np.isfinite(up)  # t at or above the largest float32: every finite x goes left
    m[top] = np.finfo(np.float64).max
    return np.where(even | top, "<=", "<").astype(object), m


def _tree(tree: Any, leaf_values: np.ndarray, target_of: Optional[int] = None) -> Dict[str, Any]:
    """One sklearn tree_ as flat arrays; leaf_values[node] holds the node's outputs (one per target,
    or one for `target_of`)."""
    left, right = tree.children_left, tree.children_right
    leaf = left == -1
    modes, thresholds = _float32_splits(np.where(leaf, 0.0, tree.threshold))
    modes[leaf] = "leaf"
    thresholds[leaf] = 0.0
    leaf_nodes = np.flatnonzero(leaf)
    values = np.asarray(leaf_values, dtype=np.float64)[leaf_nodes]
    if values.ndim == 1:
        values = values[:, None]
    k = values.shape[1]
    targets = np.tile(np.arange(k), len(leaf_nodes)) if target_of is None else np.full(values.size, target_of)
    return {
        "mode": modes.tolist(),
        "feature": np.maximum(tree.feature, 0).tolist(),
        "threshold": thresholds.tolist(),
        "true_child": left.tolist(),
        "false_child": right.tolist(),
        "leaf_node": np.repeat(leaf_nodes, k).tolist(),
        "leaf_target": targets.tolist(),
        "leaf_weight": values.ravel().tolist(),
    }


def _class_probabilities(tree: Any) -> np.ndarray:
    # DecisionTreeClassifier.predict_proba: the leaf's (weighted) class counts over their sum.
    value = tree.value[:, 0, :].astype(np.float64)
    total = value.sum(axis=1, keepdims=True)
    total[total == 0.0] = 1.0
    return value / total


def _single_output(estimator: Any) -> None:
    if getattr(estimator, "n_outputs_", 1) != 1:
        raise InputError(f"{type(estimator).__name__}: only single-output classifiers are supported")


def from_sklearn(estimator: Any, feature_names: Optional[Sequence[str]] = None, name: Optional[str] = None) -> Any:
    """A witness Model from a fitted LogisticRegression, MLPClassifier, DecisionTreeClassifier,
    RandomForestClassifier, GradientBoostingClassifier or HistGradientBoostingClassifier, or a
    Pipeline of preprocessing steps (ColumnTransformer, OneHotEncoder, OrdinalEncoder, the scalers,
    SimpleImputer) ending in one. Its labels are the estimator's class indices (model.classes names
    them), and agree with estimator.predict. A Pipeline's model reads the raw columns: model.columns
    says how (the schema comes with it: Schema.from_pipeline)."""
    kind = type(estimator).__name__
    if kind == "Pipeline":
        columns, sources, clf = encode_pipeline(estimator)
        steps = ", ".join(type(s).__name__ for _, s in estimator.steps if s is not None and not isinstance(s, str))
        title = name or f"Pipeline({steps})"
        inner = _classifier(clf, [f"feature {k}" for k in range(len(sources))], title, "sklearn:Pipeline")
        return _witness.with_raw_columns(inner, columns, sources)
    if not hasattr(estimator, "classes_"):
        raise InputError(f"from_sklearn: {kind} is not a fitted classifier (no classes_)")
    n = int(estimator.n_features_in_)
    return _classifier(estimator, _input_names(estimator, n, feature_names), name or kind, f"sklearn:{kind}")


def as_model(model: Any) -> Any:
    """A witness Model from a Model, a model file or a fitted scikit-learn classifier or Pipeline."""
    import os

    if isinstance(model, _witness.Model):
        return model
    if isinstance(model, (str, os.PathLike)):
        return _witness.load_model(os.fspath(model))
    if type(model).__name__ == "Pipeline" or (hasattr(model, "classes_") and hasattr(model, "predict")):
        return from_sklearn(model)
    raise InputError(
        f"expected a witness Model, a model file or a fitted scikit-learn classifier or Pipeline, got {type(model).__name__}")


def _classifier(estimator: Any, names: List[str], title: str, source: str) -> Any:
    kind = type(estimator).__name__
    if not hasattr(estimator, "classes_"):
        raise InputError(f"from_sklearn: {kind} is not a fitted classifier (no classes_)")
    n = int(estimator.n_features_in_)
    classes = [str(c) for c in estimator.classes_]
    b = _witness.ModelBuilder(title, names)
    x = b.input()
    if kind == "LogisticRegression":
        z = b.dense(x, np.asarray(estimator.coef_, dtype=np.float64), np.asarray(estimator.intercept_, dtype=np.float64), "coef_")
        if len(classes) == 2:  # predict: decision_function > 0
            return b.finish(b.unary("sigmoid", z, "probability", 0.0), "threshold", z, 0.0, classes, source)
        return b.finish(b.unary("softmax", z, "probability", 0.0), "argmax", z, 0.0, classes, source)
    if kind == "MLPClassifier":
        layers = len(estimator.coefs_)
        hidden = estimator.activation
        if hidden != "identity" and hidden not in _ACTIVATIONS:
            raise InputError(f"from_sklearn: MLPClassifier activation '{hidden}' is not supported")
        for i, (w, bias) in enumerate(zip(estimator.coefs_, estimator.intercepts_)):
            x = b.dense(x, np.asarray(w, dtype=np.float64).T, np.asarray(bias, dtype=np.float64), f"layer {i}")
            if i + 1 < layers and hidden != "identity":
                x = b.unary(_ACTIVATIONS[hidden], x, f"layer {i}", 0.0)
        out = estimator.out_activation_
        if out == "logistic" and len(classes) == 2:  # predict: sigmoid(z) > 0.5, i.e. z > 0
            return b.finish(b.unary("sigmoid", x, "output", 0.0), "threshold", x, 0.0, classes, source)
        if out == "softmax":
            return b.finish(b.unary("softmax", x, "output", 0.0), "argmax", x, 0.0, classes, source)
        raise InputError(f"from_sklearn: MLPClassifier with output '{out}' (multi-label) is not supported")
    if kind == "DecisionTreeClassifier":
        _single_output(estimator)
        tree = _tree(estimator.tree_, _class_probabilities(estimator.tree_))
        t = b.tree_ensemble(x, [tree], len(classes), "sum", [], True)
        return b.finish(t, "argmax", t, 0.0, classes, source)
    if kind == "RandomForestClassifier":
        _single_output(estimator)
        trees = [_tree(e.tree_, _class_probabilities(e.tree_)) for e in estimator.estimators_]
        t = b.tree_ensemble(x, trees, len(classes), "average", [], True)  # predict_proba: the mean
        return b.finish(t, "argmax", t, 0.0, classes, source)
    if kind == "GradientBoostingClassifier":
        stages = estimator.estimators_  # [stages][K] regression trees
        k = stages.shape[1]
        rate = float(estimator.learning_rate)
        trees = []
        for stage in stages:
            for target, regressor in enumerate(stage):
                trees.append(_tree(regressor.tree_, rate * regressor.tree_.value[:, 0, 0], target))
        base = _raw_init(estimator, n, k)
        t = b.tree_ensemble(x, trees, k, "sum", base, False)
        if len(classes) == 2:  # the log-odds of class 1 > 0
            return b.finish(t, "threshold", t, 0.0, classes, source)
        return b.finish(t, "argmax", t, 0.0, classes, source)
    if kind == "HistGradientBoostingClassifier":
        if getattr(estimator, "_preprocessor", None) is not None:
            # Newer scikit-learn encodes pandas categorical columns itself before the trees.
            raise InputError("from_sklearn: HistGradientBoostingClassifier with categorical_features='from_dtype' "
                             "encodes its input itself; not supported (encode the columns in a Pipeline step)")
        known, f_map = estimator._bin_mapper.make_known_categories_bitsets()
        trees = []
        for iteration in estimator._predictors:  # [iterations][K] TreePredictor
            for target, predictor in enumerate(iteration):
                trees.append(_hist_tree(predictor, known, f_map, target))
        k = int(estimator.n_trees_per_iteration_)  # 1 for two classes, else one tree per class
        base = [float(v) for v in np.asarray(estimator._baseline_prediction, dtype=np.float64).reshape(-1)]
        if not trees:  # no iteration: every input gets the baseline
            trees = [_constant_tree()]
        t = b.tree_ensemble(x, trees, k, "sum", base, False)
        if len(classes) == 2:  # predict_proba's argmax: expit(raw) > 1/2, i.e. raw > 0
            return b.finish(t, "threshold", t, 0.0, classes, source)
        return b.finish(t, "argmax", t, 0.0, classes, source)  # softmax is monotone: argmax of raw
    raise InputError(
        f"from_sklearn: {kind} is not supported (LogisticRegression, MLPClassifier, DecisionTreeClassifier, "
        "RandomForestClassifier, GradientBoostingClassifier, HistGradientBoostingClassifier)"
    )


def _bitset_values(bits: np.ndarray) -> List[int]:
    """The categories (0..255) in one of scikit-learn's 8 x uint32 bitsets."""
    words = np.asarray(bits, dtype=np.uint32).reshape(-1)
    return [32 * w + b for w in range(len(words)) for b in range(32) if (int(words[w]) >> b) & 1]


def _hist_tree(predictor: Any, known: np.ndarray, f_map: np.ndarray, target: int) -> Dict[str, Any]:
    """One HistGradientBoosting TreePredictor as flat arrays. Its nodes are stored parent first.
    scikit-learn predicts on float64 X: a numeric node sends x left iff x <= num_threshold, NaN by
    missing_go_to_left. A categorical node sends left the raw categories of its bitset; the other
    known categories go right; NaN, negative values and categories unseen in fit go the missing
    way. The converted node tests membership in the set of categories that do not go the missing
    way, so everything outside it goes the missing way too. (scikit-learn truncates a non-integer
    category and wraps one >= 256; the converted node treats those as unknown.)"""
    nodes = predictor.nodes
    n = len(nodes)
    leaf = nodes["is_leaf"].astype(bool)
    modes: List[str] = []
    members: List[List[float]] = []
    true_child: List[int] = []
    false_child: List[int] = []
    thresholds: List[float] = []
    missing_true: List[bool] = []
    for i in range(n):
        nd = nodes[i]
        if leaf[i]:
            modes.append("leaf")
            members.append([])
            true_child.append(-1)
            false_child.append(-1)
            thresholds.append(0.0)
            missing_true.append(False)
            continue
        left, right, missing_left = int(nd["left"]), int(nd["right"]), bool(nd["missing_go_to_left"])
        if nd["is_categorical"]:
            goes_left = set(_bitset_values(predictor.raw_left_cat_bitsets[int(nd["bitset_idx"])]))
            seen = set(_bitset_values(known[int(f_map[int(nd["feature_idx"])])]))
            if missing_left:  # the known categories going right are the set; the rest goes left
                values, t, f = sorted(seen - goes_left), right, left
            else:
                values, t, f = sorted(goes_left), left, right
            if not values:  # everything goes one way
                values, t = [-1.0], f  # never a category: -1 goes the missing way, like everything else
            modes.append("in")
            members.append([float(v) for v in values])
            true_child.append(t)
            false_child.append(f)
            thresholds.append(0.0)
            missing_true.append(False)  # NaN: the false side, the missing way
        else:
            modes.append("<=")
            members.append([])
            true_child.append(left)
            false_child.append(right)
            thresholds.append(float(nd["num_threshold"]))
            missing_true.append(missing_left)
    leaf_nodes = np.flatnonzero(leaf)
    return {
        "mode": modes,
        "feature": [int(v) for v in nodes["feature_idx"]],
        "threshold": thresholds,
        "true_child": true_child,
        "false_child": false_child,
        "members": members,
        "missing_true": missing_true,
        "leaf_node": leaf_nodes.tolist(),
        "leaf_target": [target] * len(leaf_nodes),
        "leaf_weight": nodes["value"][leaf_nodes].astype(np.float64).tolist(),
    }


def _constant_tree() -> Dict[str, Any]:
    return {"mode": ["leaf"], "feature": [0], "threshold": [0.0], "true_child": [-1], "false_child": [-1],
            "leaf_node": [0], "leaf_target": [0], "leaf_weight": [0.0]}


def _raw_init(estimator: Any, n: int, k: int) -> List[float]:
    # The initial raw prediction (the prior's log-odds): the same for every input. An init
    # estimator that looks at the input (init=LogisticRegression(), a random DummyClassifier)
    # would need its own model beside the trees.
    if isinstance(estimator.init_, str) and estimator.init_ == "zero":
        return [0.0] * k
    init = estimator.init_
    if type(init).__name__ != "DummyClassifier" or init.strategy not in ("prior", "most_frequent", "constant"):
        raise InputError(f"from_sklearn: GradientBoostingClassifier with init={init!r} is not supported "
                         "(the default prior, 'zero', or a DummyClassifier that does not look at the input)")
    raw = estimator._raw_predict_init(np.zeros((1, n), dtype=np.float32))
    return [float(v) for v in np.asarray(raw, dtype=np.float64).reshape(-1)[:k]]


def from_torch(module: Any, example_input: Any, input_names: Optional[Sequence[str]] = None,
               classes: Optional[Sequence[str]] = None, name: Optional[str] = None) -> Any:
    """A witness Model from a torch.nn.Sequential (nested ones too) of Linear, BatchNorm1d (its running
    statistics, as in eval mode), ReLU, LeakyReLU, Sigmoid, Tanh, Softmax (and Flatten, Identity,
    Dropout, which change nothing at inference). One output: label 1 when
    the logit is > 0; several: the argmax. The converted network computes in double; it is checked
    against module(example_input)."""
    import torch

    if not isinstance(module, torch.nn.Sequential):
        raise InputError(f"from_torch: expected a torch.nn.Sequential, got {type(module).__name__}")
    example = torch.as_tensor(example_input)
    if example.dim() == 1:
        example = example.unsqueeze(0)
    if example.dim() != 2:
        raise InputError(f"from_torch: example_input must be [batch][features], got shape {tuple(example.shape)}")
    n = int(example.shape[1])
    names = [str(c) for c in input_names] if input_names is not None else [f"x{i}" for i in range(n)]
    if len(names) != n:
        raise InputError(f"from_torch: {len(names)} input names for {n} inputs")
    b = _witness.ModelBuilder(name or "torch", names)
    x = b.input()

    def layers(seq: Any, prefix: str) -> Any:  # nested Sequentials, flattened: "layer 2.1"
        for i, layer in enumerate(seq):
            if isinstance(layer, torch.nn.Sequential):
                yield from layers(layer, f"{prefix}{i}.")
            else:
                yield f"layer {prefix}{i} ({type(layer).__name__})", layer

    for where, layer in layers(module, ""):
        if isinstance(layer, torch.nn.BatchNorm1d):
            # At inference (eval mode) an affine map per feature, from the running statistics.
            if not layer.track_running_stats or layer.running_mean is None:
                raise InputError(f"from_torch: {where} keeps no running statistics (track_running_stats=False)")
            scale = 1.0 / np.sqrt(layer.running_var.detach().to(torch.float64).cpu().numpy() + float(layer.eps))
            shift = -layer.running_mean.detach().to(torch.float64).cpu().numpy() * scale
            if layer.affine:
                gamma = layer.weight.detach().to(torch.float64).cpu().numpy()
                scale, shift = scale * gamma, shift * gamma + layer.bias.detach().to(torch.float64).cpu().numpy()
            x = b.dense(x, np.diag(scale), shift, where)
        elif isinstance(layer, torch.nn.Linear):
            w = layer.weight.detach().to(torch.float64).cpu().numpy()
            bias = layer.bias.detach().to(torch.float64).cpu().numpy() if layer.bias is not None else np.zeros(w.shape[0])
            x = b.dense(x, w, bias, where)
        elif isinstance(layer, torch.nn.ReLU):
            x = b.unary("relu", x, where, 0.0)
        elif isinstance(layer, torch.nn.LeakyReLU):
            x = b.unary("leaky_relu", x, where, float(layer.negative_slope))
        elif isinstance(layer, torch.nn.Sigmoid):
            x = b.unary("sigmoid", x, where, 0.0)
        elif isinstance(layer, torch.nn.Tanh):
            x = b.unary("tanh", x, where, 0.0)
        elif isinstance(layer, torch.nn.Softmax):
            if layer.dim not in (None, 1, -1):
                raise InputError(f"from_torch: {where}: softmax over dim {layer.dim}; only the feature dim is supported")
            x = b.unary("softmax", x, where, 0.0)
        elif isinstance(layer, (torch.nn.Flatten, torch.nn.Identity, torch.nn.Dropout)):
            continue
        else:
            raise InputError(
                f"from_torch: {where} is not supported (Linear, BatchNorm1d, ReLU, LeakyReLU, Sigmoid, Tanh, Softmax)")
    width = b.width(x)
    labels = [str(c) for c in classes] if classes is not None else [str(i) for i in range(max(width, 2))]
    model = b.finish(x, "default", x, 0.0, labels, "torch:Sequential")
    module_was_training = module.training
    module.eval()
    try:
        with torch.no_grad():
            expected = module(example.to(next(module.parameters()).dtype)).to(torch.float64).cpu().numpy()
    finally:
        module.train(module_was_training)
    got = model.outputs(example.to(torch.float64).cpu().numpy())
    if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-4, atol=1e-5):
        raise InputError("from_torch: the converted network does not reproduce module(example_input)")
    return model
