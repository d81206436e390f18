// `cumemtrace run`: start a command under LD_PRELOAD=libcumemtrace.so, wait for it, then
// symbolize the traces it wrote, on this machine, while the modules' files are here.
//
// Which traces: every traced process (the command and any child it starts, each writes
// its own trace) appends its trace's absolute path to a private manifest file named by
// CUMEMTRACE_MANIFEST. Reading that file is the only reliable way to find them: output
// patterns expand per pid and rank, and children may chdir.
//
// Nothing is printed to stdout: the command's stdout belongs to the user.
#include <cumemtrace/trace_format.h>

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <string_view>

#include "cli/command.h"
#include "base/escape.h"
#include "base/plural.h"
#include "cli/run/oom_watch.h"
#include "cli/run/run_preflight.h"
#include "symbols/symbolize.h"
#include "cli/run/torch_oom.h"
#include "cli/trace_inputs.h"

namespace cumemtrace {
namespace {

struct RunOptions {
  std::optional<std::string> output;  // CUMEMTRACE_OUTPUT pattern
  std::optional<int> depth;           // CUMEMTRACE_DEPTH
  std::vector<std::string> command;
};

volatile sig_atomic_t g_child = 0;
volatile sig_atomic_t g_stop_waiting = 0;

// How long `run` waits for processes the command left behind (they are ours to wait
// for: `run` is their subreaper) before it lists the traces without them.
constexpr int kDescendantWaitSeconds = 30;

// Every signal a process can catch is passed on, except: the job-control stops and
// SIGCONT (the terminal must stop and continue `run` itself, and they reach the command
// through its process group anyway), SIGCHLD (ours), and the faults (SIGSEGV, SIGBUS,
// SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT), which only `run`'s own bugs raise.
bool forwarded(int sig) {
  switch (sig) {
    case SIGKILL:
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
    case SIGCONT:
    case SIGCHLD:
    case SIGSEGV:
    case SIGBUS:
    case SIGFPE:
    case SIGILL:
    case SIGTRAP:
    case SIGSYS:
    case SIGABRT: return false;
    default: return sig < 32 || sig >= SIGRTMIN;  // glibc keeps 32 and 33 for itself
  }
}

// A signal from the terminal (Ctrl-C, Ctrl-\) already went to the whole foreground
// process group, the child included: forwarding it would deliver it twice (Python
// would see two KeyboardInterrupts). Only signals sent to us alone (kill, a batch
// scheduler) carry si_code <= 0 (SI_USER, SI_QUEUE) and need passing on; but not one
// we sent ourselves (a SIGPIPE from writing to a closed stderr says SI_USER too). Once
// the command has ended, such a signal ends the wait for what it left behind.
void forward(int sig, siginfo_t* info, void*) {
  if (!info || info->si_code > 0 || info->si_pid == ::getpid()) return;
  if (g_child > 0) ::kill(pid_t(g_child), sig);
  else g_stop_waiting = 1;
}

std::string self_dir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, size_t(n));
  auto slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

// The manifest lives in a private directory of its own (0700), removed with it at the
// end (by the watchdog if `run` was killed), so nothing is left in TMPDIR. An unusable
// TMPDIR falls back to /tmp, then to the current directory. Empty when none works.
struct Manifest {
  std::string dir, path;
};

Manifest make_manifest() {
  const char* tmpdir = ::getenv("TMPDIR");
  std::vector<std::string> places;
  if (tmpdir && *tmpdir) places.emplace_back(tmpdir);
  places.emplace_back("/tmp");
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd)) places.emplace_back(cwd);
  for (const auto& place : places) {
    std::string dir = place + "/cumemtrace-run-XXXXXX";
    if (!::mkdtemp(dir.data())) {
      std::cerr << "cumemtrace run: cannot create a private directory in " << place << " (" << std::strerror(errno)
                << "); trying the next place\n";
      continue;
    }
    const std::string path = dir + "/manifest";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    // The marker is what lets the library tell a manifest from any other file.
    const std::string_view marker = format::kManifestMarker;
    const bool ok = fd >= 0 && ::write(fd, marker.data(), marker.size()) == ssize_t(marker.size());
    if (fd >= 0) ::close(fd);
    if (ok) return {dir, path};
    ::unlink(path.c_str());
    ::rmdir(dir.c_str());
  }
  std::cerr << "cumemtrace run: no place for a manifest; the command runs traced, but its traces will not be "
               "listed or symbolized (use `cumemtrace symbolize`)\n";
  return {};
}

