// The job view of `cumemtrace report` over several traces (analysis/reports/job/job.h), from three
// ranks of a simulated job (job_ranks.c) on two 384 MiB devices whose contexts cost 1 MiB:
//   rank 0: device 0, 100 MiB, one failed allocation
//   rank 1: device 1, 100 MiB, and 1 MiB on device 0 (foreign-device)
//   rank 2: device 1, 100 + 200 MiB, the 200 MiB leaked (rank-imbalance: +200 % of the
//           median 100 MiB)
// The ranks run one after the other: device 1's peaks add up to 400 MiB > 384 MiB, but no
// two of its processes were live at once, so it is not oversubscribed.
#include <catch2/catch.hpp>

#include "harness.h"
#include "../sizes.h"

using namespace harness;

namespace {

const std::string kUuid0 = "GPU-73696d63-7564-612d-6832-303000000000";  // "simcuda-h200" + ordinal
const std::string kUuid1 = "GPU-73696d63-7564-612d-6832-303000000001";

struct Job {
  TempDir dir;
  Job() {
    const std::vector<std::vector<std::string>> ranks = {
        {"0", "100", "0", "-1", "0", "1"}, {"1", "100", "0", "0", "0", "0"}, {"1", "100", "200", "-1", "1", "0"}};
    for (size_t r = 0; r < ranks.size(); ++r) {
      std::vector<std::string> argv{here("job_ranks")};
      argv.insert(argv.end(), ranks[r].begin(), ranks[r].end());
      const Env env{{"SIMCUDA_DEVICES", "2"},
                    {"SIMCUDA_CAPACITY", std::to_string(384 * MiB)},
                    {"SIMCUDA_CONTEXT_BYTES", "1048576"},
                    {"RANK", std::to_string(r)},
                    {"LOCAL_RANK", std::to_string(r)},
                    {"WORLD_SIZE", "3"},
                    {"SLURM_JOB_ID", "777"},
                    {"SLURM_STEP_ID", "0"}};
      REQUIRE(traced(dir, argv, env).exit_code == 0);
    }
    REQUIRE(dir.files("trace-").size() == 3);
  }
};

const nlohmann::json& device_row(const nlohmann::json& process, int ordinal) {
  for (const auto& d : process.at("devices"))
    if (d.at("device") == ordinal) return d;
  throw std::runtime_error("no device row " + std::to_string(ordinal));
}

}  // namespace

