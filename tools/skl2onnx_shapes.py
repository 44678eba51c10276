#!/usr/bin/python3
"""Writes a fitted scikit-learn Pipeline as the ONNX graph skl2onnx would emit for it.

Run with Debian's /usr/bin/python3 (python3-onnx 1.12, python3-sklearn 1.2, numpy, pandas). skl2onnx
itself is not installable here, so this module re-creates, in its own code, the node sequences
that skl2onnx 1.16 (`skl2onnx.to_onnx(pipe, X_df[:1])`, default options: ZipMap on, no
`initial_types`) produces with onnx 1.12 installed: the same op types, domains, attribute names
and types, graph input/output names and element types, opset imports, node order and, as far as
practical, the same intermediate names. Infrequent categories of OneHotEncoder follow skl2onnx
1.17, the first release that handles them (1.16 silently emits one column per category there).

    to_onnx(pipe, X_df, path, name=None) -> onnx.ModelProto
    label_encoder_to_onnx(le, path, op="LabelEncoder", name=None) -> onnx.ModelProto
    selftest() / `/usr/bin/python3 tools/skl2onnx_shapes.py --selftest`

What skl2onnx refuses (or would get wrong) is refused here with an exception that says why.
The self-test needs no ONNX runtime: tools/onnx_numpy_eval.py evaluates the graphs with numpy.
"""
import os
import re
import sys

import numpy as np
import onnx
from onnx import TensorProto, defs, helper

SKL2ONNX_VERSION = "1.16.0"
_MAX_SUPPORTED_OPSET = 19  # skl2onnx 1.16's __max_supported_opset__
TARGET_OPSET = min(_MAX_SUPPORTED_OPSET, defs.onnx_opset_version())  # 17 with onnx 1.12
ML_DOMAIN = "ai.onnx.ml"
_OPSET_TO_IR_VERSION = {13: 7, 14: 7, 15: 8, 16: 8, 17: 8, 18: 8, 19: 9, 20: 9, 21: 10}

_PROTO = {
    "float": TensorProto.FLOAT,
    "double": TensorProto.DOUBLE,
    "int64": TensorProto.INT64,
    "int32": TensorProto.INT32,
    "string": TensorProto.STRING,
    "bool": TensorProto.BOOL,
}


class ConversionError(NotImplementedError):
    """A pipeline (or part of it) that skl2onnx does not convert, or that this module does not
    emulate; the message says which and why."""


# --- operator versions --------------------------------------------------------------------------

_SCHEMA_VERSIONS = None


def _max_domain_version(domain):
    if domain == "":
        return TARGET_OPSET
    # skl2onnx: a plain integer target_opset only fixes the default domain; other domains get
    # the highest version the installed onnx knows (ai.onnx.ml: 3 with onnx 1.12).
    from onnx.onnx_cpp2py_export import defs as cdefs

    return cdefs.schema_version_map()[domain][1]


def _op_version(domain, op_type):
    """Highest since_version of op_type that is <= the target opset of its domain."""
    global _SCHEMA_VERSIONS
    if _SCHEMA_VERSIONS is None:
        _SCHEMA_VERSIONS = {}
        for s in defs.get_all_schemas_with_history():
            _SCHEMA_VERSIONS.setdefault((s.domain, s.name), set()).add(s.since_version)
    highest = _max_domain_version(domain)
    vers = sorted(_SCHEMA_VERSIONS[(domain, op_type)])
    return max(v for v in vers if v <= highest)


# --- variables, names, container ----------------------------------------------------------------

class _Var:
    def __init__(self, raw_name, onnx_name, kind, shape):
        self.raw_name = raw_name
        self.name = onnx_name
        self.kind = kind  # "float", "double", "int64", "int32", "string", "bool", or "seqmap"
        self.shape = list(shape)
        self.key_kind = None  # for kind "seqmap": ZipMap output keys

    @property
    def cols(self):
        return self.shape[1] if len(self.shape) > 1 else None

    def __repr__(self):
        return "Var(%r, %s, %r)" % (self.name, self.kind, self.shape)


def _guess_tensor_kind(kind):
    """skl2onnx's guess_tensor_type: double stays double, everything else becomes float."""
    return "double" if kind == "double" else "float"


class _Scope:
    """Unique names exactly as skl2onnx's Topology._generate_unique_name makes them."""

    def __init__(self):
        self.var_names = set()
        self.op_names = set()

    @staticmethod
    def _unique(seed, existing):
        if seed == "":
            raise ValueError("Name seed must be a non-empty string.")
        seed = re.sub("[^\\w+]", "_", seed)
        if re.match("^[0-9]", seed):
            seed = "_" + seed
        if seed not in existing:
            existing.add(seed)
            return seed
        i = 1
        while seed + str(i) in existing:
            i += 1
        existing.add(seed + str(i))
        return seed + str(i)

    def var(self, seed):
        return self._unique(seed, self.var_names)

    def op(self, seed):
        return self._unique(seed, self.op_names)

    def declare(self, raw_name, kind, shape):
        return _Var(raw_name, self.var(raw_name), kind, shape)


class _Container:
    def __init__(self):
        self.nodes = []
        self.initializers = []
        self._init_cache = {}
        self.pairs = set()  # (domain, op_version) of every node

    def add_node(self, op_type, inputs, outputs, domain="", op_version=None, name=None, **attrs):
        if isinstance(inputs, str):
            inputs = [inputs]
        if isinstance(outputs, str):
            outputs = [outputs]
        if not name:
            name = "N%d" % len(self.nodes)
        if name in set(n.name for n in self.nodes):
            name += "-N%d" % len(self.nodes)
        if op_version is None:
            op_version = _op_version(domain, op_type)
        clean = {}
        for k, v in attrs.items():
            if v is None:
                raise ValueError("attribute %r of %s is None" % (k, op_type))
            if hasattr(v, "shape") and len(v.shape) > 1:
                v = np.array(v).ravel()
            clean[k] = v
        node = helper.make_node(op_type, inputs, outputs, name=name, **clean)
        node.domain = domain
        self.pairs.add((domain, op_version))
        self.nodes.append(node)
        return node

    def add_initializer(self, name, dtype, shape, content):
        if hasattr(content, "dtype") and content.dtype in (bool, np.bool_):
            content = content.astype(np.int32)
        if isinstance(content, np.ndarray):
            content = content.ravel()
        tensor = helper.make_tensor(name, dtype, list(shape), content)
        tensor.name = "tensor"
        key = tensor.SerializeToString()
        tensor.name = name
        cached = self._init_cache.get(key)
        if cached is None:
            self._init_cache[key] = name
            self.initializers.append(tensor)
            return
        # skl2onnx stores identical constants once and adds an Identity for the second name
        # (op_version = target opset); the Identity is removed again at the end.
        self.add_node("Identity", [cached], [name], op_version=TARGET_OPSET, name=name + "_op")


# --- small helpers mirroring onnxconverter-common's apply_* ---------------------------------------

def _cast(sc, ct, inp, out, to):
    ct.add_node("Cast", inp, out, op_version=9, name=sc.op("Cast"), to=to)


def _concat(sc, ct, inputs, out, axis):
    ct.add_node("Concat", inputs, out, op_version=11, name=sc.op("Concat"), axis=axis)


def _reshape(sc, ct, inp, out, shape, op_name=None):
    name = op_name or sc.op("Reshape")
    shape_name = sc.var("shape_tensor")
    ct.add_initializer(shape_name, TensorProto.INT64, [len(shape)], list(shape))
    ct.add_node("Reshape", [inp, shape_name], out, op_version=5, name=name)


def _identity(sc, ct, inp, out):
    ct.add_node("Identity", inp, out, name=sc.op("Identity"))


def _binary(sc, ct, op_type, inputs, out):
    ct.add_node(op_type, inputs, out, op_version=7, name=sc.op(op_type))


def _concatenate_variables(sc, ct, variables):
    """skl2onnx's operator_converters.common.concatenate_variables."""
    main = variables[0].kind
    for v in variables:
        if v.kind not in ("float", "int64", "double", "string"):
            raise ConversionError("Numerical tensor(s) and string tensor(s) cannot be concatenated.")
    names, dims = [], []
    for v in variables:
        if v.kind != main:
            new = sc.var("cast")
            _cast(sc, ct, v.name, new, _PROTO[main])
            names.append(new)
        else:
            names.append(v.name)
        dims.append(v.cols)
    if len(names) == 1:
        return names[0]
    if any(d is None for d in dims):
        raise ConversionError("FeatureVectorizer needs known column counts, got %r" % dims)
    op_name = sc.op("FeatureVectorizer")
    out = sc.var("concatenated")
    ct.add_node("FeatureVectorizer", names, out, domain=ML_DOMAIN, name=op_name,
                inputdimensions=dims)
    if main == "float":
        return out
    cast = sc.var("concatenated_cast")
    ct.add_node("CastLike", [out, names[0]], cast)
    return cast