void remove_manifest(const Manifest& m) {
  if (m.dir.empty()) return;
  ::unlink(m.path.c_str());
  ::rmdir(m.dir.c_str());
}

// Symbolizes and lists every trace the manifest names, on stderr.
void list_traces(const Manifest& m) {
  if (m.path.empty()) return;
  const auto traces = read_manifest(m.path);
  if (traces.empty()) std::cerr << "cumemtrace: no trace was written (did the command use CUDA?)\n";
  for (const auto& path : traces) {
    SymbolizeFileResult r = symbolize_file(path);
    if (!r.ok) {
      std::cerr << "cumemtrace: " << printable(path) << ": " << printable(r.message) << "\n";
      continue;
    }
    std::cerr << "cumemtrace: trace written to " << printable(path) << " (" << count_of(r.events, "event") << ")";
    if (r.cut_partial) std::cerr << "; its partial last record was cut off";
    std::cerr << "\n";
  }
}

// ---- the watchdog ----
//
// `run` killed with SIGKILL can do nothing more: the command goes on, and nobody would
// list and symbolize its traces or remove the manifest. So a small watchdog process,
// started before the command, holds one end of a socket: `run` sends it a pidfd of the
// command, and at its normal end the byte 'd'. End of file without 'd' means `run` died:
// the watchdog then waits for the command to end, lists the traces, removes the
// manifest. The watchdog is not the command's parent (PR_SET_PDEATHSIG on the command
// would kill the user's job with `run`), and it is started by a double fork before
// `run` becomes a subreaper, so `run` never waits for it.

constexpr char kDone = 'd', kChild = 'c', kNoPidfd = 'n';

void send_tag(int sock, char tag, int fd = -1) {
  iovec iov{&tag, 1};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  while (::sendmsg(sock, &msg, MSG_NOSIGNAL) < 0 && errno == EINTR) {}
}

