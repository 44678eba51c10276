#include "server/http_connections.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace witness {
namespace {

using Clock = std::chrono::steady_clock;

// A server with a 1 s grace: /slow answers 64 KiB after 1.5 s of work, /fast at once.
class PacedServer : public ::testing::Test {
 protected:
  void SetUp() override {
    http_.new_task_queue = [] { return new ConnectionPool(2, 16, 16); };
    http_.set_pace({.grace_seconds = 1.0, .min_bytes_per_second = 16 * 1024});
    http_.set_read_timeout(5, 0);
    http_.Get("/slow", [](const httplib::Request&, httplib::Response& res) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      res.set_content(std::string(64 * 1024, 'x'), "application/octet-stream");
    });
    http_.Get("/fast", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
    port_ = http_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { http_.listen_after_bind(); });
  }
  void TearDown() override {
    http_.stop();
    thread_.join();
  }

  int connect_socket() const {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);  // NOLINT: the sockets API
    return s;
  }

  WorkbenchHttpServer http_;
  int port_ = 0;
  std::thread thread_;
};

// The answer's pace counts from its first byte: a handler that works longer than the grace still
// delivers its whole answer.
TEST_F(PacedServer, ALongHandlerStillAnswersInFull) {
  httplib::Client client("127.0.0.1", port_);
  const auto res = client.Get("/slow");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body.size(), 64U * 1024U);
}

// A request head sent a byte every 0.3 s (inside the 5 s read timeout) is cut about 1 s after the
// connection opened; a normal request is answered beside it.
TEST_F(PacedServer, ASlowHeadIsCutAfterTheGrace) {
  const int s = connect_socket();
  const auto start = Clock::now();
  const std::string head = "GET /fast HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  bool cut = false;
  for (const char c : head) {
    if (::send(s, &c, 1, MSG_NOSIGNAL) != 1) {
      cut = true;
      break;
    }
    char reply = 0;
    if (::recv(s, &reply, 1, MSG_DONTWAIT) == 0) {  // the server closed the connection
      cut = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  const double lasted = std::chrono::duration<double>(Clock::now() - start).count();
  ::close(s);
  EXPECT_TRUE(cut);
  EXPECT_LT(lasted, 3.0);
  httplib::Client client("127.0.0.1", port_);
  const auto res = client.Get("/fast");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body, "ok");
}

}  // namespace
}  // namespace witness
