// CUDA graph memory (graph_memory.c; trace format 1.9): the device's graph memory pool is
// read from the driver after each launch, destroy and trim and in every snapshot, graph
// allocation nodes are listed and never counted as live bytes, and the pool's reserve is
// taken out of what NVML shows unexplained. Expected figures follow from the simulated
// driver's model (sim/cuda/graph.h): a graph reserves the peak of its nodes' bytes in node
// order, escaped nodes stay used until freed, and only a trim gives the reserve back.
#include <catch2/catch.hpp>

#include "harness.h"
#include "../sizes.h"

using namespace harness;

namespace {

struct GraphMemoryRun : TracedProgram {
  explicit GraphMemoryRun(const std::string& mode) : TracedProgram("graph_memory", mode) {}
};

}  // namespace

TEST_CASE("graph memory: 3 x 1 GiB freed inside the capture reserve 1 GiB at launch, until the trim") {
  const Result plain = run({integration_program("graph_memory"), "inside"});
  REQUIRE(plain.exit_code == 0);
  // The driver's own figures: the three nodes reuse one GiB; destroying keeps it.
  CHECK(plain.out ==
        "instantiated: reserved 0 MiB, used 0 MiB\n"
        "launched: reserved 1024 MiB, used 0 MiB\n"
        "destroyed: reserved 1024 MiB, used 0 MiB\n"
        "trimmed: reserved 0 MiB, used 0 MiB\n"
        "prohibited calls 0\n");
  GraphMemoryRun t("inside");
  CHECK(t.result.out == plain.out);  // and the tracer made no call the capture prohibits
  const auto j = report(t.trace);
  const auto& d = device(j, 0);
  // Live device bytes from the program: the 2 MiB warm-up only; the nodes are not live bytes.
  CHECK(d.at("peak").at("device_bytes") == 2 * MiB);
  CHECK(d.at("end").at("device_bytes") == 0);
  CHECK(d.at("graph_nodes").at("count") == 3);
  CHECK(d.at("graph_nodes").at("bytes") == 3 * GiB);
  REQUIRE(d.at("graph_nodes").at("call_sites").size() >= 1);
  const auto& g = d.at("graph_pool");
  CHECK(g.at("launches") == 1);
  CHECK(g.at("exec_destroys") == 1);
  CHECK(g.at("trims") == 1);
  CHECK(g.at("highest").at("reserved_bytes") == 1 * GiB);
  CHECK(g.at("at_end").at("reserved_bytes") == 0);
  CHECK(g.at("used_at_end") == 0);
  // The peak (the warm-up) came before any reading: no figure stands for it.
  CHECK(g.at("at_peak").is_null());
  // Read right after each call: launch and destroy 1 GiB, trim 0.
  CHECK(t.events(R"(graph-launch \S+ dev=0 [^\n]* size=1073741824 [^\n]* result=0 )") == 1);
  CHECK(t.events(R"(graph-exec-destroy \S+ dev=0 [^\n]* size=1073741824 [^\n]* result=0 )") == 1);
  CHECK(t.events(R"(graph-mem-trim \S+ dev=0 [^\n]* size=0 [^\n]* result=0 )") == 1);
  // The three allocations were captured (flags 8), their frees too.
  CHECK(t.events(R"(alloc async-pool dev=0 [^\n]* size=1073741824 [^\n]* flags=(8|24) )") == 3);
  const Result text = run({cli(), "report", t.trace});
  CHECK(text.out.find("graph memory pool (held in no allocation; read from the driver): reserved") !=
        std::string::npos);
  CHECK(text.out.find("highest read 1.00 GiB (1,073,741,824 B)") != std::string::npos);
  CHECK(text.out.find("graph allocation nodes (virtual addresses of graphs, not live device bytes): 3 nodes of 3.00 "
                      "GiB (3,221,225,472 B)") != std::string::npos);
}

