// Where each CPython version keeps a thread's current contextvars.Context (python_layout.h:
// tstate_context), and the context reader (python_walk.h: context_chain) on a thread state
// and contexts built by hand in 3.12's layout.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "stacks/python_layout.h"
#include "fake_memory.h"
#include "stacks/python_walk.h"

using namespace cumemtrace::interpose;

namespace {

// A _Py_DebugOffsets image of 3.13 (71 words: the cookie, then u64s in the order of
// Include/internal/pycore_runtime.h). The thread state's fields are where 3.13's
// Include/cpython/pystate.h puts them, by hand: prev 0, next 8, interp 16, _status 32,
// current_frame 72, thread_id 152, native_thread_id 160, datastack_chunk 232; its size is
// 288 (datastack_top 240, datastack_limit 248, exc_state 256..272, previous_executor 272,
// dict_global_version 280). The other structs' fields only have to lie inside their sizes.
std::vector<uint64_t> image_313() {
  std::vector<uint64_t> w(71, 8);
  std::memcpy(w.data(), "xdebugpy", 8);
  w[1] = 0x030D00F0;  // 3.13.0
  w[2] = 0;           // not free-threaded
  for (int size_at : {3, 6, 28, 34, 44, 46, 50, 53, 56, 59, 61, 64, 67}) w[size_t(size_at)] = 512;
  const uint64_t ts[] = {288, 0, 8, 16, 72, 152, 160, 232, 32};  // size, prev, next, interp, current_frame, ...
  std::memcpy(&w[19], ts, sizeof ts);
  w[66] = 32;  // bytes ob_sval
  w[70] = 40;  // sizeof(PyASCIIObject)
  return w;
}

PyLayout from_image(const std::vector<uint64_t>& w) {
  PyLayout l;
  REQUIRE(layout_from_debug_offsets(w.data(), w.size() * 8, l));
  return l;
}

}  // namespace

TEST_CASE("PyThreadState.context is where each version's header puts it") {
  PyLayout l;
  REQUIRE(builtin_layout(0x030B07F0, l));
  CHECK(l.tstate_context == 224);  // 3.11: offsetof
  // 3.12: 208, the sum written in python_layout.cpp; the same in every 3.12 release.
  for (uint32_t v : {0x030C00F0u, 0x030C07F0u}) {
    REQUIRE(builtin_layout(v, l));
    CHECK(l.tstate_context == 208);
    CHECK(l.context_prev == 16);  // PyObject_HEAD: ob_refcnt, ob_type
  }
  REQUIRE(builtin_layout(0x030A0DF0, l));
  CHECK(l.tstate_context == kNoOffset);  // 3.10: not known here

  std::vector<uint64_t> w = image_313();
  CHECK(from_image(w).tstate_context == 208);  // 3.13: the sum written in python_layout.cpp
  CHECK(from_image(w).context_prev == 16);
  SECTION("a 3.13 whose current_frame is elsewhere: the context is not believed") {
    w[23] = 80;
    CHECK(from_image(w).tstate_current_frame == 80);
    CHECK(from_image(w).tstate_context == kNoOffset);
  }
  SECTION("a 3.13 whose thread_id is elsewhere") {
    w[24] = 160;
    CHECK(from_image(w).tstate_context == kNoOffset);
  }
  SECTION("a 3.13 whose thread state ends before the context's word (208 + 8 > 212)") {
    w[19] = 212;
    CHECK(from_image(w).tstate_context == kNoOffset);
  }
}

TEST_CASE("a 3.12 thread state gives its contexts, current first, out along ctx_prev") {
  PyLayout l;
  REQUIRE(builtin_layout(0x030C07F0, l));
  std::vector<uint8_t> context_type(64), other_type(64), tstate(256), inner(64), outer(64);
  const PyTypes types{0, 0, 0, 0, addr(context_type)};
  put(inner, 8, addr(context_type));  // ob_type
  put(outer, 8, addr(context_type));
  put(inner, 16, addr(outer));  // ctx_prev: outer was current when inner was entered
  put(outer, 16, uint64_t(0));
  put(tstate, 208, addr(inner));
  uint64_t got[4] = {};

  REQUIRE(context_chain(l, types, addr(tstate), got, 4) == 2);
  CHECK(got[0] == addr(inner));
  CHECK(got[1] == addr(outer));
  SECTION("at most cap") {
    REQUIRE(context_chain(l, types, addr(tstate), got, 1) == 1);
    CHECK(got[0] == addr(inner));
  }
  SECTION("an object of another type ends the chain (a freed context)") {
    put(outer, 8, addr(other_type));
    REQUIRE(context_chain(l, types, addr(tstate), got, 4) == 1);
    CHECK(got[0] == addr(inner));
  }
  SECTION("no context yet") {
    put(tstate, 208, uint64_t(0));
    CHECK(context_chain(l, types, addr(tstate), got, 4) == 0);
  }
  SECTION("the context at 3.11's offset (224) is not 3.12's") {
    put(tstate, 208, uint64_t(0));
    put(tstate, 224, addr(inner));
    CHECK(context_chain(l, types, addr(tstate), got, 4) == 0);
  }
  SECTION("a cycle stops at cap") {
    put(outer, 16, addr(inner));
    CHECK(context_chain(l, types, addr(tstate), got, 4) == 4);
  }
  SECTION("a version whose thread state is not known here gives none") {
    REQUIRE(builtin_layout(0x030A0DF0, l));
    CHECK(context_chain(l, types, addr(tstate), got, 4) == 0);
  }
}
