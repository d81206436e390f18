// Files the CLI writes (analysis/base/output_file.h) never go through a link: not at the name,
// not above it, not through /proc/self/root (the attack of issue 29: a link whose own text
// looks harmless reached any file), and a FIFO without a reader never makes a command wait.
// Every command that writes a file is tried; each expectation is the exit status docs/cli.md
// gives and the target's bytes and mode, unchanged.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cumemtrace/rules/no_follow.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "catch.h"
#include "shell.h"
#include "temp_dir.h"
#include "trace_builder.h"

using cumemtrace::test::read_file;
using cumemtrace::test::shell;
using cumemtrace::test::TempDir;
using cumemtrace::test::TraceBuilder;
namespace nf = cumemtrace::no_follow;

namespace {

unsigned mode_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

bool is_link(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

// A clean trace: one 1 MiB allocation on device 0, freed; an End record.
void write_trace(const std::string& path) {
  TraceBuilder b;
  b.process().device(0, 80ull << 30).alloc(10, 0x7f0000000000, 1 << 20).free(20, 0x7f0000000000).end(30);
  b.write(path);
}

// Each command that writes a file, writing `out` from `trace` (stderr to stdout).
std::vector<std::pair<std::string, std::string>> writers(const std::string& trace, const std::string& out) {
  const std::string cli = CUMEMTRACE_CLI;
  return {
      {"html", cli + " html " + trace + " -o " + out},
      {"export memviz", cli + " export --format memviz " + trace + " -o " + out},
      {"export chrome", cli + " export --format chrome " + trace + " -o " + out},
      {"export folded", cli + " export --format folded " + trace + " -o " + out},
      {"baseline", cli + " baseline " + trace + " -o " + out},
      {"index", cli + " index " + trace + " -o " + out},
      {"check --junit", cli + " check " + trace + " --max-peak 1GiB --junit " + out},
  };
}

bool html_built() {
  TempDir d;
  write_trace(d.path + "/t.trace");
  return shell(std::string(CUMEMTRACE_CLI) + " html " + d.path + "/t.trace -o " + d.path + "/p.html 2>&1")
             .out.find("built without") == std::string::npos;
}

}  // namespace

TEST_CASE(
    "output files: -o at a symlink to /proc/self/root/<path>: every writing command refuses it, exit 1, the target "
    "untouched") {
  TempDir d;
  const std::string trace = d.path + "/t.trace", victim = d.path + "/victim", link = d.path + "/out";
  write_trace(trace);
  std::ofstream(victim) << "keep";
  REQUIRE(::chmod(victim.c_str(), 0644) == 0);
  REQUIRE(::symlink(("/proc/self/root" + victim).c_str(), link.c_str()) == 0);
  const bool html = html_built();
  for (const auto& [name, cmd] : writers(trace, link)) {
    if (name == "html" && !html) continue;  // a CLI built without the page's libraries refuses every page
    INFO(name);
    const auto r = shell(cmd + " 2>&1");
    CHECK(r.status == 1);
    CHECK(r.out.find(link + ": a symbolic link on the way (never followed for a file the CLI writes") !=
          std::string::npos);
    CHECK(read_file(victim) == "keep");
    CHECK(mode_of(victim) == 0644);
    CHECK(is_link(link));
  }
  // The whole line, once.
  const auto r = shell(std::string(CUMEMTRACE_CLI) + " export --format folded " + trace + " -o " + link + " 2>&1");
  CHECK(r.out == "cumemtrace export: " + link +
                     ": a symbolic link on the way (never followed for a file the CLI writes: a link to "
                     "/proc/self/root/... reaches any file); name it by its real path\n");
}

TEST_CASE(
    "output files: -o through /proc/self/root is refused, nothing lands, and an ordinary folder link is followed, as "
    "for traces") {
  TempDir d;
  const std::string trace = d.path + "/t.trace", real = d.path + "/real";
  write_trace(trace);
  REQUIRE(::mkdir(real.c_str(), 0700) == 0);
  REQUIRE(::symlink(real.c_str(), (d.path + "/plain").c_str()) == 0);
  REQUIRE(::symlink(("/proc/self/root" + real).c_str(), (d.path + "/magic").c_str()) == 0);
  for (const std::string& via : {d.path + "/magic/", "/proc/self/root" + real + "/"}) {
    for (const auto& [name, cmd] : writers(trace, via + "f")) {
      if (name == "html" && !html_built()) continue;
      INFO(name << " " << via);
      CHECK(shell(cmd + " 2>/dev/null").status == 1);
    }
    // jsonl's -o is a directory of tables.
    CHECK(shell(std::string(CUMEMTRACE_CLI) + " export --format jsonl " + trace + " -o " + via + "tables" +
                " 2>/dev/null")
              .status == 1);
  }
  CHECK(shell("ls -A " + real + " | wc -l").out == "0\n");
  // An ordinary link to a folder (a symlinked /scratch) is followed, as the library does
  // for its trace: the file lands in the folder, written whole and private.
  CHECK(shell(std::string(CUMEMTRACE_CLI) + " baseline " + trace + " -o " + d.path + "/plain/b.json 2>/dev/null")
            .status == 0);
  CHECK(mode_of(real + "/b.json") == 0600);
  // A link at the name itself never is.
  REQUIRE(::symlink((real + "/b.json").c_str(), (d.path + "/at-name.json").c_str()) == 0);
  CHECK(shell(std::string(CUMEMTRACE_CLI) + " baseline " + trace + " -o " + d.path + "/at-name.json 2>/dev/null")
            .status == 1);
}

TEST_CASE(
    "output files: -o at a FIFO that no one reads is refused at once (no command waits), and with --force one that is "
    "read works") {
  TempDir d;
  const std::string trace = d.path + "/t.trace", fifo = d.path + "/fifo", link = d.path + "/fifo-link";
  write_trace(trace);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  REQUIRE(::symlink(fifo.c_str(), link.c_str()) == 0);
  // `timeout` ends a command that would wait (status 124): the test itself never hangs.
  for (const auto& [name, cmd] : writers(trace, fifo)) {
    if (name == "html" && !html_built()) continue;
    INFO(name);
    const auto r = shell("timeout 60 " + cmd + " 2>&1");
    CHECK(r.status == 1);
    CHECK(r.out.find(fifo + " is a FIFO that no one reads: writing would wait for a reader (--force waits)") !=
          std::string::npos);
  }
  CHECK(shell("timeout 60 " + std::string(CUMEMTRACE_CLI) + " export --format folded " + trace + " -o " + link +
              " 2>/dev/null")
            .status == 1);  // the link to it: a link, refused
  // --force: the command waits for the reader started beside it, and writes through the FIFO.
  const auto r =
      shell("cat " + fifo + " > " + d.path + "/got & timeout 60 " + CUMEMTRACE_CLI +
            " export --format folded --force " + trace + " -o " + fifo + " 2>/dev/null; s=$?; wait; echo $s");
  CHECK(r.out == "0\n");
  const std::string folded =
      shell(std::string(CUMEMTRACE_CLI) + " export --format folded " + trace + " 2>/dev/null").out;
  CHECK(folded == "cuda:0;[no stack] 1048576\n");  // the peak: the 1 MiB allocation, no stack recorded
  CHECK(read_file(d.path + "/got") == folded);
  CHECK(shell("test -p " + fifo).status == 0);
}

TEST_CASE("baseline and check --junit: -o a directory or /dev/full exits 1, as every writing command does") {
  TempDir d;
  const std::string trace = d.path + "/t.trace", dir = d.path + "/adir";
  write_trace(trace);
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
  const std::string cli = CUMEMTRACE_CLI;
  auto r = shell(cli + " baseline " + trace + " -o " + dir + " 2>&1");
  CHECK(r.status == 1);
  CHECK(r.out == "cumemtrace baseline: " + dir + " is a directory\n");
  r = shell(cli + " baseline " + trace + " -o /dev/full 2>&1");
  CHECK(r.status == 1);
  CHECK(r.out == "cumemtrace baseline: writing /dev/full failed\n");
  r = shell(cli + " check " + trace + " --max-peak 1GiB --junit " + dir + " 2>&1");
  CHECK(r.status == 1);
  CHECK(r.out == "cumemtrace check: " + dir + " is a directory\n");
  r = shell(cli + " check " + trace + " --max-peak 1GiB --junit /dev/full 2>&1");
  CHECK(r.status == 1);
  CHECK(r.out == "cumemtrace check: writing /dev/full failed\n");
  // An input as the output stays a usage error (2), for every writing command.
  CHECK(shell(cli + " baseline " + trace + " -o " + trace + " 2>/dev/null").status == 2);
  CHECK(shell(cli + " check " + trace + " --max-peak 1GiB --junit " + trace + " 2>/dev/null").status == 2);
  CHECK(shell(cli + " index " + trace + " -o " + trace + " 2>/dev/null").status == 2);
}

TEST_CASE("output files: -o /dev/stdout and /dev/fd/N write to the CLI's own descriptor, whatever it is") {
  TempDir d;
  const std::string trace = d.path + "/t.trace";
  write_trace(trace);
  const std::string cli = CUMEMTRACE_CLI;
  // A pipe, then a file the shell opened: /dev/stdout is a link into /proc, never resolved.
  CHECK(shell(cli + " baseline " + trace + " -o /dev/stdout 2>/dev/null | head -c 1").out == "{");
  CHECK(shell(cli + " baseline " + trace + " -o /dev/stdout > " + d.path + "/b.json 2>/dev/null").status == 0);
  CHECK(read_file(d.path + "/b.json").starts_with("{"));
  CHECK(shell(cli + " baseline " + trace + " -o /dev/fd/5 5> " + d.path + "/c.json 2>/dev/null").status == 0);
  CHECK(read_file(d.path + "/c.json") == read_file(d.path + "/b.json"));
}

TEST_CASE("no_follow::open_dir: the kernel's walk and the walk by components agree on every link") {
  TempDir d;
  const std::string real = d.path + "/real";
  REQUIRE(::mkdir(real.c_str(), 0700) == 0);
  REQUIRE(::mkdir((real + "/sub").c_str(), 0700) == 0);
  REQUIRE(::symlink(real.c_str(), (d.path + "/plain").c_str()) == 0);
  REQUIRE(::symlink(("/proc/self/root" + real).c_str(), (d.path + "/magic").c_str()) == 0);
  REQUIRE(::symlink("real", (d.path + "/relative").c_str()) == 0);
  struct stat want {};
  REQUIRE(::stat((real + "/sub").c_str(), &want) == 0);
  struct Case {
    std::string dir;
    bool none_ok, ordinary_ok;
  };
  const Case cases[] = {
      {real + "/sub", true, true},
      {d.path + "/plain/sub", false, true},
      {d.path + "/relative/sub", false, true},
      {d.path + "/magic/sub", false, false},
      {"/proc/self/root" + real + "/sub", false, false},
      {"/proc/self/cwd", false, false},
  };
  using Open = int (*)(const std::string&, nf::DirLinks);
  for (const Open open : {Open(&nf::open_dir), Open(&nf::open_dir_by_components)}) {
    for (const auto& c : cases) {
      for (const auto links : {nf::DirLinks::kNone, nf::DirLinks::kOrdinary}) {
        const bool want_ok = links == nf::DirLinks::kNone ? c.none_ok : c.ordinary_ok;
        INFO(c.dir << (links == nf::DirLinks::kNone ? " none" : " ordinary")
                   << (open == Open(&nf::open_dir) ? " openat2" : " components"));
        errno = 0;
        const int fd = open(c.dir, links);
        CHECK((fd >= 0) == want_ok);
        if (fd < 0) {
          CHECK(errno == ELOOP);
          continue;
        }
        struct stat got {};
        CHECK(::fstat(fd, &got) == 0);
        CHECK((got.st_dev == want.st_dev && got.st_ino == want.st_ino));
        ::close(fd);
      }
    }
  }
}
