#include "render/export/pickle_writer.h"

#include "base/escape.h"

#include <limits>

namespace cumemtrace {
namespace {

// Opcodes (CPython Lib/pickle.py).
constexpr uint8_t kProto = 0x80, kFrame = 0x95, kStop = '.';
constexpr uint8_t kMark = '(', kEmptyList = ']', kEmptyDict = '}', kAppends = 'e', kSetItems = 'u';
constexpr uint8_t kBinInt1 = 'K', kBinInt2 = 'M', kBinInt = 'J', kLong1 = 0x8a;
constexpr uint8_t kShortBinUnicode = 0x8c, kBinUnicode = 'X';
constexpr uint8_t kNone = 'N', kNewTrue = 0x88, kNewFalse = 0x89, kTuple2 = 0x86;
constexpr uint8_t kMemoize = 0x94, kBinGet = 'h', kLongBinGet = 'j';

constexpr size_t kFrameTarget = 64 * 1024;  // CPython's _FRAME_SIZE_TARGET
constexpr size_t kBatch = 1000;             // CPython's _BATCHSIZE

}  // namespace

PickleWriter::PickleWriter(std::ostream& out) : out_(out) {
  const uint8_t proto[2] = {kProto, 4};
  out_.write(reinterpret_cast<const char*>(proto), 2);
}

void PickleWriter::op(uint8_t code) { frame_.push_back(char(code)); }

void PickleWriter::bytes(const void* p, size_t n) { frame_.append(static_cast<const char*>(p), n); }

void PickleWriter::le(uint64_t v, int n) {
  for (int i = 0; i < n; ++i) frame_.push_back(char((v >> (8 * i)) & 0xff));
}

// Called only after a whole opcode (and its argument) is in the frame.
void PickleWriter::maybe_flush() {
  if (frame_.size() >= kFrameTarget) flush_frame();
}

void PickleWriter::flush_frame() {
  if (frame_.empty()) return;
  uint8_t head[9] = {kFrame};
  for (int i = 0; i < 8; ++i) head[1 + i] = uint8_t((uint64_t(frame_.size()) >> (8 * i)) & 0xff);
  out_.write(reinterpret_cast<const char*>(head), sizeof head);
  out_.write(frame_.data(), std::streamsize(frame_.size()));
  frame_.clear();
}

void PickleWriter::integer(int64_t v) {
  if (v >= 0 && v <= 0xff) {
    op(kBinInt1);
    le(uint64_t(v), 1);
  } else if (v >= 0 && v <= 0xffff) {
    op(kBinInt2);
    le(uint64_t(v), 2);
  } else if (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max()) {
    op(kBinInt);
    le(uint64_t(uint32_t(int32_t(v))), 4);
  } else {
    // LONG1: the fewest little-endian two's-complement bytes that hold v with its sign.
    int n = 1;
    while (n < 8 && !(v >= -(int64_t(1) << (8 * n - 1)) && v < (int64_t(1) << (8 * n - 1)))) ++n;
    op(kLong1);
    le(uint64_t(n), 1);
    le(uint64_t(v), n);
  }
  maybe_flush();
}

void PickleWriter::unsigned_integer(uint64_t v) {
  if (v <= uint64_t(std::numeric_limits<int64_t>::max())) return integer(int64_t(v));
  op(kLong1);  // 2^63 and above: 8 bytes of value and a 0 byte for the sign
  le(9, 1);
  le(v, 8);
  le(0, 1);
  maybe_flush();
}

void PickleWriter::string(std::string_view raw) {
  // Pickle's unicode opcodes hold UTF-8: a trace's bytes that are not (a damaged or odd
  // file name) are written \xNN, the rule of every other output (escape.h).
  const std::string text = utf8_escaped(raw);
  const std::string_view s = text;
  auto it = memo_.find(text);
  if (it != memo_.end()) return get(it->second);
  if (s.size() <= 0xff) {
    op(kShortBinUnicode);
    le(s.size(), 1);
  } else {
    op(kBinUnicode);
    le(s.size(), 4);
  }
  bytes(s.data(), s.size());
  memo_.emplace(std::string(s), memoize());
  maybe_flush();
}

void PickleWriter::get(uint32_t index) {
  if (index <= 0xff) {
    op(kBinGet);
    le(index, 1);
  } else {
    op(kLongBinGet);
    le(index, 4);
  }
  ++references_;
  maybe_flush();
}

// MEMOIZE gives the object on top of the stack the next memo index.
uint32_t PickleWriter::memoize() {
  op(kMemoize);
  return next_memo_++;
}

void PickleWriter::remember(const std::string& key) {
  objects_.emplace(key, memoize());
  maybe_flush();
}

bool PickleWriter::recall(const std::string& key) {
  auto it = objects_.find(key);
  if (it == objects_.end()) return false;
  get(it->second);
  return true;
}

void PickleWriter::boolean(bool v) {
  op(v ? kNewTrue : kNewFalse);
  maybe_flush();
}

void PickleWriter::none() {
  op(kNone);
  maybe_flush();
}

void PickleWriter::begin_list() {
  op(kEmptyList);
  op(kMark);
  open_.push_back({false, 0});
  maybe_flush();
}

void PickleWriter::begin_dict() {
  op(kEmptyDict);
  op(kMark);
  open_.push_back({true, 0});
  maybe_flush();
}

void PickleWriter::item() {
  Open& o = open_.back();
  if (++o.pending < kBatch) return;
  op(o.dict ? kSetItems : kAppends);
  op(kMark);
  o.pending = 0;
  maybe_flush();
}

void PickleWriter::end() {
  op(open_.back().dict ? kSetItems : kAppends);  // also closes an empty batch: a no-op
  open_.pop_back();
  maybe_flush();
}

void PickleWriter::tuple2() {
  op(kTuple2);
  maybe_flush();
}

void PickleWriter::finish() {
  op(kStop);
  flush_frame();
  out_.flush();
}

}  // namespace cumemtrace
