// A framework's own limit reached (docs/cli.md, "A framework's limit"; framework_limit.h):
// an error exit with no failed allocation and a device peak within 1 % of XLA's limit.
// Figures by hand: an 80 GiB device (85,899,345,920 B) at XLA's fraction 0.75 gives a limit
// of 64,424,509,440 B (60.00 GiB); 1 % of it is 644,245,094.4 B, so a peak 644,245,094 B
// below it (63,780,264,346 B, 59.40 GiB) is within and one byte more below is not.
#include <sstream>

#include "catch.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "reports/report.h"
#include "report_both.h"
#include "sizes.h"
#include "trace_builder.h"

using namespace cumemtrace;
using cumemtrace::test::report_both;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;

namespace {

constexpr uint64_t kLimit = 64'424'509'440;  // 0.75 x 80 GiB
constexpr uint64_t kInside = kLimit - 644'245'094;
constexpr uint64_t kOutside = kLimit - 644'245'095;

const std::vector<std::string> kJaxOnDemand = {"XLA_PYTHON_CLIENT_PREALLOCATE=false",
                                               "XLA_PYTHON_CLIENT_MEM_FRACTION=0.75"};

// A JAX process of `environment` that peaked at `peak` on an 80 GiB device and exited with
// `status` (-1: a 1.14 End, no status), with a failed 2 GiB request first if `failed`.
TraceBuilder jax_trace(const std::vector<std::string>& environment, uint64_t peak, int32_t status,
                       bool failed = false) {
  TraceBuilder b;
  b.process_with_environment(environment).device(0, 80 * GiB).api(1, "cuMemAlloc_v2");
  if (failed) b.failed(5, 2 * GiB, 2);
  b.alloc(10, 0x7f0000000000, peak);
  return status < 0 ? b.end(100) : b.exit_end(100, status);
}

std::string limit_text(const Report& r) {
  std::ostringstream out;
  write_text(out, r);
  return out.str();
}

}  // namespace

TEST_CASE("framework limit: the trace keeps the framework variables and the exit status") {
  const Trace t = parse_trace(jax_trace(kJaxOnDemand, kInside, 1).vec(), "t.trace");
  REQUIRE(t.process);
  REQUIRE(t.process->environment.size() == 2);
  CHECK(t.process->environment[0] == std::pair<std::string, std::string>("XLA_PYTHON_CLIENT_PREALLOCATE", "false"));
  CHECK(*t.process->environment_value("XLA_PYTHON_CLIENT_MEM_FRACTION") == "0.75");
  REQUIRE(t.end);
  CHECK(t.end->exit_status == 1);
  CHECK_FALSE(t.end->exec);
  const Trace old = parse_trace(jax_trace(kJaxOnDemand, kInside, -1).vec(), "t.trace");
  CHECK(old.end->exit_status == -1);  // a 1.14 End says none
}