TEST_CASE("graph memory: a capture that is its thread's first allocation gets the device its context was made on") {
  GraphMemoryRun t("cold");
  REQUIRE(t.result.exit_code == 0);
  const auto j = report(t.trace);
  // On device 0 (where cudaStreamCreate made the context), not on the host row.
  CHECK(device(j, 0).at("graph_nodes").at("count") == 3);
  CHECK(device(j, 0).at("graph_nodes").at("bytes") == 3 * GiB);
  // Captured (8) with the device inferred (16).
  CHECK(t.events(R"(alloc async-pool dev=0 [^\n]* size=1073741824 [^\n]* flags=24 )") == 3);
  CHECK(t.events(R"(alloc async-pool dev=-1 )") == 0);
}

TEST_CASE(
    "graph memory: a capture on a thread with no device of its own takes the process's, not a device a call named") {
  // The capturing thread made no CUDA call before: the main thread's device 0 stands in.
  GraphMemoryRun other("other-thread");
  CHECK(other.events(R"(alloc async-pool dev=0 [^\n]* size=1073741824 [^\n]* flags=24 )") == 3);
  CHECK(other.events(R"(alloc async-pool dev=-1 )") == 0);
  // cuMemCreate on device 1 names a device; the thread's context stays on device 0.
  TempDir dir;
  const Result r = traced(dir, {integration_program("graph_memory"), "named-device"},
                          {{"SIMCUDA_DEVICES", "2"}, {"CUMEMTRACE_COMPRESS", "0"}});
  REQUIRE(r.exit_code == 0);
  const std::string trace = only_trace(dir);
  CHECK(dump_events(trace, R"(alloc async-pool dev=0 [^\n]* size=1073741824 [^\n]* flags=24 )") == 3);
  CHECK(dump_events(trace, R"(alloc vmm-physical dev=1 [^\n]* size=2097152 )") == 1);
}

TEST_CASE("graph memory: 3 x 1 GiB escaping the graph hold 3 GiB after they are freed, until the trim") {
  const Result plain = run({integration_program("graph_memory"), "escape"});
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out ==
        "instantiated: reserved 0 MiB, used 0 MiB\n"
        "launched: reserved 3072 MiB, used 3072 MiB\n"
        "freed: reserved 3072 MiB, used 0 MiB\n"
        "destroyed: reserved 3072 MiB, used 0 MiB\n"
        "trimmed: reserved 0 MiB, used 0 MiB\n"
        "prohibited calls 0\n");
  GraphMemoryRun t("escape");
  CHECK(t.result.out == plain.out);
  const auto j = report(t.trace);
  const auto& d = device(j, 0);
  CHECK(d.at("peak").at("device_bytes") == 2 * MiB);
  CHECK(d.at("graph_nodes").at("count") == 3);
  CHECK(d.at("counts").at("unknown_frees") == 0);  // the frees after the launch are the nodes'
  CHECK(j.at("leaks").empty());
  const auto& g = d.at("graph_pool");
  CHECK(g.at("highest").at("reserved_bytes") == 3 * GiB);
  CHECK(g.at("at_end").at("reserved_bytes") == 0);
  CHECK(t.events(R"(graph-launch \S+ dev=0 [^\n]* size=3221225472 )") == 1);
  CHECK(t.events(R"(graph-exec-destroy \S+ dev=0 [^\n]* size=3221225472 )") == 1);
}

TEST_CASE("graph memory: the pool's reserve is its own part of NVML's figure, not untracked") {
  GraphMemoryRun t("held");
  const auto j = report(t.trace);
  const auto& d = device(j, 0);
  // The peak: 2 MiB warm-up + 64 MiB, sampled right after it while the pool held 1 GiB.
  CHECK(d.at("peak").at("device_bytes") == 66 * MiB);
  const auto& n = d.at("nvml_at_peak");
  REQUIRE(n.is_object());
  CHECK(n.at("at_peak") == true);
  CHECK(n.at("graph_pool") == 1 * GiB);
  // NVML (the sim's) = 66 MiB of granules + 512 MiB context + 1 GiB graph pool: nothing else.
  CHECK(n.at("process_used") == 66 * MiB + 512 * MiB + 1 * GiB);
  CHECK(n.at("untracked") == 0);
  const auto& g = d.at("graph_pool");
  CHECK(g.at("at_peak").at("reserved_bytes") == 1 * GiB);
  CHECK(g.at("at_end").at("reserved_bytes") == 1 * GiB);
  CHECK(g.at("driver_reserved_high") == 1 * GiB);
  const Result text = run({cli(), "report", t.trace});
  CHECK(text.out.find(" + graph memory pool 1.00 GiB + untracked 0 B") != std::string::npos);
}

