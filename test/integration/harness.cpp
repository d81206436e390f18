#include "harness.h"

#include <regex>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace fs = std::filesystem;

namespace harness {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TempDir::TempDir() {
  char tmpl[] = "/tmp/cumemtrace-test-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  path = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path, ec);
}

std::vector<std::string> TempDir::files(const std::string& prefix) const {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(path))
    if (e.path().filename().string().starts_with(prefix)) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

#ifdef CUMEMTRACE_CLI_EXTERNAL
// The ThreadSanitizer tree reads with the plain tree's CLI (CMakeLists.txt); its `run` must
// still preload this tree's library, which it would not find beside itself. Set before any
// test starts, so every child inherits it.
const int g_external_cli_library = setenv("CUMEMTRACE_LIBRARY", CUMEMTRACE_PRELOAD, 0);
#endif

std::string program(const std::string& name) { return std::string(CUMEMTRACE_PROGRAMS_DIR) + "/" + name; }
std::string cli() { return CUMEMTRACE_CLI; }
std::string preload_library() { return CUMEMTRACE_PRELOAD; }

namespace {

pid_t start(const std::vector<std::string>& argv, const Env& env, const std::string& out, const std::string& err) {
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("LD_LIBRARY_PATH", CUMEMTRACE_SIM_DIR, 1);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(o, 1);
    dup2(e, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

Result finish(pid_t pid, const std::string& out, const std::string& err) {
  int status = 0;
  waitpid(pid, &status, 0);
  Result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

}  // namespace

Result run(const std::vector<std::string>& argv, const Env& env, int signal_after_ms, int sig) {
  TempDir io;
  const std::string out = io.path + "/stdout", err = io.path + "/stderr";
  const pid_t pid = start(argv, env, out, err);
  if (signal_after_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(signal_after_ms));
    kill(pid, sig);
  }
  return finish(pid, out, err);
}

Result run_until(const std::vector<std::string>& argv, const Env& env,
                 const std::function<bool(const std::string&)>& ready, int sig) {
  TempDir io;
  const std::string out = io.path + "/stdout", err = io.path + "/stderr";
  const pid_t pid = start(argv, env, out, err);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  const auto running = [pid] {
    siginfo_t info{};
    return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0;
  };
  while (running() && !ready(slurp(out)) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  kill(pid, sig);
  return finish(pid, out, err);
}

Result traced(const TempDir& dir, const std::vector<std::string>& argv, Env env, int signal_after_ms) {
  // An interpreter built elsewhere, under the sanitized tree's library: its own memory is not
  // ours to judge, and LeakSanitizer's stop-the-world at its exit crashed there ("Tracer
  // caught signal 11") or not by the length of its arguments. The programs built here keep
  // the leak check. Outside ASan the variable is ignored.
  if (const char* asan = std::getenv("ASAN_OPTIONS");
      asan && fs::path(argv.at(0)).filename().string().starts_with("python"))
    env.try_emplace("ASAN_OPTIONS", std::string(asan) + ":detect_leaks=0");
  env.try_emplace("LD_PRELOAD", preload_library());
  env.try_emplace("CUMEMTRACE_OUTPUT", dir.path + "/trace-%p.trace");
  return run(argv, env, signal_after_ms);
}

std::string only_trace(const TempDir& dir) {
  const auto traces = dir.files("trace-");
  if (traces.size() != 1) throw std::runtime_error("expected one trace, found " + std::to_string(traces.size()));
  return traces[0];
}

nlohmann::json report(const std::string& trace) {
  const Result r = run({cli(), "report", "--json", "--top", "50", trace});
  if (r.exit_code != 0) throw std::runtime_error("cumemtrace report failed: " + r.err);
  return nlohmann::json::parse(r.out);
}

size_t dump_events(const std::string& trace, const std::string& pattern) {
  const Result d = run({cli(), "dump", trace});
  if (d.exit_code != 0) throw std::runtime_error("cumemtrace dump failed: " + d.err);
  const std::regex re(pattern);
  size_t n = 0;
  for (auto it = std::sregex_iterator(d.out.begin(), d.out.end(), re); it != std::sregex_iterator(); ++it) ++n;
  return n;
}

size_t flushed_events(const TempDir& dir, const std::string& prefix, const std::string& text) {
  const auto traces = dir.files(prefix);
  if (traces.size() != 1) return 0;
  const Result d = run({cli(), "dump", traces[0]});
  size_t n = 0;
  for (size_t at = d.out.find(text); at != std::string::npos; at = d.out.find(text, at + 1)) ++n;
  return n;
}

std::string integration_program(const std::string& name) { return std::string(CUMEMTRACE_TEST_LIBS_DIR) + "/" + name; }

TracedProgram::TracedProgram(const std::string& name, const std::string& mode) {
  result = traced(dir, {integration_program(name), mode}, {{"CUMEMTRACE_COMPRESS", "0"}});
  if (result.exit_code != 0)
    throw std::runtime_error(name + " " + mode + " exited " + std::to_string(result.exit_code) + ": " + result.out);
  trace = only_trace(dir);
}

nlohmann::json live_at_end(const std::string& trace) {
  const Result r = run({cli(), "live", "--json", "--at", "18446744073709551615", trace});
  if (r.exit_code != 0) throw std::runtime_error("cumemtrace live failed: " + r.err);
  return nlohmann::json::parse(r.out).at(0);
}

const nlohmann::json& device(const nlohmann::json& j, int ordinal) {
  for (const auto& d : j.at("devices"))
    if (d.at("device").get<int>() == ordinal) return d;
  throw std::runtime_error("no device " + std::to_string(ordinal) + " in the report");
}

}  // namespace harness
