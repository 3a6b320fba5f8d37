// A multi-threaded server for the live leak check (run_http.py leaks) and the delta tests.
//
// Four worker threads accept on one TCP listener; each request is a line "k\n", the answer a
// line "k digest\n" computed from k alone (a map of strings built, a shared cache of earlier
// answers consulted), so two runs answer identically whatever the timing. The standard input
// steers it, one command a line, each acknowledged with one line on stdout:
//   leak N      the next N requests each leak one 3000-byte object from LeakInRequest (the
//               pointer dropped): the truth the check must find -> "leaking N"
//   churn N S   allocates and frees N objects of S bytes in DeltaChurn -> "churned N S"
//   keep N S    allocates N objects of S bytes in DeltaKeep and keeps them -> "kept N S"
//   served      -> "served <requests answered>"
// It first prints "port <P>" and "ready". At end of input it leaves with _exit(0) (no exit
// check: the planted leak is the live check's to find). SIGTERM stops it the way services stop
// (memcached, nginx): a thread waiting for the signal calls exit(0), so exit handlers — and
// HEAPCHECK's exit check — run.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

std::atomic<int> g_leak_budget{0};
std::atomic<long> g_served{0};
std::mutex g_cache_lock;
std::unordered_map<long, std::string>* g_cache = new std::unordered_map<long, std::string>;
std::vector<void*> g_kept;

__attribute__((noinline)) void LeakInRequest(long k) {
  char* p = static_cast<char*>(malloc(3000));
  memset(p, static_cast<int>(k & 0x7f), 3000);
  asm volatile("" : : "r"(p) : "memory");  // the pointer dies here
}

__attribute__((noinline)) std::string Compute(long k) {
  std::map<std::string, long> words;
  for (long i = 0; i < 64 + k % 64; ++i) words["w" + std::to_string((k * 31 + i * 7) % 997)] += i;
  unsigned long h = 1469598103934665603ul;
  for (const auto& [word, count] : words) {
    for (char c : word) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ul;
    h = (h ^ static_cast<unsigned long>(count)) * 1099511628211ul;
  }
  std::lock_guard<std::mutex> lock(g_cache_lock);
  auto it = g_cache->find(k % 512);  // an earlier answer folded in: shared state
  if (it != g_cache->end()) h ^= std::hash<std::string>()(it->second) & 0xff;
  std::string answer = std::to_string(h);
  if (it == g_cache->end() && k < 512) g_cache->emplace(k % 512, answer);
  return answer;
}

void Serve(int listener) {
  for (;;) {
    const int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) continue;
    std::string line;
    char c;
    while (read(fd, &c, 1) == 1 && c != '\n') line += c;
    const long k = strtol(line.c_str(), nullptr, 10);
    if (g_leak_budget.fetch_sub(1) > 0)
      LeakInRequest(k);
    else
      g_leak_budget.fetch_add(1);
    const std::string answer = std::to_string(k) + " " + Compute(k) + "\n";
    // MSG_NOSIGNAL: a client that went away costs its answer, never the server (SIGPIPE).
    ssize_t ignored = send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
    (void)ignored;
    close(fd);
    g_served.fetch_add(1);
  }
}

__attribute__((noinline)) void DeltaChurn(long n, long size) {
  for (long i = 0; i < n; ++i) {
    void* volatile p = malloc(static_cast<size_t>(size));
    free(p);
  }
}

__attribute__((noinline)) void DeltaKeep(long n, long size) {
  for (long i = 0; i < n; ++i) g_kept.push_back(malloc(static_cast<size_t>(size)));
}

}  // namespace

int main() {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof addr;
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listener, 256) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
    perror("listen");
    return 1;
  }
  g_kept.reserve(1 << 20);
  // Every thread started from here on blocks SIGTERM; one of them waits for it.
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, nullptr);
  std::thread([term] {
    int signal = 0;
    sigwait(&term, &signal);
    exit(0);  // no fflush(nullptr) first: the main thread holds stdin's lock in fgets
  }).detach();
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t) workers.emplace_back(Serve, listener);
  printf("port %d\nready\n", ntohs(addr.sin_port));
  fflush(stdout);
  char line[256];
  while (fgets(line, sizeof line, stdin) != nullptr) {
    long a = 0, b = 0;
    if (sscanf(line, "leak %ld", &a) == 1) {
      g_leak_budget.fetch_add(static_cast<int>(a));
      printf("leaking %ld\n", a);
    } else if (sscanf(line, "churn %ld %ld", &a, &b) == 2) {
      DeltaChurn(a, b);
      printf("churned %ld %ld\n", a, b);
    } else if (sscanf(line, "keep %ld %ld", &a, &b) == 2) {
      DeltaKeep(a, b);
      printf("kept %ld %ld\n", a, b);
    } else if (strncmp(line, "served", 6) == 0) {
      printf("served %ld\n", g_served.load());
    } else {
      printf("unknown command\n");
    }
    fflush(stdout);
  }
  fflush(nullptr);
  _exit(0);
}
