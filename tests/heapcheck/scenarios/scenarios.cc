// End-to-end leak-check scenarios: one program, the scenario is argv[1]. Built several ways
// (-O0 with frame pointers, -O2 without; LD_PRELOAD and static -lheapkit) and run under
// HEAPCHECK by heapcheck_e2e_test, which knows the exact expected bytes/objects of each.
//
// Rules that keep outcomes honest: every scenario runs in a noinline function; main() wipes
// the stack below itself afterwards (WipeStack), so no stale slot of a dead frame decides
// whether an object is reachable; pointers that must be lost go through Escape() so the
// compiler cannot drop the allocation.
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <malloc.h>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <gperftools/heap-checker.h>

struct Node {
  Node* next;
  char payload[40];
};  // 48 bytes

struct GraphNode {
  GraphNode* left;
  GraphNode* right;
  uint64_t value;
};

// A global whose destructor forgets (drops without freeing) what it owns: strict reports it,
// normal does not (it is still reachable before destructors run).
struct Forgetful {
  void* owned = nullptr;
  ~Forgetful() {
    owned = nullptr;
    asm volatile("" : : : "memory");  // keep the store (-flifetime-dse)
  }
};

namespace scen {
// ---- globals used by scenarios (empty unless the scenario fills them) ----
// External linkage: the optimizer must keep stores to them (the checker reads them).
void* g_kept = nullptr;
Node* g_cycle_root = nullptr;
struct Holder {
  void* a;
  void* b;
};
Holder g_holders[4];
std::map<int, std::string> g_map;
std::vector<std::string> g_vector;
std::unordered_map<std::string, std::vector<int>> g_hash;
std::list<std::string> g_list;
thread_local void* t_tls_ptr = nullptr;
thread_local std::vector<int>* t_tls_vec = nullptr;
HiddenPointer<char>* g_hidden = nullptr;
alignas(8) char g_hidden_storage[sizeof(HiddenPointer<char>)];
void* g_interior = nullptr;
std::atomic<int> g_ready{0};
pthread_key_t g_key;

}  // namespace scen
using namespace scen;

