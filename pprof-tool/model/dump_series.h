// Several profiles on one command line are either a series of snapshots of one process (the
// dumps HEAPPROFILE writes, <prefix>.0001.heap, .0002, ...) or profiles of different processes.
// Summing is right for the second (go pprof merges them) and meaningless for the first: eleven
// snapshots of a 50 MB heap do not hold 550 MB. So reports show one dump of a series (the
// latest unless asked otherwise) and sum only profiles of different processes, or when asked.
//
// One process: every profile is a legacy heap profile with a memory map, and
//   - all carry the profiler's pid line (`# heapkit: dump time: ... pid N`) with the same pid,
//     or none does and their file names are <prefix>.NNNN.heap with one prefix; and
//   - their memory maps agree: a file mapped executable in two of them is mapped at the same
//     address (with ASLR, two processes of one program differ there).
// A dump's number is the NNNN of its file name (what the user sees in `ls`), else its 1-based
// position on the command line. The latest dump is the one written last: by dump time when all
// have one, else the highest number.
#pragma once

#include <string>
#include <vector>

#include "pprof-tool/model/profile.h"

namespace heapkit::pprof {

struct DumpSeries {
  bool one_process = false;  // the profiles are snapshots of one process (true for a single one)
  bool different_processes = false;  // known to come from several (pids or memory maps differ)
  std::vector<int> numbers;          // each profile's number, in command-line order
  size_t latest = 0;                 // index of the dump written last

  // The index of the dump numbered `number`, or -1.
  int IndexOf(int number) const;
  // "1 to 11" (consecutive), "1, 3, 7" or "1 ... 11" (more than four): for messages.
  std::string NumbersText() const;
};

DumpSeries ClassifyDumps(const std::vector<Profile>& profiles);

// The header line for dump `index` of the series (the latest, or which one), or for the sum
// (index < 0): "Dump: prof.0011.heap, the latest of 11 dumps of one process (<how_to_pick>)".
std::string DumpDescription(const std::vector<Profile>& dumps, const DumpSeries& series, int index,
                            const std::string& how_to_pick);

// `profile` minus `base` (nullptr: unchanged); with diff_base, percentages of the base.
void SubtractBase(const Profile* base, bool diff_base, Profile* profile);

// The number in "<prefix>.NNNN.heap" or "<prefix>.NNNN.heap.pb.gz" (at least one digit), or -1;
// *prefix gets <prefix>.
int DumpFileNumber(const std::string& path, std::string* prefix);

// ".pb.gz" for the runtime's profile.proto files ("<name>.heap.pb.gz", HEAP_PROFILE_FORMAT=proto
// or both), else "": the files beside a dump (its peak profile, dump N for --since) are looked
// for in the same format.
std::string ProtoFileSuffix(const std::string& path);

}  // namespace heapkit::pprof
