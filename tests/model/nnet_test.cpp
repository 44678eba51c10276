// The .nnet loader: small networks written here and checked against hand-computed forward passes
// (with and without the file's normalisation), a Fairify network written as .nnet and read back,
// and malformed files (each error names the file and the 1-based line).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "dataset_rows.h"
#include "model/evaluator.h"
#include "model/loaders.h"
#include "support/paths.h"

namespace witness {
namespace {

namespace fs = std::filesystem;

using test::kFairify;

using test::temp_path;

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream out(path, std::ios::binary);
  out << text;
  return path;
}

// Lines joined with '\n' (and a final newline).
std::string lines(const std::vector<std::string>& ls) {
  std::string s;
  for (const auto& l : ls) s += l + "\n";
  return s;
}

// A 2-3-1 network, identity normalisation. Line numbers: 1 comment, 2 header, 3 sizes,
// 4 symmetric, 5 mins, 6 maxs, 7 means, 8 ranges, 9-11 weights 1, 12-14 biases 1, 15 weights 2,
// 16 bias 2.
std::vector<std::string> base_lines() {
  return {"// a 2-3-1 test network",
          "2,2,1,3,",
          "2,3,1,",
          "0,",
          "-10,-10,",
          "10,10,",
          "0,0,0,",
          "1,1,1,",
          "0.5,-1,",
          "1,1,",
          "-2,0.25,",
          "0.1,",
          "-1,",
          "0,",
          "1,-0.5,2,",
          "-0.75,"};
}

const double kW1[3][2] = {{0.5, -1}, {1, 1}, {-2, 0.25}};
const double kB1[3] = {0.1, -1, 0};
const double kW2[3] = {1, -0.5, 2};
const double kB2 = -0.75;

// The reference forward pass, written out by hand.
double forward(double x0, double x1) {
  double y = kB2;
  for (int j = 0; j < 3; ++j) {
    const double h = kW1[j][0] * x0 + kW1[j][1] * x1 + kB1[j];
    y += kW2[j] * std::max(0.0, h);
  }
  return y;
}

Eigen::MatrixXd sample_inputs() {
  Eigen::MatrixXd x(2, 7);
  x << 0, 1, -3, 2.5, 7, 100, -0.3,  // 100 is outside [min, max]: evaluated unclipped
      0, 2, 1, -4, 0.5, -50, 0.7;
  return x;
}

void expect_near_rel(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-14 * std::max(1.0, std::abs(want))) << what;
}

// The message of the InputError `f` throws ("" and a test failure when it throws none).
std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

int count_ops(const Model& m, OpKind op) {
  int n = 0;
  for (const Node& node : m.nodes) n += node.op == op ? 1 : 0;
  return n;
}

TEST(Nnet, TwoThreeOneMatchesHandForwardPass) {
  const std::string path = write_file("net231.nnet", lines(base_lines()));
  const Model m = load_model(path);
  EXPECT_EQ(m.format, "nnet");
  EXPECT_EQ(m.name, "net231");
  EXPECT_EQ(m.source, path);
  EXPECT_EQ(m.input_names, (std::vector<std::string>{"x0", "x1"}));
  EXPECT_EQ(m.output_names, (std::vector<std::string>{"y0"}));
  // Identity normalisation adds nothing: Input, Dense, Relu, Dense.
  ASSERT_EQ(m.nodes.size(), 4U);
  EXPECT_EQ(m.nodes[1].op, OpKind::Dense);
  EXPECT_EQ(m.nodes[2].op, OpKind::Relu);
  EXPECT_EQ(m.nodes[3].op, OpKind::Dense);
  EXPECT_EQ(m.nodes[1].values(0), std::strtod("0.1", nullptr));  // the exact double of the text
  EXPECT_EQ(m.rule.kind, DecisionRule::Kind::Threshold);
  EXPECT_EQ(m.rule.node, m.output);
  EXPECT_EQ(m.rule.threshold, 0.0);
  ASSERT_EQ(m.input_bounds.size(), 2U);
  EXPECT_EQ(m.input_bounds[0], (std::pair<double, double>{-10, 10}));

  const Eigen::MatrixXd x = sample_inputs();
  const Evaluation r = evaluate(m, x);
  for (Eigen::Index c = 0; c < x.cols(); ++c) {
    const double want = forward(x(0, c), x(1, c));
    expect_near_rel(r.outputs(0, c), want, "column " + std::to_string(c));
    EXPECT_EQ(r.labels[static_cast<std::size_t>(c)], want > 0 ? 1 : 0) << c;
  }
}

