// witness serve over real HTTP (cpp-httplib's client against the server on a free port): the
// token, paths kept inside the root, upload limits, JSON errors, and jobs that run, fail alone
// and can be cancelled.
#include "server/workbench.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/error.h"

// Last: it brings <resolv.h>, whose `_res` macro breaks Eigen headers included after it.
#include <httplib.h>

namespace witness {
namespace {

namespace fs = std::filesystem;

class WorkbenchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("witness-serve-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "root" / "data");
    std::ofstream(dir_ / "root" / "data" / "a.csv") << "x,y\n1,2\n";
    std::ofstream(dir_ / "secret.txt") << "outside the root\n";
    fs::create_symlink(dir_ / "secret.txt", dir_ / "root" / "link_out.txt");
    fs::create_symlink(dir_ / "root" / "data" / "a.csv", dir_ / "root" / "link_in.csv");
    fs::copy_file(fs::path(WITNESS_SOURCE_DIR) / "benchmarks/fairify/models/adult/AC1.h5", dir_ / "root" / "AC1.h5");
    fs::copy_file(fs::path(WITNESS_SOURCE_DIR) / "benchmarks/fairify/adult.toml", dir_ / "root" / "adult.toml");
    std::ofstream(dir_ / "root" / "broken.h5") << "not an HDF5 file";
  }
  void TearDown() override {
    if (bench_) bench_->stop();
    if (server_.joinable()) server_.join();
    bench_.reset();
    fs::remove_all(dir_);
  }

