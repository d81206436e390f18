// A program that uses the CUDA runtime the ordinary way: linked against
// libcudart.so.13, never touching the driver API. Usage in usage() below.
#include "runtime_common.h"

#include <cstring>
#include <string>

namespace {
int usage() {
  std::fprintf(stderr,
               "usage: prog_runtime basic | async | threads [N] | fork | fork-sleep | oom |\n"
               "                    frag1..frag5 [hold_ms] | entry-points | context\n");
  return 2;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  std::string scenario = argv[1];
  const char* arg = argc > 2 ? argv[2] : nullptr;
  if (scenario == "basic") return scenario_basic();
  if (scenario == "async") return scenario_async() ? 1 : scenario_async_ptsz();
  if (scenario == "threads") return scenario_threads(arg ? std::atoi(arg) : 4);
  if (scenario == "fork") return scenario_fork(false);
  if (scenario == "fork-sleep") return scenario_fork(true);
  if (scenario == "oom") return scenario_oom();
  if (scenario.size() == 5 && scenario.compare(0, 4, "frag") == 0 && scenario[4] >= '1' && scenario[4] <= '5')
    return scenario_frag(scenario[4] - '0', arg ? std::atoi(arg) : 300);
  if (scenario == "entry-points") return scenario_entry_points();
  if (scenario == "context") return scenario_context();
  return usage();
}
