#include "report/query_report.h"

#include <fmt/format.h>

#include <sstream>

namespace witness {

// "yes: some scenario shows the behavior", etc.
std::string query_verdict_text(const QueryAnswer& a) {
  if (a.status == QueryAnswer::Status::Unknown)
    return fmt::format("unknown: the solver gave up ({})", a.reason_unknown);
  const bool might = a.kind == QueryKind::Might;
  std::string s;
  if (might) {
    s = a.answer ? "yes: a scenario shows the behavior" : "no: no scenario shows the behavior";
  } else {
    s = a.answer ? "yes: every scenario shows the behavior" : "no: a scenario does not show the behavior";
  }
  if (a.vacuous.value_or(false)) {
    s += a.schema_constraints ? " (vacuously: no scenario within the model's domain meets the input declarations, "
                                "environment, state, the schema's constraints and not factual)"
                              : " (vacuously: no scenario within the model's domain meets the input declarations, "
                                "environment, state and not factual)";
  }
  return s;
}

std::string query_text(const Query& q, const QueryAnswer& a) {
  std::ostringstream out;
  out << fmt::format("{} ({} {}, {}): {}\n", a.name, to_string(a.kind), q.behavior.text, to_string(a.semantics),
                     query_verdict_text(a));
  if (!q.description.empty()) out << "  " << q.description << '\n';
  if (!a.scenario.empty()) {
    std::size_t width = 0;
    for (const auto& v : a.scenario) width = std::max(width, v.name.size());
    out << "  scenario (inputs marked free were chosen by the solver; the rest are as declared):\n";
    for (const auto& v : a.scenario) {
      out << fmt::format("    {:<{}} = {}{}{}\n", v.name, width, v.text, v.exact.empty() ? "" : " (" + v.exact + ")",
                         v.free ? "   (free)" : "");
    }
    if (a.label) {
      out << fmt::format("    decision: label {}{}\n", *a.label, a.label_name.empty() ? "" : " (" + a.label_name + ")");
    }
    if (!a.outputs.empty()) {
      std::string outs;
      for (const auto& o : a.outputs) outs += fmt::format("{}{} = {}", outs.empty() ? "" : ", ", o.name, o.text);
      out << "    outputs: " << outs << '\n';
    }
  }
  if (!a.note.empty()) out << "  note: " << a.note << '\n';
  out << fmt::format("  {:.3f} s\n", a.seconds);
  return out.str();
}

nlohmann::json query_json(const Query& q, const QueryAnswer& a) {
  nlohmann::json j;
  j["name"] = a.name;
  j["file"] = q.where.substr(0, q.where.find(": query '"));
  if (q.program_path.empty()) {
    j["model"] = q.model_path;
  } else {
    j["program"] = q.program_path;
    j["function"] = q.function;
  }
  j["kind"] = to_string(a.kind);
  j["semantics"] = to_string(a.semantics);
  j["behavior"] = q.behavior.text;
  if (a.status == QueryAnswer::Status::Unknown) {
    j["answer"] = nullptr;
    j["reason_unknown"] = a.reason_unknown;
  } else {
    j["answer"] = a.answer;
  }
  if (a.scenario.empty()) {
    j["scenario"] = nullptr;
  } else {
    nlohmann::json s = nlohmann::json::object();
    for (const auto& v : a.scenario) {
      if (v.category) {
        s[v.name] = v.text;
      } else if (v.text == "true" || v.text == "false") {
        s[v.name] = v.text == "true";
      } else {
        s[v.name] = v.number;
      }
    }
    j["scenario"] = s;
    nlohmann::json exact = nlohmann::json::object();
    for (const auto& v : a.scenario) {
      if (!v.exact.empty()) exact[v.name] = v.exact;
    }
    if (!exact.empty()) j["scenario_exact"] = exact;
    nlohmann::json free = nlohmann::json::array();
    for (const auto& v : a.scenario) {
      if (v.free) free.push_back(v.name);
    }
    j["free_inputs"] = free;
    j["decision"] = {{"label", a.label ? nlohmann::json(*a.label) : nlohmann::json(nullptr)},
                     {"label_name", a.label_name},
                     {"evaluator_label", a.evaluator_label ? nlohmann::json(*a.evaluator_label) : nlohmann::json()}};
    nlohmann::json outs = nlohmann::json::object();
    for (const auto& o : a.outputs) outs[o.name] = o.number;
    j["decision"]["outputs"] = outs;
  }
  j["vacuous"] = a.vacuous ? nlohmann::json(*a.vacuous) : nlohmann::json(nullptr);
  if (!a.note.empty()) j["note"] = a.note;
  if (!a.cut.empty()) j["cut"] = a.cut;
  if (a.changed_inputs) j["nearest"] = {{"changed_inputs", *a.changed_inputs}, {"proven", a.nearest_proven}};
  j["seconds"] = a.seconds;
  j["solver"] = a.solver_stats;
  return j;
}

}  // namespace witness
