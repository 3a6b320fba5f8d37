// Each kept std::vector<char>(64) has an end() pointer one past its 64-byte buffer; in a
// tightly packed heap that is where the next block starts, here a leaked char[64]. All 1,000 of
// those must be reported (64,000 bytes in 1,000 objects).
#include <cstdio>
#include <vector>
std::vector<char>* kept[1000];  // a plain array: no destructor, live at every checker's check
int main() {
  for (int i = 0; i < 1000; ++i) {
    kept[i] = new std::vector<char>(64);
    char* leak = new char[64];
    leak[0] = 1;
  }
  std::printf("truth: leaked 64000 bytes in 1000 objects\n");
  return 0;
}
