// Reading a trace: the entry points of reader.h and reader_chunks.h over the parser
// (parser.h), and the file mapping they read from.
#include "read/reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "read/damage/cut_guard.h"
#include "read/parser.h"
#include "read/reader_chunks.h"

namespace cumemtrace {

using read_detail::Parser;

const DeviceInfo* Trace::device(int32_t ordinal) const {
  for (auto it = devices.rbegin(); it != devices.rend(); ++it)
    if (it->ordinal == ordinal) return &*it;
  return nullptr;
}

std::string Trace::api_name(uint16_t id) const {
  auto it = api_names.find(id);
  return it != api_names.end() ? it->second : "api#" + std::to_string(id);
}

uint64_t Trace::granule() const { return process && process->granule_bytes ? process->granule_bytes : (2ull << 20); }

Trace parse_trace(std::span<const uint8_t> bytes, std::string path, bool verify) {
  Trace t;
  t.path = std::move(path);
  Parser(bytes, t, verify).run();
  return t;
}

namespace {
// A verifying read, its Parser set up by `setup` first (reader_chunks.h's ways of reading).
template <class Setup>
Trace parse_verified(std::span<const uint8_t> bytes, std::string path, Setup setup) {
  Trace t;
  t.path = std::move(path);
  Parser p(bytes, t, true);
  setup(p);
  p.run();
  return t;
}
}  // namespace

Trace parse_trace_chunks(std::span<const uint8_t> bytes, std::string path, std::vector<ChunkEnd>& ends) {
  return parse_verified(bytes, std::move(path), [&](Parser& p) { p.chunk_ends = &ends; });
}

Trace parse_trace_streaming(std::span<const uint8_t> bytes, std::string path, const ChunkCallback& on_chunk) {
  return parse_verified(bytes, std::move(path), [&](Parser& p) { p.on_chunk = &on_chunk; });
}

Trace parse_trace_events(std::span<const uint8_t> bytes, std::string path, const EventCallback& on_event, bool quiet,
                         const MappedFile* mapped, const BlockCallback* on_block) {
  return parse_verified(bytes, std::move(path), [&](Parser& p) {
    p.on_event = on_event ? &on_event : nullptr;
    p.on_block = on_block;
    p.quiet = quiet;
    p.mapped = mapped;
  });
}

Trace parse_trace_from(std::span<const uint8_t> bytes, std::string path, uint64_t offset, uint64_t stop_after_ns) {
  return parse_verified(bytes, std::move(path), [&](Parser& p) {
    p.resume_at = std::min<uint64_t>(offset, bytes.size());
    p.stop_after_ns = stop_after_ns;
  });
}

MappedFile::MappedFile(const std::string& path) : path_(path) {
  // O_NONBLOCK: a FIFO's open would wait for a writer forever; it is refused below.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error_ = std::strerror(errno);
    return;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    error_ = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    error_ = "not a regular file";
  } else if (st.st_size > 0) {
    mtime_ns_ = uint64_t(st.st_mtim.tv_sec) * 1'000'000'000ull + uint64_t(st.st_mtim.tv_nsec);
    // mmap rather than read: traces of long jobs run to gigabytes and are read once.
    void* p = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      error_ = std::strerror(errno);
    } else {
      data_ = p;
      size_ = size_t(st.st_size);
      guard_ = guard_mapping(data_, size_);
      device_ = uint64_t(st.st_dev), inode_ = uint64_t(st.st_ino);
    }
  } else {
    mtime_ns_ = uint64_t(st.st_mtim.tv_sec) * 1'000'000'000ull + uint64_t(st.st_mtim.tv_nsec);
  }
  ::close(fd);
}

void MappedFile::release_before(uint64_t offset) const {
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t end = std::min<uint64_t>(offset, size_) / page * page;
  if (end < released_) released_ = 0;  // a new read from the start: give back behind it again
  if (!data_ || end < released_ + (64u << 20)) return;
  // Advice only: a failure leaves the pages where they are, which is harmless.
  ::madvise(static_cast<uint8_t*>(data_) + released_, end - released_, MADV_DONTNEED);
  released_ = end;
}

bool MappedFile::cut() const {
  if (mapping_cut(guard_)) return true;
  struct stat st;
  if (!data_ || ::stat(path_.c_str(), &st) != 0) return false;
  return uint64_t(st.st_dev) == device_ && uint64_t(st.st_ino) == inode_ && uint64_t(st.st_size) < size_;
}

bool MappedFile::written_in_place() const {
  struct stat st;
  if (!data_ || ::stat(path_.c_str(), &st) != 0) return false;
  const uint64_t mtime = uint64_t(st.st_mtim.tv_sec) * 1'000'000'000ull + uint64_t(st.st_mtim.tv_nsec);
  return uint64_t(st.st_dev) == device_ && uint64_t(st.st_ino) == inode_ && uint64_t(st.st_size) == size_ &&
         mtime != mtime_ns_;
}

MappedFile::~MappedFile() {
  unguard_mapping(guard_);
  if (data_) ::munmap(data_, size_);
}

Trace read_trace(const std::string& path) {
  const MappedFile file(path);
  if (!file.error().empty()) {
    Trace t;
    t.path = path;
    t.error = ReadError{0, "cannot read " + path + ": " + file.error(), false};
    return t;
  }
  return parse_trace(file.bytes(), path);
}

}  // namespace cumemtrace