# --- the parsed operators -------------------------------------------------------------------------

class _Op:
    def __init__(self, alias, model, inputs):
        self.alias = alias
        self.model = model
        self.inputs = list(inputs)
        self.outputs = []
        self.extra = {}


def _alias(model):
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    if isinstance(model, StandardScaler):
        return "SklearnScaler"
    if isinstance(model, LogisticRegression):
        return "SklearnLinearClassifier"
    return "Sklearn" + type(model).__name__


class _Parser:
    def __init__(self, scope):
        self.sc = scope
        self.ops = []

    def operator(self, alias, model, inputs):
        self.sc.op(alias)
        op = _Op(alias, model, inputs)
        self.ops.append(op)
        return op

    def parse(self, model, inputs):
        from sklearn.compose import ColumnTransformer
        from sklearn.pipeline import FeatureUnion, Pipeline

        if isinstance(model, str):
            raise ConversionError(
                "Parameter model must be an object not a string %r (skl2onnx does not accept "
                "'passthrough' or 'drop' as a Pipeline step)." % model)
        if model is None:
            raise ConversionError("skl2onnx does not accept None as a Pipeline step.")
        if isinstance(model, Pipeline):
            for _, step in model.steps:
                inputs = self.parse(step, inputs)
            return inputs
        if isinstance(model, ColumnTransformer):
            return self.parse_column_transformer(model, inputs)
        if isinstance(model, FeatureUnion):
            raise ConversionError("FeatureUnion is not emulated by this module.")
        return self.parse_simple(model, inputs)

    def parse_simple(self, model, inputs):
        from sklearn.base import is_classifier
        from sklearn.impute import SimpleImputer

        _check_supported(model)
        if is_classifier(model):
            op = self.operator(_alias(model), model, inputs)
            from sklearn.ensemble import RandomForestClassifier

            prob_kind = "float" if isinstance(model, RandomForestClassifier) \
                else _guess_tensor_kind(inputs[0].kind)
            label = self.sc.declare("label", "int64", [])
            prob = self.sc.declare("probabilities", prob_kind, [])
            op.outputs = [label, prob]
            return self.apply_zipmap(model, inputs[0], op.outputs)
        op = self.operator(_alias(model), model, inputs)
        if isinstance(model, SimpleImputer):
            kind = inputs[0].kind if inputs[0].kind in ("int64", "string") \
                else _guess_tensor_kind(inputs[0].kind)
        else:
            kind = _guess_tensor_kind(inputs[0].kind)
        op.outputs = [self.sc.declare("variable", kind, [])]
        return op.outputs

    def apply_zipmap(self, model, first_input, prob_outputs):
        op = self.operator("SklearnZipMap", model, prob_outputs)
        classes = np.asarray(model.classes_)
        if np.issubdtype(classes.dtype, np.floating):
            ints = np.array([int(x) for x in classes])
            if set(float(x) for x in ints) != set(model.classes_):
                raise ConversionError(
                    "skl2onnx implicitly converts float class labels into integers but at least "
                    "one label is not an integer. Class labels should be integers or strings.")
            op.extra["classlabels_int64s"] = [int(i) for i in ints]
            label_kind = "int64"
        elif np.issubdtype(classes.dtype, np.integer) or classes.dtype == np.bool_:
            op.extra["classlabels_int64s"] = [int(i) for i in classes]
            label_kind = "int64"
        else:
            op.extra["classlabels_strings"] = np.array([str(s).encode("utf-8") for s in classes])
            label_kind = "string"
        out_label = self.sc.declare("output_label", label_kind, [None])
        out_prob = self.sc.declare("output_probability", "seqmap", [])
        out_prob.key_kind = label_kind
        out_prob.value_kind = _guess_tensor_kind(first_input.kind)
        op.outputs = [out_label, out_prob]
        return op.outputs

    def fetch_input_slice(self, var, indices):
        if len(var.shape) == 2 and var.shape[1] == len(indices):
            return [var]
        op = self.operator("SklearnArrayFeatureExtractor", None, [var])
        op.extra["column_indices"] = list(indices)
        op.outputs = [self.sc.declare("extracted_feature_columns", var.kind, [])]
        return op.outputs

    def parse_column_transformer(self, model, inputs):
        from sklearn.compose import ColumnTransformer
        from sklearn.pipeline import Pipeline
        from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder

        do_not_merge = (OrdinalEncoder, OneHotEncoder, ColumnTransformer)
        if not hasattr(model, "transformers_"):
            raise ConversionError("The ColumnTransformer is not fitted.")
        results = []
        for name, trans, columns in model.transformers_:
            if isinstance(trans, str) and trans == "drop":
                continue
            columns = _column_list(columns, len(inputs))
            if len(columns) == 0:
                raise ConversionError(
                    "transformer %r selects no column; skl2onnx cannot convert that." % name)
            groups = {}
            for c in columns:
                vi, ci = _column_index(c, inputs)
                groups.setdefault(vi, []).append(ci)
            tr_inputs = []
            for vi, cis in groups.items():
                tr_inputs.extend(self.fetch_input_slice(inputs[vi], cis))
            merged = False
            if len(tr_inputs) > 1:
                if isinstance(trans, Pipeline):
                    merged = not isinstance(trans.steps[0][1], do_not_merge)
                elif not isinstance(trans, do_not_merge):
                    merged = True
            if merged:
                op = self.operator("SklearnConcat", None, tr_inputs)
                op.outputs = [self.sc.declare("merged_columns", tr_inputs[0].kind, [None, None])]
                tr_inputs = op.outputs
            fitted = model.named_transformers_[name]
            if isinstance(fitted, str):
                if fitted == "passthrough":
                    out = tr_inputs[0]
                else:
                    raise ConversionError("Unknown operator alias %r." % fitted)
            else:
                if model.transformer_weights is not None and name in model.transformer_weights:
                    raise ConversionError("ColumnTransformer.transformer_weights is not emulated.")
                out = self.parse(fitted, tr_inputs)[0]
            results.append(out)
        if len(results) > 1:
            op = self.operator("SklearnConcat", None, results)
            op.outputs = [self.sc.declare("transformed_column", results[0].kind, [None, None])]
            return op.outputs
        return results


def _column_list(columns, n_inputs):
    if isinstance(columns, slice):
        start = columns.start if columns.start is not None else 0
        step = columns.step if columns.step is not None else 1
        return list(range(start, columns.stop, step))
    if isinstance(columns, (int, np.integer, str)):
        return [columns]
    columns = list(columns)
    if columns and all(isinstance(c, (bool, np.bool_)) for c in columns):
        raise ConversionError("boolean column masks are not supported by skl2onnx.")
    return columns


def _column_index(i, inputs):
    """skl2onnx's get_column_index: (input variable index, column inside that variable)."""
    if isinstance(i, (int, np.integer)):
        i = int(i)
        if i == 0:
            return 0, 0
        vi, pos = 0, 0
        end = inputs[0].cols
        if end is None:
            raise ConversionError("Cannot extract column %d when an input has an unknown width." % i)
        while True:
            if pos <= i < end:
                return vi, i - pos
            vi += 1
            pos = end
            if vi >= len(inputs):
                raise ConversionError("Input %d (i=%d) is not available." % (vi, i))
            rel = inputs[vi].cols
            if rel is None:
                raise ConversionError("Cannot extract column %d: unknown width." % i)
            end += rel
    for ind, inp in enumerate(inputs):
        if inp.raw_name == i:
            return ind, 0
    raise ConversionError(
        "Unable to find column name %r among names %r." % (i, [v.raw_name for v in inputs]))


def _check_supported(model):
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import (Binarizer, MaxAbsScaler, MinMaxScaler, Normalizer,
                                       OneHotEncoder, OrdinalEncoder, RobustScaler,
                                       StandardScaler)
    from sklearn.tree import DecisionTreeClassifier

    ok = (OneHotEncoder, OrdinalEncoder, StandardScaler, MinMaxScaler, MaxAbsScaler,
          RobustScaler, SimpleImputer, Binarizer, Normalizer, LogisticRegression,
          MLPClassifier, DecisionTreeClassifier, RandomForestClassifier,
          GradientBoostingClassifier)
    if type(model) not in ok:
        raise ConversionError(
            "%s is not emulated by tools/skl2onnx_shapes.py (supported: %s)."
            % (type(model).__name__, ", ".join(c.__name__ for c in ok)))


# --- converters (shape inference first, then nodes) ---------------------------------------------

def _conv_array_feature_extractor(sc, ct, op):
    inp = op.inputs[0]
    out = op.outputs[0]
    out.kind = inp.kind
    out.shape = [None, len(op.extra["column_indices"])]
    idx = sc.var("column_indices")
    ct.add_initializer(idx, TensorProto.INT64, [len(op.extra["column_indices"])],
                       op.extra["column_indices"])
    ct.add_node("ArrayFeatureExtractor", [inp.name, idx], out.name, domain=ML_DOMAIN,
                name=sc.op("ArrayFeatureExtractor"))


