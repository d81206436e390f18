// Tags (api.h: cumemtrace_tag_push) kept per Python context: a tag belongs to the
// contextvars.Context current on its thread when it was pushed (asyncio runs each task in
// one of its own) and counts what the thread allocates only while that context, or one
// entered from it, is current (docs/cli.md, 'Tags'). A thread without Python, or a version
// whose thread state is not known here, has one context: tags follow the thread.
// The trace keeps one tag stack per thread (kTagPush/kTagPop marks): an event that finds
// another context current than the one the recorded stack is of first records the pops and
// pushes that make it that context's.
#pragma once

#include <string>

namespace cumemtrace::interpose {

// Pushes `name` in the current context. False when not recorded.
bool context_tag_push(std::string name);

// Pops the current context's innermost tag: 1 recorded, 0 none open, -1 not recorded (past
// the names kept, then counted by track_bounded; or not tracing).
int context_tag_pop();

// Before an event of the calling thread (outside the tracker's lock): the thread's recorded
// tags made the current context's. Nothing to do, and nothing read, on a thread that never
// pushed a tag.
void follow_context_tags();

}  // namespace cumemtrace::interpose
