// Writing symbols into a trace without ever losing what it held: a new file beside the
// old one, checked by reading it back, then renamed over it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cumemtrace/checksum.h"
#include "cumemtrace/record_encode.h"
#include "read/reader_chunks.h"
#include "symbols/symbolize.h"

namespace cumemtrace {
namespace {

bool write_all(int fd, const char* p, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t k = ::write(fd, p + done, n - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    done += size_t(k);
  }
  return true;
}

std::string symbol_records(const std::unordered_map<uint64_t, Symbol>& symbols) {
  std::string buf;
  for (const auto& [ip, s] : symbols)
    put_record<format::RecordType::kSymbol>(buf, format::SymbolRecord{ip, s.line, 0}, s.function, s.file);
  return buf;
}

// A trace's records with its events counted, not held (a long job's trace holds 10^8).
Trace read_counting(std::span<const uint8_t> bytes, const std::string& path, size_t& events) {
  events = 0;
  return parse_trace_events(bytes, path, [&](const Event&) { ++events; });
}

// Whether `after` holds every record `before` had, plus `added` symbols.
bool keeps_everything(const Trace& before, size_t before_events, const Trace& after, size_t after_events,
                      size_t added) {
  return after_events == before_events && after.snapshots.size() == before.snapshots.size() &&
         after.stack_nodes.size() == before.stack_nodes.size() && after.modules.size() == before.modules.size() &&
         after.devices.size() == before.devices.size() && after.api_names.size() == before.api_names.size() &&
         after.process.has_value() == before.process.has_value() && after.end.has_value() == before.end.has_value() &&
         after.unknown_records == before.unknown_records && after.symbol_records == before.symbol_records + added;
}

// Bytes of the file worth keeping: all of it but an unreadable tail.
uint64_t keep_bytes(const Trace& t, uint64_t size) {
  if (t.damage.empty()) return size;
  const DamagedRange& last = t.damage.back();
  return last.byte_offset + last.bytes == size ? last.byte_offset : size;
}

}  // namespace

SymbolizeFileResult symbolize_file(const std::string& path) {
  SymbolizeFileResult r;
  const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (in < 0 || ::fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
    r.message = "cannot read " + path + (in < 0 ? std::string(": ") + std::strerror(errno) : "");
    if (in >= 0) ::close(in);
    return r;
  }
  ::close(in);
  const MappedFile file(path);  // mapped, not copied: the trace may be gigabytes
  if (!file.error().empty()) {
    r.message = "cannot read " + path + ": " + file.error();
    return r;
  }
  const std::span<const uint8_t> old = file.bytes();
  const Trace t = read_counting(old, path, r.events);
  if (!t.header_ok) {
    r.message = t.error ? t.error->message : "unreadable trace";
    return r;
  }
  auto symbols = resolve_symbols(t, &r.stats);
  std::erase_if(symbols, [&](const auto& kv) { return t.symbols.count(kv.first) > 0; });
  if (symbols.empty() && t.symbol_records > 0) {
    r.ok = r.already = true;
    return r;
  }

  const uint64_t keep = keep_bytes(t, old.size());
  r.cut_partial = keep < old.size();
  std::string added = symbol_records(symbols);
  if (t.sealed && !added.empty()) {
    ChunkHasher chunk;
    // 1.10: the appended chunk takes the next number, so that it reads as the trace's own.
    if (t.trace_id) chunk.number_chunks(t.trace_id, t.last_chunk_sequence ? *t.last_chunk_sequence + 1 : 0);
    chunk.update(added.data(), added.size());
    added += chunk.seal();
  }

  std::string tmp = path + ".symbolize-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    r.message = "cannot create a file beside " + path + ": " + std::strerror(errno);
    return r;
  }
  const auto give_up = [&](const std::string& why) {
    ::close(fd);
    ::unlink(tmp.c_str());
    r.message = why + "; " + path + " left as it was";
    return r;
  };
  if (::fchmod(fd, st.st_mode & 07777) != 0 || !write_all(fd, reinterpret_cast<const char*>(old.data()), keep) ||
      !write_all(fd, added.data(), added.size()) || ::fsync(fd) != 0)
    return give_up(std::string("cannot write symbols: ") + std::strerror(errno));
  size_t written_events = 0;
  const MappedFile written(tmp);
  const Trace after = read_counting(written.bytes(), tmp, written_events);
  if (!written.error().empty() || !keeps_everything(t, r.events, after, written_events, symbols.size()))
    return give_up("not symbolized: the rewritten trace would not hold every record of the old one");
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return give_up(std::string("cannot replace the trace: ") + std::strerror(errno));
  ::close(fd);
  r.ok = true;
  r.appended = symbols.size();
  return r;
}

}  // namespace cumemtrace
