#!/usr/bin/env python3
"""Ask the peer tool Veritas (github.com/dtai-kuleuven/veritas, a.k.a. laudv/veritas) a
two-instance fairness question about an XGBoost model, for comparison with `witness`.

Veritas is not part of this repository and is not vendored: install it separately (see
bench/results/veritas.md for how it was built) and run this script with a Python that can
`import veritas` and `import xgboost`.

The question. The model's feature order is the schema's feature order (bench/train_tree_models.py
trains on the schema's columns in file order, label removed). Let p be the protected feature and
(a, b) two of its values. The domain box D is the schema's: an integer feature ranges over
[min, max], a categorical one over the codes 0 .. k-1 (optionally narrowed by --box NAME, a
[boxes.NAME] table of the schema). Two instances x0, x1 share every feature except p; x0[p] = a,
x1[p] = b. The label is XGBoost's: 1 iff margin > 0 (predict_proba > 0.5).

Integer domains. Veritas reasons over real intervals and XGBoost splits are `x < s` on float32.
For integer x, `x < s` is the same test as `x < ceil(s)`, so before the search every threshold s is
replaced by ceil(s) (checked: same margins on every data row) and an integer range [lo, hi] becomes
the half-open Veritas interval [lo, hi + 1). Every box Veritas then returns has integer end points,
so its lower corner is an integer point of the box, and that point is replayed with XGBoost.

Queries, each run once per direction (a, b) = (v0, v1) and (v1, v0):

  maxdiff  Veritas's own formulation (examples/global_fairness_verification.ipynb, after Calzavara
           et al. 2022): build the "two-instance product" with veritas.FeatMap (all features but p
           share one id between the two copies), AddTree.concat_negated gives
           g(x) = margin(x0) - margin(x1), and Veritas's best-first search (HeuristicType.MAX_OUTPUT,
           the notebook's settings: ignore_state_when_worse_than = 0, focal_eps = 0.95,
           max_focal_size = 100) maximises g over D. It returns the best solution found (a lower
           bound; a box of inputs on which every tree's leaf is fixed, so g is constant on it) and an
           upper bound on max g; OPTIMAL when they meet. This is a bound on the margin difference,
           not a fairness verdict: max g > 0 does not mean a label flips. We replay the best
           solution's point and say whether it flips the label.

  flip     The decision question "is there x in D with margin(x0) > 0 >= margin(x1)?" (label 1 for
           a, label 0 for b), answered with Veritas's solution stream for the same g: such an x has
           g > 0, so states with upper bound g < 0 are pruned; with stop_when_optimal = False and a
           greedy focal_eps (--flip-focal-eps, default 0.1) Veritas enumerates solutions (leaf
           combinations; both margins are constant on a solution's box), and each one's lower
           corner is checked; the first flip is replayed with XGBoost. Answers: WITNESS (point and
           XGBoost margins), NONE (the open list ran empty: every leaf combination with g >= 0 was
           enumerated, a proof up to Veritas's float64 sums versus XGBoost's float32 sums), or
           UNKNOWN (time limit; the upper bound on g is printed). The two directions together
           answer "does the label ever depend on p alone?".

  flipmulti  (optional, not in `both`) the same decision question as one constrained
           optimisation for Veritas's multi-output search: an AddTree with two leaf values,
           value 0 = -margin(x1), value 1 = -margin(x1) - margin(x0), so value0 - value1 =
           margin(x0); HeuristicType.MULTI_MAX_MAX_OUTPUT_DIFF maximises margin(x0),
           multi_ignore_state_when_class0_worse_than = 0 prunes states whose upper bound on
           -margin(x1) is < 0, ignore_state_when_worse_than = 0 prunes upper bound margin(x0) < 0,
           stop_when_atleast_bound_better_than = 0 stops at the first margin(x0) > 0. Sound and
           complete, but its bound does not cancel the shared trees and it found nothing within
           20 s on german_xgb_12x6 (see bench/results/veritas.md).

Usage:
  python bench/veritas_fairness.py MODEL.json --schema benchmarks/fairify/german.toml \
      --protected age [--values 0 1] [--query both] [--time-limit 60] [--json]
--protected takes a feature name or its index.
"""

