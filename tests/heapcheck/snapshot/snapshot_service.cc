// A service for the snapshot checks (heapcheck/snapshot_fork.h): 8 threads allocate and free
// without pause while the program holds a known set of leaks (direct ones and chains of
// indirect ones, their only pointers XOR-hidden in a global), and the main thread checks the
// whole program again and again through both checks of a running program: the API's
// NoGlobalLeaks() and the live endpoint's check (BeginLiveLeakCheck, a poll of the copy's pipe,
// EndLiveLeakCheck). Every check must find exactly the known leaks: no false leak from an object in
// flight between the workers, none missed. Live checks are spaced (HEAP_CHECK_LIVE_MIN_INTERVAL_MS
// and the share rule): a round whose live check would come too soon runs the API's instead. Before
// exit the leaks are freed, so the exit check is clean.
//
//   snapshot_service soak <seconds>       checks until the time is up
//   snapshot_service seccomp <checks>     fork refused by a seccomp filter (EPERM)
//   snapshot_service nproc <checks>       fork refused by RLIMIT_NPROC (as nobody when root)
//   snapshot_service copy_dies <checks>   the copy is killed (seccomp: its PR_SET_NAME)
// Output: "check <i> <api|live> <bytes> <objects> <ok|MISMATCH>" per check, then
// "truth: leaked B bytes in N objects" and "summary: <checks> checks, <mismatches> mismatches".
#include <errno.h>
#include <gperftools/heap-checker.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <grp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "heapcheck/live_leak_check.h"

namespace {

constexpr uintptr_t kHide = 0x5a5a5a5a5a5a5a5aull;
constexpr int kDirect = 40;
constexpr int kChains = 10;
constexpr int kChainLength = 3;  // a direct head and two indirect nodes
uintptr_t g_hidden[kDirect + kChains];
uint64_t g_truth_bytes = 0, g_truth_objects = 0;

// Leaks and workers use different size classes (leaks from 2 KiB up, workers up to 1 KiB): a
// worker freeing a block computes its span's start, which would be a leak's address if they
// shared spans, and a worker stopped right then would hold it in a register.
struct Node {
  Node* next;
  char payload[2040];
};

// Run on a thread of its own, which exits: no stale copy of a leak's address stays in a stack
// that a check scans.
void* MakeLeaks(void*) {
  for (int i = 0; i < kDirect; ++i) {
    const size_t size = 2560 + 64 * static_cast<size_t>(i);
    char* p = static_cast<char*>(malloc(size));
    memset(p, 0x11, size);  // no pointers inside
    g_hidden[i] = reinterpret_cast<uintptr_t>(p) ^ kHide;
    g_truth_bytes += size;
    ++g_truth_objects;
  }
  for (int c = 0; c < kChains; ++c) {
    Node* head = nullptr;
    for (int k = 0; k < kChainLength; ++k) {
      Node* n = static_cast<Node*>(malloc(sizeof(Node)));
      memset(n->payload, 0x22, sizeof n->payload);
      n->next = head;
      head = n;
      g_truth_bytes += sizeof(Node);
      ++g_truth_objects;
    }
    g_hidden[kDirect + c] = reinterpret_cast<uintptr_t>(head) ^ kHide;
    head = nullptr;
  }
  return nullptr;
}

void FreeLeaks() {
  for (int i = 0; i < kDirect; ++i) free(reinterpret_cast<void*>(g_hidden[i] ^ kHide));
  for (int c = 0; c < kChains; ++c) {
    Node* n = reinterpret_cast<Node*>(g_hidden[kDirect + c] ^ kHide);
    while (n != nullptr) {
      Node* next = n->next;
      free(n);
      n = next;
    }
  }
}

// The workers: each keeps a ring of live blocks (reachable from its stack) and replaces one at
// a time, writing pointers into the blocks so that the heap changes under the checks. Only
// pointers that never dangle (to the block itself and to the worker's anchor block): a pointer
// to a block freed since, whose memory then became a leaked object, would keep that leak alive
// in any conservative checker.
std::atomic<bool> g_stop{false};
std::atomic<uint64_t> g_operations{0};
std::atomic<int> g_running{0};

void* Worker(void* arg) {
  unsigned seed = static_cast<unsigned>(reinterpret_cast<uintptr_t>(arg));
  constexpr int kRing = 512;
  void* ring[kRing] = {};
  void* anchor = malloc(64);
  uint64_t ops = 0;
  g_running.fetch_add(1);
  while (!g_stop.load(std::memory_order_relaxed)) {
    const int i = static_cast<int>(rand_r(&seed) % kRing);
    free(ring[i]);
    const size_t size = 16 + rand_r(&seed) % 1008;
    void** p = static_cast<void**>(malloc(size));
    p[0] = anchor;
    p[1] = p;
    ring[i] = p;
    if ((++ops & 1023) == 0) g_operations.fetch_add(1024, std::memory_order_relaxed);
  }
  for (void* p : ring) free(p);
  free(anchor);
  return nullptr;
}

void CollectProfile(void* ctx, const char* data, size_t n) {
  static_cast<std::string*>(ctx)->append(data, n);
}

// The live endpoint's two halves, as its server thread runs them: begin, poll the copy's pipe,
// end.
void LiveLeakCheck(std::string* profile, heapkit::check::LeakCheckAnswer* answer) {
  const int fd = heapkit::check::BeginLiveLeakCheck(answer);
  if (answer->status != heapkit::check::LeakCheckAnswer::kPending) return;
  if (fd >= 0) {
    pollfd p{fd, POLLIN, 0};
    while (poll(&p, 1, answer->wait_ms) < 0 && errno == EINTR) {
    }
  }
  heapkit::check::EndLiveLeakCheck(CollectProfile, profile, answer);
}

// fork/vfork and clone without CLONE_THREAD fail with EPERM (clone3: ENOSYS, so that glibc
// creates threads with clone, whose flags a filter can read). `kill_prctl`: instead, the
// process that calls prctl(PR_SET_NAME) is killed: the snapshot copy names itself, nothing else
// here does (not the ptrace helper, which a later check may need).
void InstallSeccomp(bool kill_prctl) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    perror("PR_SET_NO_NEW_PRIVS");
    exit(2);
  }
  const sock_filter refuse_fork[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fork, 1, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_vfork, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  const sock_filter kill_on_prctl[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_NAME, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{};
  if (kill_prctl) {
    prog.len = sizeof kill_on_prctl / sizeof kill_on_prctl[0];
    prog.filter = const_cast<sock_filter*>(kill_on_prctl);
  } else {
    prog.len = sizeof refuse_fork / sizeof refuse_fork[0];
    prog.filter = const_cast<sock_filter*>(refuse_fork);
  }
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
    perror("seccomp");
    exit(2);
  }
}

