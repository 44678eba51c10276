// ONNX graphs built in C++ for the model tests (onnx_test.cpp, loader_checks_test.cpp): a
// ModelProto with opset 13 and ai.onnx.ml 3 imports, inputs, outputs, initializers, nodes and
// their attributes, loaded through parse_onnx as the file named `path`.
//
//   witness::test::GraphBuilder gb;
//   gb.input("x", {-1, 2});                          // [N, 2] floats
//   gb.node("Relu", {"x"}, {"y"});
//   gb.output("y");
//   witness::Model m = gb.load();                    // "built.onnx"
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model/loaders.h"

namespace witness::test {

struct GraphBuilder {
  onnx::ModelProto mp;
  onnx::GraphProto* g;

  GraphBuilder() : g(mp.mutable_graph()) {
    mp.set_ir_version(8);
    auto* o = mp.add_opset_import();
    o->set_version(13);
    auto* ml = mp.add_opset_import();
    ml->set_domain("ai.onnx.ml");
    ml->set_version(3);
  }
  // Sets the version of an imported domain ("" or "ai.onnx.ml").
  void opset(const std::string& domain, std::int64_t version) {
    for (auto& o : *mp.mutable_opset_import()) {
      if (o.domain() == domain) o.set_version(version);
    }
  }
  void input(const std::string& name, std::vector<std::int64_t> dims, int type = onnx::TensorProto::FLOAT) {
    auto* v = g->add_input();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* s = tt->mutable_shape();
    for (const auto d : dims) {
      if (d < 0) {
        s->add_dim()->set_dim_param("N");
      } else {
        s->add_dim()->set_dim_value(d);
      }
    }
  }
  void output(const std::string& name, int type = onnx::TensorProto::FLOAT) {
    auto* v = g->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(type);
  }
  onnx::TensorProto* init(const std::string& name, std::vector<std::int64_t> dims, std::vector<float> data) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (const auto d : dims) t->add_dims(d);
    for (const float v : data) t->add_float_data(v);
    return t;
  }
  void init_ints(const std::string& name, std::vector<std::int64_t> dims, std::vector<std::int64_t> data) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (const auto d : dims) t->add_dims(d);
    for (const auto v : data) t->add_int64_data(v);
  }
  void init_strings(const std::string& name, std::vector<std::int64_t> dims, std::vector<std::string> data) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::STRING);
    for (const auto d : dims) t->add_dims(d);
    for (const auto& v : data) t->add_string_data(v);
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                        const std::string& name = "", const std::string& domain = "") {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? out.at(0) : name);
    n->set_domain(domain);
    for (auto& s : in) n->add_input(s);
    for (auto& s : out) n->add_output(s);
    return n;
  }
  static void attr(onnx::NodeProto* n, const std::string& name, std::int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, const char* v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, std::vector<std::int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (const auto x : v) a->add_ints(x);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, std::vector<float> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOATS);
    for (const auto x : v) a->add_floats(x);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, std::vector<std::string> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRINGS);
    for (const auto& x : v) a->add_strings(x);
  }
  // A double tensor attribute (the `*_as_tensor` forms of ai.onnx.ml 3).
  static void attr_tensor(onnx::NodeProto* n, const std::string& name, std::vector<double> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(onnx::TensorProto::DOUBLE);
    t->add_dims(static_cast<std::int64_t>(v.size()));
    for (const double x : v) t->add_double_data(x);
  }
  // Removes a node's attribute (to build a variant of a valid node).
  static void drop(onnx::NodeProto* n, const std::string& name) {
    auto* attrs = n->mutable_attribute();
    for (int i = 0; i < attrs->size(); ++i) {
      if (attrs->Get(i).name() == name) {
        attrs->DeleteSubrange(i, 1);
        return;
      }
    }
  }
  [[nodiscard]] std::string bytes() const {
    std::string out;
    mp.SerializeToString(&out);
    return out;
  }
  [[nodiscard]] Model load(const std::string& path = "built.onnx") const { return parse_onnx(bytes(), path); }
};

}  // namespace witness::test
