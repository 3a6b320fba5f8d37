// Allocates through the C++ standard library and libc's copying allocators from named
// functions, each a different amount, and leaks everything (for the heap profile's in-use
// view and the leak checker): pprof-tool and the leak report must name these functions, not
// std::/libc frames. Sizes: Vector 6 MiB > String 5 > Map ~4 > UnorderedMap ~3 > Shared 2 >
// Strdup 1 MiB.
#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace app {

void* volatile g_sink;  // keeps allocations observable; cleared so they leak

__attribute__((noinline)) void FillVector() {
  auto* v = new std::vector<char>();
  v->resize(6 << 20);
  g_sink = v;
}

__attribute__((noinline)) void FillString() {
  auto* s = new std::string(5 << 20, 'x');
  g_sink = s;
}

__attribute__((noinline)) void FillMap() {
  auto* m = new std::map<int, std::array<char, 200>>();
  for (int i = 0; i < 16384; ++i) (*m)[i][0] = char(i);  // ~4 MiB of nodes
  g_sink = m;
}

__attribute__((noinline)) void FillUnorderedMap() {
  auto* m = new std::unordered_map<int, std::array<char, 160>>();
  for (int i = 0; i < 16384; ++i) (*m)[i][0] = char(i);  // ~3 MiB of nodes
  g_sink = m;
}

__attribute__((noinline)) void FillShared() {
  auto* p = new std::shared_ptr<std::array<char, (2 << 20)>>(
      std::make_shared<std::array<char, (2 << 20)>>());
  g_sink = p;
}

__attribute__((noinline)) void FillStrdup() {
  char* buffer = static_cast<char*>(malloc((1 << 20) + 1));
  memset(buffer, 'y', 1 << 20);
  buffer[1 << 20] = '\0';
  g_sink = strdup(buffer);
  free(buffer);
}

}  // namespace app

int main() {
  app::FillVector();
  app::FillString();
  app::FillMap();
  app::FillUnorderedMap();
  app::FillShared();
  app::FillStrdup();
  app::g_sink = nullptr;
  return 0;
}