// As nobody (a root process is not held to RLIMIT_NPROC).
void BecomeNobody() {
  if (geteuid() != 0) return;
  if (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 ||
      setresuid(65534, 65534, 65534) != 0) {
    perror("drop to nobody");
    exit(2);
  }
}

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s soak|seccomp|nproc|copy_dies <seconds|checks>\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  const double amount = atof(argv[2]);
  if (mode == "nproc") BecomeNobody();
  if (mode == "seccomp" || mode == "copy_dies") InstallSeccomp(mode == "copy_dies");
  // The leaks first, before any worker block exists (no stale word in the heap can hold their
  // addresses), on a stack of our own that is unmapped afterwards (glibc would give a cached
  // stack, with the leaks' addresses in its dead frames, to the next thread).
  constexpr size_t kMakerStack = 1 << 20;
  void* stack =
      mmap(nullptr, kMakerStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstack(&attr, stack, kMakerStack);
  pthread_t maker;
  pthread_create(&maker, &attr, MakeLeaks, nullptr);
  pthread_join(maker, nullptr);
  pthread_attr_destroy(&attr);
  munmap(stack, kMakerStack);
  constexpr int kWorkers = 8;
  pthread_t workers[kWorkers];
  for (int i = 0; i < kWorkers; ++i)
    pthread_create(&workers[i], nullptr, Worker, reinterpret_cast<void*>(uintptr_t{1} + i));
  // A thread still starting blocks every signal (glibc): it would need the ptrace helper.
  while (g_running.load() < kWorkers) sched_yield();
  if (mode == "nproc") {
    // The user has 9 tasks now: no new process.
    rlimit one{1, 1};
    if (setrlimit(RLIMIT_NPROC, &one) != 0) perror("RLIMIT_NPROC");
  }
  const bool soak = mode == "soak";
  const double until = Now() + amount;
  int checks = 0, mismatches = 0;
  HeapLeakChecker* main_checker = HeapLeakChecker::GlobalChecker();
  if (main_checker == nullptr) {
    fprintf(stderr, "run with HEAPCHECK=normal\n");
    return 2;
  }
  while (soak ? Now() < until : checks < static_cast<int>(amount)) {
    uint64_t bytes = 0, objects = 0;
    bool api = checks % 2 == 0;
    if (!api) {
      std::string profile;
      heapkit::check::LeakCheckAnswer answer;
      LiveLeakCheck(&profile, &answer);
      // Live checks are spaced (live_leak_check.h): too soon, this round's check is the API's.
      api = answer.status == heapkit::check::LeakCheckAnswer::kTooSoon;
      bytes = answer.bytes;
      objects = answer.objects;
      if (answer.status != heapkit::check::LeakCheckAnswer::kChecked ||
          profile.rfind("heap profile:", 0) != 0) {
        bytes = objects = ~uint64_t{0};
      }
    }
    if (api) {
      HeapLeakChecker::NoGlobalLeaks();
      bytes = static_cast<uint64_t>(main_checker->BytesLeaked());
      objects = static_cast<uint64_t>(main_checker->ObjectsLeaked());
    }
    const bool ok = bytes == g_truth_bytes && objects == g_truth_objects;
    mismatches += ok ? 0 : 1;
    printf("check %d %s %llu %llu %s\n", checks, api ? "api" : "live",
           static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(objects),
           ok ? "ok" : "MISMATCH");
    fflush(stdout);
    ++checks;
  }
  g_stop = true;
  for (pthread_t t : workers) pthread_join(t, nullptr);
  FreeLeaks();
  printf("truth: leaked %llu bytes in %llu objects\n",
         static_cast<unsigned long long>(g_truth_bytes),
         static_cast<unsigned long long>(g_truth_objects));
  printf("summary: %d checks, %d mismatches, %llu worker operations\n", checks, mismatches,
         static_cast<unsigned long long>(g_operations.load()));
  return 0;
}
