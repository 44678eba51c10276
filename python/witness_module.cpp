// The `_witness` extension: the C++ engines for the `witness` Python package (python/witness/).
// It exposes models, schemas and one call per command; the package around it converts
// scikit-learn and PyTorch models, pandas data and the answers. Long calls run on a worker thread
// with the GIL released, so the interpreter can take Ctrl-C (it cancels the engine) and report
// progress while they run.
#include <malloc.h>
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/env.h"
#include "core/error.h"
#include "domain/infer.h"
#include "domain/schema.h"
#include "fairness/bias.h"
#include "fairness/blackbox.h"
#include "fairness/engine.h"
#include "fairness/oracle.h"
#include "model/columns.h"
#include "model/evaluator.h"
#include "model/loaders.h"
#include "model/model.h"
#include "query/query.h"
#include "report/html_report.h"
#include "run/jobs.h"
#include "run/option_catalog.h"

namespace py = pybind11;

namespace witness {
namespace {

using Options = std::map<std::string, std::string>;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The latest progress a worker posted, for the interpreter's thread to pass on.
class ProgressSlot {
 public:
  void post(nlohmann::json progress) {
    const std::lock_guard lock(mutex_);
    latest_ = std::move(progress);
    fresh_ = true;
  }
  std::optional<std::string> take() {
    const std::lock_guard lock(mutex_);
    if (!fresh_) return std::nullopt;
    fresh_ = false;
    return latest_.dump();
  }