import argparse
import json
import math
import sys
import time
import tomllib

import numpy as np
import veritas
import xgboost as xgb


def load_schema(path, box_name=None):
    with open(path, "rb") as f:
        s = tomllib.load(f)
    names, lo, hi = [], [], []
    for feat in s["features"]:
        names.append(feat["name"])
        if feat["kind"] == "integer":
            lo.append(int(feat["min"]))
            hi.append(int(feat["max"]))
        elif feat["kind"] == "categorical":
            lo.append(0)
            hi.append(len(feat["categories"]) - 1)
        else:
            raise SystemExit(f"unsupported feature kind {feat['kind']!r} ({feat['name']})")
    if box_name:
        for name, (a, b) in s["boxes"][box_name].items():
            i = names.index(name)
            lo[i], hi[i] = int(a), int(b)
    return names, lo, hi


def base_margin(booster):
    cfg = json.loads(booster.save_config())
    p = float(cfg["learner"]["learner_model_param"]["base_score"])
    obj = cfg["learner"]["objective"]["name"]
    if obj != "binary:logistic":
        raise SystemExit(f"only binary:logistic models are supported (got {obj})")
    return float(np.float32(math.log(p / (1.0 - p))))


def integerize(at):
    """Copy of `at` with every threshold s replaced by ceil(s) (same tests on integer inputs)."""
    new = veritas.AddTree(at.num_leaf_values(), at.get_type())
    for c in range(at.num_leaf_values()):
        new.set_base_score(c, at.get_base_score(c))
    for old in at:
        t = new.add_tree()
        stack = [(old.root(), t.root())]
        while stack:
            n, m = stack.pop()
            if old.is_leaf(n):
                for c in range(at.num_leaf_values()):
                    t.set_leaf_value(m, c, old.get_leaf_value(n, c))
            else:
                sp = old.get_split(n)
                t.split(m, sp.feat_id, float(math.ceil(sp.split_value)))
                stack.append((old.left(n), t.left(m)))
                stack.append((old.right(n), t.right(m)))
    return new


def load_model(model_path, names, data_rows=None):
    booster = xgb.Booster()
    booster.load_model(model_path)
    if booster.feature_names is not None and list(booster.feature_names) != names:
        raise SystemExit("model feature names differ from the schema's feature order")
    at = veritas.get_addtree(booster, silent=True)
    # Veritas's XGBoost 1.7 converter compares base_score in probability space with a margin it
    # recovers by prediction and falls back to the recovered one; set the exact margin instead.
    at.set_base_score(0, base_margin(booster))
    iat = integerize(at)
    check = None
    if data_rows is not None:
        dm = xgb.DMatrix(data_rows, feature_names=booster.feature_names)
        m_xgb = booster.predict(dm, output_margin=True).astype(np.float64)
        m_at = np.asarray(at.eval(data_rows)).reshape(-1)
        m_iat = np.asarray(iat.eval(data_rows)).reshape(-1)
        check = {
            "rows": int(data_rows.shape[0]),
            "max_abs_err_veritas_vs_xgb": float(np.max(np.abs(m_at - m_xgb))),
            "max_abs_err_integerized_vs_veritas": float(np.max(np.abs(m_iat - m_at))),
            "label_mismatches": int(np.sum((m_iat > 0) != (m_xgb > 0))),
        }
    return booster, iat, check


def two_instances(at, names, p):
    fm = veritas.FeatMap(names)
    for i, name in enumerate(names):
        if i != p:
            fm.use_same_id_for(fm.get_index(name, 0), fm.get_index(name, 1))
    at0 = fm.transform(at, 0)
    at1 = fm.transform(at, 1)
    return fm, at0, at1


def domain_box(fm, names, lo, hi, p, a, b):
    box = {}
    for i, name in enumerate(names):
        box[fm.get_feat_id(name, 0)] = veritas.Interval(lo[i], hi[i] + 1)
    box[fm.get_feat_id(names[p], 0)] = veritas.Interval(a, a + 1)
    box[fm.get_feat_id(names[p], 1)] = veritas.Interval(b, b + 1)
    return sorted(box.items())


