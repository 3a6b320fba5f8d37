// The demo program for the README's first command: a tiny "server" that caches requests,
// keeps a session table, and forgets to free two things. Run under heapkit it shows the
// allocator, the leak checker (two leaks: a direct one and an indirect chain) and the heap
// profiler (who holds the memory). `demo churn` is the allocator's timing workload instead:
// two threads each making 10 million malloc/free pairs of 16-512 bytes, 64 live at a time.
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace demo {

struct Request {
  std::string path;
  std::vector<char> body;
};

struct Node {
  Node* next;
  char payload[48];
};

// Holds memory for the whole run: shows up in the heap profile, not as a leak.
std::map<int, std::unique_ptr<Request>>* g_cache = new std::map<int, std::unique_ptr<Request>>;

__attribute__((noinline)) void CacheRequest(int id, size_t body_size) {
  auto req = std::make_unique<Request>();
  req->path = "/api/v1/items/" + std::to_string(id);
  req->body.assign(body_size, 'x');
  (*g_cache)[id] = std::move(req);
}

// Bug 1: a buffer that is never freed (a direct leak).
__attribute__((noinline)) char* FormatGreeting(const char* name) {
  char* buf = static_cast<char*>(malloc(1000));
  snprintf(buf, 1000, "hello, %s", name);
  return buf;
}

// Bug 2: a linked list whose head is dropped (one direct leak + an indirect chain).
__attribute__((noinline)) void BuildSessionList(int n) {
  Node* head = nullptr;
  for (int i = 0; i < n; ++i) {
    Node* node = new Node;
    node->next = head;
    snprintf(node->payload, sizeof(node->payload), "session-%d", i);
    head = node;
  }
  std::printf("built %d sessions, first is %s\n", n, head->payload);
}

// Temporary garbage: lots of allocation, nothing retained.
__attribute__((noinline)) size_t ChurnStrings(int rounds) {
  size_t total = 0;
  for (int i = 0; i < rounds; ++i) {
    std::string s(64 + i % 512, 'a' + i % 26);
    total += s.size();
  }
  return total;
}

// The timing workload: small objects allocated and freed in a sliding window of 64, on each
// of two threads (the pattern of request handling).
void* ChurnThread(void*) {
  void* window[64] = {};
  for (long i = 0; i < 10000000; ++i) {
    void*& slot = window[i & 63];
    free(slot);
    slot = malloc(16 + (i * 7919) % 497);
    static_cast<char*>(slot)[0] = 1;
  }
  for (void* p : window) free(p);
  return nullptr;
}

int Churn() {
  pthread_t threads[2];
  for (pthread_t& t : threads) pthread_create(&t, nullptr, ChurnThread, nullptr);
  for (pthread_t& t : threads) pthread_join(t, nullptr);
  std::printf("20000000 malloc/free pairs on 2 threads\n");
  return 0;
}

}  // namespace demo

int main(int argc, char** argv) {
  // The leak checker writes its report to stderr at exit; into a pipe (`run_demo.sh | less`, a
  // CI log) stdout is block-buffered and its lines would come out after the report, at exit's
  // final flush. Line buffering writes each line when it is printed.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc > 1 && std::strcmp(argv[1], "churn") == 0) return demo::Churn();
  for (int i = 0; i < 2000; ++i) demo::CacheRequest(i, 4096);
  char* greeting = demo::FormatGreeting("heapkit");
  std::printf("%s\n", greeting);
  greeting = nullptr;  // leaked
  demo::BuildSessionList(100);
  std::printf("churned %zu bytes\n", demo::ChurnStrings(200000));
  std::printf("cache holds %zu requests\n", demo::g_cache->size());
  return 0;
}
