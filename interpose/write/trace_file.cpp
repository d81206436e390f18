#include "write/trace_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>

#include "cumemtrace/framework_variables.h"
#include "cumemtrace/rules/manifest_line.h"
#include "cumemtrace/rules/no_follow.h"
#include "cumemtrace/rules/output_pattern.h"
#include <cumemtrace/record_encode.h>
#include <cumemtrace/trace_format.h>

#include "base/config.h"
#include "hook_ids.h"
#include "base/log.h"
#include "base/signal_safe.h"

namespace cumemtrace::interpose {
namespace {

int32_t rank_from_env() {
  for (const char* name : {"RANK", "LOCAL_RANK"}) {
    const char* v = std::getenv(name);
    char* end = nullptr;
    if (v && *v) {
      const long r = std::strtol(v, &end, 10);
      if (*end == '\0') return static_cast<int32_t>(r);
    }
  }
  return -1;
}

int32_t number_from_env(const char* name) {
  const char* v = std::getenv(name);
  char* end = nullptr;
  if (!v || !*v) return -1;
  const long n = std::strtol(v, &end, 10);
  return *end == '\0' && n >= 0 && n <= INT32_MAX ? static_cast<int32_t>(n) : -1;
}

// "NAME=value" of each of `names` that is set, joined with '\0': ProcessLineage's launcher
// string (kLauncherVariables) and, since 1.15, the framework variables after it.
template <size_t N>
std::string environment_facts(const std::string_view (&names)[N]) {
  std::string out;
  for (const std::string_view name : names) {
    const char* v = std::getenv(std::string(name).c_str());
    if (!v) continue;
    if (!out.empty()) out += '\0';
    out.append(name).append("=").append(v);
  }
  return out;
}

std::string host_name() {
  char h[HOST_NAME_MAX + 1] = {};
  return gethostname(h, sizeof h - 1) == 0 ? h : "unknown";
}

std::string command_line() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

}  // namespace

std::string expand_output_pattern(const std::string& pattern) {
  const int32_t r = rank_from_env();
  return output_pattern::expand(pattern, {host_name(), getpid(), r >= 0 ? r : getpid()});
}

namespace {

// Where a trace goes when CUMEMTRACE_OUTPUT names something that cannot be one: inside
// a directory (CUMEMTRACE_OUTPUT=/scratch, or /scratch/ when /scratch is a link to one),
// or in the current directory instead of a device, FIFO or socket (/dev/null:
// CUMEMTRACE_DISABLE=1 is the way to trace nothing). A symbolic link is a taken name,
// whatever it points at: never followed, so a link to a directory is no way into it (its
// target may be anyone's); the trace gets the next free name beside it (name_file).
std::string usable_output_path(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return path;
  if (S_ISLNK(st.st_mode)) {
    log_warn("CUMEMTRACE_OUTPUT={} is a symbolic link, never followed; the trace gets the next free name beside it",
             path);
    return path;
  }
  const std::string inside = S_ISDIR(st.st_mode) ? path + (path.ends_with('/') ? "" : "/") : std::string();
  const std::string moved = inside + expand_output_pattern(kDefaultOutputPattern);
  log_warn("CUMEMTRACE_OUTPUT={} is {}; the trace goes to {}", path,
           S_ISDIR(st.st_mode) ? "a directory" : "not a regular file", moved);
  return moved;
}

// Gives the file holding the preamble the name `wanted` in `dir`, or the next free ".N"
// one; `path` (the whole name) follows. link() never replaces and never follows a symlink
// at the new name.
bool name_file(int from_dir, const char* from, int follow, int dir, const std::string& wanted, std::string& path) {
  const std::string whole = path;
  for (int n = 0; n < 100; ++n) {
    const std::string suffix = n ? "." + std::to_string(n) : "";
    if (linkat(from_dir, from, dir, (wanted + suffix).c_str(), follow) == 0) {
      path = whole + suffix;
      return true;
    }
    if (errno != EEXIST) return false;
  }
  return false;
}

}  // namespace

int create_trace_file(std::string& path, std::string_view preamble) {
  path = usable_output_path(path);
  // The directory, reached through no link inside /proc: a link to /proc/self/root/... would
  // reach any directory whatever its own text says (no_follow.h).
  const auto [dir_name, name] = no_follow::split(path);
  const int dir = no_follow::open_dir(dir_name, no_follow::DirLinks::kOrdinary);
  if (dir < 0) return -1;
  // An unnamed file in the target directory, named once it holds the preamble.
  int fd = openat(dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd >= 0) {
    const std::string self = "/proc/self/fd/" + std::to_string(fd);
    if (write_all_signal_safe(fd, preamble) && name_file(AT_FDCWD, self.c_str(), AT_SYMLINK_FOLLOW, dir, name, path)) {
      close(dir);
      return fd;
    }
    const int e = errno;
    close(fd);
    if (e != ENOENT) return close(dir), errno = e, -1;  // ENOENT: no /proc; try the portable way
  }
  // Filesystems without O_TMPFILE (NFS, older kernels): a private temporary name, linked
  // to the real one once written, then removed.
  const std::string temp = name + ".tmp-" + std::to_string(getpid());
  fd = openat(dir, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int e = errno;
    close(dir);
    return errno = e, -1;
  }
  const bool ok = write_all_signal_safe(fd, preamble) && name_file(dir, temp.c_str(), 0, dir, name, path);
  const int e = errno;
  unlinkat(dir, temp.c_str(), 0);
  close(dir);
  if (ok) return fd;
  close(fd);
  return errno = e, -1;
}

uint64_t new_trace_id() {
  uint64_t id = 0;
  if (getrandom(&id, sizeof id, GRND_NONBLOCK) != ssize_t(sizeof id)) {
    // No entropy yet (early boot) or no getrandom: the clock, the pid and where the stack
    // is, mixed (splitmix64), tell two traces apart as well as a splice needs.
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    id = uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec) + (uint64_t(getpid()) << 40) +
         reinterpret_cast<uintptr_t>(&ts);
    id += 0x9e3779b97f4a7c15ull;
    id = (id ^ (id >> 30)) * 0xbf58476d1ce4e5b9ull;
    id = (id ^ (id >> 27)) * 0x94d049bb133111ebull;
    id ^= id >> 31;
  }
  return id ? id : 1;
}