 private:
  std::mutex mutex_;
  nlohmann::json latest_;
  bool fresh_ = false;
};

// Runs `work` on a worker thread while this (the interpreter's) thread, without the GIL, waits for
// it; every 100 ms it takes the GIL to look for signals and to pass fresh progress to
// `on_progress`. Ctrl-C raises the flag `cancel`, waits for the engine to stop and raises
// KeyboardInterrupt.
RunOutput run_released(std::function<RunOutput()> work, std::atomic<bool>& cancel, ProgressSlot& progress,
                       const py::object& on_progress) {
  struct Shared {
    std::mutex mutex;
    std::condition_variable finished;
    bool done = false;
    std::optional<RunOutput> result;
    std::exception_ptr error;
  };
  auto shared = std::make_shared<Shared>();
  std::thread worker([shared, work = std::move(work)] {
    std::optional<RunOutput> result;
    std::exception_ptr error;
    try {
      result.emplace(work());
    } catch (...) {
      error = std::current_exception();
    }
    const std::lock_guard lock(shared->mutex);
    shared->result = std::move(result);
    shared->error = error;
    shared->done = true;
    shared->finished.notify_all();
  });
  auto stop_worker = [&] {
    cancel = true;
    const py::gil_scoped_release release;
    worker.join();
  };
  for (bool over = false; !over;) {
    {
      const py::gil_scoped_release release;
      std::unique_lock lock(shared->mutex);
      over = shared->finished.wait_for(lock, std::chrono::milliseconds(100), [&] { return shared->done; });
    }
    if (PyErr_CheckSignals() != 0) {
      py::error_already_set interrupt;  // takes KeyboardInterrupt (or the handler's error) off the interpreter
      stop_worker();
      throw interrupt;
    }
    if (const std::optional<std::string> p = progress.take(); p && !on_progress.is_none()) {
      try {
        on_progress(py::module_::import("json").attr("loads")(*p));
      } catch (...) {
        stop_worker();
        throw;
      }
    }
  }
  {
    const py::gil_scoped_release release;
    worker.join();
  }
  if (shared->error) std::rethrow_exception(shared->error);
  return std::move(*shared->result);
}

// The answer as the package reads it: JSON as text (json.loads gives the CLI's --json exactly).
py::dict to_python(const RunOutput& out) {
  py::dict d;
  d["result"] = out.result.dump();
  d["text"] = out.text;
  d["report"] = out.report.is_null() ? std::string() : out.report.dump();
  d["pairs_csv"] = out.pairs_csv;
  d["regions_csv"] = out.regions_csv;
  d["flips_csv"] = out.flips_csv;
  return d;
}

// Raw rows [n][features] (numpy) -> columns [features][n], checked against the schema.
Eigen::MatrixXd raw_columns(const RowMatrix& rows, const Schema& schema, const std::string& what) {
  Eigen::MatrixXd raw = rows.transpose();
  check_raw_rows(raw, schema, what);
  return raw;
}

// Rows from Python: None, {"path": file}, {"text": CSV text, "name": ..., "row_labels": a DataFrame's
// index} or {"raw": rows [n][features]}.
RowsSource rows_source(const py::object& rows, const std::string& name) {
  RowsSource out;
  out.name = name;
  if (rows.is_none()) return out;
  const auto d = rows.cast<py::dict>();
  if (d.contains("name")) out.name = d["name"].cast<std::string>();
  if (d.contains("path")) {
    out.path = d["path"].cast<std::string>();
  } else if (d.contains("text")) {
    out.csv_text = d["text"].cast<std::string>();
    if (out.csv_text.empty()) throw InputError(out.name, "", "no data rows");
    if (d.contains("row_labels")) out.row_labels = d["row_labels"].cast<std::vector<std::string>>();
  } else if (d.contains("raw")) {
    out.raw = d["raw"].cast<RowMatrix>().transpose();
  } else {
    throw InputError(name + ": expected a path, CSV text or raw rows");
  }
  return out;
}

SubjectSource subject_source(const py::object& model, const py::object& schema, const std::vector<std::string>& names,
                             const py::object& data, const py::object& seeds, const py::object& label = py::none(),
                             const std::vector<std::string>& groups = {}) {
  SubjectSource src;
  if (!label.is_none()) src.label = label.cast<std::string>();
  src.group_names = groups;
  if (!model.is_none()) src.model = model.cast<std::shared_ptr<Model>>();
  if (!schema.is_none()) src.schema = schema.cast<const Schema&>();
  src.protected_names = names;
  src.data = rows_source(data, "data");
  src.seeds = rows_source(seeds, "seeds");
  return src;
}

// A Python callable as the black box: it gets raw rows [n][features] and returns n class indices
// (the package turns rows into a DataFrame and labels into indices). A Python exception stops the
// run and is raised again by the interpreter's thread.
class PythonOracle : public LabelOracle {
 public:
  PythonOracle(py::function function, std::string name, int classes)
      : function_(std::move(function)), name_(std::move(name)), classes_(classes) {}
  ~PythonOracle() override {
    const py::gil_scoped_acquire gil;
    function_ = py::function();
    raised_ = nullptr;
  }
  PythonOracle(const PythonOracle&) = delete;
  PythonOracle& operator=(const PythonOracle&) = delete;

  void labels(const Eigen::MatrixXd& raw, std::vector<int>& out) override {
    const auto n = raw.cols();
    out.resize(static_cast<std::size_t>(n));
    rows_ += n;
    const py::gil_scoped_acquire gil;
    try {
      py::array_t<double> rows({n, raw.rows()});
      std::copy(raw.data(), raw.data() + raw.size(), rows.mutable_data());  // column-major columns = C rows
      const auto labels = py::array_t<long long, py::array::c_style | py::array::forcecast>(function_(rows));
      if (labels.ndim() != 1 || labels.shape(0) != n)
        throw InputError(fmt::format("{}: returned {} labels for {} rows", name_, labels.size(), n));
      for (py::ssize_t i = 0; i < n; ++i) {
        const long long v = labels.at(i);
        if (v < 0 || v >= classes_)
          throw InputError(
              fmt::format("{}: label {} of row {} is not a class index 0..{}", name_, v, i + 1, classes_ - 1));
        out[static_cast<std::size_t>(i)] = static_cast<int>(v);
      }
    } catch (py::error_already_set&) {
      const std::lock_guard lock(mutex_);
      raised_ = std::current_exception();
      throw Error(name_ + " raised an exception");
    }
  }
  [[nodiscard]] std::string name() const override { return name_; }
  // The Python exception that stopped the run, if any (call with the GIL).
  void raise_if_raised() {
    const std::lock_guard lock(mutex_);
    if (raised_) {
      std::exception_ptr e = raised_;
      raised_ = nullptr;
      std::rethrow_exception(e);
    }
  }

