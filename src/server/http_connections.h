// How witness serve holds its connections (internal to src/server): a thread pool that grows for
// slow clients, and cpp-httplib's server with a connection loop that paces each request, so that a
// client sending a byte every few seconds (slowloris) is cut instead of holding a thread for hours.
//
//   witness::WorkbenchHttpServer http;
//   http.new_task_queue = [] { return new witness::ConnectionPool(8, witness::kMaxConnectionThreads,
//                                                                  witness::kMaxQueuedConnections); };
//   http.Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_content("hi", "text/plain"); });
//   http.bind_to_port("127.0.0.1", 8484);
//   http.set_listen_backlog(witness::kListenBacklog);
//   http.listen_after_bind();                      // until http.stop()
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>
// httplib.h brings <resolv.h>, whose `_res` macro breaks Eigen headers included after it (a unity
// build puts other files after this one). Nothing here uses the resolver's state.
#undef _res

namespace witness {

constexpr int kMaxConnectionThreads = 256;         // connections served at once, slow ones included
constexpr std::size_t kMaxQueuedConnections = 64;  // accepted, waiting for a thread
constexpr int kListenBacklog = 1024;               // connections waiting to be accepted

// Connections wait here for a thread. The pool starts with `threads` and grows, up to `max_threads`,
// whenever none is idle: a connection that sends its request slowly holds a thread, and others must
// still be served. The queue is bounded: when it is full the accepting thread waits, so a flood of
// connections queues in the kernel (the listen backlog), not in memory.
class ConnectionPool : public httplib::TaskQueue {
 public:
  ConnectionPool(int threads, int max_threads, std::size_t max_queued);
  ~ConnectionPool() override;
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

 private:
  void add_worker();  // under mutex_
  void work();

  const std::size_t max_threads_;
  const std::size_t max_queued_;
  std::mutex mutex_;
  std::condition_variable ready_, space_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> workers_;
  std::size_t idle_ = 0;
  bool stopping_ = false;
};

// A request must arrive (counted from when its connection was accepted, or its first byte on a
// kept-alive connection), and its answer leave (counted from the answer's first byte), at a pace:
// within grace_seconds plus one second per min_bytes_per_second of it. A 16 MB upload may take 17
// minutes; a slowloris head is cut after 10 s.
struct ConnectionPace {
  double grace_seconds = 10;
  double min_bytes_per_second = 16 * 1024;
};

// cpp-httplib's server with its listening socket reachable (its compiled-in backlog of 5 is raised
// after binding, so that a burst of clients waits in the kernel instead of being refused) and its
// connection loop replaced by one whose stream enforces the pace above.
class WorkbenchHttpServer : public httplib::Server {
 public:
  void set_listen_backlog(int backlog);
  void set_pace(ConnectionPace pace) { pace_ = pace; }  // before listening

 private:
  bool process_and_close_socket(socket_t sock) override;
  ConnectionPace pace_;
};

}  // namespace witness