// The tag read, with any descriptor passed along in `fd`; 0 at end of file.
char receive_tag(int sock, int& fd) {
  char tag = 0;
  iovec iov{&tag, 1};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  while ((n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
  if (n <= 0) return 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return tag;
}

[[noreturn]] void watchdog(int sock, const Manifest& m) {
  // The terminal's signals and a closed stderr are not the watchdog's to die of.
  for (int sig : {SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGPIPE}) ::signal(sig, SIG_IGN);
  // Nor is the command's stdin and stdout: holding them would keep a pipe open.
  if (const int null = ::open("/dev/null", O_RDWR); null >= 0) ::dup2(null, 0), ::dup2(null, 1), ::close(null);
  int pidfd = -1;
  char tag;
  bool started = false;
  while ((tag = receive_tag(sock, pidfd)) != 0) {
    if (tag == kDone) ::_exit(0);
    started = true;
  }
  if (started) {
    std::cerr << "cumemtrace run was killed; its watchdog lists the traces when the command ends\n";
    pollfd p{pidfd, POLLIN, 0};
    while (pidfd >= 0 && ::poll(&p, 1, -1) < 0 && errno == EINTR) {}
    list_traces(m);
  }
  remove_manifest(m);
  ::_exit(0);
}

// Returns `run`'s end of the socket, or -1 (no watchdog: `run` goes on without one).
int start_watchdog(const Manifest& m) {
  if (m.path.empty()) return -1;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return -1;
  const pid_t middle = ::fork();
  if (middle == 0) {
    ::close(sv[0]);
    if (::fork() == 0) watchdog(sv[1], m);
    ::_exit(0);
  }
  ::close(sv[1]);
  if (middle < 0) {
    ::close(sv[0]);
    return -1;
  }
  while (::waitpid(middle, nullptr, 0) < 0 && errno == EINTR) {}
  return sv[0];
}

// Waits, bounded, for the processes the command left behind (orphans come to us: we
// are their subreaper), so that their traces are complete before they are listed.
void wait_for_descendants() {
  bool said = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kDescendantWaitSeconds);
  for (;;) {
    const pid_t pid = ::waitpid(-1, nullptr, WNOHANG);
    if (pid > 0) continue;
    if (pid < 0 && errno != EINTR) return;  // ECHILD: none left
    if (!said) {
      std::cerr << "cumemtrace run: the command has ended; waiting up to " << kDescendantWaitSeconds
                << " s for the processes it started\n";
      said = true;
    }
    if (g_stop_waiting || std::chrono::steady_clock::now() >= deadline) {
      std::cerr << "cumemtrace run: some processes the command started are still running; their traces may be "
                   "incomplete\n";
      return;
    }
    const timespec ms20{0, 20'000'000};
    ::nanosleep(&ms20, nullptr);
  }
}

// The preload library beside this executable (<bin>/../lib/libcumemtrace.so), or
// $CUMEMTRACE_LIBRARY.
std::string preload_library_path() {
  if (const char* env = ::getenv("CUMEMTRACE_LIBRARY"); env && *env) return env;
  std::string p = self_dir() + "/../lib/libcumemtrace.so";
  char real[PATH_MAX];
  return ::realpath(p.c_str(), real) ? std::string(real) : p;
}

// Returns the exit status to exit with: the command's, or 128+signal if a signal
// killed it; 127 if it could not be started.
int run_traced(const RunOptions& opt) {
  if (opt.command.empty()) {
    std::cerr << "cumemtrace run: no command given (usage: cumemtrace run [options] -- CMD ARGS...)\n";
    return 2;
  }
  if (const std::string why = why_not_runnable(opt.command[0]); !why.empty()) {
    std::cerr << "cumemtrace run: " << printable(opt.command[0]) << ": " << why << "; nothing was run\n";
    return 127;
  }
  if (opt.output) {
    if (const std::string why = make_output_folder(*opt.output); !why.empty()) {
      std::cerr << "cumemtrace run: -o " << printable(*opt.output) << ": " << why << "; nothing was run\n";
      return 2;
    }
  }
  const std::string lib = preload_library_path();
  if (::access(lib.c_str(), R_OK) != 0) {
    std::cerr << "cumemtrace run: preload library " << lib
              << " not found (build it, or set CUMEMTRACE_LIBRARY to its path)\n";
    return 127;
  }

  const Manifest manifest = make_manifest();
  const int watchdog_sock = start_watchdog(manifest);
  // Orphaned descendants of the command come to us, not to init: we wait for them.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);

  // Prepare the environment before fork so the child only execs.
  const char* old = ::getenv("LD_PRELOAD");
  const std::string old_preload = old ? old : "";
  const std::string preload = old && *old ? lib + ":" + old : lib;
  std::vector<std::string> env_strings = {"LD_PRELOAD=" + preload};
  if (!manifest.path.empty()) env_strings.push_back("CUMEMTRACE_MANIFEST=" + manifest.path);
  // NVTX ranges and marks become trace marks (interpose/api/nvtx.cpp). NVTX serves one tool:
  // one already set there (Nsight) is chained, the library passing it every call.
  if (const char* nvtx = ::getenv("NVTX_INJECTION64_PATH"); nvtx && *nvtx && lib != nvtx)
    env_strings.push_back("CUMEMTRACE_NVTX_CHAIN=" + std::string(nvtx));
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
  for (int s = 1; s < NSIG; ++s)
    if (forwarded(s)) sigaddset(&block, s);
  ::sigprocmask(SIG_BLOCK, &block, &saved);

  const pid_t child = ::fork();
  if (child < 0) {
    ::sigprocmask(SIG_SETMASK, &saved, nullptr);
    std::cerr << "cumemtrace run: fork failed: " << std::strerror(errno) << "\n";
    remove_manifest(manifest);
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
  if (watchdog_sock >= 0) {
    // Before any wait: the child cannot be reaped (and its pid reused) until we wait.
    const int pidfd = int(::syscall(SYS_pidfd_open, child, 0));
    send_tag(watchdog_sock, pidfd >= 0 ? kChild : kNoPidfd, pidfd);
    if (pidfd >= 0) ::close(pidfd);
  }
  // The tracer itself must not be traced by anything it runs later (symbolization).
  ::unsetenv("LD_PRELOAD");
  if (old && *old) ::setenv("LD_PRELOAD", old_preload.c_str(), 1);

  g_child = child;
  std::vector<std::pair<int, struct sigaction>> saved_sa;
  struct sigaction sa {};
  sa.sa_sigaction = forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int s = 1; s < NSIG; ++s) {
    struct sigaction before {};
    if (forwarded(s) && ::sigaction(s, &sa, &before) == 0) saved_sa.emplace_back(s, before);
  }
  ::sigprocmask(SIG_SETMASK, &saved, nullptr);

  // Polls the manifest while waiting, so that a failed allocation's post-mortem appears
  // within a fraction of a second (oom_watch.h).
  int status = 0;
  OomWatch oom(manifest.path);
  for (;;) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child || (done < 0 && errno != EINTR)) break;
    oom.poll();
    const timespec pause{0, 200'000'000};
    ::nanosleep(&pause, nullptr);
  }
  oom.poll();
  g_child = 0;
  wait_for_descendants();
  for (const auto& [s, before] : saved_sa) ::sigaction(s, &before, nullptr);

  int rc = 0;
  if (WIFEXITED(status)) rc = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) rc = 128 + WTERMSIG(status);

  list_traces(manifest);
  remove_manifest(manifest);
  if (watchdog_sock >= 0) {
    send_tag(watchdog_sock, kDone);
    ::close(watchdog_sock);
  }
  return rc;
}