_GENERIC = ["string", "double", "float", "int64", "bool"]


def _concat_kind(kinds):
    final = None
    for k in kinds:
        if final is None:
            final = k
        elif k != final:
            merged = None
            for g in _GENERIC:
                if g in (final, k):
                    merged = g
                    break
            if merged is None:
                raise ConversionError("Cannot merge columns with types %s and %s." % (final, k))
            if k == merged:
                final = k
    return final


def _conv_concat(sc, ct, op):
    out = op.outputs[0]
    if any(len(v.shape) != 2 for v in op.inputs):
        out.shape = [None, None]
    else:
        cols = 0
        for v in op.inputs:
            if v.cols is None or cols is None:
                cols = None
            else:
                cols += v.cols
        out.shape = [None, cols]
    out.kind = _concat_kind([v.kind for v in op.inputs])
    names = []
    for v in op.inputs:
        if v.kind == out.kind:
            names.append(v.name)
            continue
        name = sc.var("%s_cast" % v.name)
        _cast(sc, ct, v.name, name, _PROTO[out.kind])
        names.append(name)
    _concat(sc, ct, names, out.name, axis=1)


def _sum_cols(inputs):
    c = 0
    for v in inputs:
        if v.cols is None:
            return None
        c += v.cols
    return c


def _conv_simple_imputer(sc, ct, op):
    model = op.model
    out = op.outputs[0]
    for v in op.inputs:
        if v.kind not in ("float", "int64", "double", "string"):
            raise ConversionError("SimpleImputer input type %s is not supported." % v.kind)
        if v.kind != out.kind:
            raise ConversionError(
                "SimpleImputer: inputs and outputs should have the same type %s != %s "
                "(skl2onnx refuses this)." % (v.kind, out.kind))
    out.shape = [None, _sum_cols(op.inputs)]
    op_name = sc.op("Imputer")
    if isinstance(model.fill_value, str) and model.fill_value.lower() != "nan":
        raise ConversionError(
            "Imputer cannot fill missing values with a string '%s' (skl2onnx refuses "
            "SimpleImputer(fill_value=<string>))." % model.fill_value)
    if not hasattr(model, "statistics_"):
        raise ConversionError("Member statistics_ is not present, was the model fitted?")
    if op.inputs[0].kind == "string":
        if not isinstance(model.missing_values, (str, np.str_)):
            raise ConversionError(
                "The converter is implemented when the missing values are string not %r "
                "(skl2onnx refuses SimpleImputer(missing_values=np.nan) on string columns: use "
                "missing_values='' and feed empty strings for missing cells)."
                % type(model.missing_values))
        zero = sc.var("zero")
        ct.add_initializer(zero, TensorProto.INT64, [1], [0])
        feature = _concatenate_variables(sc, ct, op.inputs)
        names = []
        for i in range(model.statistics_.size):
            fill = sc.var("fillvalue")
            fill_value = model.statistics_[i] if model.fill_value is None else model.fill_value
            ct.add_node("LabelEncoder", [zero], [fill], domain=ML_DOMAIN, op_version=2,
                        keys_int64s=[0], values_strings=[model.statistics_[i]],
                        default_string=fill_value)
            init = sc.var("i%d" % i)
            ct.add_initializer(init, TensorProto.INT64, [1], [i])
            col = sc.var("impi%d" % i)
            ct.add_node("ArrayFeatureExtractor", [feature, init], [col], domain=ML_DOMAIN)
            cond = sc.var("impc%d" % i)
            ct.add_node("LabelEncoder", [col], [cond], domain=ML_DOMAIN, op_version=2,
                        keys_strings=[str(model.missing_values)], values_int64s=[1],
                        default_int64=0)
            condb = sc.var("impc%d" % i)
            ct.add_node("Cast", [cond], [condb], to=TensorProto.BOOL)
            repl = sc.var("nomiss%d" % i)
            ct.add_node("Where", [condb, fill, col], [repl])
            names.append(repl)
        _concat(sc, ct, names, out.name, axis=1)
        return
    attrs = {}
    if op.inputs[0].kind == "int64":
        ints = model.statistics_.astype(np.int64)
        if np.max(np.abs(ints - model.statistics_)) != 0:
            raise ConversionError(
                "SimpleImputer takes integer as input but nan values are replaced by float "
                "%r != %r (skl2onnx refuses this)." % (ints, model.statistics_))
        attrs["imputed_value_int64s"] = ints
        use_int = True
    else:
        attrs["imputed_value_floats"] = model.statistics_.astype(np.float32)
        use_int = False
    mv = model.missing_values
    if isinstance(mv, str) and mv == "NaN":
        attrs["replaced_value_float"] = np.nan
    elif isinstance(mv, float):
        if use_int:
            with np.errstate(invalid="ignore"):
                attrs["replaced_value_int64"] = int(np.array([mv]).astype(np.int64)[0])
        else:
            attrs["replaced_value_float"] = float(mv)
    else:
        raise ConversionError("Unsupported proposed value '%r' for missing_values." % (mv,))
    feature = _concatenate_variables(sc, ct, op.inputs)
    ct.add_node("Imputer", feature, out.name, domain=ML_DOMAIN, name=op_name, **attrs)


def _ohe_output_kind(model):
    return "int64" if np.issubdtype(model.dtype, np.signedinteger) else "float"


def _conv_one_hot_encoder(sc, ct, op):
    model = op.model
    out = op.outputs[0]
    out.kind = _ohe_output_kind(model)
    for v in op.inputs:
        if v.kind not in ("int64", "string", "int32", "float", "double"):
            raise ConversionError("%s input datatype not yet supported by OneHotEncoder." % v.kind)
    infrequent = getattr(model, "_infrequent_enabled", False)
    enum_cats = []
    if len(op.inputs) > 1:
        shapes = [v.cols for v in op.inputs]
        if any(not isinstance(s, int) or s < 1 for s in shapes):
            raise ConversionError("Shapes must be known when OneHotEncoder is converted: %r" % shapes)
        if sum(shapes) != len(model.categories_):
            raise ConversionError("Mismatch between the number of sets of categories and columns.")
        index_inputs = 0
        for index, cats in enumerate(model.categories_):
            filtered = model._compute_transformed_categories(index)
            n_cats = None
            if infrequent and "infrequent_sklearn" in list(filtered):
                n_cats = len(filtered) - 1
                cats = np.hstack([filtered[:-1], [c for c in cats if c not in filtered]])
            while sum(shapes[:index_inputs + 1]) <= index:
                index_inputs += 1
            index_in = index - sum(shapes[:index_inputs])
            inp = op.inputs[index_inputs]
            afeat = shapes[index_inputs] != 1
            enum_cats.append((afeat, index_in, inp.name, cats, inp.kind, n_cats))
    else:
        inp = op.inputs[0]
        for index, cats in enumerate(model.categories_):
            if infrequent:
                filtered = model._compute_transformed_categories(index)
                if "infrequent_sklearn" in list(filtered):
                    raise ConversionError(
                        "Infrequent categories are not implemented %r != %r (skl2onnx converts "
                        "infrequent categories only when every column is a separate input, i.e. "
                        "the OneHotEncoder is applied directly to a list of DataFrame columns)."
                        % (list(filtered), list(cats)))
            enum_cats.append((True, index, inp.name, cats, inp.kind, None))

    result, total = [], 0
    for index, (afeat, index_in, name, cats, kind, n_cats) in enumerate(enum_cats):
        if len(cats) == 0:
            continue
        if afeat:
            index_name = sc.var(name + str(index_in))
            ct.add_initializer(index_name, TensorProto.INT64, [1], [index_in])
            out_name = sc.var(name + str(index_in))
            ct.add_node("Gather", [name, index_name], out_name, name=sc.op("Gather"), axis=1)
            name = out_name
        attrs = {"name": sc.op("OneHotEncoder"), "zeros": 1 if model.handle_unknown == "ignore" else 0}
        if kind in ("int64", "int32"):
            attrs["cats_int64s"] = np.asarray(cats).astype(np.int64)
        elif kind == "string":
            attrs["cats_strings"] = np.array([str(s).encode("utf-8") for s in cats])
        else:
            for c in cats:
                try:
                    ci = int(c)
                except (TypeError, ValueError):
                    raise ConversionError("Category '%s' cannot be casted into int." % c)
                if ci != c:
                    raise ConversionError(
                        "Category %r is not an int64. The converter only supports string and "
                        "int64 categories." % (c,))
            attrs["cats_int64s"] = np.asarray(cats).astype(np.int64)
        ohe_out = sc.var(name + "out")
        if "cats_int64s" in attrs:
            cast_name = sc.var(name + "cast")
            _cast(sc, ct, name, cast_name, TensorProto.INT64)
            name = cast_name
        ct.add_node("OneHotEncoder", name, ohe_out, domain=ML_DOMAIN, **attrs)
        ncat = len(cats)
        drop_idx = getattr(model, "drop_idx_", None)
        if drop_idx is not None and drop_idx[index] is not None:
            if n_cats is not None:
                raise ConversionError("drop_idx_ not implemented where there are infrequent categories.")
            extracted = sc.var("extracted_outputs")
            keep_name = sc.var("indices_to_keep")
            keep = np.delete(np.arange(len(cats)), drop_idx[index])
            ct.add_initializer(keep_name, TensorProto.INT64, keep.shape, keep)
            ct.add_node("Gather", [ohe_out, keep_name], extracted, name=sc.op("Gather"), axis=-1)
            ohe_out, ncat = extracted, len(keep)
        elif n_cats is not None:
            split_name = sc.var("split_name")
            ct.add_initializer(split_name, TensorProto.INT64, [2], [n_cats, len(cats) - n_cats])
            spl1 = sc.var("split1")
            spl2 = sc.var("split2")
            ct.add_node("Split", [ohe_out, split_name], [spl1, spl2], axis=-1)
            axis_name = sc.var("axis_name")
            ct.add_initializer(axis_name, TensorProto.INT64, [1], [-1])
            red = sc.var("red_name")
            ct.add_node("ReduceSum", [spl2, axis_name], red, keepdims=1)
            conc = sc.var("conc_name")
            ct.add_node("Concat", [spl1, red], conc, axis=-1)
            ohe_out, ncat = conc, n_cats + 1
        result.append(ohe_out)
        total += ncat
    out.shape = [None, total]
    concat_name = sc.var("concat_result")
    _concat(sc, ct, result, concat_name, axis=-1)
    reshape_in = concat_name
    if np.issubdtype(model.dtype, np.signedinteger):
        reshape_in = sc.var("cast")
        _cast(sc, ct, concat_name, reshape_in, TensorProto.INT64)
    _reshape(sc, ct, reshape_in, out.name, (-1, total))


