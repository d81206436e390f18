// Runs the test programs (test/programs) against the simulated driver (sim/), with and
// without libcumemtrace.so, and reads the traces back through the `cumemtrace` CLI, the
// way a user would.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace harness {

using Env = std::map<std::string, std::string>;

struct Result {
  int exit_code = -1;  // exit status, or 128 + signal
  std::string out, err;
};

// A fresh private directory, removed when the object goes away.
struct TempDir {
  TempDir();
  ~TempDir();
  std::string path;
  std::vector<std::string> files(const std::string& prefix = "") const;
};

std::string program(const std::string& name);  // build/test/programs/NAME
std::string cli();                             // build/bin/cumemtrace
std::string preload_library();                 // build/lib/libcumemtrace.so

// Runs argv with the current environment plus `env` (LD_LIBRARY_PATH=build/sim always).
// `signal_after_ms` > 0 sends `sig` after that long.
Result run(const std::vector<std::string>& argv, const Env& env = {}, int signal_after_ms = 0, int sig = 9);

// Runs argv as `run` does and sends `sig` once `ready(stdout so far)` holds, polled every
// 20 ms (at most 120 s), so that a test kills a program at a state it reached, not after a
// time a loaded machine may not keep.
Result run_until(const std::vector<std::string>& argv, const Env& env,
                 const std::function<bool(const std::string&)>& ready, int sig);

// Runs a test program under LD_PRELOAD with CUMEMTRACE_OUTPUT=DIR/trace-%p.trace.
Result traced(const TempDir& dir, const std::vector<std::string>& argv, Env env = {}, int signal_after_ms = 0);

// The traces in `dir` (exactly one expected unless said otherwise).
std::string only_trace(const TempDir& dir);

nlohmann::json report(const std::string& trace);       // cumemtrace report --json
nlohmann::json live_at_end(const std::string& trace);  // cumemtrace live --at <max> --json
// Event lines of `cumemtrace dump TRACE` (uncompressed traces show every record) that match `pattern`.
size_t dump_events(const std::string& trace, const std::string& pattern);
// How many times `text` occurs in `cumemtrace dump` of the one trace in `dir` named PREFIX…,
// read while it may still be written (what its flushes have sealed); 0 without one.
size_t flushed_events(const TempDir& dir, const std::string& prefix, const std::string& text);
// A program built beside the integration tests (test/integration/NAME.c).
std::string integration_program(const std::string& name);
// The same for a program or library built there: build/test/integration/NAME.
inline std::string here(const std::string& name) { return integration_program(name); }
// 1 GiB simulated devices with no context cost: the figures programs/torch_blocks.c's
// comment works out hold exactly. `more` adds to (or overrides) the environment.
inline Env one_gib_device(Env more = {}) {
  more["SIMCUDA_CONTEXT_BYTES"] = "0";
  more["SIMCUDA_CAPACITY"] = std::to_string(uint64_t(1) << 30);
  return more;
}
// Whether `text` occurs anywhere in `out`.
inline bool has(const std::string& out, const std::string& text) { return out.find(text) != std::string::npos; }

// A program built beside the integration tests, run traced once with MODE as its argument,
// uncompressed (so that `dump` shows every event record). Throws when it does not exit 0.
struct TracedProgram {
  TracedProgram(const std::string& name, const std::string& mode);
  TempDir dir;
  std::string trace;
  Result result;
  size_t events(const std::string& pattern) const { return dump_events(trace, pattern); }
};
const nlohmann::json& device(const nlohmann::json& j, int ordinal);  // devices[] entry

}  // namespace harness
