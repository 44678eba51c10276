#!/usr/bin/python3
"""Builds the agent models of soid's two examples (counterfactual queries) as ONNX files.

Usage (Debian's /usr/bin/python3, which has numpy and python3-onnx):

    /usr/bin/python3 tools/make_soid_models.py [--out-dir DIR]

DIR defaults to examples/soid of the repository. Reads the data in benchmarks/soid/ (see its
README.md) and writes, all tensors float64 (DOUBLE):

* DIR/diabetes/diabetes_agent.onnx: the diabetes agent program of soid section 2.1. Input "x"
  [N, 9] = pregnancies, glucose, blood_pressure, skin_thickness, insulin, height_in, weight_lb,
  pedigree, age. It computes bmi = weight_lb / height_in^2 WITHOUT the factor 703 (the unit bug of
  soid's classify.c) and feeds the 8 tree features (x[5] = bmi) to an ai.onnx.ml
  TreeEnsembleClassifier built from benchmarks/soid/dt/dt_nodes.csv (exact double thresholds in
  nodes_values_as_tensor). Outputs "label" (int64 [N], 1 = high risk) and "probabilities" [N, 2]
  (the operator's float scores, which are 0 or 1, cast to double).
* DIR/car/<profile>_<N>k.onnx, one per benchmarks/soid/gui_car/qtables/<profile>_<N>k_train.csv:
  the Duckietown Q-table agent. Input "state" [N, 10] (booleans as 0/1, bit weights 512 .. 1);
  index = state @ W, then a Gather on the constant table [1024, 2] of (q_move, q_stay) gives the
  output "q" [N, 2]. The decision (move iff q_move >= q_stay) is the argmax of q with ties to the
  lowest index (move), stored as the metadata witness.rule.

The witness.* metadata props name the inputs, outputs and classes for witness's ONNX loader.
The output is deterministic: reruns write the same bytes. Prints one line per file written.
"""
import argparse
import csv
import glob
import json
import os
import re

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DATA = os.path.join(REPO, "benchmarks", "soid")
CORE = helper.make_opsetid("", 13)
ML = helper.make_opsetid("ai.onnx.ml", 3)
D = TensorProto.DOUBLE

DIABETES_INPUTS = ["pregnancies", "glucose", "blood_pressure", "skin_thickness", "insulin",
                   "height_in", "weight_lb", "pedigree", "age"]
CAR_FEATURES = [  # (name, bit weight in the state index), in input order
    ("in_intersection", 512), ("at_intersection_entry", 256), ("intersection_empty", 128),
    ("approaching_intersection", 64), ("obj_in_range", 32), ("has_right_of_way", 16),
    ("cars_waiting_to_enter", 8), ("car_entering_range", 4), ("safe_to_enter", 2), ("is_tailgating", 1),
]


def const(name, array, dtype):
    return numpy_helper.from_array(np.asarray(array, dtype=dtype), name=name)


def batch_input(name, width):
    return helper.make_tensor_value_info(name, D, ["N", width])


def finish(graph, meta, path, doc):
    model = helper.make_model(graph, opset_imports=[CORE, ML], producer_name="witness tools/make_soid_models.py",
                              doc_string=doc)
    model.ir_version = 8  # onnx 1.12's default; pinned so other onnx versions write the same bytes
    for key, value in meta.items():
        p = model.metadata_props.add()
        p.key = key
        p.value = json.dumps(value, separators=(",", ":"))
    onnx.checker.check_model(model, full_check=True)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    print(f"wrote {os.path.relpath(path)}")


# --- diabetes ------------------------------------------------------------------------------------

