#include "stacks/python_tree.h"

#include <cumemtrace/record_encode.h>
#include <cumemtrace/trace_format.h>

#include "stacks/python_frames.h"
#include "stacks/stack_memo.h"

namespace cumemtrace::interpose {

uint32_t PyStackTree::string_id(const std::string& s, std::string& out) {
  auto [it, fresh] = strings_.try_emplace(s, next_string_);
  if (fresh) {
    ++next_string_;
    string_of_.push_back(&it->first);
    put_record<format::RecordType::kPyString>(out, format::PyStringRecord{it->second}, s);
  }
  return it->second;
}

namespace {

// wyhash's step (Wang Yi's, public domain): a 64x64->128-bit multiply folded to 64 bits
// mixes two words at once; two per frame instead of four 64-bit mixes was a twentieth
// of an event with 20 Python frames (callgrind, bench/python_frames.py).
uint64_t mum(uint64_t a, uint64_t b) {
  const __uint128_t r = __uint128_t(a) * b;
  return uint64_t(r) ^ uint64_t(r >> 64);
}

uint64_t stack_hash(const PyRawStack& s) {
  constexpr uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull, k2 = 0x8ebc6af09c88c6e3ull;
  uint64_t h = s.count ^ k0;
  for (uint32_t i = 0; i < s.count; ++i) {
    const PyRawFrame& f = s.frames[i];
    // The offset is under 2^30 (python_walk.cpp): offset, version and entry share a word.
    h = mum(f.code ^ k1, f.filename ^ (f.name << 1) ^ h);
    h = mum(f.linetable ^ k2, (uint64_t(uint32_t(f.offset)) << 33 | uint64_t(f.version) << 1 | f.entry) ^ h);
  }
  return mum(h ^ k1, k2);
}

}  // namespace

uint32_t PyStackTree::child(uint32_t parent, const PyRawFrame& f, std::string& out) {
  auto code = codes_.find(CodeKey{f.code, f.filename, f.name, f.version});
  if (code == codes_.end()) {
    // Bounded, for programs that make code objects without end (exec in a loop): forgetting
    // only costs reading names again; the strings stay interned.
    if (codes_.size() >= (1u << 20)) codes_.clear();
    const uint32_t file = string_id(read_.string(f.filename), out);
    const uint32_t function = string_id(read_.string(f.name), out);
    code = codes_.emplace(CodeKey{f.code, f.filename, f.name, f.version}, std::pair{file, function}).first;
  }
  const auto [file, function] = code->second;
  if (lines_.size() >= (1u << 20)) lines_.clear();
  const PlaceKey at{f.code, f.linetable, f.offset, f.version};
  auto place = lines_.find(at);
  if (place == lines_.end()) place = lines_.emplace(at, read_.line(f)).first;
  const int32_t line = place->second;
  const uint32_t flags = f.entry ? uint32_t(format::kPyFrameEntry) : 0u;
  auto [it, fresh] = nodes_.try_emplace(NodeKey{parent, file, function, line, flags}, next_node_);
  if (fresh) {
    ++next_node_;
    node_of_.push_back(&it->first);
    put_record<format::RecordType::kPyFrame>(out,
                                             format::PyFrameRecord{it->second, parent, file, function, line, flags});
  }
  return it->second;
}

uint32_t PyStackTree::intern(const PyRawStack& s, std::string& out) {
  if (s.count == 0) return 0;
  const uint64_t whole = stack_hash(s);
  if (auto known = stacks_.find(whole); known != stacks_.end()) return known->second;
  if (stacks_.size() >= (1u << 20)) stacks_.clear();
  uint32_t node = 0;
  for (uint32_t k = s.count; k-- > 0;) node = child(node, s.frames[k], out);  // outermost first
  stacks_.emplace(whole, node);
  return node;
}

uint32_t PyStackTree::intern(const PyRawStack& s, std::string& out, Memo& memo) {
  return intern_with_memo(s.frames, s.count, memo.frame, memo.node,
                          [&](uint32_t parent, const PyRawFrame& f) { return child(parent, f, out); });
}

std::vector<PyStackTree::Frame> PyStackTree::frames(uint32_t id, size_t max) const {
  std::vector<Frame> out;
  for (uint32_t node = id; node != 0 && node < node_of_.size() && out.size() < max;) {
    const auto& [parent, file, function, line, flags] = *node_of_[node];
    out.push_back({string_of_[file], string_of_[function], line});
    node = parent;
  }
  return out;
}

}  // namespace cumemtrace::interpose
