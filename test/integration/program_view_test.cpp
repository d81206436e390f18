// What the program sees is its own (issue 29, item 6): its signal dispositions as it set
// them, with our crash handler beneath only where it wants SIG_DFL; dlsym(RTLD_DEFAULT)
// and dlerror() as without us. Each expectation is the untraced run's own output.
#include <catch2/catch.hpp>

#include <signal.h>

#include "harness.h"

using namespace harness;

TEST_CASE("sigaction and signal show the dispositions the program set, before and after its first CUDA call") {
  const std::vector<std::string> cmd{here("signal_view")};
  const Result plain = run(cmd);
  REQUIRE(plain.exit_code == 128 + SIGSEGV);
  // SA_RESTORER (0x4000000) is glibc's: the view is the kernel's copy of what was set.
  CHECK(plain.out ==
        "after CUDA: default default default default default\n"
        "signal gave SIG_DFL, now program's\n"
        "later program's\n"
        "signal gave the handler, now default\n"
        "later default\n"
        "SIGBUS was default, flags 0x54000000, mask has SIGUSR1 1\n"
        "SIGFPE ignored\n");
  TempDir dir;
  // A 1 ms flush: the writer thread re-arms ours hundreds of times while the program looks.
  const Result t = traced(dir, cmd, {{"CUMEMTRACE_FLUSH_MS", "1"}});
  CHECK(t.out == plain.out);
  CHECK(t.exit_code == 128 + SIGSEGV);  // the SIG_DFL the program set, ours beneath it
  const auto r = report(only_trace(dir));
  CHECK(r.at("trace").at("complete") == false);
  CHECK(device(r, 0).at("counts").at("allocs") == 1);  // written by our handler as it died
}

TEST_CASE("dlsym(RTLD_DEFAULT) gives a program its own definition of a driver name, and dlerror() its own text") {
  const std::vector<std::string> cmd{here("dlsym_own")};
  const Result plain = run(cmd);
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out == "cuMemAlloc_v2 the program's\ncuMemFree_v2 found\ncudaMalloc absent: " + cmd[0] +
                         ": undefined symbol: cudaMalloc\n");
  TempDir dir;
  const Result t = traced(dir, cmd);
  CHECK(t.out == plain.out);
  CHECK(t.exit_code == 0);
}
