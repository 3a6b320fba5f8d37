#include "alloc/internal/safe_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace heapkit::internal {
namespace {

constexpr char kNameChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
constexpr int kRandomChars = 8;
constexpr int kAttempts = 64;

// Random bytes for a name: getrandom, or (no entropy source) address and time bits mixed, which
// O_EXCL still makes safe — only the chance of a retry grows.
void RandomBytes(unsigned char* out, size_t n) {
  if (getrandom(out, n, GRND_NONBLOCK) == static_cast<ssize_t>(n)) return;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t x = static_cast<uint64_t>(ts.tv_nsec) ^ (static_cast<uint64_t>(getpid()) << 32) ^
               reinterpret_cast<uintptr_t>(out);
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    out[i] = static_cast<unsigned char>(x);
  }
}

}  // namespace

int CheckReplaceable(const char* path, struct stat* existing) {
  struct stat st;
  if (lstat(path, &st) != 0) {
    if (existing != nullptr) existing->st_mode = 0;
    return errno == ENOENT ? 0 : errno;
  }
  if (S_ISLNK(st.st_mode)) return ELOOP;
  if (!S_ISREG(st.st_mode)) return EINVAL;
  if (st.st_uid != geteuid()) return EPERM;
  if (existing != nullptr) *existing = st;
  return 0;
}

int CreateTempBeside(const char* final_path, mode_t mode, char* tmp, size_t tmp_size, int* error) {
  const size_t len = strlen(final_path);
  const size_t need = len + sizeof(".tmp.") - 1 + kRandomChars + 1;
  if (need > tmp_size) {
    *error = ENAMETOOLONG;
    return -1;
  }
  memcpy(tmp, final_path, len);
  memcpy(tmp + len, ".tmp.", 5);
  char* random_part = tmp + len + 5;
  random_part[kRandomChars] = '\0';
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    unsigned char bytes[kRandomChars];
    RandomBytes(bytes, sizeof(bytes));
    for (int i = 0; i < kRandomChars; ++i)
      random_part[i] = kNameChars[bytes[i] % (sizeof(kNameChars) - 1)];
    const int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0) return fd;
    if (errno != EEXIST) {
      *error = errno;
      return -1;
    }
  }
  *error = EEXIST;
  return -1;
}

int OpenRegularFile(const char* path, int* error) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *error = errno;
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    *error = EINVAL;
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

int CommitTemp(const char* tmp, const char* final_path) {
  if (rename(tmp, final_path) == 0) return 0;
  const int err = errno;
  unlink(tmp);
  return err;
}

const char* ReplaceRefusal(int error) {
  switch (error) {
    case ELOOP: return "is a symbolic link; refusing to replace it";
    case EPERM: return "belongs to another user; refusing to replace it";
    case EINVAL: return "is not a regular file; refusing to replace it";
    default: return nullptr;
  }
}

}  // namespace heapkit::internal
