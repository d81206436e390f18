#include "run_command.h"

#include <cumemtrace/trace_format.h>

#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>

#include "oom_watch.h"
#include "symbolize.h"

namespace cumemtrace {
namespace {

volatile sig_atomic_t g_child = 0;

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

// A signal from the terminal (Ctrl-C, Ctrl-\) already went to the whole foreground
// process group, the child included: forwarding it would deliver it twice (Python
// would see two KeyboardInterrupts). Only signals sent to us alone (kill, a batch
// scheduler) carry si_code <= 0 (SI_USER, SI_QUEUE) and need passing on.
void forward(int sig, siginfo_t* info, void*) {
  if (g_child > 0 && info && info->si_code <= 0) ::kill(pid_t(g_child), sig);
}

std::string self_dir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, size_t(n));
  auto slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

std::vector<std::string> read_manifest(const std::string& path) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#' && seen.insert(line).second) out.push_back(line);
  return out;
}

}  // namespace

std::string preload_library_path() {
  if (const char* env = ::getenv("CUMEMTRACE_LIBRARY"); env && *env) return env;
  std::string p = self_dir() + "/../lib/libcumemtrace.so";
  char real[PATH_MAX];
  return ::realpath(p.c_str(), real) ? std::string(real) : p;
}

int run_traced(const RunOptions& opt) {
  if (opt.command.empty()) {
    std::cerr << "cumemtrace run: no command given (usage: cumemtrace run [options] -- CMD ARGS...)\n";
    return 2;
  }
  const std::string lib = preload_library_path();
  if (::access(lib.c_str(), R_OK) != 0) {
    std::cerr << "cumemtrace run: preload library " << lib
              << " not found (build it, or set CUMEMTRACE_LIBRARY to its path)\n";
    return 127;
  }

  const char* tmpdir = ::getenv("TMPDIR");
  std::string manifest = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/cumemtrace-manifest-XXXXXX";
  int mfd = ::mkstemp(manifest.data());  // 0600: private to this user
  // The marker is what lets the library tell a manifest from any other file.
  const std::string_view marker = format::kManifestMarker;
  if (mfd < 0 || ::write(mfd, marker.data(), marker.size()) != ssize_t(marker.size())) {
    std::cerr << "cumemtrace run: cannot create a manifest file: " << std::strerror(errno) << "\n";
    if (mfd >= 0) ::close(mfd), ::unlink(manifest.c_str());
    return 127;
  }
  ::close(mfd);

  // Prepare the environment before fork so the child only execs.
  const char* old = ::getenv("LD_PRELOAD");
  const std::string preload = old && *old ? lib + ":" + old : lib;
  std::vector<std::string> env_strings = {"LD_PRELOAD=" + preload, "CUMEMTRACE_MANIFEST=" + manifest};
  // NVTX ranges and marks become trace marks (interpose/nvtx.cpp); a tool already set
  // there (Nsight) keeps it: NVTX serves one tool only.
  if (const char* nvtx = ::getenv("NVTX_INJECTION64_PATH"); !nvtx || !*nvtx)
    env_strings.push_back("NVTX_INJECTION64_PATH=" + lib);
  if (opt.output) env_strings.push_back("CUMEMTRACE_OUTPUT=" + *opt.output);
  if (opt.depth) env_strings.push_back("CUMEMTRACE_DEPTH=" + std::to_string(*opt.depth));
  for (auto& s : env_strings) {
    auto eq = s.find('=');
    ::setenv(s.substr(0, eq).c_str(), s.c_str() + eq + 1, 1);
  }
  std::vector<char*> argv;
  for (const auto& a : opt.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  // Block the forwarded signals across fork so none arrives before the handler knows
  // the child's pid; the child restores the mask before exec.
  sigset_t block, saved;
  sigemptyset(&block);
  for (int s : kForwarded) sigaddset(&block, s);
  ::sigprocmask(SIG_BLOCK, &block, &saved);

  const pid_t child = ::fork();
  if (child < 0) {
    ::sigprocmask(SIG_SETMASK, &saved, nullptr);
    std::cerr << "cumemtrace run: fork failed: " << std::strerror(errno) << "\n";
    ::unlink(manifest.c_str());
    return 127;
  }
  if (child == 0) {
    ::sigprocmask(SIG_SETMASK, &saved, nullptr);
    ::execvp(argv[0], argv.data());
    const int e = errno;
    // Allocating after fork is safe here only because this CLI is single-threaded.
    std::string msg = "cumemtrace run: cannot execute " + opt.command[0] + ": " + std::strerror(e) + "\n";
    [[maybe_unused]] ssize_t n = ::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  // The tracer itself must not be traced by anything it runs later (symbolization).
  ::unsetenv("LD_PRELOAD");
  if (old && *old) ::setenv("LD_PRELOAD", old, 1);

  g_child = child;
  struct sigaction sa{}, saved_sa[std::size(kForwarded)];
  sa.sa_sigaction = forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < std::size(kForwarded); ++i) ::sigaction(kForwarded[i], &sa, &saved_sa[i]);
  ::sigprocmask(SIG_SETMASK, &saved, nullptr);

  // Polls the manifest while waiting, so that a failed allocation's post-mortem appears
  // within a fraction of a second (oom_watch.h).
  int status = 0;
  OomWatch oom(manifest);
  for (;;) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child || (done < 0 && errno != EINTR)) break;
    oom.poll();
    const timespec pause{0, 200'000'000};
    ::nanosleep(&pause, nullptr);
  }
  oom.poll();
  g_child = 0;
  for (size_t i = 0; i < std::size(kForwarded); ++i) ::sigaction(kForwarded[i], &saved_sa[i], nullptr);

  int rc = 0;
  if (WIFEXITED(status)) rc = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) rc = 128 + WTERMSIG(status);

  const auto traces = read_manifest(manifest);
  ::unlink(manifest.c_str());
  if (traces.empty()) std::cerr << "cumemtrace: no trace was written (did the command use CUDA?)\n";
  for (const auto& path : traces) {
    SymbolizeFileResult r = symbolize_file(path);
    if (!r.ok) {
      std::cerr << "cumemtrace: " << path << ": " << r.message << "\n";
      continue;
    }
    std::cerr << "cumemtrace: trace written to " << path << " (" << r.events << " events)";
    if (r.cut_partial) std::cerr << "; its partial last record was cut off";
    std::cerr << "\n";
  }
  return rc;
}

}  // namespace cumemtrace
