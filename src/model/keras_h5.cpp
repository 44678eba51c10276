// Keras .h5 (HDF5) models as `model.save("m.h5")` writes them: the root attribute `model_config`
// holds the architecture as JSON, `model_weights/<layer>/` the weights, listed by the layer
// group's `weight_names` attribute (Keras 2.3: `<layer>/kernel:0`, `<layer>/bias:0`).
#include <H5Cpp.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "core/error.h"
#include "core/process.h"
#include "model/loaders.h"

namespace witness {
namespace {

using nlohmann::json;

constexpr const char* kSupportedLayers = "Dense, Activation, ReLU, LeakyReLU, InputLayer, Dropout, Flatten";
// Caps on what a corrupt header can make us allocate.
constexpr hsize_t kMaxStringBytes = hsize_t{1} << 28;
constexpr hsize_t kMaxWeights = hsize_t{1} << 28;
constexpr int kMaxWidth = 1'000'000;  // as mlp-json-v1's input_dim
constexpr int kMaxConfigDepth = 64;   // nesting of the model_config JSON

// HDF5 prints its error stack to stderr by default. Silence it for this thread while loading and
// restore the caller's handler afterwards, so other HDF5 users keep their setting.
class QuietHdf5 {
 public:
  QuietHdf5() {
    H5::Exception::getAutoPrint(func_, &data_);
    H5::Exception::dontPrint();
  }
  ~QuietHdf5() {
    try {
      H5::Exception::setAutoPrint(func_, data_);
    } catch (const H5::Exception&) {  // nothing sensible to do in a destructor
    }
  }
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// The innermost message on HDF5's error stack (e.g. "truncated file: eof = 1000, ..."), which says
// far more than the C++ wrapper's "H5Fopen failed". Must run before the next HDF5 call clears it.
std::string hdf5_reason() {
  std::string reason;
  auto visit = [](unsigned, const H5E_error2_t* err, void* data) -> herr_t {
    auto* out = static_cast<std::string*>(data);
    if (out->empty() && err != nullptr && err->desc != nullptr) *out = err->desc;
    return 0;
  };
  try {
    H5::Exception::walkErrorStack(H5E_WALK_UPWARD, visit, &reason);
  } catch (const H5::Exception&) {
    return {};
  }
  return reason;
}

std::string with_reason(std::string what) {
  const std::string reason = hdf5_reason();
  // Cleared once read: the stack's records hold copies of their messages until then.
  try {
    H5::Exception::clearErrorStack();
  } catch (const H5::Exception&) {  // the reason is already taken
  }
  if (!reason.empty()) what += " (" + reason + ")";
  return what;
}

// Runs one HDF5 call; a failure becomes an InputError saying what was expected.
template <typename F>
auto h5(const std::string& path, const std::string& where, const std::string& what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const H5::Exception&) {
    throw InputError(path, where, with_reason(what));
  }
}

// HDF5 looks for its signature at 0, 512, 1024, 2048, ... (a user block may precede it).
bool has_hdf5_signature(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  static constexpr char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  for (std::streamoff off = 0;; off = off == 0 ? 512 : 2 * off) {
    char buf[8] = {};
    in.clear();
    in.seekg(off);
    if (!in.read(buf, sizeof buf)) return false;
    if (std::equal(buf, buf + 8, kSignature)) return true;
  }
}

H5::H5File open_file(const std::string& path) {
  if (!std::ifstream(path, std::ios::binary)) throw InputError(path, "", "cannot open file");
  try {
    return H5::H5File(path, H5F_ACC_RDONLY);
  } catch (const H5::Exception&) {
    const std::string what = with_reason("truncated or corrupt HDF5 file");
    if (!has_hdf5_signature(path)) throw InputError(path, "", "not an HDF5 file");
    throw InputError(path, "", what);
  }
}

// A link at a '/'-separated path below `loc`. Each step is looked at before it is followed, and
// must be a hard link: a loader reads only its own file, and an external link (another file) or a
// soft link (which may lead to one) would make it read elsewhere. Throws InputError for such a link.
bool link_exists(const H5::Group& loc, const std::string& rel, const std::string& path, const std::string& where) {
  try {
    for (std::size_t pos = rel.find('/', 1);; pos = rel.find('/', pos + 1)) {
      const std::string step = rel.substr(0, pos);
      if (!loc.nameExists(step)) return false;
      H5L_info_t info{};
      if (H5Lget_info(loc.getId(), step.c_str(), &info, H5P_DEFAULT) < 0) return false;
      if (info.type != H5L_TYPE_HARD) {
        throw InputError(path, where,
                         fmt::format("{} is {} link; a model file must hold its own weights", step,
                                     info.type == H5L_TYPE_EXTERNAL ? "an external (another file's)" : "a soft"));
      }
      if (pos == std::string::npos) return true;
    }
  } catch (const H5::Exception&) {  // an intermediate step that is not a group
    return false;
  }
}

// A dataset whose values are stored in this file: HDF5 external storage and virtual datasets
// read other files, so they are refused.
void check_stored_here(const H5::DataSet& ds, const std::string& path, const std::string& where,
                       const std::string& name) {
  const H5::DSetCreatPropList dcpl = ds.getCreatePlist();
  if (H5Pget_external_count(dcpl.getId()) != 0) {
    throw InputError(path, where,
                     fmt::format("dataset {} keeps its values in another file (HDF5 external storage)", name));
  }
  if (H5Pget_layout(dcpl.getId()) == H5D_VIRTUAL) {
    throw InputError(path, where,
                     fmt::format("dataset {} is a virtual dataset (its values come from other files)", name));
  }
}

// Reads a string attribute of any shape, stored as variable- or fixed-length strings.
std::vector<std::string> read_strings(const H5::Attribute& attr, const std::string& path, const std::string& where) {
  if (attr.getTypeClass() != H5T_STRING) throw InputError(path, where, "expected a string attribute");
  const H5::StrType type = attr.getStrType();
  const H5::DataSpace space = attr.getSpace();
  const hssize_t n = space.getSimpleExtentNpoints();
  if (n < 0 || static_cast<hsize_t>(n) > kMaxStringBytes) throw InputError(path, where, "bad attribute size");
  std::vector<std::string> out;
  if (n == 0) return out;
  if (type.isVariableStr()) {
    std::vector<char*> ptrs(static_cast<std::size_t>(n), nullptr);
    attr.read(type, ptrs.data());
    // HDF5 allocated the strings; hand them back even if copying throws.
    struct Reclaim {
      std::vector<char*>& p;
      const H5::StrType& t;
      const H5::DataSpace& s;
      ~Reclaim() {
        try {
          H5::DataSet::vlenReclaim(p.data(), t, s);
        } catch (const H5::Exception&) {  // leaks at worst
        }
      }
    } reclaim{ptrs, type, space};
    for (const char* p : ptrs) out.emplace_back(p == nullptr ? "" : p);
    return out;
  }
  const std::size_t size = type.getSize();
  if (size == 0 || static_cast<hsize_t>(n) * size > kMaxStringBytes) throw InputError(path, where, "bad string size");
  std::vector<char> buf(static_cast<std::size_t>(n) * size);
  attr.read(type, buf.data());
  const bool space_pad = type.getStrpad() == H5T_STR_SPACEPAD;
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
    std::string s(buf.data() + i * size, size);
    s.resize(std::min(s.find('\0'), s.size()));
    if (space_pad) s.erase(s.find_last_not_of(' ') + 1);
    out.push_back(std::move(s));
  }
  return out;
}

std::string shape_text(const std::vector<hsize_t>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

// ---- model_config ----

struct Layer {
  std::string cls;
  std::string name;
  const json* config = nullptr;  // the layer's "config" object
  const json* entry = nullptr;   // the whole layer entry
};

const json& empty_object() {
  static const json kEmpty = json::object();
  return kEmpty;
}

Layer layer_entry(const json& entry, std::size_t index, const std::string& path) {
  const std::string where = fmt::format("model_config layers[{}]", index);
  if (!entry.is_object()) throw InputError(path, where, "expected an object");
  const auto cls = entry.find("class_name");
  if (cls == entry.end() || !cls->is_string()) throw InputError(path, where, "missing string field \"class_name\"");
  Layer l;
  l.cls = cls->get<std::string>();
  l.entry = &entry;
  l.config = &empty_object();
  if (const auto c = entry.find("config"); c != entry.end()) {
    if (!c->is_object()) throw InputError(path, where + ".config", "expected an object");
    l.config = &*c;
  }
  if (const auto n = l.config->find("name"); n != l.config->end() && n->is_string()) {
    l.name = n->get<std::string>();
  } else if (const auto m = entry.find("name"); m != entry.end() && m->is_string()) {
    l.name = m->get<std::string>();
  } else {
    l.name = fmt::format("layers[{}]", index);
  }
  return l;
}

// Layer names a Functional model's inbound node or output list refers to: Keras 2 writes
// [["dense_1", 0, 0, {}]], Keras 3 {"args": [{"config": {"keras_history": ["dense_1", 0, 0]}}]}.
void referenced_layers(const json& v, std::vector<std::string>& out) {
  if (v.is_array()) {
    if (!v.empty() && v[0].is_string()) {
      out.push_back(v[0].get<std::string>());
      return;
    }
    for (const json& e : v) referenced_layers(e, out);
  } else if (v.is_object()) {
    if (const auto h = v.find("keras_history"); h != v.end()) return referenced_layers(*h, out);
    for (const auto& [key, e] : v.items()) {
      if (key != "kwargs") referenced_layers(e, out);
    }
  }
}

// The layers of a Functional model, in order, when they form one chain from input to output.
std::vector<Layer> functional_chain(const json& config, const std::string& path) {
  const auto layers_it = config.find("layers");
  if (layers_it == config.end() || !layers_it->is_array()) {
    throw InputError(path, "model_config", "expected config.layers to be an array");
  }
  std::vector<Layer> all;
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < layers_it->size(); ++i) {
    all.push_back(layer_entry((*layers_it)[i], i, path));
    index.emplace(all.back().name, i);
  }
  std::vector<std::vector<std::string>> inputs(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto nodes = all[i].entry->find("inbound_nodes");
    if (nodes == all[i].entry->end() || !nodes->is_array() || nodes->empty()) continue;
    const std::string where = fmt::format("layer '{}'", all[i].name);
    if (nodes->size() > 1)
      throw UnsupportedError(path, where, "shared layers (called more than once) are not supported");
    referenced_layers((*nodes)[0], inputs[i]);
  }
  std::vector<std::string> outputs;
  if (const auto o = config.find("output_layers"); o != config.end()) referenced_layers(*o, outputs);
  if (outputs.size() != 1) {
    throw UnsupportedError(path, "model_config",
                           fmt::format("{} output layers; only one is supported", outputs.size()));
  }
  std::vector<std::size_t> chain;
  std::vector<bool> seen(all.size(), false);
  std::string current = outputs[0];
  for (;;) {
    const auto it = index.find(current);
    if (it == index.end())
      throw InputError(path, "model_config", fmt::format("refers to undefined layer '{}'", current));
    if (seen[it->second]) throw InputError(path, "model_config", fmt::format("layer '{}' is in a cycle", current));
    seen[it->second] = true;
    chain.push_back(it->second);
    const std::vector<std::string>& in = inputs[it->second];
    if (in.empty()) break;
    if (in.size() != 1) {
      throw UnsupportedError(path, fmt::format("layer '{}'", current),
                             fmt::format("has {} inputs; only a simple chain of layers is supported", in.size()));
    }
    current = in[0];
  }
  if (chain.size() != all.size()) {
    throw UnsupportedError(path, "model_config",
                           fmt::format("only {} of the {} layers lie on the path from the input to the output; "
                                       "only a simple chain of layers is supported",
                                       chain.size(), all.size()));
  }
  std::vector<Layer> out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) out.push_back(all[*it]);
  return out;
}