std::string trace_preamble(const TraceStart& start, uint64_t trace_id) {
  std::string out;
  format::FileHeader h{};
  std::memcpy(h.magic, format::kMagic, sizeof h.magic);
  h.version_major = format::kVersionMajor;
  h.version_minor = format::kVersionMinor;
  h.header_bytes = sizeof h;
  h.trace_id = trace_id;
  put_bytes(out, &h, sizeof h);

  format::ProcessRecord p{};
  p.pid = static_cast<uint32_t>(getpid());
  p.ppid = static_cast<uint32_t>(getppid());
  p.start_monotonic_ns = start.monotonic_ns;
  p.start_realtime_ns = start.realtime_ns;
  p.granule_bytes = config().granule_bytes;
  p.stack_depth = config().stack_depth;
  p.rank = rank_from_env();
  // Read here, on the writer thread as it opens the file, like the rank: never in a hook.
  const format::ProcessLineage lineage{number_from_env("LOCAL_RANK"), number_from_env("WORLD_SIZE")};
  // 1.8: the lineage and the launcher after the row's three strings; 1.15: the environment.
  put_extended_record<format::RecordType::kProcess>(
      out, p, Strings{host_name(), command_line(), std::string_view(CUMEMTRACE_VERSION)}, lineage,
      environment_facts(format::kLauncherVariables), environment_facts(format::kFrameworkVariables));

  for (int i = 0; i < kHookCount; ++i)
    put_record<format::RecordType::kApiName>(out, format::ApiNameRecord{static_cast<uint16_t>(i)},
                                             hook_info(static_cast<HookId>(i)).symbol);
  return out;
}

void announce_in_manifest(const std::string& path, std::string_view prefix) {
  const std::string& manifest = config().manifest;
  if (manifest.empty()) return;
  std::string line = path;
  if (!path.starts_with('/')) {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd)) line = std::string(cwd) + "/" + path;
  }
  line = std::string(prefix) + manifest::escape_path(line) + '\n';
  // No O_CREAT: the manifest belongs to `cumemtrace run`, which made it. And only a
  // file that is one: a stray CUMEMTRACE_MANIFEST=/etc/passwd must not get a line.
  const int fd = open(manifest.c_str(), O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return;
  struct stat st {};
  char head[format::kManifestMarker.size()];
  const bool ours = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077) &&
                    pread(fd, head, sizeof head, 0) == ssize_t(sizeof head) &&
                    std::string_view(head, sizeof head) == format::kManifestMarker;
  if (ours) {
    // One write with O_APPEND: lines from several processes never interleave.
    [[maybe_unused]] const ssize_t n = write(fd, line.data(), line.size());
  } else {
    log_warn("CUMEMTRACE_MANIFEST={} is not a manifest made by `cumemtrace run`; left alone", manifest);
  }
  close(fd);
}

}  // namespace cumemtrace::interpose
