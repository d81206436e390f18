#include "base/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ext/stdio_filebuf.h>

#include "cumemtrace/rules/no_follow.h"

#include "base/temporaries.h"

namespace cumemtrace {

struct OutputFile::Impl {
  explicit Impl(int fd) : buf(fd, std::ios::out | std::ios::binary), out(&buf) {}
  __gnu_cxx::stdio_filebuf<char> buf;  // owns the descriptor
  std::ostream out;
};

namespace {
bool g_force = false;

std::ostream& discard() {
  static std::ostream sink(nullptr);  // badbit set: every write is dropped
  return sink;
}

// The descriptor a name of the CLI's own descriptors stands for, or -1.
int own_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (!path.starts_with(prefix)) continue;
    const char* first = path.data() + prefix.size();
    const char* last = path.data() + path.size();
    int fd = -1;
    const auto [p, ec] = std::from_chars(first, last, fd);
    if (ec == std::errc() && p == last && first != last && fd >= 0) return fd;
  }
  return -1;
}

std::string link_refusal(const std::string& path) {
  return path +
         ": a symbolic link on the way (never followed for a file the CLI writes: a link to "
         "/proc/self/root/... reaches any file); name it by its real path";
}
}  // namespace

void set_output_force(bool force) { g_force = force; }

bool make_output_directory(const std::string& path, std::string* error, bool itself_may_be_link) {
  // Prefix by prefix: each is opened by the rule for folders above an output file
  // (no_follow.h: ordinary links, never a magic one), or made in its parent if missing.
  std::string prefix = path.starts_with('/') ? "/" : "";
  std::string parent = path.starts_with('/') ? "/" : ".";
  int e = 0;
  for (size_t from = 0; from < path.size();) {
    const size_t slash = std::min(path.find('/', from), path.size());
    const std::string name = path.substr(from, slash - from);
    from = slash + 1;
    if (name.empty() || name == ".") continue;
    prefix += (prefix.empty() || prefix == "/" ? "" : "/") + name;
    int fd = no_follow::open_dir(prefix, no_follow::DirLinks::kOrdinary);
    if (fd < 0 && errno == ENOENT) {
      const int at = no_follow::open_dir(parent, no_follow::DirLinks::kOrdinary);
      if (at >= 0 && (::mkdirat(at, name.c_str(), 0700) == 0 || errno == EEXIST))
        fd = no_follow::open_dir(prefix, no_follow::DirLinks::kOrdinary);
      const int why = errno;
      if (at >= 0) ::close(at);
      errno = why;
    }
    if (fd < 0) {
      e = errno;
      break;
    }
    ::close(fd);
    parent = prefix;
  }
  struct stat st {};
  if (!e && !itself_may_be_link && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) e = ELOOP;
  if (e) {
    if (error) *error = e == ELOOP ? link_refusal(path) : "cannot create the folder " + path + ": " + std::strerror(e);
    return false;
  }
  return true;
}

bool names_an_input(const std::string& path, const std::vector<std::string>& inputs) {
  struct stat out {};
  if (::stat(path.c_str(), &out) != 0) return false;
  for (const auto& in : inputs) {
    struct stat s {};
    if (::stat(in.c_str(), &s) == 0 && s.st_dev == out.st_dev && s.st_ino == out.st_ino) return true;
  }
  return false;
}

OutputFile::OutputFile(std::string path, const std::vector<std::string>& inputs) : path_(std::move(path)) {
  if (names_an_input(path_, inputs)) {
    is_input_ = true;
    error_ = path_ + " is one of the inputs: refusing to overwrite it";
    return;
  }
  if (const int own = own_descriptor(path_); own >= 0) {
    struct stat st {};
    const int fd = ::fstat(own, &st) == 0 && !S_ISDIR(st.st_mode) ? ::fcntl(own, F_DUPFD_CLOEXEC, 3) : -1;
    if (fd < 0) {
      error_ = "cannot write " + path_ + ": not an open descriptor for writing";
      return;
    }
    impl_ = std::make_unique<Impl>(fd);
    return;
  }
  const auto [dir, name] = no_follow::split(path_);
  name_ = name;
  if (name.empty() || name == "." || name == "..") {
    error_ = path_ + " is a directory";
    return;
  }
  // The library's rule for its trace file, one rule for both: a folder may be an ordinary
  // link (a cluster's /scratch, a home directory often are), never one inside /proc; the
  // name itself is never a link (open_new/O_NOFOLLOW below).
  dir_fd_ = no_follow::open_dir(dir, no_follow::DirLinks::kOrdinary);
  if (dir_fd_ < 0) {
    error_ = errno == ELOOP ? link_refusal(path_) : "cannot create " + path_ + ": " + std::strerror(errno);
    return;
  }
  open_at_name();
}