def _conv_ordinal_encoder(sc, ct, op):
    model = op.model
    out = op.outputs[0]
    out.kind = "float" if np.issubdtype(model.dtype, np.floating) else "int64"
    out.shape = [None, _sum_cols(op.inputs)]
    result = []
    input_idx = 0
    dim_idx = 0
    for cats in model.categories_:
        if len(cats) == 0:
            continue
        cur = op.inputs[input_idx]
        if cur.cols == 1:
            col_name, col_kind = cur.name, cur.kind
            input_idx += 1
        else:
            index_name = sc.var("index")
            ct.add_initializer(index_name, TensorProto.INT64, [], [dim_idx])
            col_name, col_kind = sc.var("feature_column"), cur.kind
            ct.add_node("ArrayFeatureExtractor", [cur.name, index_name], col_name,
                        domain=ML_DOMAIN, name=sc.op("ArrayFeatureExtractor"))
            dim_idx += 1
            if dim_idx == cur.cols:
                dim_idx = 0
                input_idx += 1
        to = None
        if cur.kind == "double":
            to = TensorProto.FLOAT
        if cur.kind == "int32":
            to = TensorProto.INT64
        if to is not None:
            casted = sc.var("casted_feature_column")
            _cast(sc, ct, col_name, casted, to)
            col_name = casted
            col_kind = "int64" if to == TensorProto.INT64 else "float"
        attrs = {"name": sc.op("LabelEncoder")}
        if col_kind == "float":
            attrs["keys_floats"] = np.array([float(s) for s in cats], dtype=np.float32)
        elif col_kind == "int64":
            attrs["keys_int64s"] = np.array([int(s) for s in cats], dtype=np.int64)
        else:
            attrs["keys_strings"] = np.array([str(s).encode("utf-8") for s in cats])
        attrs["values_int64s"] = np.arange(len(cats)).astype(np.int64)
        result.append(sc.var("ordinal_output"))
        le_out = sc.var("label_encoder")
        ct.add_node("LabelEncoder", col_name, le_out, domain=ML_DOMAIN, op_version=2, **attrs)
        _reshape(sc, ct, le_out, result[-1], (-1, 1))
    concat_name = sc.var("concat_result")
    _concat(sc, ct, result, concat_name, axis=1)
    _cast(sc, ct, concat_name, out.name,
          TensorProto.FLOAT if out.kind == "float" else TensorProto.INT64)


def _scaler_shape(op):
    out = op.outputs[0]
    for v in op.inputs:
        if v.kind not in ("float", "int64", "double"):
            raise ConversionError("%s expects float, double or int64 inputs, got %s."
                                  % (type(op.model).__name__, v.kind))
    out.shape = [None, _sum_cols(op.inputs)]


def _conv_scaler(sc, ct, op):
    from sklearn.preprocessing import MaxAbsScaler, RobustScaler, StandardScaler

    _scaler_shape(op)
    model = op.model
    out = op.outputs[0]
    if len(op.inputs) > 1:
        feature = _concatenate_variables(sc, ct, op.inputs)
    else:
        feature = op.inputs[0].name
    C = out.cols
    attrs = {"name": sc.op("Scaler")}
    if isinstance(model, (StandardScaler, RobustScaler)):
        standard = isinstance(model, StandardScaler)
        center, centering = (model.mean_, model.with_mean) if standard else (model.center_, model.with_centering)
        scaling = model.with_std if standard else model.with_scaling
        # The column count, from the first fitted array there is (none: neither centring nor scaling).
        arrays = (model.scale_, model.mean_, model.var_) if standard else (model.center_, model.scale_)
        sizes = [a.shape[0] for a in arrays if a is not None]
        if not sizes:
            ct.add_node("Identity", feature, out.name)
            return
        C = sizes[0]
        attrs["offset"] = center if centering else np.array([0.0] * C, dtype=np.float32)
        attrs["scale"] = 1.0 / model.scale_ if scaling else np.array([1.0] * C, dtype=np.float32)
    elif isinstance(model, MaxAbsScaler):
        C = model.scale_.shape[0]
        attrs["scale"] = 1.0 / model.scale_
        attrs["offset"] = np.array([0.0] * C, dtype=np.float32)
    if op.inputs[0].kind == "double":
        raise ConversionError("double inputs (Sub/Div instead of Scaler) are not emulated.")
    for k in ("offset", "scale"):
        attrs[k] = np.asarray(attrs[k]).astype(np.float32)
    if attrs["offset"].size != attrs["scale"].size:
        size = max(attrs["offset"].size, attrs["scale"].size)
        ones = np.ones(size, dtype=np.float32)
        attrs["offset"] = attrs["offset"] * ones
        attrs["scale"] = attrs["scale"] * ones
    ct.add_node("Scaler", feature, out.name, domain=ML_DOMAIN, **attrs)


def _conv_min_max_scaler(sc, ct, op):
    _scaler_shape(op)
    model = op.model
    out = op.outputs[0]
    if op.inputs[0].kind == "double":
        raise ConversionError("double inputs are not emulated.")
    if len(op.inputs) > 1:
        feature = _concatenate_variables(sc, ct, op.inputs)
    else:
        feature = op.inputs[0].name
    # skl2onnx.algebra: Cast(to=FLOAT) -> Mul(scale_) -> Add(min_) [-> Clip(feature_range)]
    cast_node = sc.op("Ca_Cast")
    cast_out = sc.var("Ca_output0")
    ct.add_node("Cast", feature, cast_out, op_version=_op_version("", "Cast"), name=cast_node,
                to=TensorProto.FLOAT)
    mul_cst = sc.var("Mu_Mulcst")
    ct.add_initializer(mul_cst, TensorProto.FLOAT, [model.scale_.shape[0]],
                       model.scale_.astype(np.float32))
    mul_node = sc.op("Mu_Mul")
    mul_out = sc.var("Mu_C0")
    ct.add_node("Mul", [cast_out, mul_cst], mul_out, op_version=_op_version("", "Mul"), name=mul_node)
    add_cst = sc.var("Ad_Addcst")
    ct.add_initializer(add_cst, TensorProto.FLOAT, [model.min_.shape[0]],
                       model.min_.astype(np.float32))
    add_node = sc.op("Ad_Add")
    if getattr(model, "clip", False):
        add_out = sc.var("Ad_C0")
        ct.add_node("Add", [mul_out, add_cst], add_out, op_version=_op_version("", "Add"),
                    name=add_node)
        lo = sc.var("Cl_Clipcst")
        ct.add_initializer(lo, TensorProto.FLOAT, [], [float(np.float32(model.feature_range[0]))])
        hi = sc.var("Cl_Clipcst1")
        ct.add_initializer(hi, TensorProto.FLOAT, [], [float(np.float32(model.feature_range[1]))])
        ct.add_node("Clip", [add_out, lo, hi], out.name, op_version=_op_version("", "Clip"),
                    name=sc.op("Cl_Clip"))
    else:
        ct.add_node("Add", [mul_out, add_cst], out.name, op_version=_op_version("", "Add"),
                    name=add_node)