def read_tree(path):
    """dt_nodes.csv -> list of dicts, indexed by node id (ids are 0..n-1)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    nodes = []
    for i, r in enumerate(rows):
        assert int(r["node"]) == i, f"{path}: node ids must be 0..n-1 in order"
        if r["kind"] == "split":
            nodes.append({"leaf": False, "feature": int(r["feature"]), "threshold": float(r["threshold"]),
                          "true": int(r["true_child"]), "false": int(r["false_child"])})
        elif r["kind"] == "leaf":
            nodes.append({"leaf": True, "class": int(r["class"])})
        else:
            raise ValueError(f"{path}: node {i} has kind {r['kind']!r}")
    return nodes


def diabetes(out_dir):
    nodes = read_tree(os.path.join(DATA, "dt", "dt_nodes.csv"))
    n = len(nodes)
    leaves = [i for i, nd in enumerate(nodes) if nd["leaf"]]
    tree = helper.make_node(
        "TreeEnsembleClassifier", ["features"], ["label", "scores_f32"], name="tree", domain="ai.onnx.ml",
        classlabels_int64s=[0, 1],
        nodes_treeids=[0] * n,
        nodes_nodeids=list(range(n)),
        nodes_featureids=[0 if nd["leaf"] else nd["feature"] for nd in nodes],
        nodes_modes=["LEAF" if nd["leaf"] else "BRANCH_LEQ" for nd in nodes],
        nodes_values_as_tensor=const("nodes_values", [0.0 if nd["leaf"] else nd["threshold"] for nd in nodes],
                                     np.float64),
        nodes_truenodeids=[0 if nd["leaf"] else nd["true"] for nd in nodes],
        nodes_falsenodeids=[0 if nd["leaf"] else nd["false"] for nd in nodes],
        nodes_missing_value_tracks_true=[0] * n,
        class_treeids=[0] * len(leaves),
        class_nodeids=leaves,
        class_ids=[nodes[i]["class"] for i in leaves],
        class_weights=[1.0] * len(leaves),  # exact in float32
        post_transform="NONE",
    )
    nodes_list = [
        # Columns of x by constant-index Gathers along axis 1.
        helper.make_node("Gather", ["x", "idx_first5"], ["first5"], name="take_first5", axis=1),
        helper.make_node("Gather", ["x", "idx_height"], ["height"], name="take_height", axis=1),
        helper.make_node("Gather", ["x", "idx_weight"], ["weight"], name="take_weight", axis=1),
        helper.make_node("Gather", ["x", "idx_last2"], ["last2"], name="take_last2", axis=1),
        # bmi = weight / height^2, NO factor 703 (soid's unit bug).
        helper.make_node("Mul", ["height", "height"], ["height_sq"], name="height_sq"),
        helper.make_node("Div", ["weight", "height_sq"], ["bmi"], name="bmi"),
        helper.make_node("Concat", ["first5", "bmi", "last2"], ["features"], name="features", axis=1),
        tree,
        # The operator's scores are float by the spec; the leaf weights 0/1 are exact, so the cast to
        # double changes nothing but the type.
        helper.make_node("Cast", ["scores_f32"], ["probabilities"], name="probabilities", to=D),
    ]
    graph = helper.make_graph(
        nodes_list, "diabetes_agent", [batch_input("x", 9)],
        [helper.make_tensor_value_info("label", TensorProto.INT64, ["N"]),
         helper.make_tensor_value_info("probabilities", D, ["N", 2])],
        initializer=[const("idx_first5", [0, 1, 2, 3, 4], np.int64), const("idx_height", [5], np.int64),
                     const("idx_weight", [6], np.int64), const("idx_last2", [7, 8], np.int64)],
        doc_string="soid diabetes agent: bmi = weight_lb / height_in^2 (no 703), then the Pima decision tree",
    )
    meta = {"witness.input_names": DIABETES_INPUTS,
            "witness.output_names": ["p_low_risk", "p_high_risk"],
            "witness.class_labels": ["low_risk", "high_risk"]}
    finish(graph, meta, os.path.join(out_dir, "diabetes", "diabetes_agent.onnx"),
           "soid (CAV 2024) section 2.1 diabetes agent, from benchmarks/soid/dt/dt_nodes.csv")


# --- cars ----------------------------------------------------------------------------------------

def read_qtable(path):
    """<profile>_<N>k_train.csv: 1024 lines q_stay,q_move -> float64 array [1024, 2] of (q_stay, q_move)."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    assert len(rows) == 1024 and all(len(r) == 2 for r in rows), f"{path}: expected 1024 rows of 2 values"
    return np.array([[float(a), float(b)] for a, b in rows], dtype=np.float64)


def car(csv_path, out_path):
    q = read_qtable(csv_path)
    table = q[:, ::-1].copy()  # columns (q_move, q_stay): argmax ties go to move, as q_move >= q_stay does
    weights = np.array([[w] for _, w in CAR_FEATURES], dtype=np.float64)
    nodes_list = [
        helper.make_node("MatMul", ["state", "bit_weights"], ["index_f"], name="state_index"),
        helper.make_node("Cast", ["index_f"], ["index"], name="index_int", to=TensorProto.INT64),
        helper.make_node("Gather", ["qtable", "index"], ["q_row"], name="lookup", axis=0),  # [N, 1, 2]
        helper.make_node("Squeeze", ["q_row", "squeeze_axes"], ["q"], name="squeeze"),
    ]
    graph = helper.make_graph(
        nodes_list, "car_agent", [batch_input("state", len(CAR_FEATURES))],
        [helper.make_tensor_value_info("q", D, ["N", 2])],
        initializer=[const("bit_weights", weights, np.float64), const("qtable", table, np.float64),
                     const("squeeze_axes", [1], np.int64)],
        doc_string="Duckietown Q-table agent: q = qtable[state . bit_weights], columns (q_move, q_stay)",
    )
    meta = {"witness.input_names": [name for name, _ in CAR_FEATURES],
            "witness.output_names": ["q_move", "q_stay"],
            "witness.class_labels": ["move", "stay"],
            "witness.rule": {"kind": "argmax", "value": "q"}}
    finish(graph, meta, out_path,
           f"soid (CAV 2024) Duckietown car agent from benchmarks/soid/gui_car/qtables/{os.path.basename(csv_path)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out-dir", default=os.path.join(REPO, "examples", "soid"),
                    help="output folder (default: examples/soid of the repository)")
    args = ap.parse_args()
    out_dir = os.path.abspath(args.out_dir)
    diabetes(out_dir)
    tables = sorted(glob.glob(os.path.join(DATA, "gui_car", "qtables", "*_train.csv")))
    assert tables, "no Q-tables in benchmarks/soid/gui_car/qtables"
    for path in tables:
        m = re.fullmatch(r"([a-z]+_\d+k)_train\.csv", os.path.basename(path))
        assert m, path
        car(path, os.path.join(out_dir, "car", m.group(1) + ".onnx"))


if __name__ == "__main__":
    main()