std::vector<Layer> layer_chain(const json& doc, const std::string& path) {
  if (!doc.is_object()) throw InputError(path, "attribute model_config", "expected a JSON object");
  const auto cls = doc.find("class_name");
  if (cls == doc.end() || !cls->is_string()) {
    throw InputError(path, "attribute model_config", "missing string field \"class_name\"");
  }
  const auto config = doc.find("config");
  if (config == doc.end()) throw InputError(path, "attribute model_config", "missing field \"config\"");
  const std::string model_class = cls->get<std::string>();
  if (model_class == "Sequential") {
    // Keras >= 2.2.3 writes {"name", "layers": [...]}; older versions the bare list.
    const json* layers = config->is_array() ? &*config : nullptr;
    if (config->is_object()) {
      if (const auto l = config->find("layers"); l != config->end() && l->is_array()) layers = &*l;
    }
    if (layers == nullptr) throw InputError(path, "model_config", "expected config.layers to be an array");
    std::vector<Layer> out;
    for (std::size_t i = 0; i < layers->size(); ++i) out.push_back(layer_entry((*layers)[i], i, path));
    return out;
  }
  if ((model_class == "Functional" || model_class == "Model") && config->is_object()) {
    return functional_chain(*config, path);
  }
  throw UnsupportedError(path, "model_config",
                         fmt::format("model class '{}' is not supported (supported: Sequential, and Functional or "
                                     "Model when the layers form a simple chain)",
                                     model_class));
}