TEST_CASE("job view: one row per process, one per GPU by UUID, and each finding kind") {
  Job job;
  // A folder is read as the traces in it.
  const Result r = run({cli(), "report", "--json", job.dir.path});
  REQUIRE(r.exit_code == 0);
  const auto all = nlohmann::json::parse(r.out);
  REQUIRE(all.at("traces").size() == 3);
  const auto& j = all.at("job");
  CHECK(j.at("job_ids") == nlohmann::json::array({"slurm:777.0"}));

  const auto& ps = j.at("processes");
  REQUIRE(ps.size() == 3);
  for (int r = 0; r < 3; ++r) {
    CHECK(ps[r].at("rank") == r);
    CHECK(ps[r].at("local_rank") == r);
    CHECK(ps[r].at("world_size") == 3);
    CHECK(ps[r].at("job_id") == "slurm:777.0");
  }
  CHECK(ps[0].at("own_device") == 0);
  CHECK(ps[0].at("devices").size() == 1);
  CHECK(device_row(ps[0], 0).at("uuid") == kUuid0);
  CHECK(device_row(ps[0], 0).at("peak_bytes") == 100 * MiB);
  CHECK(device_row(ps[0], 0).at("contexts") == 1);
  CHECK(ps[0].at("failed") == 1);
  CHECK(ps[0].at("leaked_bytes") == 0);

  CHECK(ps[1].at("own_device") == 1);
  CHECK(ps[1].at("devices").size() == 2);
  CHECK(device_row(ps[1], 0).at("peak_bytes") == 1 * MiB);
  CHECK(device_row(ps[1], 0).at("contexts") == 1);
  CHECK(device_row(ps[1], 1).at("peak_bytes") == 100 * MiB);
  CHECK(device_row(ps[1], 1).at("uuid") == kUuid1);
  CHECK(ps[1].at("failed") == 0);
  CHECK(ps[1].at("leaked_bytes") == 0);

  CHECK(ps[2].at("own_device") == 1);
  CHECK(device_row(ps[2], 1).at("peak_bytes") == 300 * MiB);
  CHECK(device_row(ps[2], 1).at("allocations") == 2);
  CHECK(ps[2].at("leaked_bytes") == 200 * MiB);

  const auto& gpus = j.at("gpus");
  REQUIRE(gpus.size() == 2);
  CHECK(gpus[0].at("uuid") == kUuid0);  // rank 0's device comes first
  CHECK(gpus[0].at("peak_sum_bytes") == 101 * MiB);
  CHECK(gpus[0].at("processes").size() == 2);
  CHECK(gpus[1].at("uuid") == kUuid1);
  CHECK(gpus[1].at("total_bytes") == 384 * MiB);
  CHECK(gpus[1].at("peak_sum_bytes") == 400 * MiB);
  CHECK(gpus[0].at("live_together_bytes") == 100 * MiB);  // rank 0's, then rank 1's 1 MiB
  CHECK(gpus[1].at("live_together_bytes") == 300 * MiB);  // rank 1's 100 MiB, then rank 2's 300

  CHECK(j.at("median_peak_bytes") == 100 * MiB);
  const auto& f = j.at("findings");
  REQUIRE(f.size() == 2);
  CHECK(f[0].at("kind") == "foreign-device");
  CHECK(f[0].at("rank") == 1);
  CHECK(f[0].at("device") == 0);
  CHECK(f[0].at("own_device") == 1);
  CHECK(f[0].at("uuid") == kUuid0);
  CHECK(f[0].at("allocations") == 1);

  CHECK(f[1].at("kind") == "rank-imbalance");
  CHECK(f[1].at("rank") == 2);
  CHECK(f[1].at("peak_bytes") == 300 * MiB);
  CHECK(f[1].at("percent") == Approx(200.0));
  CHECK(f[1].at("median_process") == 0);
  REQUIRE(f[1].at("sites").size() == 1);  // alloc_a holds 100 MiB in both: no difference
  CHECK(f[1].at("sites")[0].at("site").get<std::string>().starts_with("alloc_b (job_ranks.c:"));
  CHECK(f[1].at("sites")[0].at("difference_bytes") == 200 * MiB);

  // A tolerance above the imbalance leaves that finding out.
  const Result wide = run({cli(), "report", "--json", "--rank-tolerance", "200", job.dir.path});
  REQUIRE(wide.exit_code == 0);
  CHECK(nlohmann::json::parse(wide.out).at("job").at("findings").size() == 1);

  // The text report starts with the job view.
  const Result text = run({cli(), "report", job.dir.path});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.starts_with("Job: 3 processes, slurm:777.0\n"));
  CHECK(text.out.find("rank-imbalance: rank 2") != std::string::npos);
}

TEST_CASE("check --max-rank-imbalance holds at the job's largest imbalance and fails below it") {
  Job job;
  const Result holds = run({cli(), "check", "--max-rank-imbalance", "200", job.dir.path});
  CHECK(holds.exit_code == 0);
  const Result fails = run({cli(), "check", "--max-rank-imbalance", "199.5", job.dir.path});
  CHECK(fails.exit_code == 1);
  CHECK(fails.out.starts_with("FAIL job of " + job.dir.path + "/"));  // every trace of the job, by path
  CHECK(fails.out.find(".trace: max-rank-imbalance: largest difference of a rank's peak from the median 100.00 MiB: "
                       "200.0%, limit 199.5%") != std::string::npos);
  CHECK(fails.out.find("alloc_b (job_ranks.c:") != std::string::npos);
}