// Means (1, -2 | 3) and ranges (4, 0.5 | -2): x_n = (x - mean) / range, y = y_n * range + mean.
std::vector<std::string> normalised_lines() {
  std::vector<std::string> ls = base_lines();
  ls[6] = "1,-2,3,";
  ls[7] = "4,0.5,-2,";
  return ls;
}

TEST(Nnet, NormalisationIsApplied) {
  const std::string path = write_file("norm.nnet", lines(normalised_lines()));
  const Model m = load_nnet(path);
  EXPECT_EQ(count_ops(m, OpKind::Sub), 1);
  EXPECT_EQ(count_ops(m, OpKind::Div), 1);
  EXPECT_EQ(count_ops(m, OpKind::Mul), 1);
  EXPECT_EQ(count_ops(m, OpKind::Add), 1);
  EXPECT_EQ(m.rule.node, m.output);  // the decision reads the de-normalised output
  const Eigen::MatrixXd x = sample_inputs();
  const Evaluation r = evaluate(m, x);
  for (Eigen::Index c = 0; c < x.cols(); ++c) {
    const double want = forward((x(0, c) - 1) / 4, (x(1, c) + 2) / 0.5) * -2 + 3;
    expect_near_rel(r.outputs(0, c), want, "column " + std::to_string(c));
    EXPECT_EQ(r.labels[static_cast<std::size_t>(c)], want > 0 ? 1 : 0) << c;
  }
  // load_model applies the normalisation too.
  EXPECT_EQ(evaluate(load_model(path), x).outputs, r.outputs);
}

TEST(Nnet, OnlyTheNonIdentityPartsAddNodes) {
  std::vector<std::string> ls = base_lines();
  ls[7] = "2,4,1,";  // ranges only; means 0, output identity
  const Model m = parse_nnet(lines(ls), "ranges.nnet");
  EXPECT_EQ(count_ops(m, OpKind::Sub), 0);
  EXPECT_EQ(count_ops(m, OpKind::Div), 1);
  EXPECT_EQ(count_ops(m, OpKind::Mul), 0);
  EXPECT_EQ(count_ops(m, OpKind::Add), 0);
  const Evaluation r = evaluate(m, sample_inputs());
  for (Eigen::Index c = 0; c < r.outputs.cols(); ++c) {
    expect_near_rel(r.outputs(0, c), forward(sample_inputs()(0, c) / 2, sample_inputs()(1, c) / 4), "ranges only");
  }
}

TEST(Nnet, RawOptionIgnoresMeansAndRanges) {
  const std::string path = write_file("raw.nnet", lines(normalised_lines()));
  const Model raw = load_nnet(path, false);
  const Model plain = parse_nnet(lines(base_lines()), "plain.nnet");
  EXPECT_EQ(raw.nodes.size(), plain.nodes.size());
  const Eigen::MatrixXd x = sample_inputs();
  EXPECT_EQ(evaluate(raw, x).outputs, evaluate(plain, x).outputs);
  EXPECT_EQ(raw.input_bounds, plain.input_bounds);
  // A zero range is no error when the ranges are not applied.
  std::vector<std::string> ls = base_lines();
  ls[7] = "0,1,1,";
  EXPECT_NO_THROW((void)parse_nnet(lines(ls), "zero.nnet", false));
}

TEST(Nnet, SeveralOutputsUseArgmax) {
  // 2 -> 2 -> 3, one hidden layer.
  const std::string text = lines({"2,2,3,3", "2,2,3", "0", "0,0", "1,1", "0,0,0", "1,1,1", "1,0", "0,1", "0", "0",
                                  "1,0", "0,1", "1,1", "0", "0", "-0.5"});
  const Model m = parse_nnet(text, "three.nnet");
  EXPECT_EQ(m.output_names, (std::vector<std::string>{"y0", "y1", "y2"}));
  EXPECT_EQ(m.rule.kind, DecisionRule::Kind::ArgMax);
  Eigen::MatrixXd x(2, 4);
  x << 3, 0, 1, -1,  //
      1, 2, 1, -1;
  const Evaluation r = evaluate(m, x);
  for (Eigen::Index c = 0; c < x.cols(); ++c) {
    const double h0 = std::max(0.0, x(0, c));
    const double h1 = std::max(0.0, x(1, c));
    const double y[3] = {h0, h1, h0 + h1 - 0.5};
    for (int i = 0; i < 3; ++i) EXPECT_EQ(r.outputs(i, c), y[i]) << c;
    const int want = static_cast<int>(std::max_element(y, y + 3) - y);
    EXPECT_EQ(r.labels[static_cast<std::size_t>(c)], want) << c;
  }
  // Output normalisation applies to every output (the width-1 constants broadcast).
  const std::string scaled = lines({"2,2,3,3", "2,2,3", "0", "0,0", "1,1", "0,0,10", "1,1,2", "1,0", "0,1", "0", "0",
                                    "1,0", "0,1", "1,1", "0", "0", "-0.5"});
  const Evaluation s = evaluate(parse_nnet(scaled, "scaled.nnet"), x);
  const Eigen::MatrixXd want = ((r.outputs * 2).array() + 10).matrix();
  EXPECT_EQ(s.outputs, want);
}

