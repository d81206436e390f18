#include "read/event_source.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "base/escape.h"

namespace cumemtrace {

void MemoryEvents::scan(const Each& each) const {
  size_t i = 0;
  for (const Event& e : events_) each(e, i++);
}

Trace FileEvents::parse_all(const Each& each, size_t& i) const {
  return parse_trace_events(
      bytes_, path_, [&](const Event& e) { each(e, i++); }, /*quiet=*/true, mapped_);
}

void FileEvents::scan(const Each& each) const {
  size_t i = 0;
  Trace read;
  if (threads_ < 2) {
    read = parse_all(each, i);
  } else {
    struct Stopped {};  // the caller's `each` threw: the decoder stops at its next batch
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::vector<Event>> ready;
    bool done = false, stop = false;
    std::exception_ptr failed;
    std::thread decoder([&] {
      std::vector<Event> batch;
      const auto hand_over = [&] {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return ready.size() < kQueued || stop; });
        if (stop) throw Stopped{};
        ready.push_back(std::move(batch));
        cv.notify_all();
        batch = {};
      };
      try {
        size_t decoded = 0;
        read = parse_all(
            [&](const Event& e, size_t) {
              if (batch.empty()) batch.reserve(kBatch);
              batch.push_back(e);
              if (batch.size() == kBatch) hand_over();
            },
            decoded);
        if (!batch.empty()) hand_over();
      } catch (const Stopped&) {
      } catch (...) {
        std::lock_guard lock(mu);
        failed = std::current_exception();
      }
      std::lock_guard lock(mu);
      done = true;
      cv.notify_all();
    });
    try {
      for (;;) {
        std::vector<Event> batch;
        {
          std::unique_lock lock(mu);
          cv.wait(lock, [&] { return !ready.empty() || done; });
          if (ready.empty()) break;
          batch = std::move(ready.front());
          ready.pop_front();
          cv.notify_all();
        }
        for (const Event& e : batch) each(e, i++);
      }
    } catch (...) {
      {
        std::lock_guard lock(mu);
        stop = true;
        cv.notify_all();
      }
      decoder.join();
      throw;
    }
    decoder.join();
    if (failed) std::rethrow_exception(failed);
  }
  if (i != events_ || read.damage.size() != damage_) changed_ = true;
}

TraceFile::TraceFile(const std::string& path, uint64_t hold_bytes, unsigned threads) : file_(std::in_place, path) {
  if (file_->error().empty()) {
    read(file_->bytes(), path, &*file_, hold_bytes, threads);
    return;
  }
  trace_.path = path;
  trace_.error = ReadError{0, "cannot read " + path + ": " + file_->error(), false};
  events_ = std::make_unique<MemoryEvents>(trace_.events);
}

TraceFile::TraceFile(std::span<const uint8_t> bytes, const std::string& path, uint64_t hold_bytes, unsigned threads) {
  read(bytes, path, nullptr, hold_bytes, threads);
}

void TraceFile::read(std::span<const uint8_t> bytes, const std::string& path, const MappedFile* mapped,
                     uint64_t hold_bytes, unsigned threads) {
  if (bytes.size() <= hold_bytes) {
    trace_ = parse_trace(bytes, path);
    events_ = std::make_unique<MemoryEvents>(trace_.events);
    return;
  }
  holds_ = false;
  size_t events = 0;
  trace_ = parse_trace_events(
      bytes, path, [&](const Event&) { ++events; }, /*quiet=*/false, mapped);
  auto file_events = std::make_unique<FileEvents>(bytes, path, events, trace_.damage.size(), mapped, threads);
  file_events_ = file_events.get();
  events_ = std::move(file_events);
}

std::string TraceFile::changed_message() const {
  return printable(trace_.path) +
         " changed while it was read (cut short, or written over in place): no figures from it; read it again once "
         "nothing writes to it";
}

bool TraceFile::changed() const {
  return (file_ && (file_->cut() || file_->written_in_place())) || (file_events_ && file_events_->changed());
}

std::string not_as_checked(const FileStamp& then, const TraceFile& now) {
  const FileStamp s = now.stamp();
  std::string why;
  if (s.device != then.device || s.inode != then.inode) why = "another file under its name";
  else if (s.size < then.size) why = "cut short";
  else if (s.size == then.size && s.mtime_ns != then.mtime_ns) why = "written over in place";
  if (why.empty()) return "";
  return printable(now.trace().path) + " changed between its check and its reading (" + why +
         "): nothing written; run it again once nothing writes to it";
}

}  // namespace cumemtrace
