#include "profiler/symbolize/local_debuginfo.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <libelf.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "alloc/internal/safe_file.h"
#include "profiler/base/profiler_settings.h"

namespace heapkit::pprof {
namespace {

std::string Hex(const unsigned char* bits, size_t n) {
  std::string hex;
  for (size_t i = 0; i < n; ++i) {
    char b[3];
    snprintf(b, sizeof b, "%02x", bits[i]);
    hex += b;
  }
  return hex;
}

// The CRC-32 that .gnu_debuglink records (the common reflected 0xedb88320 polynomial).
uint32_t FileCrc32(int fd) {
  uint32_t crc = 0xffffffffu;
  unsigned char buf[65536];
  ssize_t n;
  while ((n = pread(fd, buf, sizeof buf, 0)) < 0 && errno == EINTR) {
  }
  off_t at = 0;
  while (n > 0) {
    for (ssize_t i = 0; i < n; ++i) {
      crc ^= buf[i];
      for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    at += n;
    while ((n = pread(fd, buf, sizeof buf, at)) < 0 && errno == EINTR) {
    }
  }
  return ~crc;
}

// An open candidate debug file that belongs to the module: the same build-id, or (no build-id
// on the module) the CRC the link recorded. Not the module's main file itself.
bool Fits(int fd, const struct stat& main_file, const std::string& want_build_id, uint32_t crc) {
  struct stat st;
  if (fstat(fd, &st) != 0) return false;
  if (st.st_dev == main_file.st_dev && st.st_ino == main_file.st_ino) return false;
  if (want_build_id.empty()) return FileCrc32(fd) == crc;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr) return false;
  const void* bits = nullptr;
  const ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
  const bool same =
      n > 0 && Hex(static_cast<const unsigned char*>(bits), size_t(n)) == want_build_id;
  elf_end(elf);
  return same;
}

int OpenIfFits(const std::string& path, const struct stat& main_file, const std::string& build_id,
               uint32_t crc, char** debuginfo_file_name) {
  int err = 0;
  const int fd = internal::OpenRegularFile(path.c_str(), &err);
  if (fd < 0) return -1;
  if (!Fits(fd, main_file, build_id, crc)) {
    close(fd);
    return -1;
  }
  *debuginfo_file_name = strdup(path.c_str());
  return fd;
}

// The `.gnu_debuglink` name where libdwfl's standard search looks: beside the file, in its
// .debug/ directory, then <debug dir><the file's directory>/ for each absolute debug directory.
int FindByDebuglink(const LocalDebuginfoSearch& search, const char* file_name,
                    const char* debuglink_file, uint32_t crc, const std::string& build_id,
                    char** debuginfo_file_name) {
  if (file_name == nullptr || debuglink_file == nullptr || debuglink_file[0] == '\0' ||
      strchr(debuglink_file, '/') != nullptr)
    return -1;
  struct stat main_file;
  if (stat(file_name, &main_file) != 0) return -1;
  const std::string file(file_name);
  const size_t slash = file.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string(".") : file.substr(0, slash);
  std::vector<std::string> candidates = {dir + "/" + debuglink_file,
                                         dir + "/.debug/" + debuglink_file};
  for (const std::string& d : search.debug_dirs) {
    if (!dir.empty() && dir[0] == '/') candidates.push_back(d + dir + "/" + debuglink_file);
  }
  for (const std::string& c : candidates) {
    const int fd = OpenIfFits(c, main_file, build_id, crc, debuginfo_file_name);
    if (fd >= 0) return fd;
  }
  return -1;
}

bool DebuginfodRequested() {
  const char* urls = internal::ToolSettingText(prof::ProfilerSetting("DEBUGINFOD_URLS"));
  return urls != nullptr && urls[0] != '\0';
}

// The environment for the helper: ours without the variables that would make it a checked or
// profiled process (or preload anything into it).
std::vector<char*> HelperEnvironment() {
  static const char* const kDropped[] = {"HEAPCHECK",    "HEAPPROFILE", "HEAP_CHECK_",
                                         "HEAP_PROFILE", "LD_PRELOAD=", "CPUPROFILE"};
  std::vector<char*> env;
  for (char* const* e = internal::EnvironmentForChild(); e != nullptr && *e != nullptr; ++e) {
    bool drop = false;
    for (const char* prefix : kDropped) drop |= strncmp(*e, prefix, strlen(prefix)) == 0;
    if (!drop) env.push_back(*e);
  }
  env.push_back(nullptr);
  return env;
}

}  // namespace

std::string FetchDebuginfoInHelper(const std::string& build_id_hex) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return "";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  char verb[] = "debuginfo";
  char tool[] = "debuginfod-find";
  std::string id = build_id_hex;
  char* argv[] = {tool, verb, id.data(), nullptr};
  std::vector<char*> env = HelperEnvironment();
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, tool, &actions, nullptr, argv, env.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  std::string path;
  if (rc == 0) {
    char buf[4096];
    for (;;) {
      const ssize_t n = read(out[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (path.size() < 8192) path.append(buf, size_t(n));
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) path.clear();
  }
  close(out[0]);
  while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.pop_back();
  if (path.find('\n') != std::string::npos || path.empty() || path[0] != '/') return "";
  return path;
}

int FindDebuginfoWithoutClient(Dwfl_Module* mod, void** userdata, const char* modname,
                               Dwarf_Addr base, const char* file_name, const char* debuglink_file,
                               GElf_Word debuglink_crc, char** debuginfo_file_name) {
  int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                        debuglink_crc, debuginfo_file_name);
  auto* search = static_cast<LocalDebuginfoSearch*>(*userdata);
  if (fd >= 0 || search == nullptr) return fd;
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int n = dwfl_module_build_id(mod, &bits, &vaddr);
  const std::string build_id = n > 0 ? Hex(bits, size_t(n)) : std::string();
  fd = FindByDebuglink(*search, file_name, debuglink_file, debuglink_crc, build_id,
                       debuginfo_file_name);
  if (fd >= 0 || build_id.empty() || !DebuginfodRequested()) return fd;
  switch (search->debuginfod) {
    case DebuginfodClient::kInProcess:
      // The standard search repeats the local part, then asks elfutils' client.
      return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                          debuglink_crc, debuginfo_file_name);
    case DebuginfodClient::kHelperProcess: {
      if (!search->asked_helper.insert(build_id).second) return -1;
      const std::string path = FetchDebuginfoInHelper(build_id);
      if (path.empty()) return -1;
      struct stat none {};
      return OpenIfFits(path, none, build_id, debuglink_crc, debuginfo_file_name);
    }
    case DebuginfodClient::kNever: break;
  }
  return -1;
}

}  // namespace heapkit::pprof
