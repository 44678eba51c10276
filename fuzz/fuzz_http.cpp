// libFuzzer target for witness serve's request handlers: each input is sent as raw bytes over a
// real connection to a Workbench running in this process (started once, on a free port, over a
// private root with a model and a schema), and the reply is read until the server closes the
// connection. A crash, a sanitizer report or a hang in any handler (or in cpp-httplib's parsing
// of what reaches them) is a bug; so is a server that stops answering.
//
// The input's first line may say "TOKEN" where the token goes, so that the fuzzer reaches the
// /api/ handlers behind the token check; the seeds in fuzz/corpus/http/ do.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "fuzz_common.h"
#include "server/workbench.h"

namespace {

constexpr const char* kToken = "fuzztoken";

// The server, started at the first input and left running (the process exits at the end).
struct Server {
  std::unique_ptr<witness::Workbench> bench;
  std::thread thread;

  Server() {
    const std::filesystem::path root = std::filesystem::path(witness::fuzz::temp_dir()) / "root";
    std::filesystem::create_directories(root);
    const std::filesystem::path source = WITNESS_SOURCE_DIR;
    std::filesystem::copy_file(source / "benchmarks/fairify/models/adult/AC1.h5", root / "AC1.h5",
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(source / "benchmarks/fairify/adult.toml", root / "adult.toml",
                               std::filesystem::copy_options::overwrite_existing);
    witness::WorkbenchOptions o;
    o.root = root.string();
    o.port = 0;
    o.token = kToken;
    o.max_upload = 1U << 20U;
    o.job_seconds = 2;  // jobs a fuzzed request starts end quickly
    bench = std::make_unique<witness::Workbench>(o);
    thread = std::thread([this] { bench->serve(); });
  }
  // Jobs a request started may still run: stop them before the process's static objects go.
  void stop() {
    bench->stop();
    thread.join();
    bench.reset();  // cancels and joins the jobs
  }
};

Server* running = nullptr;

Server& server() {
  if (running == nullptr) {
    running = new Server();
    std::atexit([] { running->stop(); });
  }
  return *running;
}

// The bytes to send: "TOKEN" replaced by the token (each occurrence).
std::string request_of(std::string text) {
  for (std::size_t at = text.find("TOKEN"); at != std::string::npos; at = text.find("TOKEN", at + 1)) {
    text.replace(at, 5, kToken);
  }
  return text;
}

// Sends `bytes`, closes the sending side, reads the reply into `reply` until the server closes (at
// most 10 s); false if the server could not be reached at all.
bool exchange(int port, const std::string& bytes, std::string* reply = nullptr) {
  const int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{10, 0};
  setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  if (connect(sock, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(sock);
    return false;
  }
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(sock, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may answer and close before reading everything
    sent += static_cast<std::size_t>(n);
  }
  shutdown(sock, SHUT_WR);
  char buf[4096];
  for (ssize_t n = 0; (n = recv(sock, buf, sizeof(buf), 0)) > 0;) {
    if (reply != nullptr) reply->append(buf, static_cast<std::size_t>(n));
  }
  close(sock);
  return true;
}

// Waits (at most 10 s) until no job an input started is queued or running: the process must not
// end, and its static objects go, while a job thread still uses them.
void wait_for_jobs(int port) {
  const std::string list = request_of("GET /api/jobs HTTP/1.1\r\nX-Witness-Token: TOKEN\r\n\r\n");
  for (int i = 0; i < 200; ++i) {
    std::string reply;
    if (!exchange(port, list, &reply)) return;
    if (reply.find("\"running\"") == std::string::npos && reply.find("\"queued\"") == std::string::npos) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;  // nothing sent: the server never sees the connection (TCP_DEFER_ACCEPT)
  Server& s = server();
  if (!exchange(s.bench->port(), request_of(witness::fuzz::text_of(data, size))))
    witness::fuzz::bug("server", "the server no longer accepts connections");
  wait_for_jobs(s.bench->port());
  return 0;
}
