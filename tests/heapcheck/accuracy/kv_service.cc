// A small key-value service with a known leak, for comparing leak checkers on realistic C++:
// two worker threads serve requests from a queue into a std::map of shared_ptr<Entry> (each
// Entry a string and a vector of string tags) with an unordered_map response cache; every
// request opens a Connection (64 bytes) with a 4 KiB buffer, and 7 of 8 closes forget to free
// them. The service itself stays reachable (a global pointer, never deleted), so every checker
// that looks after the global destructors (LSan) sees the same live heap as one that looks
// before them. Prints the true leak: "truth: leaked B bytes in N objects".
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

struct Entry {
  std::string value;
  std::vector<std::string> tags;
};

struct Connection {
  int fd;
  int state;
  char* buffer;  // 4 KiB
  char peer[48];
};
static_assert(sizeof(Connection) == 64);
constexpr size_t kBufferBytes = 4096;

struct Request {
  int op;  // 0 put, 1 get, 2 erase
  std::string key;
  std::string value;
};

struct Service {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Request> queue;
  bool done = false;
  std::map<std::string, std::shared_ptr<Entry>> store;
  std::unordered_map<std::string, std::string> cache;
  std::vector<Connection*> open;  // pooled connections that were closed properly
  size_t leaked = 0;
};

Connection* OpenConnection(int id) {
  auto* c = new Connection{};
  c->fd = id;
  c->buffer = static_cast<char*>(std::malloc(kBufferBytes));
  std::snprintf(c->peer, sizeof(c->peer), "10.0.%d.%d:%d", id / 256 % 256, id % 256, 4000 + id);
  std::snprintf(c->buffer, kBufferBytes, "GET /%d HTTP/1.1\r\n", id);
  return c;
}

// Closes c; 7 of 8 times "forgets" it (the leak), the 8th frees it.
void CloseConnection(Service& s, Connection* c) {
  if (c->fd % 8 == 0) {
    std::free(c->buffer);
    delete c;
    return;
  }
  std::lock_guard<std::mutex> lock(s.mu);
  ++s.leaked;
}

void Serve(Service& s, const Request& r, int id) {
  Connection* c = OpenConnection(id);
  std::string response;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (r.op == 0) {
      auto e = std::make_shared<Entry>();
      e->value = r.value;
      for (int t = 0; t < 1 + id % 5; ++t)
        e->tags.push_back("tag-" + std::to_string(t * 7 + id % 3));
      s.store[r.key] = std::move(e);
      s.cache.erase(r.key);
      response = "stored";
    } else if (r.op == 1) {
      auto hit = s.cache.find(r.key);
      if (hit != s.cache.end()) {
        response = hit->second;
      } else {
        auto it = s.store.find(r.key);
        response = it == s.store.end()
                       ? "missing"
                       : it->second->value + "#" + std::to_string(it->second->tags.size());
        s.cache[r.key] = response;
      }
    } else {
      s.store.erase(r.key);
      s.cache.erase(r.key);
      response = "erased";
    }
  }
  std::snprintf(c->buffer, kBufferBytes, "HTTP/1.1 200 OK\r\n\r\n%s", response.c_str());
  CloseConnection(s, c);
}

void Worker(Service& s) {
  for (;;) {
    Request r;
    int id;
    {
      std::unique_lock<std::mutex> lock(s.mu);
      s.cv.wait(lock, [&] { return s.done || !s.queue.empty(); });
      if (s.queue.empty()) return;
      r = std::move(s.queue.front());
      s.queue.pop_front();
      static int next_id = 0;
      id = ++next_id;
    }
    Serve(s, r, id);
  }
}

}  // namespace

// Never deleted: the live state every checker must find (void* with external linkage, so that
// the compiler keeps the store: Service has internal linkage).
void* g_service;

int main(int argc, char** argv) {
  const int requests = argc > 1 ? std::atoi(argv[1]) : 1198;
  auto* service = new Service;
  g_service = service;
  Service& s = *service;
  std::thread a(Worker, std::ref(s)), b(Worker, std::ref(s));
  unsigned rng = 12345;
  for (int i = 0; i < requests; ++i) {
    rng = rng * 1103515245 + 12345;
    Request r;
    r.op = static_cast<int>((rng >> 16) % 3);
    r.key = "user:" + std::to_string((rng >> 8) % 300);
    r.value = std::string(8 + (rng >> 4) % 60, static_cast<char>('a' + i % 26));
    std::lock_guard<std::mutex> lock(s.mu);
    s.queue.push_back(std::move(r));
    s.cv.notify_one();
  }
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.done = true;
    s.cv.notify_all();
  }
  a.join();
  b.join();
  std::printf("truth: leaked %zu bytes in %zu objects\n",
              s.leaked * (sizeof(Connection) + kBufferBytes), s.leaked * 2);
  return 0;
}