TEST_CASE("graph memory: memory nodes added directly, through the symbol, dlsym and cuGetProcAddress") {
  const Result plain = run({integration_program("graph_memory"), "paths"});
  REQUIRE(plain.exit_code == 0);
  // Two 256 MiB nodes, the first freed in the graph: 512 MiB reserved, the second used.
  CHECK(plain.out ==
        "symbol launched: reserved 512 MiB, used 256 MiB\n"
        "symbol trimmed: reserved 0 MiB, used 0 MiB\n"
        "dlsym launched: reserved 512 MiB, used 256 MiB\n"
        "dlsym trimmed: reserved 0 MiB, used 0 MiB\n"
        "cuGetProcAddress launched: reserved 512 MiB, used 256 MiB\n"
        "cuGetProcAddress trimmed: reserved 0 MiB, used 0 MiB\n"
        "prohibited calls 0\n");
  GraphMemoryRun t("paths");
  CHECK(t.result.out == plain.out);
  const auto j = report(t.trace);
  const auto& d = device(j, 0);
  // Each way once: 2 alloc nodes, 1 free node, 1 launch, 1 destroy, 1 trim per path.
  CHECK(d.at("graph_nodes").at("count") == 6);
  CHECK(d.at("graph_nodes").at("bytes") == 6 * 256 * MiB);
  CHECK(d.at("graph_pool").at("launches") == 3);
  CHECK(d.at("graph_pool").at("exec_destroys") == 3);
  CHECK(d.at("graph_pool").at("trims") == 3);
  CHECK(d.at("graph_pool").at("highest").at("reserved_bytes") == 512 * MiB);
  // Alloc nodes are flagged captured + graph node (8 | 64), with the graph as handle.
  CHECK(t.events(R"(alloc async-pool dev=0 [^\n]* size=268435456 [^\n]* flags=72 )") == 6);
  CHECK(t.events(R"(free \S+ dev=\S+ [^\n]* flags=72 )") == 3);
  CHECK(t.events(R"(graph-launch \S+ dev=0 [^\n]* size=536870912 )") == 3);
  CHECK(t.events(R"(graph-mem-trim \S+ dev=0 [^\n]* size=0 )") == 3);
  // The escaped node freed by the program after each launch is the node's, not unknown.
  CHECK(d.at("counts").at("unknown_frees") == 0);
}

TEST_CASE("graph memory: a graph launched into a capture is recorded without asking the driver anything") {
  const Result plain = run({integration_program("graph_memory"), "nested"});
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out ==
        "captured: reserved 0 MiB, used 0 MiB\n"
        "launched: reserved 1024 MiB, used 0 MiB\n"
        "prohibited calls 0\n");
  GraphMemoryRun t("nested");
  CHECK(t.result.out == plain.out);  // no call of the tracer's during the captures
  // The launch into the capture: captured + device inferred (8 | 16), the pool not read.
  CHECK(t.events(R"(graph-launch \S+ dev=0 [^\n]* size=18446744073709551615 [^\n]* result=0 flags=24 )") == 1);
  // The launch of the outer graph, after the capture: read.
  CHECK(t.events(R"(graph-launch \S+ dev=0 [^\n]* size=1073741824 [^\n]* result=0 flags=0 )") == 1);
  const auto j = report(t.trace);
  CHECK(device(j, 0).at("graph_pool").at("launches") == 2);
  CHECK(device(j, 0).at("graph_pool").at("highest").at("reserved_bytes") == 1 * GiB);
}