// What is at the name now decides (the attack: `index -o /dev/null` as root had replaced the
// device node with a file of ours): a device or a FIFO stays what it is; a link is refused.
void OutputFile::open_at_name() {
  struct stat st {};
  if (::fstatat(dir_fd_, name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) return void(error_ = link_refusal(path_));
    if (S_ISDIR(st.st_mode)) return void(error_ = path_ + " is a directory");
    if (S_ISBLK(st.st_mode)) return void(error_ = path_ + " is a block device: refusing to write to it");
    if (S_ISSOCK(st.st_mode)) return void(error_ = path_ + " is a socket: refusing to write to it");
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
      // O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of waiting for one.
      const int flags = O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC;
      int fd = ::openat(dir_fd_, name_.c_str(), flags | O_NONBLOCK);
      if (fd < 0 && errno == ENXIO && S_ISFIFO(st.st_mode)) {
        if (!g_force)
          return void(error_ = path_ +
                               " is a FIFO that no one reads: writing would wait for a reader "
                               "(--force waits)");
        fd = ::openat(dir_fd_, name_.c_str(), flags);
      }
      struct stat now {};
      if (fd >= 0 && (::fstat(fd, &now) != 0 || (now.st_mode & S_IFMT) != (st.st_mode & S_IFMT))) {
        ::close(fd);  // replaced between the look and the open
        return void(error_ = path_ + " changed while it was opened");
      }
      if (fd < 0) return void(error_ = "cannot open " + path_ + ": " + std::strerror(errno));
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      impl_ = std::make_unique<Impl>(fd);
      return;
    }
  }
  tmp_name_ = name_ + ".tmp." + std::to_string(::getpid());
  tmp_ = (path_.find('/') == std::string::npos ? "" : no_follow::split(path_).dir + "/") + tmp_name_;
  // Registered before it exists: a signal between the two would leave it otherwise.
  temp_slot_ = register_temporary(tmp_);
  const int fd = ::openat(dir_fd_, tmp_name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    error_ = "cannot create " + tmp_ + ": " + std::strerror(errno);
    tmp_.clear();
    unregister_temporary(temp_slot_);
    temp_slot_ = -1;
    return;
  }
  impl_ = std::make_unique<Impl>(fd);
}

OutputFile::~OutputFile() {
  impl_.reset();
  if (!tmp_.empty()) ::unlinkat(dir_fd_, tmp_name_.c_str(), 0);
  unregister_temporary(temp_slot_);
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

std::ostream& OutputFile::stream() { return impl_ ? impl_->out : discard(); }

bool OutputFile::commit() {
  if (!impl_) return false;
  impl_->out.flush();
  const bool written = bool(impl_->out);
  const bool closed = impl_->buf.close() != nullptr;
  impl_.reset();
  if (!written || !closed) {
    error_ = "writing " + path_ + " failed";
    return false;
  }
  if (tmp_.empty()) return true;  // written through (open_at_name)
  // renameat replaces whatever is at the name then, a link included, and follows none.
  if (::renameat(dir_fd_, tmp_name_.c_str(), dir_fd_, name_.c_str()) != 0) {
    error_ = "cannot rename " + tmp_ + " to " + path_ + ": " + std::strerror(errno);
    return false;
  }
  tmp_.clear();
  unregister_temporary(temp_slot_);
  temp_slot_ = -1;
  return true;
}

}  // namespace cumemtrace
