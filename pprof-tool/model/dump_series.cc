#include "pprof-tool/model/dump_series.h"

#include <map>

#include "profiler/symbolize/file_name.h"

namespace heapkit::pprof {
namespace {

// Executable file mappings by path: where each file's code starts.
std::map<std::string, uint64_t> CodeStarts(const Profile& p) {
  std::map<std::string, uint64_t> starts;
  for (const Mapping& m : p.mappings) {
    if (m.path.empty() || m.perms.find('x') == std::string::npos) continue;
    starts.emplace(m.path, m.start);  // the first executable segment of each file
  }
  return starts;
}

bool MapsAgree(const std::map<std::string, uint64_t>& a, const std::map<std::string, uint64_t>& b) {
  bool common = false;
  for (const auto& [path, start] : a) {
    auto it = b.find(path);
    if (it == b.end()) continue;
    if (it->second != start) return false;
    common = true;
  }
  return common;
}

bool SameProcess(const std::vector<Profile>& profiles) {
  const bool with_pid = profiles[0].dump_pid != 0;
  std::string first_prefix;
  for (const Profile& p : profiles) {
    if (p.mappings.empty() || !p.sample_types.empty() || p.kind == ProfileKind::kHeapCheck) {
      return false;  // no memory map, profile.proto or a leak check: nothing to tell it by
    }
    if ((p.dump_pid != 0) != with_pid) return false;
    if (with_pid) {
      if (p.dump_pid != profiles[0].dump_pid) return false;
      continue;
    }
    std::string prefix;
    if (DumpFileNumber(p.file, &prefix) < 0) return false;
    if (&p == &profiles[0]) first_prefix = prefix;
    if (prefix != first_prefix) return false;
  }
  const std::map<std::string, uint64_t> first = CodeStarts(profiles[0]);
  for (size_t i = 1; i < profiles.size(); ++i) {
    if (!MapsAgree(first, CodeStarts(profiles[i]))) return false;
  }
  return true;
}

// Known to come from several processes: different pids, or a file mapped at two addresses.
bool DifferentProcesses(const std::vector<Profile>& profiles) {
  for (size_t i = 1; i < profiles.size(); ++i) {
    const Profile& a = profiles[0];
    const Profile& b = profiles[i];
    if (a.dump_pid != 0 && b.dump_pid != 0 && a.dump_pid != b.dump_pid) return true;
    if (!a.mappings.empty() && !b.mappings.empty() && !MapsAgree(CodeStarts(a), CodeStarts(b))) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string ProtoFileSuffix(const std::string& path) {
  constexpr std::string_view kProto = ".heap.pb.gz";
  const bool proto = path.size() > kProto.size() &&
                     path.compare(path.size() - kProto.size(), kProto.size(), kProto) == 0;
  return proto ? ".pb.gz" : "";
}

int DumpFileNumber(const std::string& full_path, std::string* prefix) {
  constexpr std::string_view kSuffix = ".heap";
  const std::string path =
      full_path.substr(0, full_path.size() - ProtoFileSuffix(full_path).size());
  if (path.size() <= kSuffix.size() ||
      path.compare(path.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
    return -1;
  }
  size_t end = path.size() - kSuffix.size();
  size_t begin = end;
  while (begin > 0 && path[begin - 1] >= '0' && path[begin - 1] <= '9') --begin;
  if (begin == end || end - begin > 8 || begin == 0 || path[begin - 1] != '.') return -1;
  if (prefix != nullptr) *prefix = path.substr(0, begin - 1);
  return std::stoi(path.substr(begin, end - begin));
}

std::string DumpDescription(const std::vector<Profile>& dumps, const DumpSeries& series, int index,
                            const std::string& how_to_pick) {
  const std::string n = std::to_string(dumps.size());
  if (index < 0) {
    if (series.one_process) return "Sum of the " + n + " dumps of one process (--merge)";
    return "Sum of " + n + " profiles" +
           (series.different_processes ? " of different processes" : "");
  }
  std::string line = "Dump: " + Basename(dumps[size_t(index)].file);
  if (dumps.size() < 2) return line;
  if (!series.one_process) return line + ", one of " + n + " profiles";
  if (size_t(index) == series.latest) {
    return line + ", the latest of " + n + " dumps of one process (" + how_to_pick + ")";
  }
  return line + ", dump " + std::to_string(series.numbers[size_t(index)]) + " of " + n +
         " dumps of one process (" + series.NumbersText() + "; " + how_to_pick + ")";
}

void SubtractBase(const Profile* base, bool diff_base, Profile* profile) {
  if (base == nullptr) return;
  if (diff_base) profile->diff_base_begin = profile->samples.size();
  profile->AddProfile(*base, /*negate=*/true);
}

int DumpSeries::IndexOf(int number) const {
  for (size_t i = 0; i < numbers.size(); ++i) {
    if (numbers[i] == number) return int(i);
  }
  return -1;
}

std::string DumpSeries::NumbersText() const {
  bool consecutive = numbers.size() > 2;
  for (size_t i = 1; i < numbers.size() && consecutive; ++i)
    consecutive = numbers[i] == numbers[i - 1] + 1;
  if (consecutive) return std::to_string(numbers.front()) + " to " + std::to_string(numbers.back());
  std::string out;
  for (size_t i = 0; i < numbers.size(); ++i) {
    if (numbers.size() > 4 && i == 1) {
      out += " ... ";
      i = numbers.size() - 1;
    } else if (i > 0) {
      out += ", ";
    }
    out += std::to_string(numbers[i]);
  }
  return out;
}

DumpSeries ClassifyDumps(const std::vector<Profile>& profiles) {
  DumpSeries s;
  bool file_numbers = true;
  for (const Profile& p : profiles)
    file_numbers = file_numbers && DumpFileNumber(p.file, nullptr) >= 0;
  for (size_t i = 0; i < profiles.size(); ++i) {
    s.numbers.push_back(file_numbers ? DumpFileNumber(profiles[i].file, nullptr) : int(i) + 1);
  }
  // Numbers must name one dump each (the same file twice, or two prefixes: positions).
  for (size_t i = 0; i < s.numbers.size() && file_numbers; ++i) {
    if (s.IndexOf(s.numbers[i]) != int(i)) {
      for (size_t j = 0; j < profiles.size(); ++j) s.numbers[j] = int(j) + 1;
      break;
    }
  }
  s.one_process = profiles.size() <= 1 || SameProcess(profiles);
  s.different_processes = !s.one_process && DifferentProcesses(profiles);
  bool all_timed = !profiles.empty();
  for (const Profile& p : profiles) all_timed = all_timed && p.dump_time > 0;
  for (size_t i = 1; i < profiles.size(); ++i) {
    const bool later = all_timed ? profiles[i].dump_time >= profiles[s.latest].dump_time
                                 : s.numbers[i] > s.numbers[s.latest];
    if (later) s.latest = i;
  }
  return s;
}

}  // namespace heapkit::pprof
