// The job view's figures (analysis/reports/job/job.h) from hand-made reports: the low median of an
// even count, two ranks, a site's Python name, the tolerance's edge, GPUs without a UUID, the job id's sources.
#include "reports/job/job.h"
#include "render/job_view.h"

#include <cstring>
#include <sstream>

#include "catch.h"
#include "report_both.h"
#include "sizes.h"
#include "trace_builder.h"

using namespace cumemtrace;

namespace {

Report process(uint32_t pid, int32_t rank, int32_t device, uint64_t peak, const std::string& host = "h1") {
  Report r;
  r.path = "trace-" + std::to_string(pid);
  r.complete = true;
  ProcessInfo p;
  p.pid = pid;
  p.rank = rank;
  p.hostname = host;
  r.process = p;
  DeviceReport d;
  d.device = device;
  d.total_bytes = 1024 * MiB;
  d.peak_bytes = peak;
  d.counts.allocs = 1;
  d.counts.contexts = 1;
  r.devices.push_back(d);
  return r;
}

}  // namespace

TEST_CASE("job: the median of an even count is the lower middle peak, and the tolerance is inclusive") {
  // Peaks 100, 110, 120, 200 MiB: low median 110 MiB. 100 is -9.09 %, 120 +9.09 %,
  // 200 +81.82 %.
  const std::vector<Report> reps = {process(1, 0, 0, 100 * MiB), process(2, 1, 1, 110 * MiB),
                                    process(3, 2, 2, 120 * MiB), process(4, 3, 3, 200 * MiB)};
  const std::vector<std::vector<DeviceInfo>> no_uuids(4);
  const Job j = build_job(reps, no_uuids, 9.1);
  CHECK(j.median_peak_bytes == 110 * MiB);
  CHECK(j.max_imbalance_percent == Approx(90.0 / 110 * 100));
  REQUIRE(j.findings.size() == 1);  // 100 and 120 MiB are within 9.1 %
  CHECK(j.findings[0].kind == JobFinding::Kind::kRankImbalance);
  CHECK(j.processes[j.findings[0].process].rank == 3);
  CHECK(j.processes[j.findings[0].median_process].rank == 1);
  CHECK(build_job(reps, no_uuids, 9.0).findings.size() == 3);
  // No UUID: one GPU per (host, ordinal), never merged across processes' different ordinals.
  CHECK(j.gpus.size() == 4);
}

TEST_CASE("job: of two ranks only the heavier is flagged, and its site is named by its Python line") {
  // 256 and 768 MiB: the low median is 256 MiB, so rank 1 is +200 % and rank 0 is 0 %.
  std::vector<Report> reps = {process(1, 0, 0, 256 * MiB), process(2, 1, 1, 768 * MiB)};
  SiteRow site;
  site.node = 7;
  site.device = 1;
  site.bytes = 512 * MiB;
  site.frames.push_back(Frame{0x1000, "libtorch_cuda.so", "at::native::empty_cuda", "Empty.cpp", 40});
  site.python_frames.push_back(Frame{0, "", "load_extra", "/home/u/train.py", 12, true});
  reps[1].devices[0].top_sites.push_back(site);
  const Job j = build_job(reps, std::vector<std::vector<DeviceInfo>>(2), 10);
  CHECK(j.median_peak_bytes == 256 * MiB);
  REQUIRE(j.findings.size() == 1);
  CHECK(j.processes[j.findings[0].process].rank == 1);
  CHECK(j.findings[0].percent == Approx(200.0));
  REQUIRE(j.findings[0].sites.size() == 1);
  CHECK(j.findings[0].sites[0].site == "load_extra (train.py:12)");
  CHECK(j.findings[0].sites[0].bytes == 512 * MiB);
  CHECK(j.findings[0].sites[0].median_bytes == 0);
  // The same two without ranks (a producer and its consumer): nothing to compare.
  reps[0].process->rank = reps[1].process->rank = -1;
  CHECK(build_job(reps, std::vector<std::vector<DeviceInfo>>(2), 10).findings.empty());
}

TEST_CASE("job: a site without a symbol is named by its module and offset, the same in ranks loaded apart") {
  // Rank 1's stripped library was loaded at 0x7f5500000000, rank 0's at 0x7f0000000000: the
  // frame's offset from the load base (0x1234) names it in both (stacks.h: describe's kName).
  std::vector<Report> reps = {process(1, 0, 0, 256 * MiB), process(2, 1, 1, 768 * MiB)};
  for (int rank = 0; rank < 2; ++rank) {
    SiteRow site;
    site.node = 7;
    site.device = rank;
    site.bytes = rank ? 612 * MiB : 100 * MiB;
    site.frames.push_back(Frame{rank ? 0x7f5500001234ull : 0x7f0000001234ull, "libstripped.so", "", "", 0});
    site.frames.back().offset = 0x1234;
    reps[size_t(rank)].devices[0].top_sites.push_back(site);
  }
  const Job j = build_job(reps, std::vector<std::vector<DeviceInfo>>(2), 10);
  REQUIRE(j.findings.size() == 1);
  REQUIRE(j.findings[0].sites.size() == 1);
  CHECK(j.findings[0].sites[0].site == "libstripped.so+0x1234");
  CHECK(j.findings[0].sites[0].bytes == 612 * MiB);
  CHECK(j.findings[0].sites[0].median_bytes == 100 * MiB);  // rank 0's row, matched by that name
}