def point_pair(fm, names, sol_box, prune_box):
    """The lower corner of the solution box, as the two concrete instances."""
    full = dict(prune_box)
    full.update(sol_box)
    xs = np.zeros((2, len(names)), dtype=np.float32)
    for inst in (0, 1):
        for i, name in enumerate(names):
            ival = full[fm.get_feat_id(name, inst)]
            v = ival.lo
            if not (math.isfinite(v) and v == int(v)):
                raise RuntimeError(f"non-integer box corner {ival} for {name}")
            xs[inst, i] = v
    return xs


def run_search(search, time_limit, chunk=100):
    t0 = time.perf_counter()
    reason = veritas.StopReason.NONE
    while True:
        reason = search.steps(chunk)
        if reason != veritas.StopReason.NONE:
            break
        if time.perf_counter() - t0 >= time_limit:
            reason = veritas.StopReason.OUT_OF_TIME
            break
    return reason, time.perf_counter() - t0


def margins(booster, xs, names):
    return booster.predict(xgb.DMatrix(xs, feature_names=booster.feature_names),
                           output_margin=True).astype(np.float64)


def query_maxdiff(booster, at, names, lo, hi, p, a, b, args):
    fm, at0, at1 = two_instances(at, names, p)
    contrast = at0.concat_negated(at1)  # margin(x0) - margin(x1)
    prune_box = domain_box(fm, names, lo, hi, p, a, b)
    cfg = veritas.Config(veritas.HeuristicType.MAX_OUTPUT)
    cfg.ignore_state_when_worse_than = 0.0
    cfg.focal_eps = 0.95
    cfg.max_focal_size = 100
    cfg.max_memory = args.max_memory_mb * 1024 * 1024
    t0 = time.perf_counter()
    search = cfg.get_search(contrast, prune_box)
    reason, _ = run_search(search, args.time_limit)
    elapsed = time.perf_counter() - t0
    bounds = search.current_bounds()
    res = {
        "query": "maxdiff", "a": a, "b": b, "seconds": elapsed, "stop": str(reason).split(".")[-1],
        "steps": int(search.stats.num_steps), "solutions": int(search.num_solutions()),
        "optimal": bool(search.is_optimal()),
    }
    if search.num_solutions() > 0:
        sol = search.get_solution(0)
        xs = point_pair(fm, names, sol.box(), prune_box)
        m = margins(booster, xs, names)
        res.update({
            "best": float(sol.output),
            "upper_bound": float(bounds.best) if not search.is_optimal() else float(sol.output),
            "point": [int(v) for v in xs[0]],
            "xgb_margins": [float(m[0]), float(m[1])],
            "flips_label": bool((m[0] > 0) != (m[1] > 0)),
        })
        if search.num_open() == 0:
            res["upper_bound"] = float(sol.output)
    else:
        # Nothing with g >= 0 survives: every state's upper bound was < 0.
        res.update({"best": None, "upper_bound": 0.0 if search.num_open() == 0 else float(bounds.best)})
    if search.num_open() == 0 and search.num_solutions() == 0:
        res["answer"] = "max g < 0 (proven)"
    elif res["optimal"]:
        res["answer"] = f"max g = {res['best']:.6g} (optimal)"
    else:
        lo_s = "-" if res["best"] is None else f"{res['best']:.6g}"
        res["answer"] = f"max g in [{lo_s}, {res['upper_bound']:.6g}] (time limit)"
    return res