  void start(int max_jobs = 2) {
    WorkbenchOptions o;
    o.root = (dir_ / "root").string();
    o.port = 0;
    o.max_upload = 1024;
    o.max_jobs = max_jobs;
    o.token = "t0ken";
    bench_ = std::make_unique<Workbench>(o);
    server_ = std::thread([this] { bench_->serve(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", bench_->port());
    client_->set_default_headers({{"X-Witness-Token", "t0ken"}});
    for (int i = 0; i < 100 && !client_->Get("/"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  // GET path; the status and the body parsed as JSON (null if it is not JSON).
  std::pair<int, nlohmann::json> get(const std::string& path) {
    auto res = client_->Get(path);
    if (!res) return {0, nullptr};
    return {res->status, nlohmann::json::parse(res->body, nullptr, false)};
  }
  std::pair<int, nlohmann::json> post(const std::string& path, const std::string& body) {
    auto res = client_->Post(path, body, "application/json");
    if (!res) return {0, nullptr};
    return {res->status, nlohmann::json::parse(res->body, nullptr, false)};
  }
  // Polls a job until it leaves queued/running (at most `seconds`).
  nlohmann::json wait_job(const std::string& id, double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    nlohmann::json j;
    do {
      j = get("/api/jobs/" + id).second;
      if (j["state"] != "queued" && j["state"] != "running") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (std::chrono::steady_clock::now() < end);
    return j;
  }

  fs::path dir_;
  std::unique_ptr<Workbench> bench_;
  std::thread server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(WorkbenchTest, ServesTheAppAndNeedsTheTokenForTheApi) {
  start();
  auto page = client_->Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<html"), std::string::npos);
  EXPECT_NE(bench_->url().find("token=t0ken"), std::string::npos);
  httplib::Client anonymous("127.0.0.1", bench_->port());
  auto res = anonymous.Get("/api/files");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
  EXPECT_TRUE(nlohmann::json::parse(res->body).contains("error"));
  res = anonymous.Get("/api/files?token=wrong");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
  res = anonymous.Get("/api/files?token=t0ken");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_F(WorkbenchTest, RefusesAPortInUse) {
  start();
  WorkbenchOptions o;
  o.root = (dir_ / "root").string();
  o.port = bench_->port();
  EXPECT_THROW(Workbench second(o), InputError);
  o.root = (dir_ / "no_such_folder").string();
  o.port = 0;
  EXPECT_THROW(Workbench missing(o), InputError);
}

TEST_F(WorkbenchTest, KeepsEveryPathInsideTheRoot) {
  start();
  auto [status, listing] = get("/api/files?dir=");
  EXPECT_EQ(status, 200);
  std::vector<std::string> names;
  for (const auto& e : listing["entries"]) names.push_back(e["name"]);
  // The link that leads out of the root is not listed.
  EXPECT_EQ(std::count(names.begin(), names.end(), "link_out.txt"), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "data"), 1);
  EXPECT_EQ(get("/api/file?path=data/a.csv").first, 200);
  EXPECT_EQ(get("/api/file?path=link_in.csv").first, 200);
  for (const char* bad :
       {"../secret.txt", "data/../../secret.txt", "/etc/passwd", "link_out.txt", "data/%2e%2e/%2e%2e/secret.txt"}) {
    auto [code, body] = get(std::string("/api/file?path=") + bad);
    EXPECT_EQ(code, 403) << bad;
    EXPECT_TRUE(body.contains("error")) << bad;
  }
  EXPECT_EQ(get("/api/files?dir=..").first, 403);
  EXPECT_EQ(get("/api/inputs?path=../secret.txt").first, 403);
  // A job naming a file outside the root is refused before it starts.
  auto [code, body] = post("/api/jobs", R"({"kind":"bias","model":"../AC1.h5","schema":"adult.toml"})");
  EXPECT_EQ(code, 403);
  // A query's text is read on the job's thread: a model outside the root fails the job, unread; so
  // does a schema outside it (its constraints would join the premise).
  const std::string rest =
      "kind = \"might\"\nbehavior = \"label == 1\"\n[inputs]\nx = { role = \"environment\", type = \"real\" }\n";
  for (const std::string& head :
       {std::string("model = \"../secret.txt\"\n"), std::string("model = \"AC1.h5\"\nschema = \"../secret.txt\"\n")}) {
    const nlohmann::json query = {{"kind", "query"}, {"toml", head + rest}};
    std::tie(code, body) = post("/api/jobs", query.dump());
    ASSERT_EQ(code, 202);
    const nlohmann::json failed = wait_job(body["id"], 30);
    EXPECT_EQ(failed["state"], "failed");
    EXPECT_NE(failed["error"].get<std::string>().find("secret.txt' lies outside the root"), std::string::npos)
        << failed.dump();
  }
}

TEST_F(WorkbenchTest, LimitsUploads) {
  start();
  auto res = client_->Post("/api/upload?name=log.csv", std::string(100, 'a'), "application/octet-stream");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(fs::exists(dir_ / "root" / "uploads" / "log.csv"));
  res = client_->Post("/api/upload?name=big.csv", std::string(4096, 'a'), "application/octet-stream");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_TRUE(nlohmann::json::parse(res->body).contains("error"));
  EXPECT_FALSE(fs::exists(dir_ / "root" / "uploads" / "big.csv"));
  for (const char* bad : {"../x.csv", ".hidden", "a/b.csv", ""}) {
    res = client_->Post(std::string("/api/upload?name=") + bad, "x", "application/octet-stream");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << bad;
  }
}

TEST_F(WorkbenchTest, AnswersBadRequestsWithJsonErrors) {
  start();
  EXPECT_EQ(post("/api/jobs", "{not json").first, 400);
  EXPECT_EQ(post("/api/jobs", "[1, 2]").first, 400);
  EXPECT_EQ(post("/api/jobs", R"({"kind":"launch"})").first, 400);
  EXPECT_EQ(post("/api/jobs", R"({"kind":"fair","schema":"adult.toml"})").first, 400);
  EXPECT_EQ(post("/api/jobs", R"({"kind":"fair","model":"AC1.h5","schema":"adult.toml","engine":"magic"})").first, 400);
  EXPECT_EQ(
      post("/api/jobs", R"({"kind":"fair","model":"AC1.h5","schema":"adult.toml","options":{"frontier":"x"}})").first,
      400);
  // Each job has a process (and so a memory) of its own: a memory limit is taken, capped at --job-memory.
  EXPECT_EQ(
      post("/api/jobs", R"({"kind":"test","model":"AC1.h5","schema":"adult.toml","options":{"memory-limit":"100"}})")
          .first,
      202);
  EXPECT_EQ(
      post("/api/jobs", R"({"kind":"test","model":"AC1.h5","schema":"adult.toml","options":{"memory-limit":"-3"}})")
          .first,
      400);
  EXPECT_EQ(post("/api/jobs", R"({"kind":"query"})").first, 400);
  // A query's memory bound is query-memory-limit; the run option it does not read is refused.
  EXPECT_EQ(post("/api/jobs", R"({"kind":"query","toml":"kind = 1","options":{"memory-limit":"100"}})").first, 400);
  // Malformed query text fails its job (parsed on the job's thread), with the parser's message.
  const auto [query_code, query_body] = post("/api/jobs", R"({"kind":"query","toml":"kind = "})");
  ASSERT_EQ(query_code, 202);
  const nlohmann::json failed = wait_job(query_body["id"], 30);
  EXPECT_EQ(failed["state"], "failed");
  EXPECT_NE(failed["error"].get<std::string>().find("workbench-query.toml"), std::string::npos) << failed.dump();
  auto [code, body] = get("/api/jobs/j999");
  EXPECT_EQ(code, 404);
  EXPECT_TRUE(body.contains("error"));
  EXPECT_EQ(get("/api/nothing").first, 404);
}

TEST_F(WorkbenchTest, AJobsFailureLeavesTheServerRunning) {
  start();
  auto [code, body] = post("/api/jobs", R"({"kind":"bias","model":"broken.h5","schema":"adult.toml"})");
  ASSERT_EQ(code, 202);
  const nlohmann::json failed = wait_job(body["id"], 30);
  EXPECT_EQ(failed["state"], "failed");
  EXPECT_NE(failed["error"].get<std::string>().find("broken.h5"), std::string::npos);
  // The next job runs, and its answer is the CLI's JSON with the report and the pairs.
  std::tie(code, body) = post("/api/jobs", R"({"kind":"bias","model":"AC1.h5","schema":"adult.toml",
                                              "protected":["sex"],"options":{"samples":"20000"}})");
  ASSERT_EQ(code, 202);
  const nlohmann::json done = wait_job(body["id"], 60);
  ASSERT_EQ(done["state"], "done") << done.dump();
  EXPECT_EQ(done["result"]["samples"], 20000);
  EXPECT_EQ(done["report"]["kind"], "bias");
  EXPECT_TRUE(done["text"].get<std::string>().starts_with("Bias% of AC1"));
  auto html = client_->Get("/api/jobs/" + body["id"].get<std::string>() + "/report.html");
  ASSERT_TRUE(html);
  EXPECT_EQ(html->status, 200);
  EXPECT_NE(html->body.find("id=\"witness-run\""), std::string::npos);
}

TEST_F(WorkbenchTest, CancelsALongJobAndFreesItsPlace) {
  start(/*max_jobs=*/1);
  // Quantifying AC1 takes far longer than this test waits.
  const std::string request =
      R"({"kind":"fair","model":"AC1.h5","schema":"adult.toml","protected":["sex"],
          "options":{"quantify":"true","time-limit":"300"}})";
  auto [code, body] = post("/api/jobs", request);
  ASSERT_EQ(code, 202);
  const std::string id = body["id"];
  // Progress arrives while it runs.
  nlohmann::json j;
  for (int i = 0; i < 600; ++i) {  // up to 30 s: a sanitized build on a loaded machine is slow
    j = get("/api/jobs/" + id).second;
    if (!j["progress"].is_null()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(j["state"], "running");
  EXPECT_FALSE(j["progress"].is_null());
  // Only one job at a time here: a second is refused while the first runs.
  EXPECT_EQ(post("/api/jobs", request).first, 429);
  std::tie(code, body) = post("/api/jobs/" + id + "/cancel", "");
  EXPECT_EQ(code, 200);
  EXPECT_EQ(body["state"], "cancelled");
  // The engine notices the flag and its thread ends: a new job is accepted within seconds.
  const auto start_wait = std::chrono::steady_clock::now();
  int accepted = 0;
  while (std::chrono::steady_clock::now() - start_wait < std::chrono::seconds(20)) {
    accepted = post("/api/jobs", R"({"kind":"bias","model":"AC1.h5","schema":"adult.toml","protected":["sex"],
                                     "options":{"samples":"1000"}})")
                   .first;
    if (accepted == 202) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(accepted, 202);
  const nlohmann::json cancelled = get("/api/jobs/" + id).second;
  EXPECT_EQ(cancelled["state"], "cancelled");
  // What the engine had found when it stopped stays readable.
  EXPECT_FALSE(cancelled["result"].is_null()) << cancelled.dump();
}

}  // namespace
}  // namespace witness