TEST_CASE("framework limit: a peak within 1 % of XLA's limit at an error exit is the limit reached") {
  const Report r = report_both(jax_trace(kJaxOnDemand, kInside, 1).vec(), "t.trace");
  REQUIRE(r.framework_limit);
  const FrameworkLimit& l = *r.framework_limit;
  CHECK(l.framework == "XLA");
  CHECK(l.device == 0);
  CHECK(l.peak_bytes == 63'780'264'346);
  CHECK(l.limit_bytes == kLimit);
  CHECK(l.total_bytes == 80 * GiB);
  CHECK_FALSE(l.preallocated);
  CHECK(l.exit_status == 1);
  CHECK(l.message == "peak 59.40 GiB of XLA's limit 60.00 GiB (XLA_PYTHON_CLIENT_MEM_FRACTION=0.75 of 80.00 GiB)");
  CHECK(limit_text(r).find("  failed allocations: none\n  framework limit reached on device 0: peak 59.40 GiB of XLA's "
                           "limit 60.00 GiB (XLA_PYTHON_CLIENT_MEM_FRACTION=0.75 of 80.00 GiB); exit status 1\n") !=
        std::string::npos);
  const auto j = to_json(r);
  CHECK(j.at("exit_status") == 1);
  CHECK(j.at("process").at("environment").at("XLA_PYTHON_CLIENT_MEM_FRACTION") == "0.75");
  const auto& f = j.at("framework_limit");
  CHECK(f.at("framework") == "XLA");
  CHECK(f.at("device") == 0);
  CHECK(f.at("peak_bytes") == 63'780'264'346);
  CHECK(f.at("limit_bytes") == kLimit);
  CHECK(f.at("total_bytes") == 80 * GiB);
  CHECK(f.at("fraction") == 0.75);
  CHECK(f.at("setting") == "XLA_PYTHON_CLIENT_MEM_FRACTION=0.75");
  CHECK(f.at("preallocated") == false);
}

TEST_CASE("framework limit: just outside 1 %, a clean exit, an unknown status or a failed allocation say nothing") {
  const Report outside = report_both(jax_trace(kJaxOnDemand, kOutside, 1).vec(), "t.trace");
  CHECK_FALSE(outside.framework_limit);
  CHECK(limit_text(outside).find("framework limit") == std::string::npos);
  CHECK(to_json(outside).at("framework_limit").is_null());
  CHECK_FALSE(report_both(jax_trace(kJaxOnDemand, kInside, 0).vec(), "t.trace").framework_limit);
  CHECK_FALSE(report_both(jax_trace(kJaxOnDemand, kInside, -1).vec(), "t.trace").framework_limit);
  // A failed CUDA allocation: the out-of-memory diagnosis speaks, not this rule.
  const Report failed = report_both(jax_trace(kJaxOnDemand, kInside, 1, true).vec(), "t.trace");
  CHECK(failed.failed_total == 1);
  CHECK_FALSE(failed.framework_limit);
  // Above the limit by 1 % (644,245,094 B) it is still the limit reached: |peak - limit|.
  CHECK(report_both(jax_trace(kJaxOnDemand, kLimit + 644'245'094, 1).vec(), "t.trace").framework_limit);
  CHECK_FALSE(report_both(jax_trace(kJaxOnDemand, kLimit + 644'245'095, 1).vec(), "t.trace").framework_limit);
}

TEST_CASE("framework limit: XLA's default fraction, found by its module, and the platform allocator") {
  // No variable set: XLA is known by its module, its fraction 0.75 and preallocation on.
  TraceBuilder b;
  b.process_with_environment({}).device(0, 80 * GiB).api(1, "cuMemAlloc_v2");
  b.module(0, 0x700000, 0x800000, "/usr/lib/python3/site-packages/jaxlib/xla_extension.so");
  b.alloc(10, 0x7f0000000000, kLimit).exit_end(100, 1);
  const Report r = report_both(b.vec(), "t.trace");
  REQUIRE(r.framework_limit);
  CHECK(r.framework_limit->preallocated);
  CHECK(r.framework_limit->message ==
        "peak 60.00 GiB of XLA's limit 60.00 GiB (XLA_PYTHON_CLIENT_MEM_FRACTION unset: 0.75 of 80.00 GiB)");
  CHECK(limit_text(r).find("(XLA_PYTHON_CLIENT_MEM_FRACTION unset: 0.75 of 80.00 GiB); exit status 1, the limit "
                           "preallocated at start\n") != std::string::npos);
  // Neither a variable nor a module of JAX's: no framework to speak of.
  TraceBuilder plain;
  plain.process_with_environment({}).device(0, 80 * GiB).api(1, "cuMemAlloc_v2");
  plain.alloc(10, 0x7f0000000000, kLimit).exit_end(100, 1);
  CHECK_FALSE(report_both(plain.vec(), "t.trace").framework_limit);
  // The platform allocator takes memory on demand, with no limit of its own.
  CHECK_FALSE(
      report_both(jax_trace({"XLA_PYTHON_CLIENT_ALLOCATOR=platform"}, kLimit, 1).vec(), "t.trace").framework_limit);
  // A fraction of 0.5 moves the limit to 40 GiB.
  const Report half = report_both(jax_trace({"XLA_PYTHON_CLIENT_MEM_FRACTION=0.5"}, 40 * GiB, 1).vec(), "t.trace");
  REQUIRE(half.framework_limit);
  CHECK(half.framework_limit->limit_bytes == 40 * GiB);
}

// No End record (the process killed, or dead of a fatal signal): no exit status. An
// on-demand limit met by the peak is said, with what is not known; a preallocated one is the
// peak from the start and says nothing of the end.
TEST_CASE("framework limit: with no End record only an on-demand limit is said, its end not known") {
  const auto died = [](const std::vector<std::string>& environment, uint64_t peak) {
    TraceBuilder b;
    b.process_with_environment(environment).device(0, 80 * GiB).api(1, "cuMemAlloc_v2");
    b.alloc(10, 0x7f0000000000, peak);
    return report_both(b.vec(), "t.trace");
  };
  const Report r = died(kJaxOnDemand, kInside);
  REQUIRE(r.framework_limit);
  CHECK(r.framework_limit->exit_status == -1);
  CHECK_FALSE(r.framework_limit->trace_ended);
  CHECK(r.framework_limit->limit_bytes == kLimit);
  CHECK(limit_text(r).find("  failed allocations: none\n  framework limit reached on device 0: peak 59.40 GiB of XLA's "
                           "limit 60.00 GiB (XLA_PYTHON_CLIENT_MEM_FRACTION=0.75 of 80.00 GiB); the trace has no end "
                           "(the process was killed or died of a signal): whether the limit ended it is not known\n") !=
        std::string::npos);
  const auto j = to_json(r);
  CHECK(j.at("exit_status").is_null());
  CHECK(j.at("framework_limit").at("trace_ended") == false);
  CHECK(to_json(report_both(jax_trace(kJaxOnDemand, kInside, 1).vec(), "t.trace"))
            .at("framework_limit")
            .at("trace_ended") == true);
  // Preallocated (XLA_PYTHON_CLIENT_PREALLOCATE unset): its peak is the limit, taken at start.
  CHECK_FALSE(died({"XLA_PYTHON_CLIENT_MEM_FRACTION=0.75"}, kLimit).framework_limit);
  CHECK_FALSE(died(kJaxOnDemand, kOutside).framework_limit);
}