// Width declared by a shape [null, n]; 0 when `shape` is absent.
int declared_width(const json* shape, const std::string& path, const std::string& where) {
  if (shape == nullptr || shape->is_null()) return 0;
  if (!shape->is_array() || shape->size() < 2) throw InputError(path, where, "expected an input shape [null, n]");
  if (shape->size() > 2) {
    throw UnsupportedError(
        path, where, fmt::format("input shape {} is not a vector; only vector inputs are supported", shape->dump()));
  }
  const json& n = (*shape)[1];
  if (!n.is_number_integer() || n.get<long long>() <= 0 || n.get<long long>() > kMaxWidth) {
    throw InputError(path, where, fmt::format("input shape {}: expected a positive width", shape->dump()));
  }
  return n.get<int>();
}

const json* find_field(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// The input width the config declares on the layers up to the first Dense; 0 if none does.
int config_input_width(const std::vector<Layer>& chain, const std::string& path) {
  for (const Layer& l : chain) {
    const std::string where = fmt::format("layer '{}'", l.name);
    for (const char* key : {"batch_input_shape", "batch_shape"}) {
      if (const int w = declared_width(find_field(*l.config, key), path, where)) return w;
    }
    if (const json* build = find_field(*l.entry, "build_config"); build != nullptr && build->is_object()) {
      if (const int w = declared_width(find_field(*build, "input_shape"), path, where)) return w;
    }
    if (l.cls == "Dense") break;
  }
  return 0;
}

double number_field(const Layer& l, const char* key, double fallback, const std::string& path) {
  const json* v = find_field(*l.config, key);
  if (v == nullptr || v->is_null()) return fallback;
  if (!v->is_number())
    throw InputError(path, fmt::format("layer '{}'", l.name), fmt::format("\"{}\" must be a number", key));
  return v->get<double>();
}

std::string activation_of(const Layer& l, const std::string& path) {
  const json* v = find_field(*l.config, "activation");
  if (v == nullptr || v->is_null()) return "linear";
  if (!v->is_string()) {
    throw UnsupportedError(path, fmt::format("layer '{}'", l.name),
                           fmt::format("activation {} (expected relu, sigmoid, softmax, tanh or linear)", v->dump()));
  }
  return v->get<std::string>();
}

int activation_node(ModelBuilder& b, int x, const std::string& act, const std::string& path, const std::string& where,
                    const std::string& node) {
  if (act == "relu") return b.unary(OpKind::Relu, x, node);
  if (act == "sigmoid") return b.unary(OpKind::Sigmoid, x, node);
  if (act == "softmax") return b.unary(OpKind::Softmax, x, node);
  if (act == "tanh") return b.unary(OpKind::Tanh, x, node);
  if (act == "linear") return x;
  throw UnsupportedError(path, where,
                         fmt::format("activation \"{}\" (expected relu, sigmoid, softmax, tanh or linear)", act));
}

// ---- weights ----

class Weights {
 public:
  Weights(const H5::H5File& file, std::string path) : path_(std::move(path)) {
    // Whole-model files keep the weights under model_weights; save_weights() files at the root.
    const bool nested = h5(path_, "", "cannot list the root group",
                           [&] { return link_exists(file.openGroup("/"), "model_weights", path_, ""); });
    prefix_ = nested ? "model_weights/" : "";
    root_ = h5(path_, "", "cannot open group model_weights",
               [&] { return nested ? file.openGroup("model_weights") : file.openGroup("/"); });
  }

  struct Dense {
    H5::DataSet kernel;
    std::optional<H5::DataSet> bias;
    std::string kernel_name;  // full paths, for messages
    std::string bias_name;
  };

  Dense dense(const std::string& layer, bool use_bias) const {
    const std::string where = fmt::format("layer '{}'", layer);
    const std::string group_name = prefix_ + layer;
    if (!link_exists(root_, layer, path_, where)) {
      throw InputError(path_, where, fmt::format("group {} missing", group_name));
    }
    const H5::Group group =
        h5(path_, where, fmt::format("{} is not a group", group_name), [&] { return root_.openGroup(layer); });
    std::string kernel = layer + "/kernel:0";
    std::string bias = layer + "/bias:0";
    const bool listed = h5(path_, where, "cannot read the attribute list of " + group_name,
                           [&] { return group.attrExists("weight_names"); });
    if (listed) {
      // weight_names is the authority: Keras may store a layer's weights under another name
      // (e.g. dense_4/dense_4_1/kernel:0 after a name clash).
      const std::string attr_where = where + " attribute weight_names";
      const std::vector<std::string> names = h5(path_, attr_where, "cannot read the attribute", [&] {
        return read_strings(group.openAttribute("weight_names"), path_, attr_where);
      });
      const std::size_t expected = use_bias ? 2 : 1;
      if (names.size() != expected) {
        throw InputError(path_, attr_where,
                         fmt::format("lists {} weights, expected {} ({})", names.size(), expected,
                                     use_bias ? "kernel and bias" : "kernel; use_bias is false"));
      }
      auto base_starts = [](const std::string& s, const char* prefix) {
        const auto slash = s.find_last_of('/');
        return s.compare(slash == std::string::npos ? 0 : slash + 1, std::strlen(prefix), prefix) == 0;
      };
      // Keras lists the kernel first; the names decide only when they say something.
      kernel = names[0];
      if (use_bias) {
        bias = names[1];
        if (base_starts(names[0], "bias") && base_starts(names[1], "kernel")) std::swap(kernel, bias);
      }
    }
    Dense d{open_dataset(group, group_name, kernel, where), std::nullopt, group_name + "/" + kernel, {}};
    if (use_bias) {
      d.bias = open_dataset(group, group_name, bias, where);
      d.bias_name = group_name + "/" + bias;
    }
    return d;
  }

  // The values of a float dataset, row-major, after checking its shape is `expected` (0 = any).
  std::vector<double> read(const H5::DataSet& ds, const std::string& name, const std::vector<hsize_t>& expected,
                           const std::string& where, std::vector<hsize_t>* dims_out = nullptr) const {
    const std::vector<hsize_t> dims = shape(ds, name, where);
    bool match = dims.size() == expected.size();
    for (std::size_t i = 0; match && i < dims.size(); ++i) match = expected[i] == 0 || dims[i] == expected[i];
    if (!match) {
      std::vector<std::string> want;
      want.reserve(expected.size());
      for (hsize_t e : expected) want.push_back(e == 0 ? "?" : std::to_string(e));
      throw InputError(
          path_, where,
          fmt::format("dataset {} has shape {}, expected [{}]", name, shape_text(dims), fmt::join(want, ", ")));
    }
    if (dims_out != nullptr) *dims_out = dims;
    hsize_t count = 1;
    for (hsize_t d : dims) count *= d;
    const H5T_class_t cls =
        h5(path_, where, "cannot read the type of dataset " + name, [&] { return ds.getTypeClass(); });
    if (cls != H5T_FLOAT)
      throw InputError(path_, where, fmt::format("dataset {} does not hold floating-point numbers", name));
    // HDF5 converts float16/32/64 to double exactly.
    std::vector<double> values(static_cast<std::size_t>(count));
    if (count > 0) {
      h5(path_, where, "cannot read dataset " + name, [&] { ds.read(values.data(), H5::PredType::NATIVE_DOUBLE); });
    }
    return values;
  }

  std::vector<hsize_t> shape(const H5::DataSet& ds, const std::string& name, const std::string& where) const {
    return h5(path_, where, "cannot read the shape of dataset " + name, [&] {
      const H5::DataSpace space = ds.getSpace();
      const int rank = space.isSimple() ? space.getSimpleExtentNdims() : -1;
      if (rank < 0 || rank > 8) throw InputError(path_, where, fmt::format("dataset {} has an unexpected shape", name));
      std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
      space.getSimpleExtentDims(dims.data());
      hsize_t count = 1;
      for (hsize_t d : dims) {
        if (d != 0 && count > kMaxWeights / d) {
          throw InputError(path_, where, fmt::format("dataset {} is implausibly large: {}", name, shape_text(dims)));
        }
        count *= d;
      }
      return dims;
    });
  }

 private:
  H5::DataSet open_dataset(const H5::Group& group, const std::string& group_name, const std::string& rel,
                           const std::string& where) const {
    const std::string name = group_name + "/" + rel;
    if (!link_exists(group, rel, path_, where)) throw InputError(path_, where, fmt::format("dataset {} missing", name));
    H5::DataSet ds = h5(path_, where, fmt::format("{} is not a dataset", name), [&] { return group.openDataSet(rel); });
    h5(path_, where, "cannot read the storage of dataset " + name, [&] { check_stored_here(ds, path_, where, name); });
    return ds;
  }

  std::string path_;
  std::string prefix_;
  H5::Group root_;
};

// First non-finite entry, for a message that points at it.
std::optional<std::size_t> first_non_finite(const std::vector<double>& v) {
  const auto it = std::find_if(v.begin(), v.end(), [](double d) { return !std::isfinite(d); });
  if (it == v.end()) return std::nullopt;
  return static_cast<std::size_t>(it - v.begin());
}

// The model_config attribute, parsed (nested at most kMaxConfigDepth deep).
json read_config(const H5::H5File& file, const std::string& path) {
  const bool has_config =
      h5(path, "", "cannot read the root group's attributes", [&] { return file.attrExists("model_config"); });
  if (!has_config) throw InputError(path, "", "missing attribute model_config (not a Keras model file?)");
  const std::vector<std::string> config_text = h5(path, "attribute model_config", "cannot read the attribute", [&] {
    return read_strings(file.openAttribute("model_config"), path, "attribute model_config");
  });
  if (config_text.size() != 1) throw InputError(path, "attribute model_config", "expected a single string");
  json doc;
  try {
    // Keras nests a config about ten levels deep. Deeper is refused while parsing: the walks over
    // the config (referenced_layers, dump() in messages) recurse, and a 1 MB attribute of '['
    // would exhaust the stack.
    doc = json::parse(config_text[0], [&](int depth, json::parse_event_t, const json&) {
      if (depth > kMaxConfigDepth)
        throw InputError(path, "attribute model_config", fmt::format("JSON nested more than {} deep", kMaxConfigDepth));
      return true;
    });
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    const auto pos = what.find("parse error");
    throw InputError(path, "attribute model_config",
                     "not valid JSON: " + (pos == std::string::npos ? what : what.substr(pos)));
  }
  return doc;
}

bool use_bias(const Layer& l, const std::string& path) {
  const json* v = find_field(*l.config, "use_bias");
  if (v != nullptr && !v->is_boolean()) {
    throw InputError(path, fmt::format("layer '{}'", l.name), "\"use_bias\" must be true or false");
  }
  return v == nullptr || v->get<bool>();
}

// A Dense layer (its kernel, bias and activation) on top of node x.
int dense_layer(ModelBuilder& b, int x, const Layer& l, const Weights& weights, const std::string& path) {
  const std::string where = fmt::format("layer '{}'", l.name);
  const std::string act = activation_of(l, path);
  hsize_t units = 0;  // 0: take the kernel's
  if (const json* u = find_field(*l.config, "units"); u != nullptr) {
    if (!u->is_number_integer() || u->get<long long>() <= 0 || u->get<long long>() > kMaxWidth) {
      throw InputError(path, where, "\"units\" must be a positive integer");
    }
    units = u->get<hsize_t>();
  }
  const bool bias = use_bias(l, path);
  const Weights::Dense d = weights.dense(l.name, bias);
  const auto in = static_cast<hsize_t>(b.width(x));
  std::vector<hsize_t> dims;
  const std::vector<double> kernel = weights.read(d.kernel, d.kernel_name, {in, units}, where, &dims);
  units = dims[1];
  if (units == 0) throw InputError(path, where, fmt::format("dataset {} has no outputs", d.kernel_name));
  if (const auto k = first_non_finite(kernel)) {
    throw InputError(
        path, where,
        fmt::format("dataset {} holds NaN or infinity at [{}, {}]", d.kernel_name, *k / units, *k % units));
  }
  Eigen::VectorXd bias_values = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(units));
  if (d.bias) {
    const std::vector<double> values = weights.read(*d.bias, d.bias_name, {units}, where);
    if (const auto k = first_non_finite(values)) {
      throw InputError(path, where, fmt::format("dataset {} holds NaN or infinity at [{}]", d.bias_name, *k));
    }
    bias_values = Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(units));
  }
  // Keras stores the kernel [in][out] row-major; the IR wants [out][in].
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::MatrixXd w =
      Eigen::Map<const RowMajor>(kernel.data(), static_cast<Eigen::Index>(in), static_cast<Eigen::Index>(units))
          .transpose();
  x = b.dense(x, std::move(w), std::move(bias_values), l.name);
  return activation_node(b, x, act, path, where, l.name + "/" + act);
}