 private:
  py::function function_;
  std::string name_;
  int classes_;
  std::mutex mutex_;
  std::exception_ptr raised_;
};

py::dict fair_call(const py::object& model, const py::object& schema, const std::vector<std::string>& names,
                   const Options& options, const py::object& data, const py::object& seeds, const std::string& command,
                   const py::object& on_progress, const py::object& label, const std::vector<std::string>& groups) {
  auto env = std::make_shared<Env>();
  FairJob job;
  set_job_options(fair_options(), job, *env, options);
  const JobSubject subject = load_subject(subject_source(model, schema, names, data, seeds, label, groups));
  std::atomic<bool> cancel{false};
  ProgressSlot progress;
  job.settings.progress = [&progress](const CompleteProgress& p) { progress.post(progress_json(p)); };
  env->set_cancel(&cancel);
  return to_python(run_released(
      [&] {
        env->start();
        return run_fair(subject, job, *env, command);
      },
      cancel, progress, on_progress));
}

py::dict test_call(const py::object& model_or_function, const py::object& schema, const std::vector<std::string>& names,
                   const Options& options, const py::object& seeds, const std::string& command,
                   const std::string& function_name, int classes, const py::object& on_progress) {
  auto env = std::make_shared<Env>();
  TestOptions o;
  set_job_options(test_options(), o, *env, options);
  settle_test_budget(o, options);
  const bool is_model = py::isinstance<Model>(model_or_function);
  const JobSubject subject =
      load_subject(subject_source(is_model ? model_or_function : py::none(), schema, names, py::none(), seeds));
  std::atomic<bool> cancel{false};
  ProgressSlot progress;
  o.on_progress = [&progress](const TestProgress& p) { progress.post(progress_json(p)); };
  env->set_cancel(&cancel);
  std::unique_ptr<LabelOracle> oracle;
  PythonOracle* python = nullptr;
  if (is_model) {
    oracle = std::make_unique<ModelOracle>(*subject.model, subject.schema, env->threads());
  } else {
    auto p = std::make_unique<PythonOracle>(model_or_function.cast<py::function>(), function_name, classes);
    python = p.get();
    oracle = std::move(p);
  }
  try {
    return to_python(run_released(
        [&] {
          env->start();
          return run_testing(subject, *oracle, o, *env, command, static_cast<std::size_t>(-1));
        },
        cancel, progress, on_progress));
  } catch (const Error&) {
    if (python) python->raise_if_raised();
    throw;
  }
}

py::dict bias_call(const py::object& model, const py::object& schema, const std::vector<std::string>& names,
                   const Options& options, const py::object& data, const std::string& command, const py::object& label,
                   const std::vector<std::string>& groups) {
  auto env = std::make_shared<Env>();
  BiasJob job;
  set_job_options(bias_options(), job, *env, options);
  const JobSubject subject = load_subject(subject_source(model, schema, names, data, py::none(), label, groups));
  std::atomic<bool> cancel{false};
  ProgressSlot progress;
  env->set_cancel(&cancel);
  return to_python(run_released(
      [&] {
        env->start();
        return run_bias(subject, job, *env, command);
      },
      cancel, progress, py::none()));
}

py::dict query_call(const std::string& text, const std::string& path, const Options& options,
                    const std::string& model_path) {
  QueryJob job;
  job.model = model_path;
  Env run;  // takes time_limit, the whole call's
  check_option_names("query", options);
  set_job_options(query_options(), job, run, options);
  const double run_limit = run.options.get_real("time-limit");
  const std::vector<Query> queries = job_queries(load_query_text(text, path, !job.model.empty()), job);
  std::atomic<bool> cancel{false};
  job.options.cancel = &cancel;
  ProgressSlot progress;
  return to_python(run_released([&queries, &job, run_limit] { return run_queries(queries, job.options, run_limit); },
                                cancel, progress, py::none()));
}

TreeEnsemble::Mode tree_mode(const std::string& name) {
  static const std::map<std::string, TreeEnsemble::Mode> modes = {
      {"leaf", TreeEnsemble::Mode::Leaf}, {"<=", TreeEnsemble::Mode::Leq},   {"<", TreeEnsemble::Mode::Lt},
      {">=", TreeEnsemble::Mode::Geq},    {">", TreeEnsemble::Mode::Gt},     {"==", TreeEnsemble::Mode::Eq},
      {"!=", TreeEnsemble::Mode::Neq},    {"in", TreeEnsemble::Mode::Member}};
  const auto it = modes.find(name);
  if (it == modes.end()) throw InputError(fmt::format("tree: unknown node mode '{}'", name));
  return it->second;
}

// One tree from flat arrays: per node its mode, feature, threshold and children; per leaf entry the
// node, the output it adds to and the weight.
TreeEnsemble::Tree make_tree(const py::dict& t) {
  const auto modes = t["mode"].cast<std::vector<std::string>>();
  const auto features = t["feature"].cast<std::vector<int>>();
  const auto thresholds = t["threshold"].cast<std::vector<double>>();
  const auto true_child = t["true_child"].cast<std::vector<int>>();
  const auto false_child = t["false_child"].cast<std::vector<int>>();
  const auto leaf_node = t["leaf_node"].cast<std::vector<int>>();
  const auto leaf_target = t["leaf_target"].cast<std::vector<int>>();
  const auto leaf_weight = t["leaf_weight"].cast<std::vector<double>>();
  const std::size_t n = modes.size();
  if (features.size() != n || thresholds.size() != n || true_child.size() != n || false_child.size() != n ||
      leaf_target.size() != leaf_node.size() || leaf_weight.size() != leaf_node.size())
    throw InputError("tree: the node (or leaf) arrays differ in length");
  TreeEnsemble::Tree tree;
  for (std::size_t i = 0; i < n; ++i) {
    tree.nodes.push_back({.mode = tree_mode(modes[i]),
                          .feature = features[i],
                          .threshold = thresholds[i],
                          .true_child = true_child[i],
                          .false_child = false_child[i],
                          .missing_tracks_true = false,
                          .members = {}});
  }
  // Optional: per node, the values of an "in" split and whether missing values go true.
  if (t.contains("members")) {
    const auto members = t["members"].cast<std::vector<std::vector<double>>>();
    if (members.size() != n) throw InputError("tree: members must have one list per node");
    for (std::size_t i = 0; i < n; ++i) tree.nodes[i].members = members[i];
  }
  if (t.contains("missing_true")) {
    const auto missing = t["missing_true"].cast<std::vector<bool>>();
    if (missing.size() != n) throw InputError("tree: missing_true must have one entry per node");
    for (std::size_t i = 0; i < n; ++i) tree.nodes[i].missing_tracks_true = missing[i];
  }
  for (std::size_t i = 0; i < leaf_node.size(); ++i)
    tree.leaves.push_back({.node = leaf_node[i], .target = leaf_target[i], .weight = leaf_weight[i]});
  return tree;
}

int tree_ensemble_node(ModelBuilder& b, int x, const py::list& trees, int n_targets, const std::string& aggregate,
                       const std::vector<double>& base_values, bool classifier) {
  auto e = std::make_shared<TreeEnsemble>();
  for (const py::handle t : trees) e->trees.push_back(make_tree(t.cast<py::dict>()));
  e->n_targets = n_targets;
  if (aggregate == "sum") {
    e->aggregate = TreeEnsemble::Aggregate::Sum;
  } else if (aggregate == "average") {
    e->aggregate = TreeEnsemble::Aggregate::Average;
  } else {
    throw InputError(fmt::format("tree ensemble: unknown aggregate '{}' (sum, average)", aggregate));
  }
  e->base_values = base_values;
  e->classifier = classifier;
  return b.tree_ensemble(x, e, "trees");
}

OpKind unary_op(const std::string& name) {
  static const std::map<std::string, OpKind> ops = {{"relu", OpKind::Relu},         {"sigmoid", OpKind::Sigmoid},
                                                    {"tanh", OpKind::Tanh},         {"softmax", OpKind::Softmax},
                                                    {"identity", OpKind::Identity}, {"leaky_relu", OpKind::LeakyRelu}};
  const auto it = ops.find(name);
  if (it == ops.end()) throw UnsupportedError(fmt::format("unknown activation '{}'", name));
  return it->second;
}

Model finish_model(ModelBuilder& b, int output, const std::string& rule, int node, double threshold,
                   const std::vector<std::string>& classes, const std::string& source) {
  Model m;
  if (rule == "threshold") {
    m = b.finish(output, DecisionRule::threshold_on(node, threshold));
  } else if (rule == "argmax") {
    m = b.finish(output, DecisionRule::argmax_of(node));
  } else if (rule == "default") {
    m = b.finish(output, DecisionRule::argmax_of(output));
    m.rule = default_rule(m);
  } else {
    throw InputError(fmt::format("unknown decision rule '{}' (default, threshold, argmax)", rule));
  }
  m.rule.class_labels = classes;
  m.source = source;
  m.format = "python";
  m.validate();
  return m;
}

Precision precision_of(const std::string& name) {
  if (name == "float64") return Precision::Float64;
  if (name == "float32") return Precision::Float32;
  throw InputError(fmt::format("precision: '{}' (float64, float32)", name));
}

// Rows [n][inputs] as the evaluator's columns, checked against the model's width.
Eigen::MatrixXd model_columns(const Model& m, const RowMatrix& x, const char* what) {
  if (x.cols() != m.input_width())
    throw InputError(fmt::format("{}: {} columns, but {} takes {} inputs", what, x.cols(), m.source, m.input_width()));
  return x.transpose();
}

py::array_t<long long> predict(const Model& m, const RowMatrix& x, const std::string& precision) {
  const Eigen::MatrixXd columns = model_columns(m, x, "predict");
  const Precision p = precision_of(precision);
  std::vector<int> labels;
  {
    const py::gil_scoped_release release;
    if (p == Precision::Float64) {
      Evaluator<double>(m).labels(columns, labels);  // labels only: a black box's hot path
    } else {
      labels = evaluate(m, columns, p).labels;
    }
  }
  py::array_t<long long> out(static_cast<py::ssize_t>(labels.size()));
  std::copy(labels.begin(), labels.end(), out.mutable_data());
  return out;
}

RowMatrix outputs(const Model& m, const RowMatrix& x, const std::string& precision) {
  const Eigen::MatrixXd columns = model_columns(m, x, "outputs");
  const Precision p = precision_of(precision);
  const py::gil_scoped_release release;
  return evaluate(m, columns, p).outputs.transpose();
}

Normalisation norm_of(const py::list& n) {
  const auto form = n[0].cast<std::string>();
  Normalisation out;
  out.a = n[1].cast<double>();
  out.b = n[2].cast<double>();
  if (form == "none") {
    out = Normalisation();
  } else if (form == "mean_std") {
    out.form = Normalisation::Form::MeanStd;
  } else if (form == "scale_offset") {
    out.form = Normalisation::Form::ScaleOffset;
  } else if (form == "center_scale") {
    out.form = Normalisation::Form::CenterScale;
  } else {
    throw InputError(fmt::format("unknown normalisation '{}'", form));
  }
  return out;
}

py::list norm_list(const Normalisation& n) {
  const char* form = n.form == Normalisation::Form::MeanStd       ? "mean_std"
                     : n.form == Normalisation::Form::ScaleOffset ? "scale_offset"
                     : n.form == Normalisation::Form::CenterScale ? "center_scale"
                                                                  : "none";
  py::list out;
  out.append(form);
  out.append(n.a);
  out.append(n.b);
  return out;
}

// The converted classifier over raw columns: columns as dicts (name, categorical, categories,
// one_hot, norm, missing, step), sources[k] = the inputs transformed feature k sums.
std::shared_ptr<Model> raw_columns_model(const Model& inner, const py::list& columns,
                                         const std::vector<std::vector<int>>& sources) {
  std::vector<RawColumn> cols;
  for (const py::handle h : columns) {
    const auto d = h.cast<py::dict>();
    RawColumn c;
    c.name = d["name"].cast<std::string>();
    c.categorical = d["categorical"].cast<bool>();
    c.categories = d["categories"].cast<std::vector<std::string>>();
    c.one_hot = d["one_hot"].cast<bool>();
    c.norm = norm_of(d["norm"].cast<py::list>());
    c.missing = d["missing"].cast<std::string>();
    c.step = d["step"].cast<std::string>();
    cols.push_back(std::move(c));
  }
  Model m = with_raw_columns(inner, std::move(cols), sources);
  m.format = inner.format;
  return std::make_shared<Model>(std::move(m));
}

py::list column_list(const Model& m) {
  py::list out;
  for (const RawColumn& c : m.columns) {
    py::dict d;
    d["name"] = c.name;
    d["categorical"] = c.categorical;
    d["categories"] = c.categories;
    d["one_hot"] = c.one_hot;
    d["norm"] = norm_list(c.norm);
    d["missing"] = c.missing;
    d["step"] = c.step;
    out.append(d);
  }
  return out;
}

py::list feature_list(const Schema& s) {
  py::list out;
  for (const Feature& f : s.features()) {
    py::dict d;
    d["name"] = f.name;
    d["kind"] = kind_name(f.kind);
    d["min"] = f.min;
    d["max"] = f.max;
    d["categories"] = f.categories;
    d["one_hot"] = f.one_hot;
    d["missing"] = f.missing;
    d["missing_value"] = f.missing_value;
    d["norm"] = norm_list(f.norm);
    out.append(d);
  }
  return out;
}

}  // namespace
}  // namespace witness

