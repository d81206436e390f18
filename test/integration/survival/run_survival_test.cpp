// `cumemtrace run` with the real library: it waits for what the command leaves behind,
// passes every catchable signal on, leaves no manifest behind, copes with a bad TMPDIR,
// and when it is itself killed with SIGKILL its watchdog still lists the job's traces.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

using namespace harness;

namespace {

std::string runtime() { return std::string(CUMEMTRACE_SIM_DIR) + "/libcudart.so.13"; }

// `cumemtrace run` started with pipes on its stdin, stdout and stderr.
struct Spawned {
  pid_t pid = -1;
  int in = -1, out = -1, err = -1;  // our ends

  Spawned(const std::vector<std::string>& argv, const Env& env) {
    int i[2], o[2], e[2];
    REQUIRE(pipe2(i, O_CLOEXEC) == 0);
    REQUIRE(pipe2(o, O_CLOEXEC) == 0);
    REQUIRE(pipe2(e, O_CLOEXEC) == 0);
    pid = fork();
    if (pid == 0) {
      setenv("LD_LIBRARY_PATH", CUMEMTRACE_SIM_DIR, 1);
      for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      dup2(i[0], 0), dup2(o[1], 1), dup2(e[1], 2);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(i[0]), close(o[1]), close(e[1]);
    in = i[1], out = o[0], err = e[0];
  }
  ~Spawned() {
    for (int fd : {in, out, err})
      if (fd >= 0) close(fd);
  }
  std::string read_line() {
    std::string s;
    char c;
    while (::read(out, &c, 1) == 1 && c != '\n') s += c;
    return s;
  }
  // Everything written to stderr, by `run` and by every process that inherited it.
  std::string read_err_to_end() {
    std::string s;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(err, buf, sizeof buf)) > 0) s.append(buf, size_t(n));
    return s;
  }
  int wait() {
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
  }
};

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace

TEST_CASE("run waits for processes that outlive the command and lists their traces") {
  TempDir dir;
  const std::string script = std::string(CUMEMTRACE_SOURCE_DIR) + "/test/integration/python/outlive.py";
  const Result r = run({cli(), "run", "-o", dir.path + "/trace-%p.trace", "--", "/usr/bin/python3", script, runtime()});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "parent done\n");
  const std::string trace = only_trace(dir);  // the child's: the parent never touched CUDA
  CHECK(contains(r.err, "cumemtrace: trace written to " + trace + " ("));
  const auto j = report(trace);
  CHECK(j.at("trace").at("complete") == true);
  CHECK(device(j, 0).at("counts").at("allocs") == 1);
}

TEST_CASE("run leaves no manifest in TMPDIR, and runs with a TMPDIR it cannot use") {
  TempDir tmp, dir;
  const std::vector<std::string> cmd{
      cli(), "run",     "-o", dir.path + "/trace-%p.trace",
      "--",  "/bin/sh", "-c", "echo \"$CUMEMTRACE_MANIFEST\"; exec " + program("prog_runtime") + " basic"};
  const Result r = run(cmd, {{"TMPDIR", tmp.path}});
  CHECK(r.exit_code == 0);
  CHECK(r.out.starts_with(tmp.path + "/cumemtrace-run-"));  // it was there while the command ran
  CHECK(tmp.files().empty());                               // and is gone
  CHECK(contains(r.err, "cumemtrace: trace written to " + only_trace(dir)));

  TempDir dir2;
  const Result bad = run({cli(), "run", "-o", dir2.path + "/trace-%p.trace", "--", program("prog_runtime"), "basic"},
                         {{"TMPDIR", "/nonexistent/tmp"}});
  CHECK(bad.exit_code == 0);
  CHECK(contains(bad.err, "cannot create a private directory in /nonexistent/tmp"));
  CHECK(contains(bad.err, "cumemtrace: trace written to " + only_trace(dir2)));
}

TEST_CASE("run passes on a signal sent to it alone, and exits with the command's status") {
  Spawned s({cli(), "run", "--", "/bin/sh", "-c", "echo ready; exec sleep 1000"}, {});
  REQUIRE(s.read_line() == "ready");
  kill(s.pid, SIGALRM);  // not among the six forwarded before: it killed `run` and left sleep running
  const int status = s.wait();
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGALRM);
}

TEST_CASE("run killed with SIGKILL: its watchdog lists the job's complete trace and removes the manifest") {
  TempDir tmp, dir;
  // The command traces a program, says ready, and ends when we close its stdin.
  Spawned s({cli(), "run", "-o", dir.path + "/trace-%p.trace", "--", "/bin/sh", "-c",
             program("prog_runtime") + " basic >/dev/null && echo ready && read x"},
            {{"TMPDIR", tmp.path}});
  REQUIRE(s.read_line() == "ready");
  kill(s.pid, SIGKILL);
  const int status = s.wait();
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  close(s.in), s.in = -1;                       // the command ends; the watchdog takes over
  const std::string err = s.read_err_to_end();  // end of file: the watchdog is done too
  CHECK(contains(err, "cumemtrace run was killed; its watchdog lists the traces when the command ends"));
  const std::string trace = only_trace(dir);
  CHECK(contains(err, "cumemtrace: trace written to " + trace + " ("));
  const auto j = report(trace);
  CHECK(j.at("trace").at("complete") == true);
  CHECK(device(j, 0).at("counts").at("allocs") == 7);
  CHECK(tmp.files().empty());
}

TEST_CASE("run -o with a newline and other control characters in the path: the trace is listed and symbolized") {
  TempDir dir;
  const std::string pattern = dir.path + "/trace-a\nb\tc\\x0a-%p.trace";
  const Result r = run({cli(), "run", "-o", pattern, "--", program("prog_runtime"), "basic"});
  CHECK(r.exit_code == 0);
  const std::string trace = only_trace(dir);
  const std::string name = "/trace-a\nb\tc\\x0a-";
  CHECK(trace.starts_with(dir.path + name));
  // The line is text (docs/cli.md, "Strings from a trace"): the newline and the tab as \xNN,
  // the name's own backslash as it is; then the pid and ".trace".
  const std::string shown = dir.path + "/trace-a\\x0ab\\x09c\\x0a-" + trace.substr(dir.path.size() + name.size());
  CHECK(contains(r.err, "cumemtrace: trace written to " + shown + " ("));
  CHECK(!contains(r.err, "cannot"));
  CHECK(contains(run({cli(), "dump", trace}).out, " symbol ip="));  // symbolized by run: Symbol records in the file
}
