#include "output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <ext/stdio_filebuf.h>

#include "temporaries.h"

namespace cumemtrace {

struct OutputFile::Impl {
  explicit Impl(int fd) : buf(fd, std::ios::out | std::ios::binary), out(&buf) {}
  __gnu_cxx::stdio_filebuf<char> buf;  // owns the descriptor
  std::ostream out;
};

namespace {
std::ostream& discard() {
  static std::ostream sink(nullptr);  // badbit set: every write is dropped
  return sink;
}
}  // namespace

bool names_an_input(const std::string& path, const std::vector<std::string>& inputs) {
  struct stat out{};
  if (::stat(path.c_str(), &out) != 0) return false;
  for (const auto& in : inputs) {
    struct stat s{};
    if (::stat(in.c_str(), &s) == 0 && s.st_dev == out.st_dev && s.st_ino == out.st_ino) return true;
  }
  return false;
}

namespace {
enum class Target { kReplace, kWriteThrough, kRefuse };

bool starts_with_proc(const std::string& p) { return p.rfind("/proc/", 0) == 0; }

// How to write `path`, by what is there now (the attack: `index -o /dev/null` as root had
// replaced the device node with a file of ours). Replacing keeps a planted symlink from
// sending the output elsewhere; writing through keeps a device, a FIFO or a link into
// /proc (/dev/stdout, /dev/fd/N) what it is.
Target target_of(const std::string& path, std::string& why) {
  struct stat at{};
  if (::lstat(path.c_str(), &at) != 0) return Target::kReplace;  // nothing there (or unreachable: create fails)
  const bool link = S_ISLNK(at.st_mode);
  struct stat to{};
  if (link && ::stat(path.c_str(), &to) != 0) return Target::kReplace;  // a dangling link
  const struct stat& st = link ? to : at;
  if (S_ISDIR(st.st_mode)) return why = path + " is a directory", Target::kRefuse;
  if (S_ISBLK(st.st_mode)) return why = path + " is a block device: refusing to write to it", Target::kRefuse;
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) return Target::kWriteThrough;
  if (!link) return Target::kReplace;
  char text[4096];
  const ssize_t n = ::readlink(path.c_str(), text, sizeof text - 1);
  if (n > 0 && starts_with_proc(std::string(text, size_t(n)))) return Target::kWriteThrough;
  char dir[PATH_MAX];
  const std::string parent = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/') + 1);
  if (::realpath(parent.c_str(), dir) && starts_with_proc(std::string(dir) + "/")) return Target::kWriteThrough;
  return Target::kReplace;
}
}  // namespace

OutputFile::OutputFile(std::string path, const std::vector<std::string>& inputs) : path_(std::move(path)) {
  if (names_an_input(path_, inputs)) {
    error_ = path_ + " is one of the inputs: refusing to overwrite it";
    return;
  }
  std::string why;
  switch (target_of(path_, why)) {
    case Target::kRefuse:
      error_ = why;
      return;
    case Target::kWriteThrough: {
      const int fd = ::open(path_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
      if (fd < 0) {
        error_ = "cannot open " + path_ + ": " + std::strerror(errno);
        return;
      }
      impl_ = std::make_unique<Impl>(fd);
      return;
    }
    case Target::kReplace:
      break;
  }
  tmp_ = path_ + ".tmp." + std::to_string(::getpid());
  // Registered before it exists: a signal between the two would leave it otherwise.
  temp_slot_ = register_temporary(tmp_);
  const int fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
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
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  unregister_temporary(temp_slot_);
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
  if (tmp_.empty()) return true;  // written through (target_of)
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    error_ = "cannot rename " + tmp_ + " to " + path_ + ": " + std::strerror(errno);
    return false;
  }
  tmp_.clear();
  unregister_temporary(temp_slot_);
  temp_slot_ = -1;
  return true;
}

}  // namespace cumemtrace
