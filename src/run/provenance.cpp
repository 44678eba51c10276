#include "run/provenance.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>

#include "report/html_report.h"

namespace witness {
namespace {

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text.data();
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const std::size_t colon = line.find(':');
    return colon == std::string::npos ? "" : line.substr(line.find_first_not_of(' ', colon + 1));
  }
  return "";
}

nlohmann::json machine() {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  utsname u{};
  const std::string system = uname(&u) == 0 ? std::string(u.sysname) + " " + u.release + " " + u.machine : "";
  return {
      {"host", host.data()}, {"system", system}, {"cpu", cpu_model()}, {"cores", std::thread::hardware_concurrency()}};
}

}  // namespace

nlohmann::json provenance_json(const JobSubject& subject, const Env& env, const std::string& command,
                               nlohmann::json options) {
  nlohmann::json files = nlohmann::json::array();
  for (const JobSubject::InputFile& f : subject.files)
    files.push_back({{"role", f.role}, {"name", f.name}, {"sha256", f.sha256}, {"bytes", f.bytes}});
  return {{"files", files},
          {"witness", {{"version", witness_version()}, {"commit", WITNESS_COMMIT}}},
          {"command", command},
          {"options", std::move(options)},
          {"seed", env.seed()},
          {"threads", env.threads()},
          {"time_limit", env.options.get_real("time-limit")},
          {"created", utc_now()},
          {"machine", machine()}};
}

}  // namespace witness
