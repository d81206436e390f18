#include "output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ext/stdio_filebuf.h>

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

OutputFile::OutputFile(std::string path, const std::vector<std::string>& inputs) : path_(std::move(path)) {
  if (names_an_input(path_, inputs)) {
    error_ = path_ + " is one of the inputs: refusing to overwrite it";
    return;
  }
  tmp_ = path_ + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    error_ = "cannot create " + tmp_ + ": " + std::strerror(errno);
    tmp_.clear();
    return;
  }
  impl_ = std::make_unique<Impl>(fd);
}

OutputFile::~OutputFile() {
  impl_.reset();
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
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
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    error_ = "cannot rename " + tmp_ + " to " + path_ + ": " + std::strerror(errno);
    return false;
  }
  tmp_.clear();
  return true;
}

}  // namespace cumemtrace
