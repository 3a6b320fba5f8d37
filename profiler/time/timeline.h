// HEAP_PROFILE_TIMELINE=<period>: the heap over the whole run, in a bounded ring, written as
// <prefix>.timeline.heap with each dump and at exit.
//
// Each tick (the helper thread, profiler_thread.h, every `period`: 100ms, 2s, or plain
// milliseconds; 10 ms .. 3600 s) records one row: the time, the exact in-use bytes, the
// process's RSS (/proc/self/statm), the sampled estimate of in-use bytes, and the raw sampled
// in-use (count, bytes) of the buckets holding most — read from the peak tracker's current
// cells (peak_tracker.h: HEAP_PROFILE_TIMELINE implies HEAP_PROFILE_PEAK), O(buckets) per tick
// on the helper thread, nothing on the allocation path.
//
// "In use" counts requested bytes wherever it can, as the dumps, the peak profiles and
// heaptrack do: in exact mode (rate 1) the row's exact figure is the tracker's exact total of
// requested bytes. A sampled run has no exact count of requested bytes (a free does not know
// the size that was asked for), so its exact figure is the allocator's in-use bytes
// (GetAllocatorStats: MallocExtension's generic.current_allocated_bytes), which counts usable
// (size-class) bytes; the header line says which (`exact requested` or `exact usable`).
//
// Which stacks a row names: the largest buckets by the bytes they stand for (their raw sampled
// (count, bytes) un-sampled as the pprofs un-sample a line; raw bytes would rank a bucket of
// small objects far below its share), from the largest down, until they hold kRowNamedShare of
// all the buckets' or kMaxRowStacks buckets (so a flat profile of a few hundred equal stacks is
// named whole; clang's, cc1plus's and CPython's named shares are in
// tests/bench/profiler/RESULTS.md). A tick keeps the kMaxRowStacks largest in a min-heap while
// the tracker's lock is held (per bucket: a weight, without exp() below the period, and
// O(log kMaxRowStacks) at most), then sorts them outside it.
//
// Bounded: kTimelineRows rows of 40 bytes and a pool of kTimelineEntries stack entries of 16
// bytes (160 KiB + 2 MiB + 48 KiB of scratch, the profiler's own arena memory: the dumps'
// `metadata_arena`; the pool's pages are touched as rows fill it). When the rows or the pool
// are full, each pair of neighbouring rows becomes one (the row with the larger exact in-use:
// the curve keeps its maxima), the pool is compacted, and a row stands for twice as many ticks
// from then on (a new row is the maximum of that many ticks), so a day at 100 ms is at most
// 4096 rows of ~26 s each (fewer, longer rows when each row names many stacks).
//
// File: a legacy heap profile (legacy_writer.h) that every pprof reads as the live set at the
// timeline's highest exact in-use row (its records: every bucket that appears in a row, with
// its in-use at that row; raw sampled counts, as the dumps), plus comment lines readers skip:
//   # heapkit: timeline period_ms <ms per row> ticks <ticks> start_unix <s.mmm>
//     start_ns <CLOCK_MONOTONIC ns> rate <R> exact requested|usable
//   # heapkit: timeline stack <id> @ 0x<pc> ...              (each bucket of the rows)
//   # heapkit: timeline row <ms since start> exact <bytes> rss <bytes> est <bytes>
//     [<id>:<count>:<bytes> ...]                             (one line per row, oldest first)
// pprof-tool --timeline reads it (pprof-tool README, "--timeline of a runtime timeline").
#pragma once

#include <cstdint>

namespace heapkit::prof {

inline constexpr int kTimelineRows = 4096;
inline constexpr int kTimelineEntries = 1 << 17;
inline constexpr int kMaxRowStacks = 1024;
// The share of a row's un-sampled bytes its named stacks reach (unless kMaxRowStacks first).
inline constexpr double kRowNamedShare = 0.99;

// HEAP_PROFILE_TIMELINE in milliseconds (0: off). A bad value: one line naming the cause, off.
int64_t ReadTimelinePeriodMs();
// Exposed for tests: false for a malformed or out-of-range value.
bool ParseTimelinePeriod(const char* text, int64_t* ms);

// Profiling start (state lock held): an empty ring, ticking every period_ms (0: off).
void BeginTimeline(int64_t period_ms);
// Milliseconds until the next tick is due (-1: off). Helper thread.
int TimelinePollMs();
// The helper thread, state lock held: records the rows that are due.
void TimelineTickLocked();
// With each dump (state lock held): writes `file` (<prefix>.timeline.heap, named by the caller:
// profiler_state.h, DumpFiles) if the timeline is on; logs a failure.
void WriteTimelineLocked(const char* file);

}  // namespace heapkit::prof