def _conv_binarizer(sc, ct, op):
    out = op.outputs[0]
    for v in op.inputs:
        if v.kind != out.kind:
            raise ConversionError(
                "Binarizer: inputs and outputs should have the same type %s != %s (skl2onnx "
                "refuses Binarizer on integer columns; give it float32 columns)." % (v.kind, out.kind))
    out.shape = [None, _sum_cols(op.inputs)]
    feature = _concatenate_variables(sc, ct, op.inputs)
    if op.inputs[0].kind == "double":
        raise ConversionError("double inputs (Less/Where) are not emulated.")
    ct.add_node("Binarizer", feature, out.name, domain=ML_DOMAIN, name=sc.op("Binarizer"),
                threshold=float(op.model.threshold))


def _conv_normalizer(sc, ct, op):
    _scaler_shape(op)
    out = op.outputs[0]
    if len(op.inputs) > 1:
        feature = _concatenate_variables(sc, ct, op.inputs)
    else:
        feature = op.inputs[0].name
    norm = {"max": "MAX", "l1": "L1", "l2": "L2"}.get(op.model.norm)
    if norm is None:
        raise ConversionError("Invalid norm '%s'." % op.model.norm)
    if op.inputs[0].kind == "double":
        raise ConversionError("double inputs (ReduceSum/Div) are not emulated.")
    ct.add_node("Normalizer", feature, out.name, domain=ML_DOMAIN, name=sc.op("Normalizer"),
                norm=norm)


def _class_labels(model):
    classes = np.asarray(model.classes_)
    if classes.ndim != 1:
        raise ConversionError("multi-output / multi-label classifiers are not emulated.")
    if all(isinstance(c, str) for c in classes):
        return "strings", [str(c) for c in classes]
    import numbers

    if all(isinstance(c, (numbers.Real, bool, np.bool_)) for c in classes):
        return "ints", [int(c) for c in classes]
    raise ConversionError("Label vector must be a string or a integer tensor.")


def _classifier_shape(op):
    if len(op.inputs) != 1:
        raise ConversionError(
            "A classifier takes exactly one input in skl2onnx; got %d (put a ColumnTransformer "
            "before it)." % len(op.inputs))
    kind = op.inputs[0].kind
    if kind not in ("bool", "double", "float", "int64"):
        raise ConversionError("classifier input of type %s is not accepted by skl2onnx." % kind)
    if kind == "double":
        raise ConversionError("double classifier inputs are not emulated by this module.")
    label, prob = op.outputs
    which, classes = _class_labels(op.model)
    label.kind = "string" if which == "strings" else "int64"
    label.shape = [None]
    prob.shape = [None, len(classes)]
    return which, classes


def _conv_linear_classifier(sc, ct, op):
    model = op.model
    which, classes = _classifier_shape(op)
    label, prob = op.outputs
    n = len(classes)
    coefficients = model.coef_.flatten().astype(float).tolist()
    if isinstance(model.intercept_, (float, np.float32)) and model.intercept_ == 0:
        intercepts = [0.0] * n if n != 2 else [0.0]
    else:
        intercepts = model.intercept_.tolist()
    if n == 2:
        coefficients = [-x for x in coefficients] + coefficients
        intercepts = [-x for x in intercepts] + intercepts
    multi_class = 1 if model.multi_class == "ovr" else 2
    attrs = {"name": sc.op("LinearClassifier"), "coefficients": coefficients,
             "intercepts": intercepts, "multi_class": 1 if multi_class == 2 else 0}
    ovr = model.multi_class in ("ovr", "warn") or (
        model.multi_class == "auto" and (model.classes_.size <= 2 or model.solver == "liblinear"))
    attrs["post_transform"] = "LOGISTIC" if ovr else "SOFTMAX"
    if which == "strings":
        attrs["classlabels_strings"] = classes
    else:
        attrs["classlabels_ints"] = classes
    inp = op.inputs[0].name
    if op.inputs[0].kind == "bool":
        cast_name = sc.var("cast_input")
        _cast(sc, ct, inp, cast_name, TensorProto.FLOAT)
        inp = cast_name
    prob_tensor = sc.var("probability_tensor")
    ct.add_node("LinearClassifier", inp, [label.name, prob_tensor], domain=ML_DOMAIN, **attrs)
    ct.add_node("Normalizer", prob_tensor, prob.name, domain=ML_DOMAIN, name=sc.op("Normalizer"),
                norm="L1")


_ACTIVATIONS = {"identity": "Identity", "tanh": "Tanh", "logistic": "Sigmoid", "relu": "Relu",
                "softmax": "Softmax"}


def _conv_mlp_classifier(sc, ct, op):
    model = op.model
    _classifier_shape(op)
    label, prob = op.outputs
    if model._label_binarizer.y_type_ == "multilabel-indicator":
        raise ConversionError("multi-label MLPClassifier is not emulated.")
    argmax_out = sc.var("argmax_output")
    afe_out = sc.var("array_feature_extractor_result")
    # _predict
    cast_input = sc.var("cast_input")
    _cast(sc, ct, op.inputs[0].name, cast_input, TensorProto.FLOAT)
    activations = [cast_input]
    final = sc.var("out_activations_result")
    add_result = None
    for i in range(model.n_layers_ - 1):
        coef = sc.var("coefficient")
        icpt = sc.var("intercepts")
        mul = sc.var("mul_result")
        add_result = sc.var("add_result")
        ct.add_initializer(coef, TensorProto.FLOAT, model.coefs_[i].shape, model.coefs_[i].ravel())
        ct.add_initializer(icpt, TensorProto.FLOAT, [1, len(model.intercepts_[i])],
                           model.intercepts_[i])
        ct.add_node("MatMul", [activations[i], coef], mul, name=sc.op("MatMul"))
        _binary(sc, ct, "Add", [mul, icpt], add_result)
        if (i + 1) != (model.n_layers_ - 1):
            nxt = sc.var("next_activations")
            act = _ACTIVATIONS[model.activation]
            ct.add_node(act, add_result, nxt, name=sc.op(act))
            activations.append(nxt)
    ct.add_node(_ACTIVATIONS[model.out_activation_], add_result, final,
                name=sc.op(_ACTIVATIONS[model.activation]))
    y_pred = final
    classes = np.asarray(model.classes_)
    class_type = TensorProto.STRING
    if np.issubdtype(classes.dtype, np.floating) or classes.dtype == np.bool_:
        class_type = TensorProto.INT32
        classes = classes.astype(np.int32)
    elif np.issubdtype(classes.dtype, np.integer):
        class_type = TensorProto.INT32
    else:
        classes = np.array([str(s).encode("utf-8") for s in classes])
    if len(classes) == 2:
        unity = sc.var("unity")
        neg = sc.var("negative_class_proba")
        ct.add_initializer(unity, TensorProto.FLOAT, [], [1])
        _binary(sc, ct, "Sub", [unity, y_pred], neg)
        _concat(sc, ct, [neg, y_pred], prob.name, axis=1)
    else:
        _identity(sc, ct, y_pred, prob.name)
    classes_name = sc.var("classes")
    ct.add_initializer(classes_name, class_type, classes.shape, classes)
    ct.add_node("ArgMax", prob.name, argmax_out, name=sc.op("ArgMax"), axis=1)
    ct.add_node("ArrayFeatureExtractor", [classes_name, argmax_out], afe_out, domain=ML_DOMAIN,
                name=sc.op("ArrayFeatureExtractor"))
    if class_type == TensorProto.INT32:
        reshaped = sc.var("reshaped_result")
        _reshape(sc, ct, afe_out, reshaped, (-1,))
        _cast(sc, ct, reshaped, label.name, TensorProto.INT64)
    else:
        _reshape(sc, ct, afe_out, label.name, (-1,))


def _sklearn_threshold(dy):
    """Float32 threshold w with  float32(x) <= w  <=>  float32(x) <= dy  (skl2onnx's
    sklearn_threshold for float inputs, mode BRANCH_LEQ)."""
    fy = np.float32(dy)
    if fy == dy or fy < dy:
        return np.float64(fy)
    eps = max(abs(fy), np.finfo(np.float32).eps) * 10
    return np.float64(np.nextafter(np.array([fy]), np.array([fy - eps]), dtype=np.float32)[0])


def _tree_attributes():
    return {k: [] for k in (
        "nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_values",
        "nodes_truenodeids", "nodes_falsenodeids", "nodes_missing_value_tracks_true",
        "nodes_hitrates", "class_treeids", "class_nodeids", "class_ids", "class_weights")}