// `run --help`, in the shape CLI11 gives every other command's help (it is parsed by
// hand: see parse_run).
constexpr const char* kRunHelp =
    "Run a command with CUDA memory tracing, then symbolize its traces\n"
    "Usage: cumemtrace run [OPTIONS] [--] CMD ARGS...\n"
    "\n"
    "Runs CMD with libcumemtrace.so preloaded and exits with CMD's status (128+signal if a\n"
    "signal killed it; 127 if CMD cannot be run).\n"
    "\n"
    "Positionals:\n"
    "  CMD ARGS...                 The command, verbatim (options of ours end at -- or at its first word)\n"
    "\n"
    "Options:\n"
    "  -h,--help                   Print this help message and exit\n"
    "  -o,--output PATTERN         Trace file pattern (%p pid, %h host, %r rank; a missing folder is created)\n"
    "  --depth N                   Native frames per stack (default 32)\n"
    "  --torch-oom                 Record PyTorch's block map at an out-of-memory error (docs/cli.md)\n";
constexpr const char* kRunUsage =
    "usage: cumemtrace run [-o|--output PATTERN] [--depth N] [--torch-oom] [--] CMD ARGS...\n";

// Options of `run` end at `--` or at the first word that is not one of ours: all that
// follows is the command, verbatim.
int parse_run(int argc, char** argv) {
  RunOptions opt;
  int i = 2;
  auto value = [&](std::string_view arg, std::string_view name, std::string& out) {
    if (arg == name) {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(name) + " needs a value");
      out = argv[++i];
      return true;
    }
    if (arg.size() > name.size() + 1 && arg.starts_with(name) && arg[name.size()] == '=') {
      out = std::string(arg.substr(name.size() + 1));
      return true;
    }
    return false;
  };
  try {
    for (; i < argc; ++i) {
      std::string_view a = argv[i];
      std::string v;
      if (a == "--") {
        ++i;
        break;
      }
      if (a == "-h" || a == "--help") {
        std::cout << kRunHelp;
        return 0;
      }
      if (value(a, "-o", v) || value(a, "--output", v)) {
        opt.output = v;
      } else if (value(a, "--depth", v)) {
        int d = -1;
        const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
        if (ec != std::errc() || p != v.data() + v.size() || d < 0)
          throw std::invalid_argument("--depth wants a count of frames (0 or more), not '" + v + "'");
        opt.depth = d;
      } else if (a == "--torch-oom") {
        if (!enable_torch_oom()) return 127;
      } else if (a.starts_with("-")) {
        throw std::invalid_argument("unknown option " + std::string(a) + " (put the command after --)");
      } else {
        break;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "cumemtrace run: " << e.what() << "\n" << kRunUsage;
    return 2;
  }
  for (; i < argc; ++i) opt.command.emplace_back(argv[i]);
  return run_traced(opt);
}

}  // namespace

Command register_run(CLI::App& app) {
  Command c;
  // Parsed by hand (parse_run): the command's own options must pass through untouched, and
  // CLI11's prefix-command mode reorders them. The subcommand is for --help.
  c.sub = app.add_subcommand("run", "Run a command with CUDA memory tracing, then symbolize its traces")
              ->footer("usage: cumemtrace run [-o PATTERN] [--depth N] [--torch-oom] [--] CMD ARGS...");
  c.parse_by_hand = parse_run;
  return c;
}

}  // namespace cumemtrace