Model load(const std::string& path) {
  const H5::H5File file = open_file(path);
  const json doc = read_config(file, path);
  const std::vector<Layer> chain = layer_chain(doc, path);
  if (chain.empty()) throw InputError(path, "model_config", "the model has no layers");
  // Reject unsupported layers before anything else complains about their shapes or weights.
  static const std::vector<std::string> kSupported = {"Dense",      "Activation", "ReLU",   "LeakyReLU",
                                                      "InputLayer", "Dropout",    "Flatten"};
  for (const Layer& l : chain) {
    if (std::find(kSupported.begin(), kSupported.end(), l.cls) == kSupported.end()) {
      throw UnsupportedError(path, fmt::format("layer '{}'", l.name),
                             fmt::format("layer class '{}' is not supported (supported: {})", l.cls, kSupportedLayers));
    }
  }

  const Weights weights(file, path);
  int width = config_input_width(chain, path);
  if (width == 0) {
    // No declared input shape: the first Dense kernel's rows tell it.
    const auto first = std::find_if(chain.begin(), chain.end(), [](const Layer& l) { return l.cls == "Dense"; });
    if (first == chain.end()) throw InputError(path, "model_config", "no layer declares the input shape");
    const Weights::Dense d = weights.dense(first->name, use_bias(*first, path));
    const std::string where = fmt::format("layer '{}'", first->name);
    const std::vector<hsize_t> dims = weights.shape(d.kernel, d.kernel_name, where);
    if (dims.size() != 2 || dims[0] == 0 || dims[0] > static_cast<hsize_t>(kMaxWidth)) {
      throw InputError(path, where,
                       fmt::format("dataset {} has shape {}, expected [in, out]", d.kernel_name, shape_text(dims)));
    }
    width = static_cast<int>(dims[0]);
  }

  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(width));
  for (int i = 0; i < width; ++i) names.push_back("x" + std::to_string(i));
  ModelBuilder b(std::filesystem::path(path).stem().string(), std::move(names));
  b.set_source(path, "keras-h5");
  int x = b.input();
  for (const Layer& l : chain) {
    const std::string where = fmt::format("layer '{}'", l.name);
    if (l.cls == "InputLayer" || l.cls == "Dropout" || l.cls == "Flatten") continue;  // identities at inference
    if (l.cls == "Activation") {
      x = activation_node(b, x, activation_of(l, path), path, where, l.name);
    } else if (l.cls == "ReLU") {
      const json* max_value = find_field(*l.config, "max_value");
      if (max_value != nullptr && !max_value->is_null()) {
        throw UnsupportedError(path, where, "ReLU with max_value is not supported");
      }
      if (number_field(l, "threshold", 0.0, path) != 0.0) {
        throw UnsupportedError(path, where, "ReLU with a nonzero threshold is not supported");
      }
      const double slope = number_field(l, "negative_slope", 0.0, path);
      x = slope == 0.0 ? b.unary(OpKind::Relu, x, l.name) : b.unary(OpKind::LeakyRelu, x, l.name, slope);
    } else if (l.cls == "LeakyReLU") {
      // Keras 2 calls the slope alpha (default 0.3), Keras 3 negative_slope.
      const double alpha = number_field(l, "negative_slope", number_field(l, "alpha", 0.3, path), path);
      x = b.unary(OpKind::LeakyRelu, x, l.name, alpha);
    } else {  // Dense
      x = dense_layer(b, x, l, weights, path);
    }
  }
  return b.finish(x, DecisionRule{});
}