def _add_tree(attrs, tree, tree_id, tree_weight, weight_id_bias, leaf_weights_are_counts):
    for i in range(tree.node_count):
        if tree.children_left[i] > i or tree.children_right[i] > i:
            mode = "BRANCH_LEQ"
            feat = tree.feature[i]
            value = _sklearn_threshold(tree.threshold[i])
            left, right = int(tree.children_left[i]), int(tree.children_right[i])
        else:
            mode, feat, value, left, right = "LEAF", 0, 0.0, 0, 0
        attrs["nodes_treeids"].append(tree_id)
        attrs["nodes_nodeids"].append(i)
        attrs["nodes_featureids"].append(feat)
        attrs["nodes_modes"].append(mode)
        attrs["nodes_values"].append(value)
        attrs["nodes_truenodeids"].append(left)
        attrs["nodes_falsenodeids"].append(right)
        attrs["nodes_missing_value_tracks_true"].append(False)
        attrs["nodes_hitrates"].append(1.0)
        if mode == "LEAF":
            weights = tree.value[i].flatten()
            factor = tree_weight
            if leaf_weights_are_counts:
                s = sum(weights)
                factor /= float(s) if s != 0.0 else 1.0
            weights = [w * factor for w in weights]
            if len(weights) == 2:
                weights = [weights[1]]
            for k, w in enumerate(weights):
                attrs["class_treeids"].append(tree_id)
                attrs["class_nodeids"].append(i)
                attrs["class_ids"].append(k + weight_id_bias)
                attrs["class_weights"].append(w)


def _tree_node(sc, ct, op, attrs, which, classes):
    label, prob = op.outputs
    if which == "strings":
        attrs["classlabels_strings"] = classes
    else:
        attrs["classlabels_int64s"] = classes
    for k in ("nodes_values", "class_weights", "nodes_hitrates", "base_values"):
        if k in attrs:
            attrs[k] = np.array(attrs[k], dtype=np.float32).ravel()
    inp = op.inputs[0].name
    if op.inputs[0].kind == "bool":
        cast_name = sc.var("cast_input")
        _cast(sc, ct, inp, cast_name, TensorProto.FLOAT)
        inp = cast_name
    ct.add_node("TreeEnsembleClassifier", inp, [label.name, prob.name], domain=ML_DOMAIN,
                op_version=1, **attrs)


def _conv_decision_tree(sc, ct, op):
    model = op.model
    if np.asarray(model.classes_).size == 1:
        raise ConversionError("a DecisionTreeClassifier trained on one class is not emulated.")
    if model.n_outputs_ != 1:
        raise ConversionError("multi-output DecisionTreeClassifier is not emulated.")
    which, classes = _classifier_shape(op)
    attrs = _tree_attributes()
    attrs["post_transform"] = "NONE"
    attrs["name"] = sc.op("TreeEnsembleClassifier")
    _add_tree(attrs, model.tree_, 0, 1.0, 0, True)
    _tree_node(sc, ct, op, attrs, which, classes)


def _conv_random_forest(sc, ct, op):
    model = op.model
    if model.n_outputs_ != 1:
        raise ConversionError("multi-output RandomForestClassifier is not emulated.")
    which, classes = _classifier_shape(op)
    attrs = _tree_attributes()
    attrs["post_transform"] = "NONE"
    attrs["name"] = sc.op("TreeEnsembleClassifier")
    n = len(model.estimators_)
    for tree_id in range(n):
        _add_tree(attrs, model.estimators_[tree_id].tree_, tree_id, 1.0 / n, 0, True)
    _tree_node(sc, ct, op, attrs, which, classes)


def _conv_gradient_boosting(sc, ct, op):
    model = op.model
    which, classes = _classifier_shape(op)
    if model.loss not in ("deviance", "log_loss"):
        raise ConversionError("Loss '%s' is not supported yet." % model.loss)
    attrs = _tree_attributes()
    attrs["post_transform"] = "NONE"
    attrs["name"] = sc.op("TreeEnsembleClassifier")
    transform = "LOGISTIC" if model.n_classes_ == 2 else "SOFTMAX"
    if model.init == "zero":
        loss = model._loss if hasattr(model, "_loss") else model.loss_
        base = np.zeros(loss.K) if hasattr(loss, "K") else np.zeros(1)
    elif model.init is None:
        x0 = np.zeros((1, model.estimators_[0, 0].n_features_in_))
        base = model._raw_predict_init(x0).ravel()
    else:
        raise ConversionError("Setting init to an estimator is not supported.")
    attrs["base_values"] = [float(v) for v in base]
    attrs["post_transform"] = transform
    weight = model.learning_rate
    n_est = model.n_estimators_
    if model.n_classes_ == 2:
        for t in range(n_est):
            _add_tree(attrs, model.estimators_[t][0].tree_, t, weight, 0, False)
    else:
        for i in range(n_est):
            for c in range(model.n_classes_):
                _add_tree(attrs, model.estimators_[i][c].tree_, i * model.n_classes_ + c,
                          weight, c, False)
    _tree_node(sc, ct, op, attrs, which, classes)


def _conv_zipmap(sc, ct, op):
    label_in, prob_in = op.inputs
    out_label, out_prob = op.outputs
    out_label.kind = label_in.kind
    out_label.shape = list(label_in.shape)
    out_prob.value_kind = prob_in.kind
    attrs = {"name": sc.op("ZipMap")}
    if "classlabels_int64s" in op.extra:
        attrs["classlabels_int64s"] = op.extra["classlabels_int64s"]
        _cast(sc, ct, label_in.name, out_label.name, TensorProto.INT64)
    else:
        attrs["classlabels_strings"] = op.extra["classlabels_strings"]
        _identity(sc, ct, label_in.name, out_label.name)
    ct.add_node("ZipMap", prob_in.name, out_prob.name, domain=ML_DOMAIN, **attrs)


def _converter(op):
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import (Binarizer, MaxAbsScaler, MinMaxScaler, Normalizer,
                                       OneHotEncoder, OrdinalEncoder, RobustScaler,
                                       StandardScaler)
    from sklearn.tree import DecisionTreeClassifier

    if op.alias == "SklearnArrayFeatureExtractor":
        return _conv_array_feature_extractor
    if op.alias == "SklearnConcat":
        return _conv_concat
    if op.alias == "SklearnZipMap":
        return _conv_zipmap
    table = [(SimpleImputer, _conv_simple_imputer), (OneHotEncoder, _conv_one_hot_encoder),
             (OrdinalEncoder, _conv_ordinal_encoder), (StandardScaler, _conv_scaler),
             (RobustScaler, _conv_scaler), (MaxAbsScaler, _conv_scaler),
             (MinMaxScaler, _conv_min_max_scaler), (Binarizer, _conv_binarizer),
             (Normalizer, _conv_normalizer), (LogisticRegression, _conv_linear_classifier),
             (MLPClassifier, _conv_mlp_classifier), (DecisionTreeClassifier, _conv_decision_tree),
             (RandomForestClassifier, _conv_random_forest),
             (GradientBoostingClassifier, _conv_gradient_boosting)]
    for cls, fn in table:
        if type(op.model) is cls:
            return fn
    raise ConversionError("no converter for %r" % op.model)


# --- graph assembly -----------------------------------------------------------------------------

def _topological_order(nodes, initial_names):
    """skl2onnx's ModelComponentContainer.ensure_topological_order: nodes sorted by
    (level, op_type, name) where a node's level is 1 + the level of its latest input."""
    level = {name: 0 for name in initial_names}
    node_level = {}
    remaining = list(range(len(nodes)))
    while remaining:
        progress = False
        rest = []
        for i in remaining:
            node = nodes[i]
            if all(n in level for n in node.input):
                lv = max([level[n] for n in node.input] + [0]) + 1
                node_level[i] = lv
                for o in node.output:
                    level[o] = lv + 1
                progress = True
            else:
                rest.append(i)
        remaining = rest
        if not progress:
            missing = set(n for i in remaining for n in nodes[i].input if n not in level)
            raise RuntimeError("unable to sort the graph, missing %r" % missing)
    order = sorted(range(len(nodes)), key=lambda i: (node_level[i], nodes[i].op_type,
                                                     nodes[i].name, i))
    return [nodes[i] for i in order]


def _remove_identity(nodes, graph_inputs, graph_outputs):
    """skl2onnx's onnx_remove_node_identity (no subgraphs here)."""
    nodes = list(nodes)
    changed = True
    while changed:
        changed = False
        for i, node in enumerate(nodes):
            if node is None or node.op_type != "Identity":
                continue
            inp, out = node.input[0], node.output[0]
            if inp in graph_inputs and out in graph_outputs:
                continue
            if out not in graph_outputs:
                for j, other in enumerate(nodes):
                    if other is None or j == i:
                        continue
                    if out in other.input:
                        new = onnx.NodeProto()
                        new.CopyFrom(other)
                        del new.input[:]
                        new.input.extend([inp if x == out else x for x in other.input])
                        nodes[j] = new
                nodes[i] = None
                changed = True
                continue
            if inp not in graph_inputs and inp not in graph_outputs and out not in graph_outputs:
                nodes[i] = None  # unreachable: out is a graph output here
                changed = True
    return [n for n in nodes if n is not None]