TEST(Nnet, CommentsWhitespaceAndLineEndings) {
  const Eigen::MatrixXd x = sample_inputs();
  const Eigen::MatrixXd want = evaluate(parse_nnet(lines(base_lines()), "base.nnet"), x).outputs;
  // Many comments, blank lines, spaces and tabs, no trailing commas, CRLF endings, no final newline.
  std::string text = "// first\r\n//second, with, commas\r\n   // indented comment\r\n\r\n";
  std::vector<std::string> ls = base_lines();
  for (std::size_t i = 1; i < ls.size(); ++i) {
    std::string l = ls[i];
    if (i % 2 == 0 && l.back() == ',') l.pop_back();
    std::string spaced;
    for (char c : l) spaced += c == ',' ? std::string(" ,\t ") : std::string(1, c);
    text += "  " + spaced + " \r\n";
    if (i == 8) text += "\r\n";
  }
  text.resize(text.size() - 2);
  EXPECT_EQ(evaluate(parse_nnet(text, "spaced.nnet"), x).outputs, want);
  // Leading '+' and exponents.
  ls[8] = "+5e-1, -1.0E0,";
  EXPECT_EQ(evaluate(parse_nnet(lines(ls), "plus.nnet"), x).outputs, want);
}

TEST(Nnet, NumbersAreTheExactDoublesOfTheirText) {
  std::vector<std::string> ls = base_lines();
  ls[8] = "0.1, -2.5E+2,";
  ls[9] = "1e-400, 4.9e-324,";  // underflow: the correctly rounded 0 and the smallest subnormal
  ls[10] = "0.30000000000000004, 1.7976931348623157e308,";
  const Model m = parse_nnet(lines(ls), "exact.nnet");
  const Eigen::MatrixXd& w = m.nodes[1].weights;
  EXPECT_EQ(w(0, 0), 0.1);
  EXPECT_EQ(w(0, 1), -250.0);
  EXPECT_EQ(w(1, 0), 0.0);
  EXPECT_EQ(w(1, 1), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(w(2, 0), 0.1 + 0.2);
  EXPECT_EQ(w(2, 1), std::numeric_limits<double>::max());
}

TEST(Nnet, PickedByExtensionAndBySniffing) {
  const std::string text = lines(base_lines());
  EXPECT_EQ(load_model(write_file("upper.NNET", text)).format, "nnet");
  EXPECT_EQ(load_model(write_file("net.txt", text)).format, "nnet");
  std::vector<std::string> no_comment = base_lines();
  no_comment.erase(no_comment.begin());
  EXPECT_EQ(load_model(write_file("net2.txt", lines(no_comment))).format, "nnet");
  // Neither HDF5, JSON, .nnet nor a protobuf: the message lists what was tried.
  const std::string junk = write_file("junk.bin", "\x07\x07\x07\x07 hello");
  const std::string e = input_error([&] { (void)load_model(junk); });
  EXPECT_NE(e.find(".nnet"), std::string::npos) << e;
}

TEST(Nnet, ConvertsToOnnxExactly) {
  const Model m = parse_nnet(lines(normalised_lines()), "norm.nnet");
  const std::string onnx = temp_path("norm.onnx");
  save_onnx(m, onnx);
  const Model back = load_model(onnx);
  const Eigen::MatrixXd x = sample_inputs();
  const Evaluation a = evaluate(m, x);
  const Evaluation b = evaluate(back, x);
  EXPECT_EQ(a.outputs, b.outputs);
  EXPECT_EQ(a.labels, b.labels);
  // mlp-json-v1 has no Sub/Div: a clear UnsupportedError; without normalisation it works.
  EXPECT_THROW(save_mlp_json(m, temp_path("norm.json")), UnsupportedError);
  const Model plain = parse_nnet(lines(base_lines()), "plain.nnet");
  save_mlp_json(plain, temp_path("plain.json"));
  EXPECT_EQ(evaluate(load_model(temp_path("plain.json")), x).outputs, evaluate(plain, x).outputs);
}

std::string g17(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// A Dense/ReLU network (a final Sigmoid dropped: .nnet outputs the logit) as .nnet text.
std::string to_nnet(const Model& m) {
  std::vector<const Node*> dense;
  for (const Node& n : m.nodes) {
    if (n.op == OpKind::Dense) dense.push_back(&n);
  }
  std::string s = "// written by nnet_test from " + m.source + "\n";
  int largest = m.input_width();
  std::string sizes = std::to_string(m.input_width()) + ",";
  for (const Node* d : dense) {
    largest = std::max(largest, d->width);
    sizes += std::to_string(d->width) + ",";
  }
  s += std::to_string(dense.size()) + "," + std::to_string(m.input_width()) + "," +
       std::to_string(dense.back()->width) + "," + std::to_string(largest) + ",\n";
  s += sizes + "\n0,\n";
  std::string lo, hi, mean, range;
  for (int i = 0; i < m.input_width(); ++i) {
    lo += "0,";
    hi += "100000,";
  }
  for (int i = 0; i <= m.input_width(); ++i) {
    mean += "0,";
    range += "1,";
  }
  s += lo + "\n" + hi + "\n" + mean + "\n" + range + "\n";
  for (const Node* d : dense) {
    for (Eigen::Index r = 0; r < d->weights.rows(); ++r) {
      for (Eigen::Index c = 0; c < d->weights.cols(); ++c) s += g17(d->weights(r, c)) + ",";
      s += "\n";
    }
    for (Eigen::Index r = 0; r < d->values.size(); ++r) s += g17(d->values(r)) + ",\n";
  }
  return s;
}

TEST(Nnet, FairifyGC3WrittenAsNnetIsTheSameNetwork) {
  const Model keras = load_model(kFairify + "/models/german/GC3.json");
  ASSERT_EQ(keras.nodes.back().op, OpKind::Sigmoid);
  const std::string path = write_file("GC3.nnet", to_nnet(keras));
  const Model nnet = load_model(path);
  EXPECT_EQ(nnet.name, "GC3");
  EXPECT_EQ(count_ops(nnet, OpKind::Relu), count_ops(keras, OpKind::Relu));
  const Eigen::MatrixXd x = test::feature_rows(kFairify + "/data/german.csv");
  ASSERT_EQ(x.cols(), 1000);
  ASSERT_EQ(x.rows(), nnet.input_width());
  const Evaluation a = evaluate(keras, x);
  const Evaluation b = evaluate(nnet, x);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.decision, b.outputs);  // the Keras logit, bit for bit
  EXPECT_EQ(a.decision, b.decision);
}

struct Bad {
  const char* name;
  std::string text;
  const char* line;      // "line N"
  const char* fragment;  // part of what was expected
};

std::string with_line(std::size_t i, const std::string& l) {
  std::vector<std::string> ls = base_lines();
  ls[i] = l;
  return lines(ls);
}

std::vector<Bad> bad_files() {
  std::vector<std::string> truncated = base_lines();
  truncated.pop_back();
  std::vector<std::string> comment_late = base_lines();
  comment_late.insert(comment_late.begin() + 5, "// late");
  return {
      {"empty", "", "line 1", "empty file"},
      {"blank", "\n  \n", "line 3", "empty file"},
      {"only_comments", "// a\n// b\n", "line 3", "no data after the header comments"},
      {"header_count", with_line(1, "2,2,1"), "line 2", "expected 4 numbers"},
      {"header_not_integer", with_line(1, "2.5,2,1,3"), "line 2", "expected an integer"},
      {"zero_layers", with_line(1, "0,2,1,3"), "line 2", "number of layers is 0"},
      {"negative_input", with_line(1, "2,-2,1,3"), "line 2", "input size is -2"},
      {"huge_layer", with_line(1, "2,2,1,2000000"), "line 2", "at most 1000000"},
      {"sizes_count", with_line(2, "2,3,"), "line 3", "expected 3 numbers (layer sizes"},
      {"zero_size", with_line(2, "2,0,1"), "line 3", "layer size 1 is 0"},
      {"first_size", with_line(2, "3,3,1"), "line 3", "first layer size is 3 but the header's input size is 2"},
      {"last_size", with_line(2, "2,3,2"), "line 3", "last layer size is 2 but the header's output size is 1"},
      {"largest", with_line(1, "2,2,1,2"), "line 3", "largest layer size is 2"},
      {"too_many_params", "3,2,1,1000000\n2,1000000,1000000,1\n", "line 2", "more than 2147483648 parameters"},
      {"unbacked_sizes", "2,2,1,1000000\n2,1000000,1\n", "line 2", "the file has only"},
      {"symmetric", with_line(3, "x"), "line 4", "symmetric flag"},
      {"mins_count", with_line(4, "-10,"), "line 5", "expected 2 numbers (input minimums"},
      {"means_count", with_line(6, "0,0,"), "line 7", "expected 3 numbers (means"},
      {"non_numeric", with_line(8, "0.5,abc,"), "line 9", "expected a number in layer 1 weights, row 1 of 3"},
      {"trailing_junk", with_line(8, "0.5,-1x"), "line 9", "'-1x'"},
      {"empty_field", with_line(8, "0.5,,-1"), "line 9", "empty field 2"},
      {"nan", with_line(11, "nan,"), "line 12", "non-finite number 'nan'"},
      {"inf", with_line(14, "1,-inf,2"), "line 15", "non-finite number '-inf'"},
      {"overflow", with_line(14, "1,1e999,2"), "line 15", "out of the range of a double"},
      {"weights_count", with_line(10, "-2,"), "line 11", "expected 2 numbers (layer 1 weights, row 3 of 3"},
      {"bias_count", with_line(11, "0.1,0.2"), "line 12", "expected 1 number (layer 1 bias 1 of 3"},
      {"truncated", lines(truncated), "line 16", "unexpected end of file; expected layer 2 bias 1 of 1"},
      {"truncated_early", "2,2,1,3\n2,3,1\n0\n", "line 4", "unexpected end of file; expected input minimums"},
      {"extra_data", lines(base_lines()) + "\n1,\n", "line 18", "unexpected data after the last layer's biases"},
      {"late_comment", lines(comment_late), "line 6", "comment after the first data line"},
      {"zero_range", with_line(7, "1,0,1,"), "line 8", "range of input 1 (x1) is 0"},
      {"binary", std::string("\x89HDF\r\n\x1a\n\0\0\x01", 11), "line 1", "expected 4 numbers (the header"},
      {"binary_token", with_line(1, "2,\x89\x01,1,3"), "line 2", "got '\\x89\\x01'"},
  };
}

TEST(NnetMalformed, EachNamesFileLineAndWhatWasExpected) {
  for (const Bad& b : bad_files()) {
    SCOPED_TRACE(b.name);
    const std::string path = write_file(std::string(b.name) + ".nnet", b.text);
    const std::string e = input_error([&] { (void)load_model(path); });
    EXPECT_EQ(e.rfind(path + ": " + b.line + ": ", 0), 0U) << e;
    EXPECT_NE(e.find(b.fragment), std::string::npos) << e;
  }
}

TEST(NnetMalformed, MissingFile) { EXPECT_THROW(load_nnet(temp_path("nope.nnet")), InputError); }

// Every prefix and many random one-byte edits of a good file: a model or an InputError, never
// anything else (and never a crash or a hang).
TEST(NnetMalformed, TruncationsAndMutationsNeverCrash) {
  const std::string good = lines(normalised_lines());
  auto try_parse = [](const std::string& text) {
    try {
      (void)parse_nnet(text, "fuzz.nnet");
    } catch (const InputError&) {
    }
  };
  for (std::size_t n = 0; n < good.size(); ++n) try_parse(good.substr(0, n));
  std::mt19937 rng(7);
  const std::string alphabet = "0123456789,.-+eE \n\t/xnai\r";
  for (int i = 0; i < 3000; ++i) {
    std::string t = good;
    const auto pos = std::uniform_int_distribution<std::size_t>(0, t.size() - 1)(rng);
    const char c = alphabet[std::uniform_int_distribution<std::size_t>(0, alphabet.size() - 1)(rng)];
    switch (i % 3) {
      case 0: t[pos] = c; break;
      case 1: t.insert(pos, 1, c); break;
      default: t.erase(pos, 1); break;
    }
    try_parse(t);
  }
}

}  // namespace
}  // namespace witness
