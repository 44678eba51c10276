#include "server/http_connections.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace witness {

// --- ConnectionPool -----------------------------------------------------------------------------

namespace {
using Clock = std::chrono::steady_clock;
// When the connection this thread serves was handed to the pool (accepted): its first request's
// pace counts from then, so a connection that waited in the queue gets no fresh allowance.
thread_local Clock::time_point connection_accepted = Clock::now();
}  // namespace

ConnectionPool::ConnectionPool(int threads, int max_threads, std::size_t max_queued)
    : max_threads_(static_cast<std::size_t>(max_threads)), max_queued_(max_queued) {
  const std::lock_guard lock(mutex_);
  for (int i = 0; i < threads; ++i) add_worker();
}

ConnectionPool::~ConnectionPool() { ConnectionPool::shutdown(); }

void ConnectionPool::enqueue(std::function<void()> fn) {
  std::unique_lock lock(mutex_);
  space_.wait(lock, [this] { return queue_.size() < max_queued_ || stopping_; });
  if (stopping_) return;
  queue_.emplace_back([fn = std::move(fn), at = Clock::now()] {
    connection_accepted = at;
    fn();
  });
  if (idle_ < queue_.size() && workers_.size() < max_threads_) add_worker();
  ready_.notify_one();
}

void ConnectionPool::shutdown() {
  std::vector<std::thread> workers;
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    workers.swap(workers_);
  }
  ready_.notify_all();
  space_.notify_all();
  for (std::thread& t : workers) t.join();
}

void ConnectionPool::add_worker() {
  workers_.emplace_back([this] { work(); });
}

void ConnectionPool::work() {
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock lock(mutex_);
      ++idle_;
      ready_.wait(lock, [this] { return !queue_.empty() || stopping_; });
      --idle_;
      if (queue_.empty()) return;  // stopping, and nothing left
      fn = std::move(queue_.front());
      queue_.pop_front();
    }
    space_.notify_one();
    fn();
  }
}

// --- the paced connection -------------------------------------------------------------------------

namespace {

// One direction of a request: when it began and how many bytes went, which set its deadline.
struct Pace {
  ConnectionPace rule;
  Clock::time_point start = Clock::now();
  std::size_t bytes = 0;

  // Milliseconds a wait may take: the per-call timeout, or what the pace leaves if less (<= 0: none).
  [[nodiscard]] int wait_ms(double timeout_seconds) const {
    const double allowed = rule.grace_seconds + static_cast<double>(bytes) / rule.min_bytes_per_second;
    const double left = allowed - std::chrono::duration<double>(Clock::now() - start).count();
    return static_cast<int>(1000 * std::min(timeout_seconds, left));
  }
};

bool wait_for(int sock, short events, int ms) {
  if (ms <= 0) return false;
  pollfd p{.fd = sock, .events = events, .revents = 0};
  int r = 0;
  do {
    r = ::poll(&p, 1, ms);
  } while (r < 0 && errno == EINTR);
  return r > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
}

void address_of(int sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  auto* sa =
      reinterpret_cast<sockaddr*>(&addr);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
  if ((peer ? ::getpeername(sock, sa, &len) : ::getsockname(sock, sa, &len)) != 0) return;
  std::array<char, NI_MAXHOST> host{};
  std::array<char, NI_MAXSERV> service{};
  if (::getnameinfo(sa, len, host.data(), host.size(), service.data(), service.size(),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return;
  ip = host.data();
  port = std::atoi(service.data());
}

// A socket stream whose reads and writes each keep a pace (Pace), with a small read buffer (the
// request head is read byte by byte).
class PacedSocketStream final : public httplib::Stream {
 public:
  PacedSocketStream(int sock, ConnectionPace pace, double read_timeout, double write_timeout)
      : sock_(sock), pace_(pace), read_timeout_(read_timeout), write_timeout_(write_timeout) {}

  void begin_request(Clock::time_point start) {
    read_ = Pace{.rule = pace_, .start = start};
    writing_ = false;
  }
  [[nodiscard]] bool has_buffered() const { return begin_ < end_; }

  bool is_readable() const override { return has_buffered() || wait_for(sock_, POLLIN, read_.wait_ms(read_timeout_)); }
  // The answer's pace counts from its first byte: a handler may take long (loading a model) before.
  bool is_writable() const override {
    if (!writing_) {
      written_ = Pace{.rule = pace_};
      writing_ = true;
    }
    return wait_for(sock_, POLLOUT, written_.wait_ms(write_timeout_));
  }

  ssize_t read(char* ptr, size_t size) override {
    if (!has_buffered()) {
      if (!is_readable()) return -1;
      const ssize_t got = receive(buffer_.data(), buffer_.size());
      if (got <= 0) return got;
      begin_ = 0;
      end_ = static_cast<std::size_t>(got);
    }
    const std::size_t n = std::min(size, end_ - begin_);
    std::memcpy(ptr, buffer_.data() + begin_, n);
    begin_ += n;
    return static_cast<ssize_t>(n);
  }

  // Sends what the socket takes without blocking (cpp-httplib writes the rest in its loop), so a
  // client that stops reading holds the thread only until the pace runs out.
  ssize_t write(const char* ptr, size_t size) override {
    for (;;) {
      if (!is_writable()) return -1;
      const ssize_t sent = ::send(sock_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (sent > 0) written_.bytes += static_cast<std::size_t>(sent);
      return sent;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, false, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  ssize_t receive(char* ptr, std::size_t size) {
    for (;;) {
      const ssize_t got = ::recv(sock_, ptr, size, MSG_DONTWAIT);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!wait_for(sock_, POLLIN, read_.wait_ms(read_timeout_))) return -1;
        continue;
      }
      if (got > 0) read_.bytes += static_cast<std::size_t>(got);
      return got;
    }
  }

  int sock_;
  ConnectionPace pace_;
  double read_timeout_, write_timeout_;
  Pace read_;
  mutable Pace written_;  // started by the first is_writable() of a request
  mutable bool writing_ = false;
  std::array<char, 4096> buffer_{};
  std::size_t begin_ = 0, end_ = 0;
};

}  // namespace

// --- WorkbenchHttpServer --------------------------------------------------------------------------

void WorkbenchHttpServer::set_listen_backlog(int backlog) {
  const int sock = svr_sock_;
  if (sock >= 0) ::listen(sock, backlog);
}

// cpp-httplib's own loop (keep-alive up to a count, each request through process_request) with the
// paced stream; between requests it waits at most the keep-alive timeout, and stops with the server.
bool WorkbenchHttpServer::process_and_close_socket(socket_t sock) {
  PacedSocketStream stream(sock, pace_,
                           static_cast<double>(read_timeout_sec_) + static_cast<double>(read_timeout_usec_) / 1e6,
                           static_cast<double>(write_timeout_sec_) + static_cast<double>(write_timeout_usec_) / 1e6);
  const auto next_request = [&] {
    const Clock::time_point until = Clock::now() + std::chrono::seconds(keep_alive_timeout_sec_);
    while (svr_sock_ != INVALID_SOCKET) {
      if (stream.has_buffered() || wait_for(sock, POLLIN, 100)) return true;
      if (Clock::now() >= until) return false;
    }
    return false;
  };
  bool ok = true;
  for (std::size_t left = keep_alive_max_count_; ok && left > 0 && next_request(); --left) {
    // A later request's pace counts from when its first byte came (next_request just saw it).
    stream.begin_request(left == keep_alive_max_count_ ? connection_accepted : Clock::now());
    bool closed = false;
    ok = process_request(stream, left == 1, closed, nullptr) && !closed;
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

}  // namespace witness
