#include "server/workbench.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/file.h"
#include "core/process.h"
#include "report/html_report.h"
#include "report/rows.h"
#include "server/http_connections.h"
#include "server/job_board.h"
#include "server/job_process.h"
#include "server/job_runs.h"
#include "server/root_folder.h"

namespace witness {
namespace {

constexpr std::size_t kMaxFileRead = 8U << 20U;  // GET /api/file

std::string random_token() {
  std::random_device rd;
  std::string out;
  for (int i = 0; i < 4; ++i) out += fmt::format("{:08x}", rd());
  return out;
}

// Content types with a charset parameter: cpp-httplib compresses exactly "application/json" and
// "text/..." types, and its brotli takes seconds on the megabytes of a finished job or a bundle,
// far longer than sending them over loopback.
constexpr const char* kJson = "application/json; charset=utf-8";
constexpr const char* kJavaScript = "application/javascript; charset=utf-8";
constexpr const char* kDownload = "application/octet-stream";

void send_json(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(json_text(body), kJson);
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, status, {{"error", message}});
}

// A plain file name for an upload: letters, digits, '.', '_', '-', not starting with '.'.
bool plain_file_name(const std::string& name) {
  if (name.empty() || name.size() > 128 || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
  });
}

std::string read_limited(const std::filesystem::path& p, std::size_t limit) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p, ec)) throw InputError(p.string(), "", "not a file");
  if (std::filesystem::file_size(p, ec) > limit) throw std::length_error("file larger than 8 MiB");
  std::ifstream in(p, std::ios::binary);
  if (!in) throw InputError(p.string(), "", "cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

// One of at most `max` GET /api/inputs calls at once, beside the jobs' own slots.
class InputsSlot {
 public:
  InputsSlot(std::atomic<int>& running, int max) : running_(running) {
    if (running_.fetch_add(1) >= max) {
      running_.fetch_sub(1);
      throw JobsFull(fmt::format("{} models or programs are being read (--max-jobs {}): try again", max, max));
    }
  }
  ~InputsSlot() { running_.fetch_sub(1); }
  InputsSlot(const InputsSlot&) = delete;
  InputsSlot& operator=(const InputsSlot&) = delete;

 private:
  std::atomic<int>& running_;
};

struct Workbench::State {
  WorkbenchOptions options;
  RootFolder root;
  JobBoard jobs;
  std::atomic<int> describing{0};     // GET /api/inputs calls running
  std::atomic<bool> stopping{false};  // stop() was called: children of /api/inputs calls are killed
  WorkbenchHttpServer http;
  int port = 0;

  explicit State(const WorkbenchOptions& o) : options(o), root(o.root), jobs(o.max_jobs, o.max_kept_jobs) {
    if (options.token.empty()) options.token = random_token();
  }

  [[nodiscard]] JobLimits job_limits() const {
    return JobLimits{.max_seconds = options.job_seconds, .memory_mb = options.job_memory_mb};
  }
  [[nodiscard]] ChildJobLimits child_limits() const {
    return ChildJobLimits{
        .executable = options.job_executable, .seconds = options.job_seconds, .memory_mb = options.job_memory_mb};
  }

  // A job's work: checked here (a malformed request is answered at once), worked in a child.
  std::function<JobOutput(Job&)> job_work(const nlohmann::json& request) const {
    auto in_process = prepare_job(request, root, job_limits());
    if (options.job_executable.empty()) return in_process;
    const nlohmann::json task = {
        {"task", "job"}, {"root", root.path().string()}, {"seconds", options.job_seconds}, {"request", request}};
    return [task, limits = child_limits()](Job& job) {
      return run_child_job(task, limits, job.cancel_flag(), [&job](nlohmann::json progress, std::vector<double> point) {
        job.report_progress(std::move(progress), std::move(point));
      });
    };
  }

  nlohmann::json inputs(const std::string& path, const std::string& function) const {
    if (options.job_executable.empty()) return describe_inputs(root, path, function, job_limits());
    (void)root.resolve(path);  // a path outside the root is refused here, before any child starts
    const nlohmann::json task = {{"task", "inputs"},
                                 {"root", root.path().string()},
                                 {"seconds", options.job_seconds},
                                 {"path", path},
                                 {"function", function}};
    return run_child_job(task, child_limits(), stopping, nullptr).result;
  }

  // Runs a handler, turning the errors it throws into JSON answers with their status.
  template <typename F>
  static void guarded(httplib::Response& res, F&& handler) {
    try {
      handler();
    } catch (const ForbiddenPath& e) {
      send_error(res, 403, e.what());
    } catch (const JobsFull& e) {
      send_error(res, 429, e.what());
    } catch (const std::length_error& e) {
      send_error(res, 413, e.what());
    } catch (const std::out_of_range& e) {
      send_error(res, 404, e.what());
    } catch (const Error& e) {
      send_error(res, 400, e.what());
    } catch (const nlohmann::json::exception& e) {
      send_error(res, 400, std::string("bad JSON: ") + e.what());
    } catch (const std::exception& e) {
      send_error(res, 500, std::string("internal: ") + e.what());
    }
  }

  std::shared_ptr<Job> job_of(const httplib::Request& req) const {
    std::shared_ptr<Job> job = jobs.find(req.matches[1]);
    if (!job) throw std::out_of_range("no such job");
    return job;
  }

  void routes() {
    guard_routes();
    file_routes();
    job_routes();
    error_routes();
  }

  // Runs after the request head is read and before the body is: refusals here read no body.
  void guard_routes() {
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      // cpp-httplib reads a chunked body without --max-upload's bound: such bodies are refused.
      if (req.has_header("Transfer-Encoding")) {
        send_error(res, 411, "chunked request bodies are not accepted: send a Content-Length (at most --max-upload)");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (req.path.rfind("/api/", 0) != 0) return httplib::Server::HandlerResponse::Unhandled;
      const std::string given =
          req.has_header("X-Witness-Token") ? req.get_header_value("X-Witness-Token") : req.get_param_value("token");
      if (given != options.token) {
        send_error(res, 403, "missing or wrong token: open the URL that witness serve printed");
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
  }

  // The page's assets, the folder the server was started in, uploads and a file's inputs.
  void file_routes() {
    for (const char* name : {"/", "/index.html", "/app.js", "/style.css"}) {
      http.Get(name, [name](const httplib::Request&, httplib::Response& res) {
        const std::string file = std::string(name) == "/" ? "index.html" : std::string(name + 1);
        const char* type = file.ends_with(".js")    ? kJavaScript
                           : file.ends_with(".css") ? "text/css"
                                                    : "text/html; charset=utf-8";
        res.set_content(std::string(web_asset(file)), type);
      });
    }
    http.Get("/api/files", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] {
        const std::string dir = req.get_param_value("dir");
        const std::filesystem::path p = root.resolve(dir);
        if (!std::filesystem::is_directory(p)) throw InputError(dir, "", "not a folder");
        std::vector<nlohmann::json> entries;
        for (const auto& e : std::filesystem::directory_iterator(p)) {
          const std::string name = e.path().filename().string();
          if (name.empty() || name[0] == '.') continue;
          std::error_code ec;
          const bool is_dir = e.is_directory(ec);
          // A link out of the root is not listed (and could not be opened).
          if (!root.contains(e.path())) continue;
          entries.push_back({{"name", name},
                             {"type", is_dir ? "dir" : "file"},
                             {"size", is_dir ? 0 : static_cast<std::int64_t>(e.file_size(ec))}});
        }
        std::sort(entries.begin(), entries.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
          return std::pair(a["type"] != "dir", a["name"].get<std::string>()) <
                 std::pair(b["type"] != "dir", b["name"].get<std::string>());
        });
        send_json(res, 200, {{"dir", root.relative(p) == "." ? "" : root.relative(p)}, {"entries", entries}});
      });
    });
    http.Get("/api/file", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] {
        const std::filesystem::path p = root.resolve(req.get_param_value("path"));
        res.set_content(read_limited(p, kMaxFileRead), kDownload);
      });
    });
    http.Post("/api/upload", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] {
        const std::string name = req.get_param_value("name");
        if (!plain_file_name(name))
          throw InputError(fmt::format("upload: '{}' is not a plain file name (letters, digits, '.', '_', '-')", name));
        const std::filesystem::path dir = root.path() / "uploads";
        std::filesystem::create_directories(dir);
        const std::filesystem::path target = root.resolve("uploads/" + name);
        write_file(target.string(), req.body);  // all or nothing: a temporary name, then renamed
        send_json(res, 200, {{"path", "uploads/" + name}, {"size", req.body.size()}});
      });
    });
    http.Get("/api/inputs", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] {
        // Loading a model or compiling a program is a job's work: it takes a job slot (429 when
        // none is free) and the job time limit, though the answer is awaited here.
        const InputsSlot slot(describing, options.max_jobs);
        send_json(res, 200, inputs(req.get_param_value("path"), req.get_param_value("function")));
      });
    });
  }

  void job_routes() {
    http.Post("/api/jobs", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] {
        const nlohmann::json request = nlohmann::json::parse(req.body);
        const std::shared_ptr<Job> job = jobs.submit(request["kind"].get<std::string>(), job_work(request));
        send_json(res, 202, {{"id", job->id()}});
      });
    });
    http.Get("/api/jobs",
             [this](const httplib::Request&, httplib::Response& res) { send_json(res, 200, jobs.list()); });
    http.Get(R"(/api/jobs/(j\d+))", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] { send_json(res, 200, job_of(req)->status(true)); });
    });
    http.Post(R"(/api/jobs/(j\d+)/cancel)", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] {
        const std::shared_ptr<Job> job = job_of(req);
        jobs.cancel(job->id());
        send_json(res, 200, {{"id", job->id()}, {"state", to_string(job->state())}});
      });
    });
    http.Get(R"(/api/jobs/(j\d+)/report.html)", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] {
        const auto out = job_of(req)->output();
        if (!out || out->report.is_null()) throw InputError("this job has no report (yet)");
        res.set_content(html_report(out->report), kDownload);
        res.set_header("Content-Disposition",
                       fmt::format("attachment; filename=\"witness-{}.html\"", req.matches[1].str()));
      });
    });
    http.Get(R"(/api/jobs/(j\d+)/pairs.csv)", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] {
        const auto out = job_of(req)->output();
        if (!out) throw InputError("this job has no pairs (yet)");
        res.set_content(out->pairs_csv, kDownload);
        res.set_header("Content-Disposition",
                       fmt::format("attachment; filename=\"witness-{}-pairs.csv\"", req.matches[1].str()));
      });
    });
  }

  // Errors as JSON bodies: exceptions a handler did not catch, and every other error status.
  void error_routes() {
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, const std::exception_ptr& ep) {
      std::string what = "unknown error";
      try {
        std::rethrow_exception(ep);
      } catch (const std::out_of_range& e) {
        send_error(res, 404, e.what());
        return;
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      send_error(res, 500, "internal: " + what);
    });
    // Everything else that ends in an error status (no route: 404; body too large: 413) gets a
    // JSON body too, unless a handler already wrote one.
    http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      const std::string message = res.status == 404   ? fmt::format("no such resource: {} {}", req.method, req.path)
                                  : res.status == 413 ? "request body too large (--max-upload)"
                                                      : fmt::format("HTTP {}", res.status);
      send_error(res, res.status, message);
    });
  }
};