def _value_info(var):
    vi = onnx.ValueInfoProto()
    vi.name = var.name
    if var.kind == "seqmap":
        m = vi.type.sequence_type.elem_type.map_type
        m.key_type = _PROTO[var.key_kind]
        m.value_type.tensor_type.elem_type = _PROTO[var.value_kind]
        return vi
    tt = vi.type.tensor_type
    tt.elem_type = _PROTO[var.kind]
    for d in var.shape:
        dim = tt.shape.dim.add()
        if d is not None:
            dim.dim_value = d
    return vi


def _finish(sc, ct, inputs, outputs, name, path):
    init_names = [t.name for t in ct.initializers]
    nodes = _topological_order(ct.nodes, [v.name for v in inputs] + init_names)
    graph = helper.make_graph(nodes, name, [_value_info(v) for v in inputs],
                              [_value_info(v) for v in outputs], ct.initializers)
    model = helper.make_model(graph)
    del model.opset_import[:]
    versions = {}
    for dom, ver in ct.pairs:
        versions[dom] = max(versions.get(dom, 0), ver)
    main = versions.pop("", TARGET_OPSET)
    op = model.opset_import.add()
    op.domain, op.version = "", main
    for dom in sorted(versions):
        op = model.opset_import.add()
        op.domain, op.version = dom, versions[dom]
    model.ir_version = _OPSET_TO_IR_VERSION.get(TARGET_OPSET, onnx.IR_VERSION)
    model.producer_name = "skl2onnx"
    model.producer_version = SKL2ONNX_VERSION
    model.domain = "ai.onnx"
    model.model_version = 0
    model.doc_string = ""
    kept = _remove_identity(model.graph.node, set(v.name for v in inputs),
                            set(v.name for v in outputs))
    del model.graph.node[:]
    model.graph.node.extend(kept)
    if path is not None:
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
    return model


def _input_kind(series):
    values = series.values
    if len(values) and isinstance(values[0], (str, np.str_)):
        return "string"
    dt = values.dtype
    if dt == np.float32:
        return "float"
    if dt == np.float64:
        raise ConversionError(
            "column %r is float64: skl2onnx types it DoubleTensorType and then emits double "
            "subgraphs (Sub/Div, MatMul, ...) that this module does not emulate; pass "
            "X_df.astype({%r: 'float32'}) (FloatTensorType) instead." % (series.name, series.name))
    if dt == object:
        return "string"
    if dt == np.int64:
        return "int64"
    raise ConversionError("column %r of dtype %s is not supported (int64, float32 and strings are)."
                          % (series.name, dt))


def to_onnx(pipe, X_df, path, name=None):
    """Converts a fitted Pipeline (or a single supported estimator) into the ONNX model
    skl2onnx 1.16 emits for `to_onnx(pipe, X_df[:1])`, writes it to `path` (unless None) and
    returns it. Graph inputs: one per DataFrame column, in column order, named like the column
    with every character outside [A-Za-z0-9_+] replaced by '_', shape [None, 1]."""
    sc = _Scope()
    inputs = []
    for c in X_df.columns:
        kind = _input_kind(X_df[c])
        inputs.append(_Var(str(c), sc.var(str(c)), kind, [None, 1]))
    parser = _Parser(sc)
    outputs = parser.parse(pipe, list(inputs))
    ct = _Container()
    for op in parser.ops:
        _converter(op)(sc, ct, op)
    if name is None:
        name = "ONNX(%s)" % type(pipe).__name__
    return _finish(sc, ct, inputs, outputs, name, path)


def label_encoder_to_onnx(le, path, op="LabelEncoder", name=None, input_name="X"):
    """A fitted LabelEncoder on strings as skl2onnx emits it for `to_onnx(le, strings_1d)`:
    input `X` string [None], one ai.onnx.ml LabelEncoder (opset 2) with keys_strings = classes_,
    values_int64s = 0..K-1 (default_int64 left at its default, -1), output `variable` int64 [None].

    op="CategoryMapper" writes the same mapping as an ai.onnx.ml CategoryMapper
    (cats_strings, cats_int64s, default_int64=-1) instead; skl2onnx never emits that for a
    LabelEncoder (onnxmltools' Spark/CoreML converters do), but such graphs exist."""
    classes = np.asarray(le.classes_)
    if not all(isinstance(c, str) for c in classes):
        raise ConversionError("only string LabelEncoders are handled here.")
    sc = _Scope()
    inp = _Var(input_name, sc.var(input_name), "string", [None])
    sc.op("SklearnLabelEncoder")
    out = sc.declare("variable", "int64", [None])
    ct = _Container()
    keys = np.array([s.encode("utf-8") for s in classes])
    if op == "LabelEncoder":
        ct.add_node("LabelEncoder", inp.name, out.name, domain=ML_DOMAIN, op_version=2,
                    name=sc.op("LabelEncoder"), keys_strings=keys,
                    values_int64s=np.arange(len(classes)))
    elif op == "CategoryMapper":
        ct.add_node("CategoryMapper", inp.name, out.name, domain=ML_DOMAIN,
                    name=sc.op("CategoryMapper"), cats_strings=keys,
                    cats_int64s=np.arange(len(classes)), default_int64=-1)
    else:
        raise ValueError("op must be LabelEncoder or CategoryMapper")
    return _finish(sc, ct, [inp], [out], name or "ONNX(%s)" % type(le).__name__, path)


# --- self-test ----------------------------------------------------------------------------------

ADULT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks", "raw",
                     "adult.csv")
STRING_COLS = ["workclass", "education", "marital-status", "occupation", "relationship", "race",
               "sex", "native-country"]
NUMERIC_COLS = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]


def read_adult(path=ADULT):
    """The raw Adult CSV with empty cells kept as '' (the missing-value marker the pipelines
    impute with SimpleImputer(missing_values='')); numeric columns are int64."""
    import pandas as pd

    return pd.read_csv(path, keep_default_na=False, na_values=[])


def feeds_for(model, X_df):
    """Graph feeds for the rows of X_df (string columns as object arrays, [N, 1])."""
    feeds = {}
    for c, vi in zip(X_df.columns, model.graph.input):
        v = X_df[c].values
        et = vi.type.tensor_type.elem_type
        if et == TensorProto.STRING:
            arr = np.array([str(s) for s in v], dtype=object)
        elif et == TensorProto.INT64:
            arr = v.astype(np.int64)
        elif et == TensorProto.FLOAT:
            arr = v.astype(np.float32)
        else:
            raise ValueError(et)
        feeds[vi.name] = arr.reshape(-1, 1)
    return feeds


def standard_pipeline(clf, string_cols=STRING_COLS, numeric_cols=NUMERIC_COLS, **ohe):
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    ohe.setdefault("handle_unknown", "ignore")
    cat = Pipeline([("impute", SimpleImputer(strategy="most_frequent", missing_values="")),
                    ("onehot", OneHotEncoder(**ohe))])
    return Pipeline([("prep", ColumnTransformer([("cat", cat, list(string_cols)),
                                                 ("num", StandardScaler(), list(numeric_cols))],
                                                remainder="drop")),
                     ("clf", clf)])


def _classifiers(seed=0):
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.tree import DecisionTreeClassifier

    return [("LR", LogisticRegression(max_iter=500)),
            ("MLP", MLPClassifier(hidden_layer_sizes=(16, 8), max_iter=200, random_state=seed)),
            ("DT", DecisionTreeClassifier(max_depth=6, random_state=seed)),
            ("RF", RandomForestClassifier(n_estimators=20, max_depth=6, random_state=seed)),
            ("GB", GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=seed))]


def check_model(pipe, X, y, path, name=None):
    """Converts, checks and evaluates one fitted pipeline; returns a result dict."""
    import onnx_numpy_eval as ev

    model = to_onnx(pipe, X, path, name=name)
    onnx.checker.check_model(model)
    out = ev.run(model, feeds_for(model, X))
    labels = np.asarray(out["output_label"]).astype(str)
    expected = np.asarray(pipe.predict(X)).astype(str)
    probs = out["output_probability"]
    keys = list(probs[0].keys())
    p = np.array([[d[k] for k in keys] for d in probs], dtype=np.float64)
    ref = pipe.predict_proba(X)
    return {"differ": int((labels != expected).sum()), "rows": len(X),
            "max_prob_diff": float(np.max(np.abs(p - ref))), "bytes": os.path.getsize(path),
            "nodes": len(model.graph.node),
            "opsets": {o.domain or "''": o.version for o in model.opset_import}}


