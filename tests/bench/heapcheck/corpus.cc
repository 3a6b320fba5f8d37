// Benchmark corpus: small programs, leaking and not, one per argv[1] (corpus.sh runs each as
// its own process under heapkit HEAPCHECK=normal and under gcc -fsanitize=leak). `list`
// prints the case names, one a line, leaking ones first marked "leak", the others "clean".
//
// Each case is what a unit-test binary or a small tool does: a few containers, strings, a
// thread, streams; the leaking ones lose some of it through the usual mistakes (a forgotten
// delete, a cycle of shared_ptr, a lost node of a container, strdup never freed).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

template <class T>
__attribute__((noinline)) T* Escape(T* p) {
  asm volatile("" : : "r"(p) : "memory");
  return p;
}

__attribute__((noinline)) void WipeStack() {
  char buf[64 * 1024];
  std::memset(buf, 0, sizeof(buf));
  asm volatile("" : : "r"(buf) : "memory");
}

struct Widget {
  std::string name;
  std::vector<int> values;
};

struct Peer {
  std::shared_ptr<Peer> other;
  char payload[64];
};

// ---- leaking ----
void LeakNew() { Escape(new Widget{"widget", {1, 2, 3}}); }
void LeakMalloc() { Escape(std::malloc(1000)); }
void LeakStrdup() {
  for (int i = 0; i < 5; ++i) Escape(strdup("a string that is never freed"));
}
void LeakString() { Escape(new std::string(300, 's')); }
void LeakVector() {
  auto* v = new std::vector<std::string>;
  for (int i = 0; i < 50; ++i) v->push_back(std::string(40 + i, 'v'));
  Escape(v);
}
void LeakMap() {
  auto* m = new std::map<int, std::string>;
  for (int i = 0; i < 30; ++i) (*m)[i] = std::string(50, 'm');
  Escape(m);
}
void LeakUnorderedMap() {
  auto* m = new std::unordered_map<std::string, int>;
  for (int i = 0; i < 40; ++i) (*m)[std::to_string(i) + std::string(30, 'k')] = i;
  Escape(m);
}
void LeakList() {
  auto* l = new std::list<Widget>(10);
  Escape(l);
}
void LeakSharedCycle() {
  auto a = std::make_shared<Peer>();
  auto b = std::make_shared<Peer>();
  a->other = b;
  b->other = a;
}
void LeakInThread() {
  std::thread t([] { Escape(new char[128]); });
  t.join();
}
void LeakStream() {
  auto* o = new std::ostringstream;
  *o << "value " << 42 << ' ' << std::string(200, 'o');
  Escape(o);
}
void LeakArray() {
  for (int i = 0; i < 20; ++i) Escape(new int[16 + i]);
}

// ---- clean ----
void CleanContainers() {
  std::vector<Widget> v(100);
  std::map<int, int> m;
  for (int i = 0; i < 1000; ++i) m[i] = i;
  std::printf("%zu %zu\n", v.size(), m.size());
}
void CleanStrings() {
  std::string s;
  for (int i = 0; i < 1000; ++i) s += std::to_string(i);
  std::printf("%zu\n", s.size());
}
void CleanStream() {
  std::ostringstream o;
  for (int i = 0; i < 100; ++i) o << i << ',';
  std::cout << o.str().size() << '\n';
}
void CleanThreads() {
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; ++i)
    ts.emplace_back([] {
      std::vector<int> v(1000);
      for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<int>(k);
      Escape(v.data());
    });
  for (auto& t : ts) t.join();
}
void CleanSort() {
  std::vector<std::string> v;
  for (int i = 0; i < 2000; ++i) v.push_back(std::to_string(i * 7919 % 2003));
  std::sort(v.begin(), v.end());
  std::printf("%s\n", v.front().c_str());
}
void CleanUnique() {
  std::vector<std::unique_ptr<Widget>> v;
  for (int i = 0; i < 200; ++i) v.push_back(std::make_unique<Widget>());
  std::printf("%zu\n", v.size());
}
void CleanShared() {
  auto a = std::make_shared<Peer>();
  std::weak_ptr<Peer> w = a;
  std::printf("%ld\n", w.use_count());
}
void CleanSet() {
  std::set<std::string> s;
  for (int i = 0; i < 500; ++i) s.insert(std::to_string(i));
  std::printf("%zu\n", s.size());
}
void CleanFunction() {
  std::vector<std::function<int(int)>> fs;
  for (int i = 0; i < 100; ++i)
    fs.push_back([i, s = std::string(40, 'f')](int x) { return x + i + static_cast<int>(s[0]); });
  int sum = 0;
  for (auto& f : fs) sum += f(1);
  std::printf("%d\n", sum);
}
void CleanGlobals() {
  static std::vector<std::string>* kept = new std::vector<std::string>(100, "reachable");
  std::printf("%zu\n", kept->size());
}
void CleanMalloc() {
  for (int i = 0; i < 1000; ++i) std::free(std::malloc(static_cast<size_t>(i)));
  std::puts("ok");
}
void CleanNothing() { std::puts("hello"); }

struct Case {
  const char* name;
  bool leaks;
  void (*run)();
};
const Case kCases[] = {
    {"leak_new", true, LeakNew},
    {"leak_malloc", true, LeakMalloc},
    {"leak_strdup", true, LeakStrdup},
    {"leak_string", true, LeakString},
    {"leak_vector", true, LeakVector},
    {"leak_map", true, LeakMap},
    {"leak_unordered_map", true, LeakUnorderedMap},
    {"leak_list", true, LeakList},
    {"leak_shared_cycle", true, LeakSharedCycle},
    {"leak_in_thread", true, LeakInThread},
    {"leak_stream", true, LeakStream},
    {"leak_array", true, LeakArray},
    {"clean_containers", false, CleanContainers},
    {"clean_strings", false, CleanStrings},
    {"clean_stream", false, CleanStream},
    {"clean_threads", false, CleanThreads},
    {"clean_sort", false, CleanSort},
    {"clean_unique", false, CleanUnique},
    {"clean_shared", false, CleanShared},
    {"clean_set", false, CleanSet},
    {"clean_function", false, CleanFunction},
    {"clean_globals", false, CleanGlobals},
    {"clean_malloc", false, CleanMalloc},
    {"clean_nothing", false, CleanNothing},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <case>|list\n", argv[0]);
    return 2;
  }
  if (std::strcmp(argv[1], "list") == 0) {
    for (const Case& c : kCases) std::printf("%s %s\n", c.name, c.leaks ? "leak" : "clean");
    return 0;
  }
  for (const Case& c : kCases) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    c.run();
    WipeStack();
    return 0;
  }
  std::fprintf(stderr, "%s: unknown case '%s'\n", argv[0], argv[1]);
  return 2;
}
