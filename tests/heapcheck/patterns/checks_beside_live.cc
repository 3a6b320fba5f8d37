// The program's own leak checks while a client asks for live ones (/debug/pprof/leaks): each
// check must see the program alone, never the other check (heapcheck/check_gate.h).
//
// The program plants a known set of leaks (100 direct objects of 777 bytes, 20 direct heads of
// 512 bytes each holding the only pointer to a 256-byte object: 93,060 bytes in 140 objects),
// prints "truth: leaked 93060 bytes in 140 objects", starts its HTTP server
// (HeapkitStartHttpServer), two threads that allocate and free without pause (all their objects
// reachable), and one client thread that asks /debug/pprof/leaks?debug=1 back to back (2 ms
// apart) and classifies each answer: 200 with the planted totals ("exact"), 200 with others
// ("wrong", the first kept for the report), 503 or 429 with a Retry-After header, or anything
// else ("other"). The client uses no heap (static buffers, raw sockets).
//
//   explicit N   N whole-program checks (HeapLeakChecker::NoGlobalLeaks), 10 ms apart; each
//                prints "explicit <bytes> <objects>" (BytesLeaked, ObjectsLeaked); then the
//                client's tally "live ok=<exact> wrong=<n> busy=<503s> too_soon=<429s>
//                other=<n> [first wrong answer]" and _exit(0) (no exit check)
//   exit MS      after MS milliseconds of live requests, exit(0): the exit check runs with the
//                client still asking, and reports what it finds (and exits 1 on leaks)
#include <arpa/inet.h>
#include <gperftools/heap-checker.h>
#include <heapkit/http_server.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kDirect = 100, kDirectBytes = 777;
constexpr int kHeads = 20, kHeadBytes = 512, kChildBytes = 256;
constexpr long kTruthBytes = kDirect * kDirectBytes + kHeads * (kHeadBytes + kChildBytes);
constexpr long kTruthObjects = kDirect + 2 * kHeads;

template <typename T>
__attribute__((noinline)) T* Escape(T* p) {
  asm volatile("" : : "r"(p) : "memory");
  return p;
}

__attribute__((noinline)) void LeakDirect() {
  for (int i = 0; i < kDirect; ++i) memset(Escape(malloc(kDirectBytes)), 'd', kDirectBytes);
}

__attribute__((noinline)) void LeakHeadWithChild() {
  for (int i = 0; i < kHeads; ++i) {
    void** head = static_cast<void**>(malloc(kHeadBytes));
    memset(head, 'h', kHeadBytes);
    head[0] = memset(malloc(kChildBytes), 'c', kChildBytes);
    Escape(head);
  }
}

__attribute__((noinline)) void WipeStack() {
  char buf[256 * 1024];
  memset(buf, 0, sizeof(buf));
  asm volatile("" : : "r"(buf) : "memory");
}

// Allocator churn: each thread replaces a slot of its own table without pause.
constexpr int kChurnSlots = 512;
void* g_churn[2][kChurnSlots];
std::atomic<bool> g_stop{false};

void* Churn(void* arg) {
  void** table = g_churn[reinterpret_cast<uintptr_t>(arg)];
  unsigned x = 12345u + static_cast<unsigned>(reinterpret_cast<uintptr_t>(arg));
  while (!g_stop.load(std::memory_order_relaxed)) {
    x = x * 1103515245u + 12345u;
    const int slot = static_cast<int>((x >> 8) % kChurnSlots);
    free(table[slot]);
    const size_t size = 8 + (x >> 16) % 2000;
    table[slot] = malloc(size);
    memset(table[slot], 0, size);
  }
  return nullptr;
}

// The live client's tally.
int g_port = 0;
std::atomic<long> g_ok{0}, g_wrong{0}, g_busy{0}, g_too_soon{0}, g_other{0};
char g_first_wrong[512];
char g_response[8 << 20];