namespace {

template <typename T>
inline T* Escape(T* p) {
  asm volatile("" : : "r"(p) : "memory");
  return p;
}

// A leak made by a global constructor (before main) when HC_CTOR_LEAK is set: minimal mode
// ignores it, normal mode reports it.
struct CtorLeak {
  CtorLeak() {
    if (std::getenv("HC_CTOR_LEAK") != nullptr) Escape(std::malloc(13));
  }
};
CtorLeak g_ctor_leak;

__attribute__((noinline)) void WipeStack() {
  char buf[256 * 1024];
  std::memset(buf, 0, sizeof(buf));
  asm volatile("" : : "r"(buf) : "memory");
}

__attribute__((noinline)) Node* NewNode(Node* next) {
  Node* n = new Node;
  n->next = next;
  std::memset(n->payload, 'n', sizeof(n->payload));
  return Escape(n);
}

// ---- scenarios ----

__attribute__((noinline)) void LostPointer() {
  g_kept = Escape(std::malloc(100));
  Escape(std::malloc(33));  // lost: 33 bytes, 1 object
}

// Zero-byte objects are objects too (gperftools and LSan report them): before exact mode's gap
// became -1, malloc(0) subtracted nothing from the sampling counter and was never recorded.
__attribute__((noinline)) void ZeroByteLeaks() {
  Escape(std::malloc(0));
  Escape(new char[0]);  // lost: 0 bytes, 2 objects
}

__attribute__((noinline)) void Cycles() {
  // Unreachable 3-cycle (144 bytes, 3 objects) and a reachable 2-cycle.
  Node* a = NewNode(nullptr);
  Node* b = NewNode(a);
  Node* c = NewNode(b);
  a->next = c;
  Node* x = NewNode(nullptr);
  Node* y = NewNode(x);
  x->next = y;
  g_cycle_root = x;
}

__attribute__((noinline)) void* FunctionStatic() {
  static std::vector<std::string>* cache = new std::vector<std::string>{"a", std::string(100, 'x')};
  static void* raw = std::malloc(77);
  return Escape(cache->data() + (raw != nullptr));
}

__attribute__((noinline)) void Globals() {
  g_holders[1].a = Escape(std::malloc(10));
  g_holders[3].b = Escape(std::malloc(20));
  g_cycle_root = NewNode(NewNode(NewNode(nullptr)));
  FunctionStatic();
}

__attribute__((noinline)) void MainThreadTls() {
  t_tls_ptr = Escape(std::malloc(56));
  t_tls_vec = new std::vector<int>(1000, 7);
  pthread_key_create(&g_key, nullptr);
  pthread_setspecific(g_key, Escape(std::malloc(88)));
}

__attribute__((noinline)) void* ThreadHoldsOnStack(void*) {
  void* volatile on_stack = Escape(std::malloc(4000));
  g_ready = 1;
  for (;;) pause();
  return on_stack;
}

__attribute__((noinline)) void LiveThreadStack() {
  pthread_t t;
  pthread_create(&t, nullptr, ThreadHoldsOnStack, nullptr);
  while (g_ready.load() == 0) usleep(1000);
}

constexpr uintptr_t kMask = 0x5a5a5a5a5a5a5a5aULL;

__attribute__((noinline)) uintptr_t AllocateHidden(size_t n) {
  return reinterpret_cast<uintptr_t>(Escape(std::malloc(n))) ^ kMask;
}

__attribute__((noinline)) void* ThreadHoldsInRegister(void* arg) {
  uintptr_t hidden = AllocateHidden(40);
  WipeStack();
  const bool keep = arg != nullptr;
  // The only copy of the pointer lives in r12 (x86-64) while the thread spins.
#if defined(__x86_64__)
  asm volatile(
      "movabs $0x5a5a5a5a5a5a5a5a, %%r12\n\t"
      "xor %1, %%r12\n\t"
      "test %2, %2\n\t"
      "jnz 2f\n\t"
      "xor %%r12, %%r12\n\t"
      "2: movl $1, %0\n\t"
      "1: pause\n\t"
      "jmp 1b"
      : "=m"(g_ready)
      : "r"(hidden), "r"(static_cast<uintptr_t>(keep))
      : "r12", "memory");
#endif
  return nullptr;
}

__attribute__((noinline)) void LiveThreadRegister(bool keep) {
  pthread_t t;
  pthread_create(&t, nullptr, ThreadHoldsInRegister, keep ? &g_ready : nullptr);
  while (g_ready.load() == 0) usleep(1000);
}

__attribute__((noinline)) void Interior() {
  char* small = static_cast<char*>(Escape(std::malloc(64)));
  g_holders[0].a = small + 16;  // interior, within 1024: reachable
  char* big = static_cast<char*>(Escape(std::malloc(4096)));
  g_interior = big + 2000;  // beyond gperftools' 1024: a leak under that rule, live by default
}

__attribute__((noinline)) void IndirectChain() {
  Node* head = nullptr;
  for (int i = 0; i < 10; ++i) head = NewNode(head);
  Escape(head);  // lost: 1 direct + 9 indirect, 480 bytes
}

__attribute__((noinline)) void XorHidden() {
  char* p = static_cast<char*>(Escape(std::malloc(64)));
  g_hidden = new (g_hidden_storage) HiddenPointer<char>(p);  // 64-byte leak
}

__attribute__((noinline)) void ReallocMemalignCalloc() {
  void* r = std::malloc(10);
  r = Escape(std::realloc(r, 1000));
  void* m = Escape(memalign(64, 200));
  void* c = Escape(std::calloc(10, 30));
  void* pm = nullptr;
  if (posix_memalign(&pm, 256, 77) != 0) std::abort();
  Escape(pm);
  void* aa = Escape(aligned_alloc(128, 256));
  (void)r;
  (void)m;
  (void)c;
  (void)aa;  // all lost: 1000+200+300+77+256 = 1833 bytes, 5 objects
}

__attribute__((noinline)) void Huge() {
  char* p = static_cast<char*>(Escape(std::malloc(64 << 20)));
  p[0] = 1;  // 67108864 bytes lost
}

__attribute__((noinline)) void Dlopen(const char* path) {
  void* h = dlopen(path, RTLD_NOW);
  if (h == nullptr) {
    std::fprintf(stderr, "dlopen failed: %s\n", dlerror());
    std::exit(3);
  }
  auto leak = reinterpret_cast<void* (*)(size_t)>(dlsym(h, "PluginLeak"));
  Escape(leak(123));  // 123 bytes lost inside the plugin; the plugin stays loaded
  g_kept = leak(5);   // reachable
}

void* ThreadLeaksAndExits(void*) {
  t_tls_ptr = Escape(std::malloc(16));  // thread-local of an exited thread: not a root
  return nullptr;
}

__attribute__((noinline)) void ExitedThreads() {
  for (int round = 0; round < 5; ++round) {
    pthread_t t[10];
    for (auto& th : t) pthread_create(&th, nullptr, ThreadLeaksAndExits, nullptr);
    for (auto& th : t) pthread_join(th, nullptr);  // 50 x 16 = 800 bytes lost
  }
}

__attribute__((noinline)) void StlGlobals() {
  for (int i = 0; i < 200; ++i) {
    g_map[i] = std::string(50 + i, 'm');
    g_vector.push_back(std::string(30 + i, 'v'));
    g_hash["key-" + std::to_string(i) + std::string(20, 'k')].assign(i + 1, i);
    g_list.push_back(std::string(40, 'l'));
  }
}

__attribute__((noinline)) void ManySmallLeaks() {
  for (int i = 0; i < 100000; ++i) Escape(std::malloc(8));  // 800000 bytes, 100000 objects
}

}  // namespace
namespace scen {
GraphNode* g_graph = nullptr;
}  // namespace scen
namespace {

__attribute__((noinline)) void MillionGraph() {
  const int n = 1000000;
  GraphNode** all = static_cast<GraphNode**>(std::malloc(sizeof(GraphNode*) * n));
  for (int i = 0; i < n; ++i) all[i] = new GraphNode{nullptr, nullptr, static_cast<uint64_t>(i)};
  for (int i = 0; i < n; ++i) {
    if (2 * i + 1 < n) all[i]->left = all[2 * i + 1];
    if (2 * i + 2 < n) all[i]->right = all[2 * i + 2];
  }
  g_graph = all[0];
  std::free(all);
}

__attribute__((noinline)) void LeakBeforeChecker() { Escape(std::malloc(11)); }

__attribute__((noinline)) int NamedChecker() {
  LeakBeforeChecker();  // not this checker's business: reported by _main_ (11 bytes)
  HeapLeakChecker checker("named");
  HiddenPointer<void>* hidden[3];
  alignas(8) static char storage[3][sizeof(HiddenPointer<void>)];
  for (int i = 0; i < 3; ++i)
    hidden[i] = new (storage[i]) HiddenPointer<void>(Escape(std::malloc(20)));
  WipeStack();
  bool no_leaks = checker.NoLeaks();
  std::printf("named: NoLeaks=%d BytesLeaked=%zd ObjectsLeaked=%zd IsActive=%d\n", no_leaks,
              checker.BytesLeaked(), checker.ObjectsLeaked(), HeapLeakChecker::IsActive());
  for (auto* h : hidden) std::free(h->get());
  HeapLeakChecker clean("clean");
  g_kept = Escape(std::malloc(5));
  std::printf("clean: NoLeaks=%d\n", clean.NoLeaks());
  return 0;
}

__attribute__((noinline)) void DisablerScenario() {
  {
    HeapLeakChecker::Disabler disabler;
    Node* n = NewNode(NewNode(nullptr));  // not recorded: never reported, nor what it reaches
    Escape(n);
  }
  Escape(std::malloc(12));  // reported: 12 bytes
}

struct Owner {
  void* child;
};

__attribute__((noinline)) void IgnoreObjectScenario() {
  Owner* o = new Owner{Escape(std::malloc(300))};
  HeapLeakChecker::IgnoreObject(o);  // o and its child are not leaks
  void* u = Escape(std::malloc(17));
  HeapLeakChecker::IgnoreObject(u);
  HeapLeakChecker::UnIgnoreObject(u);  // 17 bytes reported
}

__attribute__((noinline)) void* LeakToSuppress() { return Escape(std::malloc(40)); }
__attribute__((noinline)) void* RealLeak() { return Escape(std::malloc(24)); }

__attribute__((noinline)) void Suppressions() {
  LeakToSuppress();
  RealLeak();
}

// What a suppressed leak owns is suppressed with it; what a reported leak reaches too is not.
__attribute__((noinline)) Node* ChildOfSuppressed() {
  auto* n = static_cast<Node*>(std::malloc(sizeof(Node)));
  n->next = nullptr;
  return n;
}
// The children are allocated outside the suppressed function (their stacks match no pattern):
// only ownership makes them part of the suppressed leak.
__attribute__((noinline)) void LeakToSuppressOwning(Node* children) {
  auto* head = static_cast<Node*>(std::malloc(sizeof(Node)));
  head->next = children;
  Escape(head);
}
__attribute__((noinline)) void* SharedChild() { return Escape(std::malloc(32)); }
__attribute__((noinline)) void RealLeakHolding(void* child) {
  auto** p = static_cast<void**>(std::malloc(16));
  p[0] = child;
  p[1] = nullptr;
  Escape(p);
}
__attribute__((noinline)) void SuppressedOwners() {
  Node* children = ChildOfSuppressed();
  children->next = ChildOfSuppressed();
  LeakToSuppressOwning(children);  // 3 x 48 bytes, all suppressed (2 only through their owner)
  children = nullptr;
  void* shared = SharedChild();
  *static_cast<void**>(LeakToSuppress()) = shared;  // 40 bytes suppressed
  RealLeakHolding(shared);                          // reported: 16 direct + the shared 32 indirect
}

}  // namespace
namespace scen {
Forgetful g_forgetful;
}  // namespace scen
namespace {

__attribute__((noinline)) void StrictScenario() { g_forgetful.owned = Escape(std::malloc(32)); }

__attribute__((noinline)) void Draconian() { g_holders[2].a = Escape(std::malloc(45)); }

__attribute__((noinline)) void BufferedStdout() {
  std::printf("buffered-stdout-survives");  // no newline; stdout is a pipe: fully buffered
  Escape(std::malloc(9));
}

void* BusyAllocator(void*) {
  void* slots[64] = {};
  uint64_t x = 88172645463325252ULL;
  g_ready.fetch_add(1);
  for (;;) {  // never stops: the checker must stop it wherever it is, even inside malloc/free
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    int i = static_cast<int>(x % 64);
    std::free(slots[i]);
    slots[i] = Escape(std::malloc(16 + (x >> 32) % 2000));
  }
  return nullptr;
}

__attribute__((noinline)) void BusyThreads() {
  pthread_t t[3];
  for (auto& th : t) pthread_create(&th, nullptr, BusyAllocator, nullptr);
  while (g_ready.load() < 3) usleep(1000);
  usleep(20000);
  Escape(std::malloc(21));  // the only leak: 21 bytes
}

// The only copies of the pointer are stale slots in dead frames below main (this scenario does
// NOT wipe the stack): the checker must not treat dead frames as roots.
// Called straight from main so the stale copies sit just below main's frame, where exit() and
// its handlers later run: only scanning from exit()'s caller keeps them out of the roots.
__attribute__((noinline)) void StaleStack() {
  void* volatile slots[256];
  void* p = Escape(std::malloc(77));
  for (auto& slot : slots) slot = p;  // 77 bytes lost; 256 stale copies remain below main
  asm volatile("" : : "r"(slots) : "memory");
}

// Heap blocks with a PROT_NONE page in the middle (guard pages, a program's own protection):
// one reachable from a global, one leaked. The flood must scan around the page, not into it.
void* volatile g_protected_block = nullptr;
__attribute__((noinline)) void ProtNone() {
  const size_t page = 4096;
  auto* kept = static_cast<char*>(memalign(page, 3 * page));
  auto* lost = static_cast<char*>(memalign(page, 3 * page));
  g_protected_block = kept;
  kept[0] = 1;
  lost[0] = 1;
  if (mprotect(kept + page, page, PROT_NONE) != 0 || mprotect(lost + page, page, PROT_NONE) != 0)
    std::perror("mprotect");
  Escape(lost);  // lost: 12288 bytes, 1 object
}

// A forked child that leaks 55 bytes and leaves through exit() (or _exit, which skips the
// check); the parent leaks nothing and prints the child's exit status.
__attribute__((noinline)) void ChildLeak() { Escape(std::malloc(55)); }
__attribute__((noinline)) void ForkChild(bool underscore_exit) {
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    ChildLeak();
    WipeStack();
    if (underscore_exit) _exit(0);
    std::exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  std::printf("child %d exited with %d\n", static_cast<int>(child),
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

// A thread with every signal blocked holds the only pointer to a 64-byte block on its stack and
// is still running when main returns: the suspend signal cannot stop it, ptrace can (then its
// stack is scanned); without ptrace its stack is not scanned.
std::atomic<bool> g_blocked_thread_ready{false};
void* UnstoppableThread(void*) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  void* volatile only_copy = std::malloc(64);
  g_blocked_thread_ready.store(true);
  for (;;) {
    asm volatile("" : : "r"(only_copy) : "memory");
    usleep(1000);
  }
  return nullptr;
}
__attribute__((noinline)) void Unstoppable() {
  pthread_t t;
  pthread_create(&t, nullptr, UnstoppableThread, nullptr);
  while (!g_blocked_thread_ready.load()) usleep(100);
}

// exit() from a thread whose stack is 160 KiB: the check and its report (libdwfl, demangling)
// must not run on that stack.
void* ExitFromSmallStack(void*) {
  Escape(std::malloc(66));  // lost: 66 bytes, 1 object
  std::exit(0);
}
__attribute__((noinline)) void SmallStackExit() {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 160 * 1024);
  pthread_t t;
  pthread_create(&t, &attr, ExitFromSmallStack, nullptr);
  pthread_join(t, nullptr);
}

// Threads that are not on their pthread stack when the check runs. Each keeps one object only in
// a local of its pthread stack (a false leak if that stack is not scanned) and one only in a
// local of the heap block it runs on; a 33-byte object is really lost (hidden if the heap were
// scanned as a stack). The stack blocks themselves are live, not leaks.
std::atomic<int> g_parked_threads{0};
[[noreturn]] void ParkForever(void* pointer) {
  void* volatile held = pointer;  // kept in this frame's stack slot
  g_parked_threads.fetch_add(1);
  for (;;) {
    asm volatile("" : : "r"(held) : "memory");
    usleep(1000);
  }
}
ucontext_t g_thread_context, g_coroutine_context;
void Coroutine() { ParkForever(std::malloc(40)); }
void* SwapcontextThread(void*) {
  void* volatile secret = std::malloc(48);
  const size_t size = 64 * 1024;
  getcontext(&g_coroutine_context);
  g_coroutine_context.uc_stack.ss_sp = std::malloc(size);  // only the context holds it
  g_coroutine_context.uc_stack.ss_size = size;
  g_coroutine_context.uc_link = nullptr;
  makecontext(&g_coroutine_context, Coroutine, 0);
  swapcontext(&g_thread_context, &g_coroutine_context);
  asm volatile("" : : "r"(secret) : "memory");
  return nullptr;
}
void AltstackHandler(int) { ParkForever(std::malloc(40)); }
void* SigaltstackThread(void*) {
  void* volatile secret = std::malloc(48);
  stack_t ss{};
  ss.ss_sp = std::malloc(64 * 1024);
  ss.ss_size = 64 * 1024;
  sigaltstack(&ss, nullptr);
  ss.ss_sp = nullptr;
  struct sigaction sa {};
  sa.sa_handler = AltstackHandler;
  sa.sa_flags = SA_ONSTACK;
  sigaction(SIGUSR1, &sa, nullptr);
  pthread_kill(pthread_self(), SIGUSR1);
  asm volatile("" : : "r"(secret) : "memory");
  return nullptr;
}
void* OwnHeapStackThread(void*) {
  void* volatile secret = std::malloc(48);
  ParkForever(secret);
}
__attribute__((noinline)) void AlternateStacks(const std::string& which) {
  pthread_t t;
  if (which == "swapcontext") {
    pthread_create(&t, nullptr, SwapcontextThread, nullptr);
  } else if (which == "sigaltstack") {
    pthread_create(&t, nullptr, SigaltstackThread, nullptr);
  } else {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    const size_t size = 256 * 1024;
    pthread_attr_setstack(&attr, memalign(4096, size), size);  // only the thread holds it
    pthread_create(&t, &attr, OwnHeapStackThread, nullptr);
  }
  while (g_parked_threads.load() == 0) usleep(100);
  Escape(std::malloc(33));  // lost: 33 bytes, 1 object
}

REGISTER_HEAPCHECK_CLEANUP(free_kept, {
  std::free(g_kept);
  g_kept = nullptr;
})

__attribute__((noinline)) int Run(int argc, char** argv) {
  std::string s = argv[1];
  if (s == "lost_pointer")
    LostPointer();
  else if (s == "cycles")
    Cycles();
  else if (s == "zero_byte")
    ZeroByteLeaks();
  else if (s == "globals")
    Globals();
  else if (s == "tls")
    MainThreadTls();
  else if (s == "thread_stack")
    LiveThreadStack();
  else if (s == "thread_register")
    LiveThreadRegister(true);
  else if (s == "thread_register_lost")
    LiveThreadRegister(false);
  else if (s == "interior")
    Interior();
  else if (s == "indirect_chain")
    IndirectChain();
  else if (s == "xor_hidden")
    XorHidden();
  else if (s == "realloc_memalign_calloc")
    ReallocMemalignCalloc();
  else if (s == "huge")
    Huge();
  else if (s == "dlopen")
    Dlopen(argc > 2 ? argv[2] : "");
  else if (s == "exited_threads")
    ExitedThreads();
  else if (s == "stl_globals")
    StlGlobals();
  else if (s == "many_small")
    ManySmallLeaks();
  else if (s == "million_graph")
    MillionGraph();
  else if (s == "named")
    return NamedChecker();
  else if (s == "disabler")
    DisablerScenario();
  else if (s == "ignore_object")
    IgnoreObjectScenario();
  else if (s == "suppressions")
    Suppressions();
  else if (s == "strict")
    StrictScenario();
  else if (s == "draconian")
    Draconian();
  else if (s == "buffered_stdout")
    BufferedStdout();
  else if (s == "busy_threads")
    BusyThreads();
  else if (s == "prot_none")
    ProtNone();
  else if (s == "swapcontext" || s == "sigaltstack" || s == "heap_pthread_stack")
    AlternateStacks(s);
  else if (s == "small_stack_exit")
    SmallStackExit();
  else if (s == "unstoppable_thread")
    Unstoppable();
  else if (s == "fork_child")
    ForkChild(false);
  else if (s == "fork_child_underscore_exit")
    ForkChild(true);
  else if (s == "suppressed_owners")
    SuppressedOwners();
  else if (s == "cancel_global_check") {
    LostPointer();
    HeapLeakChecker::CancelGlobalCheck();
  } else if (s == "no_leaks") {
  } else {
    std::fprintf(stderr, "unknown scenario %s\n", argv[1]);
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <scenario> [args]\n", argv[0]);
    return 2;
  }
  if (std::strcmp(argv[1], "stale_stack") == 0) {
    StaleStack();  // deliberately no WipeStack()
    return 0;
  }
  int rc = Run(argc, argv);
  WipeStack();
  return rc;
}
