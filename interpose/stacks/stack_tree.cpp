#include "stacks/stack_tree.h"

#include <cumemtrace/record_encode.h>
#include <cumemtrace/trace_format.h>

#include "stacks/stack_memo.h"

namespace cumemtrace::interpose {

namespace {
size_t stack_hash(const RawStack& s) { return size_t(stack_hash_end(stack_hash_ips(s.count, s))); }
}  // namespace

uint32_t StackTree::recent(const RawStack& s) const {
  const uint32_t id = recent_[stack_hash(s) & (kRecentSlots - 1)];
  if (id == 0) return 0;
  // The slot may hold another stack of the same hash: compare frame by frame.
  uint32_t n = id;
  for (uint32_t k = 0; k < s.count; ++k) {
    if (n == 0 || nodes_[n].second != s.ip[k]) return 0;
    n = nodes_[n].first;
  }
  return n == 0 ? id : 0;
}

uint32_t StackTree::child(uint32_t parent, uint64_t ip, std::string& out) {
  auto [it, fresh] = children_.try_emplace({parent, ip}, next_id_);
  if (fresh) {
    ++next_id_;
    nodes_.emplace_back(parent, ip);
    put_record<format::RecordType::kStackNode>(out, format::StackNodeRecord{it->second, parent, ip});
  }
  return it->second;
}

uint32_t StackTree::intern(const RawStack& s, std::string& out) {
  if (s.count == 0) return 0;
  if (const uint32_t id = recent(s)) return id;
  uint32_t node = 0;
  for (uint32_t k = s.count; k-- > 0;) node = child(node, s.ip[k], out);  // outermost first
  recent_[stack_hash(s) & (kRecentSlots - 1)] = node;
  return node;
}

uint32_t StackTree::intern(const RawStack& s, std::string& out, Memo& memo) {
  // No whole-stack hash (recent()): comparing with the thread's previous stack is cheaper,
  // and a new stack then costs a lookup only for the frames that changed.
  return intern_with_memo(s.ip, s.count, memo.ip, memo.node,
                          [&](uint32_t parent, uint64_t ip) { return child(parent, ip, out); });
}

uint32_t StackTree::frames(uint32_t id, uint64_t* out, uint32_t max) const {
  uint32_t n = 0;
  for (; id != 0 && id < nodes_.size() && n < max; id = nodes_[id].first) out[n++] = nodes_[id].second;
  return n;
}

}  // namespace cumemtrace::interpose