// One GET of /debug/pprof/leaks?debug=1; the answer (head and body) in g_response.
size_t Ask() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(g_port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  size_t n = 0;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    // Host names the port: the endpoint answers only its own name (profiler/http/request_guard.h).
    char request[128];
    const int length = snprintf(request, sizeof request,
                                "GET /debug/pprof/leaks?debug=1 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                                "Connection: close\r\n\r\n",
                                g_port);
    if (length > 0 && send(fd, request, static_cast<size_t>(length), MSG_NOSIGNAL) == length) {
      ssize_t got;
      while (n + 1 < sizeof g_response &&
             (got = read(fd, g_response + n, sizeof g_response - 1 - n)) > 0)
        n += static_cast<size_t>(got);
    }
  }
  close(fd);
  g_response[n] = '\0';
  return n;
}

void NoteWrong(const char* text) {
  if (g_wrong.fetch_add(1) == 0) {
    snprintf(g_first_wrong, sizeof g_first_wrong, "%.200s", text);
    for (char* c = g_first_wrong; *c != '\0'; ++c)
      if (*c == '\r' || *c == '\n') *c = '|';
  }
}

void Classify() {
  int status = 0;
  if (Ask() == 0 || sscanf(g_response, "HTTP/1.1 %d", &status) != 1) {
    g_other.fetch_add(1);
    return;
  }
  const char* body = strstr(g_response, "\r\n\r\n");
  const bool retry_after = strstr(g_response, "\r\nRetry-After: ") != nullptr;
  if (status == 200 && body != nullptr) {
    long objects = -1, bytes = -1;
    if (sscanf(body + 4, "heap profile: %ld: %ld", &objects, &bytes) == 2 &&
        objects == kTruthObjects && bytes == kTruthBytes)
      g_ok.fetch_add(1);
    else
      NoteWrong(body + 4);
  } else if (status == 503 && retry_after) {
    g_busy.fetch_add(1);
  } else if (status == 429 && retry_after) {
    g_too_soon.fetch_add(1);
  } else {
    g_other.fetch_add(1);
    NoteWrong(g_response);
  }
}

void* Client(void*) {
  while (!g_stop.load(std::memory_order_relaxed)) {
    Classify();
    usleep(2000);
  }
  return nullptr;
}

void Start(pthread_t* threads) {
  char message[128];
  if (!HeapkitStartHttpServer("127.0.0.1:0", message, sizeof message)) {
    fprintf(stderr, "HeapkitStartHttpServer: %s\n", message);
    _exit(2);
  }
  const char* colon = strrchr(message, ':');
  g_port = colon != nullptr ? atoi(colon + 1) : 0;
  for (uintptr_t t = 0; t < 2; ++t)
    pthread_create(&threads[t], nullptr, Churn, reinterpret_cast<void*>(t));
  pthread_create(&threads[2], nullptr, Client, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (strcmp(argv[1], "explicit") != 0 && strcmp(argv[1], "exit") != 0)) {
    fprintf(stderr, "usage: %s explicit <checks> | exit <ms>\n", argv[0]);
    return 2;
  }
  const int n = atoi(argv[2]);
  LeakDirect();
  LeakHeadWithChild();
  WipeStack();
  printf("truth: leaked %ld bytes in %ld objects\n", kTruthBytes, kTruthObjects);
  fflush(stdout);
  pthread_t threads[3];
  Start(threads);
  if (strcmp(argv[1], "exit") == 0) {
    usleep(static_cast<useconds_t>(n) * 1000);
    exit(0);  // the exit check, with the client asking and the churn going on
  }
  for (int i = 0; i < n; ++i) {
    HeapLeakChecker::NoGlobalLeaks();
    HeapLeakChecker* whole = HeapLeakChecker::GlobalChecker();
    printf("explicit %ld %ld\n", static_cast<long>(whole->BytesLeaked()),
           static_cast<long>(whole->ObjectsLeaked()));
    fflush(stdout);
    usleep(10000);
  }
  g_stop.store(true);
  for (pthread_t t : threads) pthread_join(t, nullptr);
  printf("live ok=%ld wrong=%ld busy=%ld too_soon=%ld other=%ld %s\n", g_ok.load(), g_wrong.load(),
         g_busy.load(), g_too_soon.load(), g_other.load(), g_first_wrong);
  fflush(stdout);
  _exit(0);
}