Workbench::Workbench(const WorkbenchOptions& options) : state_(std::make_unique<State>(options)) {
  note_many_threads_allocate();  // jobs load .h5 models (a forked reader) while requests are served
  State& s = *state_;
  s.http.new_task_queue = [threads = options.threads] {
    return new ConnectionPool(threads, std::max(threads, kMaxConnectionThreads), kMaxQueuedConnections);
  };
  // SO_REUSEADDR only: cpp-httplib's default, SO_REUSEPORT, would let a second server bind the same
  // port and take half of the first one's connections.
  s.http.set_socket_options([](int sock) {
    const int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    // A connection is accepted once it has sent data: idle connections never take a thread.
    const int defer_seconds = 5;
    setsockopt(sock, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer_seconds, sizeof(defer_seconds));
  });
  s.http.set_payload_max_length(options.max_upload);
  s.http.set_read_timeout(5, 0);
  s.http.set_keep_alive_timeout(5);
  s.http.set_write_timeout(30, 0);
  s.http.set_keep_alive_max_count(100);
  s.routes();
  if (options.port == 0) {
    s.port = s.http.bind_to_any_port(options.host);
    if (s.port < 0) throw InputError(fmt::format("serve: cannot listen on {}", options.host));
  } else {
    if (!s.http.bind_to_port(options.host, options.port))
      throw InputError(fmt::format("serve: cannot listen on {}:{} (in use? try --port 0)", options.host, options.port));
    s.port = options.port;
  }
  s.http.set_listen_backlog(kListenBacklog);
  s.http.set_pace(ConnectionPace{.grace_seconds = options.request_grace_seconds});
}

Workbench::~Workbench() { stop(); }

int Workbench::port() const { return state_->port; }
const std::string& Workbench::token() const { return state_->options.token; }
std::string Workbench::url() const {
  return fmt::format("http://{}:{}/?token={}", state_->options.host, state_->port, state_->options.token);
}
void Workbench::serve() { state_->http.listen_after_bind(); }
void Workbench::stop() {
  state_->stopping = true;
  state_->http.stop();
}

}  // namespace witness