TEST_CASE(
    "job: GPUs without a UUID merge by host and ordinal only, and oversubscription needs the sum past the total") {
  // Two processes on ordinal 0 of host h1 (600 + 500 MiB > 1 GiB), one on ordinal 0 of h2.
  const std::vector<Report> reps = {process(1, 0, 0, 600 * MiB), process(2, 1, 0, 500 * MiB),
                                    process(3, 2, 0, 600 * MiB, "h2")};
  const Job j = build_job(reps, std::vector<std::vector<DeviceInfo>>(3), 1000);
  REQUIRE(j.gpus.size() == 2);
  CHECK(j.gpus[0].peak_sum_bytes == 1100 * MiB);
  CHECK(j.gpus[1].host == "h2");
  REQUIRE(j.findings.size() == 1);
  CHECK(j.findings[0].kind == JobFinding::Kind::kDeviceOversubscribed);
  CHECK(j.findings[0].gpu == 0);
  CHECK(finding_kind_name(j.findings[0].kind) == "device-oversubscribed");
}

TEST_CASE("job id: SLURM's first, then torchelastic's run id, then the rendezvous address") {
  ProcessInfo p;
  CHECK(job_id_of(p).empty());
  p.launcher = {{"MASTER_ADDR", "node1"}, {"MASTER_PORT", "29500"}};
  CHECK(job_id_of(p) == "rendezvous:node1:29500");
  p.launcher.emplace_back("TORCHELASTIC_RUN_ID", "abc");
  CHECK(job_id_of(p) == "torchelastic:abc");
  p.launcher.emplace_back("SLURM_JOB_ID", "12");
  CHECK(job_id_of(p) == "slurm:12");
  p.launcher.emplace_back("SLURM_STEP_ID", "3");
  CHECK(job_id_of(p) == "slurm:12.3");
}

TEST_CASE("job: processes without a rank are not compared, and the findings line says so") {
  // A producer and its consumer (no RANK): 256 and 2 MiB on one device, no rank-imbalance.
  const std::vector<Report> reps = {process(1, -1, 0, 256 * MiB), process(2, -1, 0, 2 * MiB)};
  const Job j = build_job(reps, std::vector<std::vector<DeviceInfo>>(2), 10.0);
  CHECK(j.ranked_processes == 0);
  CHECK(j.findings.empty());
  std::ostringstream text;
  write_job_text(text, j);
  CHECK(
      text.str().find("Findings (ranks not compared: 0 of 2 processes have a rank, RANK set by the launcher, 0 of them "
                      "with device memory):\n  none\n") != std::string::npos);
  CHECK(text.str().find("median peak") == std::string::npos);
  CHECK(job_to_json(j).at("median_peak_bytes").is_null());
  // Two ranks, one of them with a context only (no device memory): still no comparison.
  std::vector<Report> two = {process(1, 0, 0, 256 * MiB), process(2, 1, 0, 0)};
  two[1].devices[0].counts.allocs = 0;
  const Job k = build_job(two, std::vector<std::vector<DeviceInfo>>(2), 10.0);
  CHECK(k.ranked_processes == 2);
  CHECK(k.compared_ranks == 1);
}

TEST_CASE("job: one process is said in the singular, in the heading and in the findings line") {
  // Before: "Job: 1 processes" and "0 of 1 processes have a rank".
  const Job j = build_job({process(1, -1, 0, 256 * MiB)}, std::vector<std::vector<DeviceInfo>>(1), 10.0);
  std::ostringstream text;
  write_job_text(text, j);
  CHECK(text.str().starts_with("Job: 1 process\n"));
  CHECK(text.str().find("Findings (ranks not compared: 0 of 1 process has a rank, RANK set by the launcher, 0 of them "
                        "with device memory):\n") != std::string::npos);
}

namespace {

// `process` above, live from `start_s` to `end_s` seconds of the host's monotonic clock.
Report lived(uint32_t pid, uint64_t peak, uint64_t start_s, uint64_t end_s) {
  Report r = process(pid, -1, 0, peak);
  r.start_ns = start_s * 1000000000ull;
  r.duration_ns = (end_s - start_s) * 1000000000ull;
  return r;
}

}  // namespace

