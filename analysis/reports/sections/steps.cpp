#include "reports/sections/steps.h"

#include "reports/sections/at_exit.h"
#include "reports/sections/largest_at_peak.h"

namespace cumemtrace {
namespace {

void growth_step(ReportInputs& in, Report& rep) { rep.growth = in.pass.growth.finish(in.stacks, in.opt.frames); }

// Pools and blocks read growth's boundaries.
void pools_step(ReportInputs& in, Report& rep) {
  rep.pools = pool_report(in.trace, in.events, in.stacks, rep.growth, in.opt.frames);
  for (PoolHeap& h : rep.pools.heaps)
    for (PoolSite& s : h.sites) s.caller = in.names.of_key(s.key);
}

void blocks_step(ReportInputs& in, Report& rep) {
  rep.blocks = block_report(in.trace, in.events, in.stacks, rep.growth, in.opt.frames, in.opt.top,
                            std::vector<std::string>(in.pass.caches.begin(), in.pass.caches.end()));
  for (BlockDevice& d : rep.blocks.devices)
    for (BlockSite& s : d.sites) s.caller = in.names.of_key(s.key);
}

// The blocks' failures join the failed allocations, their sites growth's, named with them.
void block_findings_step(ReportInputs& in, Report& rep) {
  add_block_findings(rep, in.stacks);
  for (auto& g : rep.growth.sites) g.caller = in.names.of_key(g.key);
}

void ranges_step(ReportInputs& in, Report& rep) {
  if (in.pass.ranges) rep.ranges = in.pass.ranges->finish(in.last_ns, in.pass.final);
}

void functions_step(ReportInputs& in, Report& rep) {
  if (in.pass.functions) rep.functions = in.pass.functions->finish();
}

void ipc_step(ReportInputs& in, Report& rep) { rep.ipc = std::move(in.pass.ipc).finish(); }

// Live at the end: what a caching allocator's cache holds (kept until exit by design),
// apart from possible leaks (the rest), each grouped; growth's leaking sites and the IPC
// exports counted there read first.
void at_exit_step(ReportInputs& in, Report& rep) { split_at_exit(in.end, rep, in.stacks, in.opt, in.names); }

void framework_limit_step(ReportInputs& in, Report& rep) { rep.framework_limit = framework_limit(in.trace, rep); }

}  // namespace

const std::vector<ReportStep>& report_steps() {
  static const std::vector<ReportStep> steps = {
      {"growth", growth_step},
      {"pools", pools_step},
      {"blocks", blocks_step},
      {"block_findings", block_findings_step},
      {"by_range", ranges_step},
      {"by_function", functions_step},
      {"ipc", ipc_step},
      {"at_exit", at_exit_step},
      {"framework_limit", framework_limit_step},
      {"largest_at_peak", largest_at_peak_step, largest_at_peak_seen},
  };
  return steps;
}

}  // namespace cumemtrace
