// Leaks memory allocated by two named functions (the larger one's line is marked), so
// a profile symbolized from a moved, replaced or stripped copy of this program can be checked
// by name and line (symbol_path_check.py, debuginfod_check.sh).
#include <cstdlib>
#include <cstring>

namespace remote_site {

void* volatile g_keep[2];

__attribute__((noinline)) void KeepLargeBlock() {
  g_keep[0] = malloc(3 << 20);  // LARGE_BLOCK_LINE
  memset(g_keep[0], 1, 64);
}

__attribute__((noinline)) void KeepSmallBlock() {
  g_keep[1] = malloc(1 << 20);
  memset(g_keep[1], 2, 64);
}

}  // namespace remote_site

int main() {
  remote_site::KeepLargeBlock();
  remote_site::KeepSmallBlock();
  remote_site::g_keep[0] = nullptr;  // still in use, and leaked
  remote_site::g_keep[1] = nullptr;
  return 0;
}