PYBIND11_MODULE(_witness, m) {
  using namespace witness;
#ifdef __GLIBC__
  // The engines allocate and free large batches (SymbGen's 5000-row explanations) on worker threads.
  // glibc's defaults give them back to the system and fault them in again each time: 20% of a test
  // run (bench/results/python.md). The witness executable links tcmalloc instead; here the
  // interpreter's malloc is kept, with big blocks staying in the heap and freed memory kept for reuse.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, 16 << 20);
#endif
  m.doc() = "witness's C++ engines (use the `witness` package)";
  static py::exception<Error> error(m, "Error");
  static py::exception<InputError> input_error(m, "InputError", error.ptr());
  error.attr("__module__") = "witness";  // shown as witness.InputError in tracebacks
  input_error.attr("__module__") = "witness";
  // NOLINTNEXTLINE(performance-unnecessary-value-param): pybind11 takes a void(*)(std::exception_ptr)
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(input_error.ptr(), e.what());
    } catch (const Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });
  m.attr("__version__") = witness_version().substr(witness_version().find(' ') + 1);  // "0.1.0"

  py::class_<Model, std::shared_ptr<Model>>(m, "Model")
      .def_readonly("name", &Model::name)
      .def_readonly("source", &Model::source)
      .def_readonly("format", &Model::format)
      .def_readonly("input_names", &Model::input_names)
      .def_readonly("output_names", &Model::output_names)
      .def_property_readonly("classes", [](const Model& md) { return md.rule.class_labels; })
      .def_property_readonly("columns", &column_list)
      .def_property_readonly("input_width", &Model::input_width)
      .def_property_readonly("output_width", &Model::output_width)
      .def_property_readonly("rule", [](const Model& md) { return md.rule.describe(); })
      .def("predict", &predict, py::arg("x"), py::arg("precision") = "float64")
      .def("outputs", &outputs, py::arg("x"), py::arg("precision") = "float64")
      .def(
          "save_onnx", [](const Model& md, const std::string& path) { save_onnx(md, path); }, py::arg("path"));
  m.def(
      "load_model", [](const std::string& path) { return std::make_shared<Model>(load_model(path)); }, py::arg("path"));

  py::class_<ModelBuilder>(m, "ModelBuilder")
      .def(py::init<std::string, std::vector<std::string>>(), py::arg("name"), py::arg("input_names"))
      .def("input", &ModelBuilder::input)
      .def("width", &ModelBuilder::width)
      .def("dense", [](ModelBuilder& b, int x, const Eigen::MatrixXd& w, const Eigen::VectorXd& bias,
                       const std::string& where) { return b.dense(x, w, bias, where); })
      .def("unary", [](ModelBuilder& b, const std::string& op, int x, const std::string& where,
                       double alpha) { return b.unary(unary_op(op), x, where, alpha); })
      .def("constant", [](ModelBuilder& b, const Eigen::VectorXd& v) { return b.constant(v); })
      .def("add", [](ModelBuilder& b, int a, int c) { return b.binary(OpKind::Add, a, c); })
      .def("tree_ensemble", &tree_ensemble_node)
      .def("finish", [](ModelBuilder& b, int output, const std::string& rule, int node, double threshold,
                        const std::vector<std::string>& classes, const std::string& source) {
        return std::make_shared<Model>(finish_model(b, output, rule, node, threshold, classes, source));
      });

  py::class_<Schema, std::shared_ptr<Schema>>(m, "Schema")
      .def_static(
          "parse", [](const std::string& text, const std::string& source) { return parse_schema(text, source); },
          py::arg("text"), py::arg("source"))
      .def_static(
          "load", [](const std::string& path) { return load_schema(path); }, py::arg("path"))
      .def("with_box", &Schema::with_box, py::arg("box"))
      .def_property_readonly("name", &Schema::name)
      .def_property_readonly("source", &Schema::source)
      .def_property_readonly("label", &Schema::label)
      .def_property_readonly("label_classes", &Schema::label_classes)
      .def_property_readonly("protected", &Schema::protected_names)
      .def_property_readonly("boxes", &Schema::box_names)
      .def_property_readonly("features", &feature_list)
      .def_property_readonly("model_width", &Schema::model_width)
      .def_property_readonly("model_input_names", &Schema::model_input_names)
      .def("to_model",
           [](const Schema& s, const RowMatrix& rows) -> RowMatrix {
             return s.to_model_columns(raw_columns(rows, s, "rows")).transpose();
           })
      .def("check_rows",
           [](const Schema& s, const RowMatrix& rows, const std::string& what) { (void)raw_columns(rows, s, what); });

  m.def("with_raw_columns", &raw_columns_model, py::arg("inner"), py::arg("columns"), py::arg("sources"));
  m.def(
      "infer_schema",
      [](std::string csv_text, const std::string& source, const std::optional<std::string>& label, const Model* model) {
        return infer_schema_toml_text(std::move(csv_text), source, label, model);
      },
      py::arg("csv_text"), py::arg("source"), py::arg("label"), py::arg("model"));
  m.def("check_schema", &check_schema_fits_model, py::arg("schema"), py::arg("model"));
  // Every option of a job as the CLI's flags name them (witness.options documents them).
  m.def("options", [](const std::string& job) {
    py::list out;
    for (const OptionSpec& s : job_options(job)) {
      static const char* const kTypes[] = {"int", "real", "bool", "string"};
      py::dict d;
      d["name"] = s.name;
      d["type"] = kTypes[static_cast<int>(s.type)];
      d["default"] = s.fallback;
      if (s.type == OptionSpec::Type::Int || s.type == OptionSpec::Type::Real)
        d["range"] = py::make_tuple(s.min, s.max);
      if (!s.allowed.empty()) d["allowed"] = s.allowed;
      d["help"] = s.help;
      out.append(d);
    }
    return out;
  });
  m.def("fair", &fair_call);
  m.def("test", &test_call);
  m.def("bias", &bias_call);
  m.def("query", &query_call);
  m.def("write_html_report", [](const std::string& path, const std::string& envelope) {
    write_html_report(path, nlohmann::json::parse(envelope), "path");
  });
}
