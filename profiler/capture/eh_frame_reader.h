// Reader of .eh_frame / .eh_frame_hdr bytes: fixed-size values, LEB128 and DW_EH_PE_*
// encoded pointers. Bounds-checked: reading past `end` clears `ok` and yields 0. No allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <dwarf.h>

namespace heapkit::prof {

// The two halves of a DW_EH_PE_* encoding byte (<dwarf.h> names the values, not the masks):
// the value's format (DW_EH_PE_udata4, ...) and what it is relative to (DW_EH_PE_pcrel, ...).
inline constexpr uint8_t kEhPeFormatMask = 0x0f;
inline constexpr uint8_t kEhPeApplicationMask = 0x70;

struct Reader {
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;

  bool Has(size_t n) {
    if (static_cast<size_t>(end - p) < n) ok = false;
    return ok;
  }
  template <class T>
  T Fixed() {
    T v{};
    if (Has(sizeof(T))) {
      std::memcpy(&v, p, sizeof(T));
      p += sizeof(T);
    }
    return v;
  }
  // Defined in cfa_program.cc, with the start-up code: every heap-growth capture runs them.
  uint64_t Uleb();
  int64_t Sleb() {
    uint64_t v = 0;
    int shift = 0;
    uint8_t b = 0;
    while (Has(1)) {
      b = *p++;
      if (shift < 64) v |= static_cast<uint64_t>(b & 0x7f) << shift;
      shift += 7;
      if (!(b & 0x80)) break;
    }
    if (shift < 64 && (b & 0x40)) v |= ~uint64_t{0} << shift;
    return static_cast<int64_t>(v);
  }
  // DW_EH_PE_* encoded pointer. data_base: for DW_EH_PE_datarel. Indirection is not followed
  // (only personality pointers use it, and they are skipped).
  uintptr_t Encoded(uint8_t enc, uintptr_t data_base);
};

}  // namespace heapkit::prof