def query_flip(booster, at, names, lo, hi, p, a, b, args):
    """Witness search on Veritas's solution stream for g = margin(x0) - margin(x1).

    A label flip with label 1 at x0 and 0 at x1 has margin(x0) > 0 >= margin(x1), so g > 0: the
    search may prune every state whose upper bound on g is < 0 (ignore_state_when_worse_than = 0).
    Veritas then enumerates solutions (leaf combinations, each a box on which both margins are
    constant) with stop_when_optimal = False; each new solution's lower corner is evaluated and the
    first with margin(x0) > 0 >= margin(x1) is replayed with XGBoost. If the open list runs empty
    first, every leaf combination with g >= 0 was seen: no flip exists in this direction.
    focal_eps = --flip-focal-eps (default 0.1, greedy: solutions early; 0.95 as in maxdiff finds
    none within seconds on these models)."""
    fm, at0, at1 = two_instances(at, names, p)
    contrast = at0.concat_negated(at1)
    prune_box = domain_box(fm, names, lo, hi, p, a, b)
    cfg = veritas.Config(veritas.HeuristicType.MAX_OUTPUT)
    cfg.ignore_state_when_worse_than = 0.0
    cfg.stop_when_optimal = False
    cfg.focal_eps = args.flip_focal_eps
    cfg.max_focal_size = 100
    cfg.max_memory = args.max_memory_mb * 1024 * 1024
    t0 = time.perf_counter()
    search = cfg.get_search(contrast, prune_box)
    seen, found, exhausted, replay_failures = 0, None, False, 0
    reason = veritas.StopReason.NONE
    while found is None:
        reason = search.steps(100)
        n = search.num_solutions()
        for i in range(seen, n):
            xs = point_pair(fm, names, search.get_solution(i).box(), prune_box)
            m = np.asarray(at.eval(xs)).reshape(-1)
            if m[0] > 0 and m[1] <= 0:
                mg = margins(booster, xs, names)
                if mg[0] > 0 and mg[1] <= 0:
                    found = (i, xs, mg)
                    break
                replay_failures += 1
        seen = n
        if reason in (veritas.StopReason.NO_MORE_OPEN, veritas.StopReason.OUT_OF_MEMORY):
            exhausted = reason == veritas.StopReason.NO_MORE_OPEN
            break
        if time.perf_counter() - t0 >= args.time_limit:
            reason = veritas.StopReason.OUT_OF_TIME
            break
    elapsed = time.perf_counter() - t0
    bounds = search.current_bounds()
    res = {
        "query": "flip", "a": a, "b": b, "seconds": elapsed, "stop": str(reason).split(".")[-1],
        "steps": int(search.stats.num_steps), "solutions": int(search.num_solutions()),
        "solutions_checked": seen if found is None else found[0] + 1,
        "replay_failures": replay_failures, "focal_eps": args.flip_focal_eps,
    }
    if found is not None:
        i, xs, mg = found
        res.update({"answer": "WITNESS", "solution_index": i, "g": float(search.get_solution(i).output),
                    "point": [int(v) for v in xs[0]], "xgb_margins": [float(mg[0]), float(mg[1])]})
    elif exhausted:
        res["answer"] = "NONE (proven: search space exhausted)"
    else:
        res["answer"] = "UNKNOWN (time limit)"
        res["upper_bound_g"] = float(bounds.top_of_open)
    return res


def flipmulti_addtree(at0, at1):
    """Two leaf values: [ -margin(x1), -margin(x1) - margin(x0) ]."""
    neg1 = at1.negate_leaf_values()
    neg0 = at0.negate_leaf_values()
    m = veritas.AddTree(2, veritas.AddTreeType.REGR)
    m.add_trees(neg1, 0)
    for t in m:
        for leaf in t.get_leaf_ids():
            t.set_leaf_value(leaf, 1, t.get_leaf_value(leaf, 0))
    m.add_trees(neg0, 1)
    m.set_base_score(0, -at1.get_base_score(0))
    m.set_base_score(1, -at1.get_base_score(0) - at0.get_base_score(0))
    return m


