#include "pprof-tool/load/profile_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "pprof-tool/proto/gzip_io.h"

namespace heapkit::pprof {
namespace {

constexpr size_t kHead = 4096;

// Reads up to `limit` + 1 bytes of fd from offset 0 (one more than allowed tells "too big").
bool ReadUpTo(int fd, size_t limit, std::string* out, std::string* error) {
  out->clear();
  size_t want = limit + 1;
  char buf[1 << 16];
  while (out->size() < want) {
    ssize_t r = pread(fd, buf, std::min(sizeof buf, want - out->size()), off_t(out->size()));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      *error = std::string("cannot read: ") + strerror(errno);
      return false;
    }
    if (r == 0) break;
    out->append(buf, size_t(r));
  }
  return true;
}

bool Decode(const std::string& content, const std::string& path, Profile* profile,
            ParseError* error, const ProtoLimits& limits) {
  if (LooksLikeProfileProto(std::string_view(content).substr(0, kHead))) {
    return DecodeProfileProto(content, path, profile, error, limits);
  }
  return ParseProfileText(content, path, profile, error);
}

}  // namespace

bool LoadProfileFile(const std::string& path, Profile* profile, ParseError* error,
                     const ProtoLimits& limits) {
  auto fail = [&](const std::string& what) {
    error->file = path;
    error->line = 0;
    error->expected = what;
    return false;
  };
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (fd >= 0) close(fd);
    return ReadProfileFile(path, profile, error);  // its messages for these cases
  }
  std::string head, problem;
  if (!ReadUpTo(fd, kHead - 1, &head, &problem)) {
    close(fd);
    return fail(problem);
  }
  const bool gzip = IsGzip(head);
  if (!gzip && !LooksLikeProfileProto(head)) {
    close(fd);
    return ReadProfileFile(path, profile, error);  // legacy text, streamed
  }
  std::string data;
  bool ok = ReadUpTo(fd, limits.max_bytes, &data, &problem);
  close(fd);
  if (!ok) return fail(problem);
  if (data.size() > limits.max_bytes) {
    return fail("expected a file of at most " + std::to_string(limits.max_bytes >> 20) +
                " MiB, found a larger one");
  }
  if (!gzip) return DecodeProfileProto(data, path, profile, error, limits);
  std::string content;
  if (!GunzipBounded(data, limits.max_bytes, &content, &problem)) return fail(problem);
  data = std::string();
  return Decode(content, path, profile, error, limits);
}

bool ReadProfiles(const std::vector<std::string>& files, std::vector<Profile>* each,
                  std::vector<std::string>* warnings, std::string* error) {
  for (const std::string& f : files) {
    Profile p;
    ParseError pe;
    if (!LoadProfileFile(f, &p, &pe)) {
      *error = pe.Message();
      return false;
    }
    for (std::string& w : p.warnings) warnings->push_back(std::move(w));
    p.warnings.clear();
    each->push_back(std::move(p));
  }
  return true;
}

bool ReadSummedProfiles(const std::vector<std::string>& files, Profile* sum,
                        std::vector<std::string>* warnings, std::string* error) {
  std::vector<Profile> each;
  if (!ReadProfiles(files, &each, warnings, error)) return false;
  *sum = std::move(each[0]);
  for (size_t i = 1; i < each.size(); ++i) sum->AddProfile(each[i], false);
  return true;
}

SymbolsInput ReadSymbolsInput(const std::string& input) {
  SymbolsInput out;
  std::string maps;
  std::istringstream in(input);
  std::string line;
  while (std::getline(in, line)) {
    Mapping m;
    if (ParseMapsLine(line, &m)) {
      maps += line + "\n";
      continue;
    }
    std::istringstream words(line);
    std::string w;
    while (words >> w) {
      const char* s = w.c_str();
      if (w.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s += 2;
      char* end = nullptr;
      uint64_t v = strtoull(s, &end, 16);
      if (end != s && *end == '\0') out.addresses.push_back(v);
    }
  }
  out.maps.maps_text = maps;
  std::istringstream min(maps);
  while (std::getline(min, line)) {
    Mapping m;
    if (ParseMapsLine(line, &m)) out.maps.mappings.push_back(m);
  }
  return out;
}

}  // namespace heapkit::pprof
