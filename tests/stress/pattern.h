// Content patterns for the stress program: every object is filled with bytes derived from a seed
// (the seed itself mixes the object's first address and a per-thread counter), and verified
// before it is freed, reallocated or handed to another thread. The pattern depends only on
// (seed, offset), so a realloc'd object keeps a valid prefix under the same seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace heapkit::stress {

// splitmix64 finaliser: cheap, and every bit of the input changes every byte of the output.
inline uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline uint64_t SeedFor(const void* p, uint64_t counter) {
  return Mix(reinterpret_cast<uintptr_t>(p) ^ (counter << 1));
}

// Writes the pattern of `seed` into bytes [from, to) of the object at p.
inline void FillRange(void* p, size_t from, size_t to, uint64_t seed) {
  auto* b = static_cast<unsigned char*>(p);
  size_t i = from;
  for (; i < to && (i & 7) != 0; ++i)
    b[i] = static_cast<unsigned char>(Mix(seed + (i >> 3)) >> ((i & 7) * 8));
  for (; i + 8 <= to; i += 8) {
    uint64_t w = Mix(seed + (i >> 3));
    std::memcpy(b + i, &w, 8);
  }
  for (; i < to; ++i) b[i] = static_cast<unsigned char>(Mix(seed + (i >> 3)) >> ((i & 7) * 8));
}

inline void Fill(void* p, size_t size, uint64_t seed) { FillRange(p, 0, size, seed); }

// Returns the offset of the first byte in [0, size) that does not match, or SIZE_MAX.
inline size_t FirstMismatch(const void* p, size_t size, uint64_t seed) {
  const auto* b = static_cast<const unsigned char*>(p);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, b + i, 8);
    if (w != Mix(seed + (i >> 3))) break;
  }
  for (; i < size; ++i)
    if (b[i] != static_cast<unsigned char>(Mix(seed + (i >> 3)) >> ((i & 7) * 8))) return i;
  return SIZE_MAX;
}

}  // namespace heapkit::stress
