#include "track/context_tags.h"

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "stacks/python_frames.h"
#include "track/named_stack.h"
#include "track/tracker.h"

namespace cumemtrace::interpose {
namespace {

using format::MarkSource;

struct OpenTag {
  uint64_t serial;   // tells a tag from another of its name: a context entered from another shares its tags
  std::string name;  // empty past NamedStack::kMaxNamed deep (named false)
  bool named;
};
using OpenTags = std::vector<OpenTag>;

// Contexts read out from the current one: asyncio's task steps are one Context.run deep.
constexpr size_t kContextChain = 8;

struct ThreadContextTags {
  // The open tags of each context that has any (0: the thread's, where no context is read).
  std::unordered_map<uint64_t, OpenTags> by_context;
  OpenTags recorded;              // the thread's tag stack as the trace has it
  uint64_t recorded_context = 0;  // the context whose tags `recorded` are
  uint64_t next_serial = 0;
};

struct ContextTagsTag;

// The current context, and its tags: its own, else those of the nearest context it was
// entered from that has any, else the thread's. The outermost context, entered from none,
// is the thread's own (made when first needed, never replaced): it is the thread's, key 0,
// as where no context is read, so that a tag opened before it was made is still its.
std::pair<uint64_t, const OpenTags*> current_tags(const ThreadContextTags& t) {
  static const OpenTags none;
  uint64_t chain[kContextChain];
  const size_t n = python_contexts(chain, kContextChain);
  const size_t entered = n ? n - 1 : 0;
  const uint64_t context = entered ? chain[0] : 0;
  for (size_t i = 0; i < entered; ++i)
    if (auto it = t.by_context.find(chain[i]); it != t.by_context.end()) return {context, &it->second};
  auto it = t.by_context.find(0);
  return {context, it != t.by_context.end() ? &it->second : &none};
}

// Records the pops and pushes that make the thread's recorded tags `to` (the context
// `context`'s): those past the prefix both share popped, innermost first, then `to`'s
// pushed. Tags past the names kept are in neither (their pops are counted unrecorded).
void record_tags(ThreadContextTags& t, uint64_t context, const OpenTags& to) {
  t.recorded_context = context;
  size_t same = 0;
  while (same < t.recorded.size() && same < to.size() && t.recorded[same].serial == to[same].serial) ++same;
  for (; t.recorded.size() > same; t.recorded.pop_back())
    if (t.recorded.back().named) track_mark(t.recorded.back().name, MarkSource::kTagPop);
  for (size_t i = same; i < to.size(); ++i) {
    if (to[i].named) track_mark(to[i].name, MarkSource::kTagPush);
    t.recorded.push_back(to[i]);
  }
}

// The current context's own tags, made from what it sees if it had none; the recorded
// stack made them first.
OpenTags* own_context_tags(ThreadContextTags& t) {
  const auto [context, seen] = current_tags(t);
  if (context != t.recorded_context) record_tags(t, context, *seen);
  auto it = t.by_context.find(context);
  if (it == t.by_context.end()) {
    OpenTags copy = *seen;  // before the insertion, which may move what `seen` points at
    it = t.by_context.emplace(context, std::move(copy)).first;
  }
  return &it->second;
}

}  // namespace

bool context_tag_push(std::string name) {
  ThreadContextTags* t = ThisThread<ContextTagsTag, ThreadContextTags>::stack();
  if (!t) return false;  // the thread's thread_local destructors have run
  OpenTags* own = own_context_tags(*t);
  const bool named = own->size() < NamedStack::kMaxNamed;
  OpenTag tag{t->next_serial++, named ? name : std::string(), named};
  own->push_back(tag);
  t->recorded.push_back(std::move(tag));
  return track_mark(name, MarkSource::kTagPush);
}

int context_tag_pop() {
  ThreadContextTags* t = ThisThread<ContextTagsTag, ThreadContextTags>::existing();
  if (!t || current_tags(*t).second->empty()) return 0;
  OpenTags* own = own_context_tags(*t);
  const OpenTag tag = std::move(own->back());
  own->pop_back();
  t->recorded.pop_back();
  // A context with none open is forgotten: its address may be another's next.
  if (own->empty()) t->by_context.erase(t->recorded_context);
  if (!tag.named) {
    track_bounded(format::BoundedWhat::kTagNames, NamedStack::kMaxNamed);
    return -1;
  }
  return track_mark(tag.name, MarkSource::kTagPop) ? 1 : -1;
}

void follow_context_tags() {
  ThreadContextTags* t = ThisThread<ContextTagsTag, ThreadContextTags>::existing();
  if (!t || (t->by_context.empty() && t->recorded.empty())) return;
  const auto [context, seen] = current_tags(*t);
  if (context != t->recorded_context) record_tags(*t, context, *seen);
}

}  // namespace cumemtrace::interpose