def selftest(out_dir=None, verbose=True):
    """Trains the pipelines described in the module docstring, writes each graph, runs
    onnx.checker, evaluates it with tools/onnx_numpy_eval.py on every sample row and counts the
    labels that differ from pipe.predict. Returns the list of (name, result) and raises if a
    check fails; label disagreements are reported, not hidden."""
    import tempfile
    import warnings

    from sklearn.compose import ColumnTransformer
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import (Binarizer, LabelEncoder, MaxAbsScaler, MinMaxScaler,
                                       Normalizer, OneHotEncoder, OrdinalEncoder, RobustScaler,
                                       StandardScaler)
    from sklearn.tree import DecisionTreeClassifier
    from sklearn.ensemble import RandomForestClassifier, GradientBoostingClassifier
    from sklearn.neural_network import MLPClassifier

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import onnx_numpy_eval as ev

    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    if out_dir is None:
        out_dir = tempfile.mkdtemp(prefix="skl2onnx_shapes_")
    df = read_adult().sample(n=4000, random_state=0).reset_index(drop=True)
    X = df.drop(columns=["income"])
    y = df["income"]
    results = []

    def run(name, pipe, Xs, ys):
        pipe.fit(Xs, ys)
        r = check_model(pipe, Xs, ys, os.path.join(out_dir, name + ".onnx"))
        results.append((name, r))
        if verbose:
            print("%-28s %4d/%d labels differ  max|dp|=%.2e  %6d bytes  %3d nodes  opsets %s"
                  % (name, r["differ"], r["rows"], r["max_prob_diff"], r["bytes"], r["nodes"],
                     r["opsets"]), flush=True)

    # the five classifiers on the standard pipeline, binary target income
    for cname, clf in _classifiers():
        run("binary_" + cname, standard_pipeline(clf), X, y)
    # multiclass target: relationship (6 classes)
    Xm = df.drop(columns=["income", "relationship"])
    ym = df["relationship"]
    mcols = [c for c in STRING_COLS if c != "relationship"]
    for cname, clf in _classifiers():
        run("multiclass_" + cname, standard_pipeline(clf, string_cols=mcols), Xm, ym)
    # multiclass with liblinear (one-vs-rest LOGISTIC + L1 normalisation)
    run("multiclass_LR_ovr", standard_pipeline(LogisticRegression(solver="liblinear"),
                                               string_cols=mcols), Xm, ym)

    def imputed(enc):
        return Pipeline([("impute", SimpleImputer(strategy="most_frequent", missing_values="")),
                         ("enc", enc)])

    # OrdinalEncoder + MinMaxScaler
    run("ordinal_minmax_LR", Pipeline([
        ("prep", ColumnTransformer([("cat", imputed(OrdinalEncoder()), STRING_COLS),
                                    ("num", MinMaxScaler(), NUMERIC_COLS)])),
        ("clf", LogisticRegression(max_iter=500))]), X, y)
    run("minmax_clip_MLP", Pipeline([
        ("prep", ColumnTransformer([("cat", imputed(OneHotEncoder(handle_unknown="ignore")),
                                     STRING_COLS),
                                    ("num", MinMaxScaler(clip=True), NUMERIC_COLS)])),
        ("clf", MLPClassifier((8,), max_iter=200, random_state=0))]), X, y)
    for sname, scaler in (("maxabs", MaxAbsScaler()), ("robust", RobustScaler())):
        run(sname + "_LR", Pipeline([
            ("prep", ColumnTransformer([("cat", imputed(OneHotEncoder(handle_unknown="ignore")),
                                         STRING_COLS), ("num", scaler, NUMERIC_COLS)])),
            ("clf", LogisticRegression(max_iter=500))]), X, y)
    # OneHotEncoder drop variants
    run("drop_first_LR", standard_pipeline(LogisticRegression(max_iter=500), drop="first"), X, y)
    run("drop_if_binary_GB", standard_pipeline(GradientBoostingClassifier(
        n_estimators=20, max_depth=3, random_state=0), drop="if_binary"), X, y)
    run("drop_explicit_DT", Pipeline([
        ("prep", ColumnTransformer([("cat", OneHotEncoder(
            drop=["Male", "White"], handle_unknown="ignore"), ["sex", "race"]),
            ("num", "passthrough", ["age", "education-num", "hours-per-week"])])),
        ("clf", DecisionTreeClassifier(max_depth=6, random_state=0))]), X, y)
    # remainder='passthrough' (int64 columns cast to float in the final Concat)
    run("passthrough_RF", Pipeline([
        ("prep", ColumnTransformer([("cat", imputed(OneHotEncoder(handle_unknown="ignore")),
                                     STRING_COLS)], remainder="passthrough")),
        ("clf", RandomForestClassifier(n_estimators=20, max_depth=6, random_state=0))]), X, y)
    # nested ColumnTransformer, OneHotEncoder on separate inputs, integer categories
    inner = ColumnTransformer([("oh", OneHotEncoder(handle_unknown="ignore"), ["sex", "race"]),
                               ("edu", OneHotEncoder(handle_unknown="ignore"), ["education-num"]),
                               ("sc", StandardScaler(), ["age", "hours-per-week"])])
    run("nested_ct_LR", Pipeline([
        ("prep", ColumnTransformer([("inner", inner, ["sex", "race", "education-num", "age",
                                                      "hours-per-week"]),
                                    ("cat", imputed(OneHotEncoder(handle_unknown="ignore")),
                                     ["workclass", "occupation", "native-country"]),
                                    ("num", Pipeline([("imp", SimpleImputer(strategy="most_frequent")),
                                                      ("sc", StandardScaler())]),
                                     ["capital-gain", "capital-loss"])])),
        ("clf", LogisticRegression(max_iter=500))]), X, y)
    # infrequent categories (skl2onnx 1.17: Split + ReduceSum), columns as separate inputs
    run("infrequent_DT", Pipeline([
        ("prep", ColumnTransformer([("cat", OneHotEncoder(handle_unknown="infrequent_if_exist",
                                                          min_frequency=40),
                                     ["education", "occupation", "native-country", "race"]),
                                    ("num", StandardScaler(), NUMERIC_COLS)])),
        ("clf", DecisionTreeClassifier(max_depth=6, random_state=0))]), X, y)
    # float32 columns: Binarizer, Normalizer, OHE on float categories
    Xf = X.copy()
    for c in NUMERIC_COLS:
        Xf[c] = Xf[c].astype(np.float32)
    run("float32_binarizer_normalizer_LR", Pipeline([
        ("prep", ColumnTransformer([("cat", imputed(OneHotEncoder(handle_unknown="ignore")),
                                     STRING_COLS),
                                    ("bin", Binarizer(threshold=0.0), ["capital-gain", "capital-loss"]),
                                    ("norm", Normalizer(norm="l2"), ["age", "hours-per-week"]),
                                    ("edu", OneHotEncoder(handle_unknown="ignore"), ["education-num"]),
                                    ("num", StandardScaler(), ["fnlwgt", "age"])])),
        ("clf", LogisticRegression(max_iter=500))]), Xf, y)

    # refusals that skl2onnx makes too
    refusals = 0
    X_nan = X.replace({"": np.nan})
    for bad, Xb in (
            (Pipeline([("prep", ColumnTransformer([("cat", Pipeline([
                ("imp", SimpleImputer(strategy="most_frequent")),
                ("oh", OneHotEncoder(handle_unknown="ignore"))]), STRING_COLS)])),
                ("clf", LogisticRegression(max_iter=200))]), X_nan),
            (standard_pipeline(LogisticRegression(max_iter=200), min_frequency=40,
                               handle_unknown="infrequent_if_exist"), X),
            (Pipeline([("prep", ColumnTransformer([("b", Binarizer(), ["age"])])),
                       ("clf", LogisticRegression(max_iter=200))]), X)):
        try:
            bad.fit(Xb, y)
            to_onnx(bad, Xb, os.path.join(out_dir, "refused.onnx"))
        except ConversionError as e:
            refusals += 1
            if verbose:
                print("refused as skl2onnx does: %s" % str(e).split(" (")[0].strip())
    if refusals != 3:
        raise AssertionError("expected 3 refusals, got %d" % refusals)

    # LabelEncoder / CategoryMapper on a string column
    le = LabelEncoder().fit(X["workclass"])
    for opname in ("LabelEncoder", "CategoryMapper"):
        path = os.path.join(out_dir, "label_encoder_%s.onnx" % opname)
        m = label_encoder_to_onnx(le, path, op=opname)
        onnx.checker.check_model(m)
        got = ev.run(m, {"X": np.array(X["workclass"].values, dtype=object)})["variable"]
        diff = int((got != le.transform(X["workclass"])).sum())
        unknown = ev.run(m, {"X": np.array(["no such class"], dtype=object)})["variable"]
        results.append(("label_encoder_" + opname, {"differ": diff, "rows": len(X)}))
        if verbose:
            print("%-28s %4d/%d codes differ, unknown -> %d" % ("label_encoder_" + opname, diff,
                                                                 len(X), unknown[0]))
    total = sum(r["differ"] for _, r in results)
    if verbose:
        print("graphs in %s; %d label(s) differ from scikit-learn in total" % (out_dir, total))
    return results


if __name__ == "__main__":
    if "--selftest" in sys.argv[1:]:
        selftest()
    else:
        print(__doc__)
