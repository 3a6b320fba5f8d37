// Leaked blocks the program never wrote: each still held the allocator's free-list link to the
// next free block (often another of these) when it was handed out. A word the program never
// wrote is no pointer, so every one of them must be a direct leak.
// Prints the truth: "truth: leaked B bytes in N objects, all direct".
#include <cstdio>
#include <cstdlib>

void* volatile g_sink;  // each pointer passes through here, then is lost

int main() {
  constexpr int kFreed = 400, kLeaked = 100;
  void* blocks[kFreed];
  for (int i = 0; i < kFreed; ++i) blocks[i] = std::malloc(32);
  for (int i = 0; i < kFreed; ++i) std::free(blocks[i]);       // the list now links these blocks
  for (int i = 0; i < kLeaked; ++i) g_sink = std::malloc(32);  // never written, dropped
  g_sink = nullptr;
  std::printf("truth: leaked %d bytes in %d objects, all direct\n", 32 * kLeaked, kLeaked);
  return 0;
}
