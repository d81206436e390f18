#include "read/event_source.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <variant>

#include "base/escape.h"

namespace cumemtrace {

void MemoryEvents::scan(const Each& each) const {
  size_t i = 0;
  for (const Event& e : events_) each(e, i++);
}

void EventSource::scan_blocks(const Trace& trace, const EachBlock& each) const {
  for (size_t b = 0; b < trace.block_events.size(); ++b) each(trace.block_events[b], b);
}

void EventSource::scan_in_file_order(const Trace& trace, const Each& each, const EachBlock& each_block) const {
  const std::vector<BlockEvent>& blocks = trace.block_events;
  size_t b = 0;
  scan([&](const Event& e, size_t i) {
    for (; b < blocks.size() && blocks[b].events_before <= i; ++b) each_block(blocks[b], b);
    each(e, i);
  });
  for (; b < blocks.size(); ++b) each_block(blocks[b], b);
}

Trace FileEvents::parse_all(const Each* each, const EachBlock* each_block, size_t& events, size_t& blocks) const {
  // Block records nobody asked for are counted and dropped, never kept in the Trace.
  const BlockCallback on_block = [&](const BlockEvent& b) {
    if (each_block) (*each_block)(b, blocks);
    ++blocks;
  };
  return parse_trace_events(
      bytes_, path_,
      [&](const Event& e) {
        if (each) (*each)(e, events);
        ++events;
      },
      /*quiet=*/true, mapped_, &on_block);
}

void FileEvents::run(const Each* each, const EachBlock* each_block) const {
  size_t events = 0, blocks = 0;
  Trace read;
  if (threads_ < 2) {
    read = parse_all(each, each_block, events, blocks);
  } else {
    struct Stopped {};  // the caller's `each` threw: the decoder stops at its next batch
    using Item = std::variant<Event, BlockEvent>;
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::vector<Item>> ready;
    bool done = false, stop = false;
    std::exception_ptr failed;
    std::thread decoder([&] {
      std::vector<Item> batch;
      const auto hand_over = [&] {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return ready.size() < kQueued || stop; });
        if (stop) throw Stopped{};
        ready.push_back(std::move(batch));
        cv.notify_all();
        batch = {};
      };
      const auto put = [&](Item item) {
        if (batch.empty()) batch.reserve(kBatch);
        batch.push_back(std::move(item));
        if (batch.size() == kBatch) hand_over();
      };
      const Each to_batch = [&](const Event& e, size_t) { put(e); };
      const EachBlock block_to_batch = [&](const BlockEvent& b, size_t) { put(b); };
      try {
        read = parse_all(each ? &to_batch : nullptr, each_block ? &block_to_batch : nullptr, events, blocks);
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
      size_t i = 0, b = 0;
      for (;;) {
        std::vector<Item> batch;
        {
          std::unique_lock lock(mu);
          cv.wait(lock, [&] { return !ready.empty() || done; });
          if (ready.empty()) break;
          batch = std::move(ready.front());
          ready.pop_front();
          cv.notify_all();
        }
        for (const Item& item : batch) {
          if (const Event* e = std::get_if<Event>(&item)) (*each)(*e, i++);
          else (*each_block)(std::get<BlockEvent>(item), b++);
        }
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
  if (events != events_ || blocks != blocks_ || read.damage.size() != damage_) changed_ = true;
}

TraceFile::TraceFile(const std::string& path, uint64_t hold_bytes, unsigned threads, size_t hold_blocks)
    : file_(std::in_place, path) {
  if (file_->error().empty()) {
    read(file_->bytes(), path, &*file_, hold_bytes, threads, hold_blocks);
    return;
  }
  trace_.path = path;
  trace_.error = ReadError{0, "cannot read " + path + ": " + file_->error(), false};
  events_ = std::make_unique<MemoryEvents>(trace_.events);
}

TraceFile::TraceFile(std::span<const uint8_t> bytes, const std::string& path, uint64_t hold_bytes, unsigned threads,
                     size_t hold_blocks) {
  read(bytes, path, nullptr, hold_bytes, threads, hold_blocks);
}

void TraceFile::read(std::span<const uint8_t> bytes, const std::string& path, const MappedFile* mapped,
                     uint64_t hold_bytes, unsigned threads, size_t hold_blocks) {
  size_t events = 0, blocks = 0;
  if (bytes.size() <= hold_bytes) {
    std::vector<BlockEvent> held;
    const BlockCallback hold_block = [&](const BlockEvent& b) {
      if (++blocks <= hold_blocks) held.push_back(b);
      else if (!held.empty()) held = {};
    };
    trace_ = parse_trace_events(bytes, path, EventCallback{}, /*quiet=*/false, nullptr, &hold_block);
    if (blocks <= hold_blocks) {
      trace_.block_events = std::move(held);
      events_ = std::make_unique<MemoryEvents>(trace_.events);
      return;
    }
    // A small file of many block records (a PyTorch job's: 2 M in 15 MB) is read in passes
    // as a large one is: held, they would take ~110 B each.
    events = trace_.events.size();
    trace_.events.clear();
  } else {
    const BlockCallback count_block = [&](const BlockEvent&) { ++blocks; };
    trace_ = parse_trace_events(
        bytes, path, [&](const Event&) { ++events; }, /*quiet=*/false, mapped, &count_block);
  }
  holds_ = false;
  auto file_events = std::make_unique<FileEvents>(bytes, path, events, trace_.damage.size(), mapped, threads, blocks);
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
