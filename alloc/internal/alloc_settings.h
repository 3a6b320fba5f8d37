// The allocator's settings (settings.h): every environment variable alloc/ reads, read once, at
// the first allocation. alloc/README.md's "Settings" table is this table.
#pragma once

#include "alloc/internal/settings.h"

namespace heapkit::internal {

inline constexpr Setting kAllocSettings[] = {
    {.name = "TCMALLOC_SAMPLE_PARAMETER",
     .type = SettingType::kSize,
     .default_text = "0",
     .allowed = "0..1048576g",
     .meaning = "mean bytes between samples; 0 = off (the profiler's default 512 KiB, the "
                "checker's 1), 1 = every allocation",
     .default_value = 0,
     .min = 0,
     .max = int64_t{1} << 50},
    {.name = "TCMALLOC_RELEASE_RATE",
     .type = SettingType::kNumber,
     .default_text = "1.0",
     .allowed = "0..1e9",
     .meaning = "rate of release of free memory to the OS; 0 = never",
     .number_default = 1.0,
     .number_min = 0,
     .number_max = 1e9},
    {.name = "TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES",
     .type = SettingType::kSize,
     .default_text = "32m",
     .allowed = "0..1024g",
     .meaning = "budget shared by all thread caches",
     .default_value = 32 << 20,
     .min = 0,
     .max = int64_t{1} << 40},
    {.name = "TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD",
     .type = SettingType::kSize,
     .default_text = "1g",
     .allowed = "0..2305843009213693951",
     .meaning = "print `tcmalloc: large alloc ...` for an allocation this large; 0 = never",
     .default_value = int64_t{1} << 30,
     .min = 0,
     .max = INT64_MAX / 4},
    {.name = "TCMALLOC_HEAP_LIMIT_MB",
     .type = SettingType::kInteger,
     .default_text = "0",
     .allowed = "0..67108864",
     .meaning = "fail allocations rather than map more heap than this many MiB; 0 = no limit",
     .default_value = 0,
     .min = 0,
     .max = int64_t{1} << 26},
    {.name = "TCMALLOC_TRANSFER_NUM_OBJ",
     .type = SettingType::kInteger,
     .default_text = "512",
     .allowed = "2..16384",
     .meaning = "cap on the batch of objects moved between tiers",
     .default_value = 512,
     .min = 2,
     .max = 16384},
    {.name = "TCMALLOC_AGGRESSIVE_DECOMMIT",
     .type = SettingType::kBool,
     .default_text = "false",
     .allowed = "bool",
     .meaning = "release every freed span to the OS at once",
     .default_value = 0},
    {.name = "TCMALLOC_HUGE_PAGES",
     .type = SettingType::kBool,
     .default_text = "false",
     .allowed = "bool",
     .meaning = "grow the page heap and the metadata arena in whole 2 MiB pages advised "
                "MADV_HUGEPAGE (cheaper fork: a snapshot leak check's pause)",
     .default_value = 0},
    {.name = "PERFTOOLS_VERBOSE",
     .type = SettingType::kInteger,
     .default_text = "0",
     .allowed = "-9223372036854775808..9223372036854775807",
     .meaning = "above 0: more diagnostics on stderr; below 0: no \"Starting\", \"Dumping\" lines",
     .default_value = 0,
     .min = INT64_MIN,
     .max = INT64_MAX},
};

consteval const Setting& AllocSetting(const char* name) {
  return SettingNamed(kAllocSettings, name);
}

}  // namespace heapkit::internal