def query_flipmulti(booster, at, names, lo, hi, p, a, b, args):
    fm, at0, at1 = two_instances(at, names, p)
    m = flipmulti_addtree(at0, at1)
    prune_box = domain_box(fm, names, lo, hi, p, a, b)
    cfg = veritas.Config(veritas.HeuristicType.MULTI_MAX_MAX_OUTPUT_DIFF)
    cfg.multi_ignore_state_when_class0_worse_than = 0.0
    cfg.ignore_state_when_worse_than = 0.0
    cfg.stop_when_atleast_bound_better_than = 0.0
    cfg.max_memory = args.max_memory_mb * 1024 * 1024
    t0 = time.perf_counter()
    search = cfg.get_search(m, prune_box)
    reason, _ = run_search(search, args.time_limit)
    elapsed = time.perf_counter() - t0
    bounds = search.current_bounds()
    res = {
        "query": "flipmulti", "a": a, "b": b, "seconds": elapsed, "stop": str(reason).split(".")[-1],
        "steps": int(search.stats.num_steps), "solutions": int(search.num_solutions()),
    }
    best = float(search.get_solution(0).output) if search.num_solutions() > 0 else None
    res["best_margin_x0"] = best
    if best is not None and best > 0:
        xs = point_pair(fm, names, search.get_solution(0).box(), prune_box)
        mg = margins(booster, xs, names)
        ok = bool(mg[0] > 0 and mg[1] <= 0)
        res.update({"point": [int(v) for v in xs[0]], "xgb_margins": [float(mg[0]), float(mg[1])],
                    "replayed": ok, "answer": "WITNESS" if ok else "WITNESS (replay FAILED)"})
    elif search.num_open() == 0 or (best is not None and search.is_optimal()):
        res["answer"] = "NONE (proven)"
    else:
        res["answer"] = "UNKNOWN (time limit)"
        res["upper_bound"] = float(bounds.best)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--schema", required=True)
    ap.add_argument("--protected", required=True, help="feature name or index")
    ap.add_argument("--values", type=int, nargs=2, default=None,
                    help="the two protected values (default: the domain's two values)")
    ap.add_argument("--box", default=None, help="a [boxes.NAME] table of the schema")
    ap.add_argument("--query", choices=["maxdiff", "flip", "flipmulti", "both"], default="both",
                    help="both = maxdiff then flip")
    ap.add_argument("--flip-focal-eps", type=float, default=0.1)
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per search")
    ap.add_argument("--max-memory-mb", type=int, default=2048)
    ap.add_argument("--data", default=None, help="CSV to check the conversion on (label column dropped)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    names, lo, hi = load_schema(args.schema, args.box)
    p = int(args.protected) if args.protected.isdigit() else names.index(args.protected)
    if args.values:
        v0, v1 = args.values
    else:
        if hi[p] - lo[p] != 1:
            raise SystemExit("protected feature is not binary: pass --values A B")
        v0, v1 = lo[p], hi[p]

    rows = None
    if args.data:
        import csv
        with open(args.data, newline="") as f:
            r = list(csv.reader(f))
        cols = [r[0].index(n) for n in names]
        rows = np.array([[float(row[c]) for c in cols] for row in r[1:]], dtype=np.float32)
    booster, at, check = load_model(args.model, names, rows)

    out = {"model": args.model, "protected": names[p], "protected_index": p, "values": [v0, v1],
           "trees": len(at), "veritas_version": veritas.__version__, "xgboost_version": xgb.__version__,
           "conversion_check": check, "time_limit": args.time_limit, "results": []}
    queries = ["maxdiff", "flip"] if args.query == "both" else [args.query]
    for q in queries:
        for a, b in ((v0, v1), (v1, v0)):
            fn = {"maxdiff": query_maxdiff, "flip": query_flip, "flipmulti": query_flipmulti}[q]
            res = fn(booster, at, names, lo, hi, p, a, b, args)
            out["results"].append(res)
            if not args.json:
                extra = ""
                if "point" in res:
                    extra = f" point={res['point']} xgb_margins={[round(v, 6) for v in res['xgb_margins']]}"
                    if q == "maxdiff":
                        extra += f" flips_label={res['flips_label']}"
                print(f"{q:7s} {names[p]}: x0={a} x1={b}  {res['seconds']:.3f}s  steps={res['steps']}  "
                      f"stop={res['stop']}  {res['answer']}{extra}", flush=True)
    if args.json:
        print(json.dumps(out, indent=1))
    elif check:
        print(f"conversion check: {check}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