Model load_checked(const std::string& path) {
  const QuietHdf5 quiet;
  try {
    return load(path);
  } catch (const H5::Exception& e) {  // a call not wrapped by h5(): still bad input, never a crash
    throw InputError(path, "", with_reason("cannot read the HDF5 file: " + e.getDetailMsg()));
  } catch (const json::exception& e) {
    throw InputError(path, "attribute model_config", e.what());
  }
}

// HDF5 1.10 does not bounds-check all of a file's metadata: fuzzing found corrupt files on which
// it segfaults (in H5HG_read) or allocates and clears gigabytes. So a child process reads the file
// first, and this process reads only files the child read cleanly. Returns the child's error
// message ('U' + text for UnsupportedError, 'I' + text for any other error), if it reported one.
std::optional<std::string> read_in_child(const std::string& path) {
  constexpr auto kTimeout = std::chrono::seconds(30);
  const Isolated r = run_isolated(
      [&path]() -> std::string {
        try {
          (void)load_checked(path);
          return {};
        } catch (const UnsupportedError& e) {
          return std::string("U") + e.what();
        } catch (const std::exception& e) {
          return std::string("I") + e.what();
        }
      },
      kTimeout);
  switch (r.outcome) {
    case Isolated::Outcome::NotRun: return std::nullopt;  // cannot isolate: read directly
    case Isolated::Outcome::Timeout:
      throw InputError(path, "",
                       fmt::format("corrupt HDF5 file: reading it did not finish within {} s", kTimeout.count()));
    case Isolated::Outcome::Crashed:
      if (r.signal != 0)
        throw InputError(path, "",
                         fmt::format("corrupt HDF5 file: the HDF5 library crashed reading it (signal {})", r.signal));
      throw InputError(path, "", "corrupt HDF5 file: the HDF5 library crashed reading it");
    case Isolated::Outcome::Returned: break;
  }
  if (r.message.empty()) return std::nullopt;
  return r.message;
}

}  // namespace

Model load_keras_h5(const std::string& path) {
  // One reader at a time in this process: a fork while another thread holds HDF5's (or the error
  // handler's) state would leave the child waiting on a lock no thread of it will release, and the
  // file would be reported corrupt after the timeout (witness serve loads models on job threads).
  static std::mutex reading;
  const std::lock_guard lock(reading);
  if (const auto error = read_in_child(path)) {
    if ((*error)[0] == 'U') throw UnsupportedError(error->substr(1));
    throw InputError(error->substr(1));
  }
  return load_checked(path);
}

}  // namespace witness