TEST_CASE("job: processes on one GPU whose lifetimes never overlapped are never oversubscribed") {
  // 600 MiB from 1 to 2 s, then 500 MiB from 3 to 4 s on the same 1 GiB GPU: 1,100 MiB of
  // peaks, never more than 600 MiB of them live at once.
  const Job j =
      build_job({lived(1, 600 * MiB, 1, 2), lived(2, 500 * MiB, 3, 4)}, std::vector<std::vector<DeviceInfo>>(2), 10);
  REQUIRE(j.gpus.size() == 1);
  CHECK(j.gpus[0].peak_sum_bytes == 1100 * MiB);
  CHECK(j.gpus[0].live_together_bytes == 600 * MiB);
  CHECK(j.gpus[0].live_together == 1);
  CHECK(j.findings.empty());
  std::ostringstream text;
  write_job_text(text, j);
  CHECK(text.str().find("peaks add up to 1.07 GiB, 600.00 MiB of those live together (never all at once)\n") !=
        std::string::npos);
  CHECK(job_to_json(j).at("gpus").at(0).at("live_together_bytes") == 600 * MiB);
}

TEST_CASE("job: oversubscription adds up the peaks of the processes live at one time, and no others") {
  // A 600 MiB over 1-5 s, B 500 MiB over 2-3 s, C 300 MiB over 4-6 s. Live together: at 1 s
  // A (600), at 2 s A and B (1,100), at 4 s A and C (900); B and C never meet. The most is
  // 1,100 MiB, past the 1,024 MiB GPU; all three add up to 1,400 MiB, which no moment saw.
  const Job j = build_job({lived(1, 600 * MiB, 1, 5), lived(2, 500 * MiB, 2, 3), lived(3, 300 * MiB, 4, 6)},
                          std::vector<std::vector<DeviceInfo>>(3), 10);
  REQUIRE(j.gpus.size() == 1);
  CHECK(j.gpus[0].peak_sum_bytes == 1400 * MiB);
  CHECK(j.gpus[0].live_together_bytes == 1100 * MiB);
  CHECK(j.gpus[0].live_together == 2);
  REQUIRE(j.findings.size() == 1);
  CHECK(j.findings[0].kind == JobFinding::Kind::kDeviceOversubscribed);
  CHECK(j.findings[0].bytes == 1100 * MiB);
  CHECK(j.findings[0].message ==
        "the peaks of the 2 processes live together on h1 add up to 1.07 GiB, past its 1.00 GiB");
  // C starting while B still ran (at 2.5 s, so over 2.5-6 s) meets A and B at once: 1,400 MiB.
  Report c = lived(3, 300 * MiB, 2, 6);
  c.start_ns += 500000000;
  c.duration_ns -= 500000000;
  const Job all =
      build_job({lived(1, 600 * MiB, 1, 5), lived(2, 500 * MiB, 2, 3), c}, std::vector<std::vector<DeviceInfo>>(3), 10);
  CHECK(all.gpus[0].live_together_bytes == 1400 * MiB);
  CHECK(all.gpus[0].live_together == 3);
}

namespace {

// A traced process (pid `pid`, host1, no rank) that started `start_ms` after
// TraceBuilder::kStart, allocated `peak` on device 0 (1 GiB) 100 ms later and ended its trace
// at `end_ms`.
Report traced(uint32_t pid, uint64_t peak, uint64_t start_ms, uint64_t end_ms) {
  namespace fmt = cumemtrace::format;
  using cumemtrace::test::TraceBuilder;
  std::string p = TraceBuilder::process_payload(2ull << 20, {"prog"}, -1);
  fmt::ProcessRecord r;
  std::memcpy(&r, p.data(), sizeof r);
  r.pid = pid;
  r.start_monotonic_ns += start_ms * ms;
  std::memcpy(p.data(), &r, sizeof r);
  TraceBuilder b;
  b.record(fmt::RecordType::kProcess, p).device(0, 1024 * MiB);
  b.alloc((start_ms + 100) * ms, 0x7f0000000000, peak);
  b.end(end_ms * ms);
  return cumemtrace::test::report_both(b, "trace-" + std::to_string(pid));
}

}  // namespace

TEST_CASE("job: traces of two processes on one GPU, one after the other, are never oversubscribed") {
  // 600 MiB over 0-1 s, 500 MiB over 2-3 s (after kStart), on one 1 GiB GPU of host1.
  const Job apart = build_job({traced(1, 600 * MiB, 0, 1000), traced(2, 500 * MiB, 2000, 3000)},
                              std::vector<std::vector<DeviceInfo>>(2), 10);
  REQUIRE(apart.gpus.size() == 1);
  CHECK(apart.gpus[0].peak_sum_bytes == 1100 * MiB);
  CHECK(apart.gpus[0].live_together_bytes == 600 * MiB);
  CHECK(apart.findings.empty());
  // The second started at 0.5 s, while the first ran: 1,100 MiB live together, past 1 GiB.
  const Job together = build_job({traced(1, 600 * MiB, 0, 1000), traced(2, 500 * MiB, 500, 3000)},
                                 std::vector<std::vector<DeviceInfo>>(2), 10);
  CHECK(together.gpus[0].live_together_bytes == 1100 * MiB);
  REQUIRE(together.findings.size() == 1);
  CHECK(together.findings[0].kind == JobFinding::Kind::kDeviceOversubscribed);
  CHECK(together.findings[0].bytes == 1100 * MiB);
}
