#include "pprof-tool/web/connection_threads.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

namespace heapkit::pprof {

void ConnectionThreads::enqueue(std::function<void()> fn) {
  Task task{std::move(fn), watch_ != nullptr ? watch_->Accepted() : ConnectionWatch::Socket()};
  std::lock_guard<std::mutex> lock(mutex_);
  if (running_ >= max_threads_) {
    waiting_.push_back(std::move(task));
    return;
  }
  ++running_;
  std::thread([this, task = std::move(task)]() mutable { Run(std::move(task)); }).detach();
}

void ConnectionThreads::Run(Task task) {
  for (;;) {
    task.fn();
    if (watch_ != nullptr && task.socket.fd >= 0) watch_->Closed(task.socket);
    std::lock_guard<std::mutex> lock(mutex_);
    if (waiting_.empty()) {
      --running_;
      idle_.notify_all();
      return;
    }
    task = std::move(waiting_.front());
    waiting_.pop_front();
  }
}

void ConnectionThreads::shutdown() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (idle_.wait_for(lock, std::chrono::seconds(drain_seconds_),
                     [this] { return running_ == 0; })) {
    return;
  }
  // Connections still open: their threads use the server, which is about to be destroyed.
  fflush(stdout);
  fflush(stderr);
  _exit(0);
}

}  // namespace heapkit::pprof
