// Memory per function (`report --by function`; docs/cli.md, "Memory per function"): for
// each of the program's own functions — a Python function the call-site rule calls the
// user's (call_site_rule.h), or a native function outside CUDA, the tracer, allocators,
// framework dispatch, the interpreter and the C and C++ runtimes (libc, ld.so, libstdc++,
// libgcc_s, libm, libdl, and `_start`) — what the allocations made with it on the stack
// did (inclusive, as cProfile's cumulative time; a recursive function counts an
// allocation once):
//   allocations, bytes allocated — successful allocations of device memory (a capture's
//     graph nodes are not);
//   peak — the most bytes those allocations held at once, over the run;
//   held after — their bytes still live at the trace's end.
// Calls are not counted: the trace sees allocations, not calls and returns.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "cumemtrace/rules/address_map.h"
#include "read/reader.h"
#include "stacks/stacks.h"

namespace cumemtrace {

struct FunctionRow {
  std::string name;  // "file.py:function" or "module:function"
  bool python = false;
  uint64_t allocations = 0;
  uint64_t bytes_allocated = 0;
  uint64_t peak_bytes = 0;
  uint64_t held_after_bytes = 0;
};

// Fed every event of the report's first pass (reports/sections/first_pass.h), in file order.
class FunctionScan {
 public:
  FunctionScan(const Trace& trace, const Stacks& stacks) : trace_(trace), stacks_(stacks) {}
  void observe(const Event& e);
  // Rows by bytes allocated, largest first.
  std::vector<FunctionRow> finish();

 private:
  const std::vector<uint32_t>& functions_of(uint32_t stack_id, uint32_t python_stack_id);
  uint32_t row_of(const std::string& name, bool python);

  const Trace& trace_;
  const Stacks& stacks_;
  std::vector<FunctionRow> rows_;
  std::vector<uint64_t> live_;  // per row: bytes its allocations hold now
  std::unordered_map<std::string, uint32_t> row_index_;
  // (stack << 32 | Python stack) -> rows; node-based, so a Held's pointer stays good
  std::unordered_map<uint64_t, std::vector<uint32_t>> functions_;
  struct Held {
    uint64_t bytes;
    const std::vector<uint32_t>* rows;
  };
  AddressMap<Held> held_;  // a live allocation (address, or handle) -> its rows
};

}  // namespace cumemtrace
