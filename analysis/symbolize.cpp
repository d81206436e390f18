#include "symbolize.h"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "stacks.h"

namespace cumemtrace {
namespace {

std::string demangle(const char* name) {
  if (!name) return {};
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> d(abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && d ? std::string(d.get()) : std::string(name);
}

// One Dwfl per module: modules may be re-reported at overlapping addresses (dlclose
// then dlopen), which one Dwfl session would refuse.
struct DwflSession {
  Dwfl_Callbacks callbacks{};
  char* debuginfo_path = nullptr;
  Dwfl* dwfl = nullptr;

  DwflSession() {
    // Symbolizing must never reach for the network (libdw asks debuginfod servers
    // when DEBUGINFOD_URLS is set): it runs on GPU machines with none, and would hang.
    unsetenv("DEBUGINFOD_URLS");
    callbacks.find_elf = dwfl_build_id_find_elf;
    callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    callbacks.section_address = dwfl_offline_section_address;
    callbacks.debuginfo_path = &debuginfo_path;
    dwfl = dwfl_begin(&callbacks);
  }
  ~DwflSession() {
    if (dwfl) dwfl_end(dwfl);
  }
  DwflSession(const DwflSession&) = delete;
  DwflSession& operator=(const DwflSession&) = delete;
};

void resolve_module(const ModuleInfo& m, const std::vector<uint64_t>& ips, std::unordered_map<uint64_t, Symbol>& out,
                    SymbolizeStats& stats) {
  // A regular file only: a FIFO (or device) at a module's path would block us forever.
  struct stat st {};
  if (::stat(m.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || ::access(m.path.c_str(), R_OK) != 0) {
    ++stats.modules_missing;
    return;
  }
  DwflSession s;
  if (!s.dwfl) return;
  dwfl_report_begin(s.dwfl);
  // add_p_vaddr=true: `base` is then the load bias (dlpi_addr), which is what we recorded.
  Dwfl_Module* mod = dwfl_report_elf(s.dwfl, m.path.c_str(), m.path.c_str(), -1, m.load_bias, true);
  dwfl_report_end(s.dwfl, nullptr, nullptr);
  if (!mod) {
    ++stats.modules_missing;
    return;
  }
  if (!m.build_id.empty()) {
    const unsigned char* bits = nullptr;
    GElf_Addr vaddr = 0;
    const int n = dwfl_module_build_id(mod, &bits, &vaddr);
    if (n > 0 && (size_t(n) != m.build_id.size() || std::memcmp(bits, m.build_id.data(), size_t(n)) != 0)) {
      ++stats.modules_mismatch;
      return;
    }
  }
  for (uint64_t ip : ips) {
    // A return address points after the call; ip-1 is inside the calling instruction,
    // which matters when the call is the last instruction of a function or a line.
    const Dwarf_Addr addr = ip ? ip - 1 : 0;
    Symbol sym;
    sym.ip = ip;
    GElf_Sym elf_sym;
    GElf_Off off = 0;
    if (const char* name = dwfl_module_addrinfo(mod, addr, &off, &elf_sym, nullptr, nullptr, nullptr))
      sym.function = demangle(name);
    if (Dwfl_Line* line = dwfl_module_getsrc(mod, addr)) {
      int lineno = 0;
      if (const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr)) sym.file = file;
      sym.line = lineno > 0 ? uint32_t(lineno) : 0;
    }
    if (sym.function.empty() && sym.file.empty()) continue;
    ++stats.resolved;
    out[ip] = std::move(sym);
  }
}

void put_u32(std::string& b, uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); }
void put_string(std::string& b, const std::string& s) {
  put_u32(b, uint32_t(s.size()));
  b += s;
}

bool write_all(int fd, const std::string& b) {
  size_t done = 0;
  while (done < b.size()) {
    ssize_t n = ::write(fd, b.data() + done, b.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

}  // namespace

std::unordered_map<uint64_t, Symbol> resolve_symbols(const Trace& trace, SymbolizeStats* stats_out) {
  SymbolizeStats stats;
  std::unordered_map<uint64_t, Symbol> out;
  Stacks stacks(trace);
  std::set<uint64_t> ips;
  for (const auto& [id, node] : trace.stack_nodes) ips.insert(node.ip);
  stats.ips = ips.size();
  std::map<const ModuleInfo*, std::vector<uint64_t>> by_module;
  for (uint64_t ip : ips)
    if (const ModuleInfo* m = stacks.module_of(ip)) by_module[m].push_back(ip);
  for (const auto& [m, list] : by_module) resolve_module(*m, list, out, stats);
  if (stats_out) *stats_out = stats;
  return out;
}

SymbolizeFileResult symbolize_file(const std::string& path) {
  SymbolizeFileResult r;
  Trace t = read_trace(path);
  r.events = t.events.size();
  if (!t.header_ok) {
    r.message = t.error ? t.error->message : "unreadable trace";
    return r;
  }
  if (t.error && !t.error->truncated) {
    // Appending after damage would leave the symbols unreachable behind it.
    r.message = "not symbolized: " + t.error->message;
    return r;
  }
  if (t.symbol_records > 0) {
    r.ok = r.already = true;
    return r;
  }
  auto symbols = resolve_symbols(t, &r.stats);
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    r.message = "cannot open " + path + " for writing: " + std::strerror(errno);
    return r;
  }
  if (t.error) {
    if (::ftruncate(fd, off_t(t.records_end)) != 0) {
      r.message = "cannot truncate " + path + ": " + std::strerror(errno);
      ::close(fd);
      return r;
    }
    r.cut_partial = true;
  }
  std::string buf;
  for (const auto& [ip, s] : symbols) {
    std::string payload;
    format::SymbolRecord rec{ip, s.line, 0};
    payload.append(reinterpret_cast<const char*>(&rec), sizeof rec);
    put_string(payload, s.function);
    put_string(payload, s.file);
    format::RecordHeader h{uint16_t(format::RecordType::kSymbol), 0, uint32_t(payload.size())};
    buf.append(reinterpret_cast<const char*>(&h), sizeof h);
    buf += payload;
  }
  const off_t end = ::lseek(fd, 0, SEEK_END);
  if (end < 0 || !write_all(fd, buf)) {
    r.message = "cannot append symbols to " + path + ": " + std::strerror(errno);
    // A full disk must not leave half a record: the trace stays as it was (less any
    // partial record cut above, which no reader could use).
    if (end >= 0 && ::ftruncate(fd, end) != 0) r.message += " (and cutting it back failed)";
    ::close(fd);
    return r;
  }
  ::close(fd);
  r.ok = true;
  r.appended = symbols.size();
  return r;
}

}  // namespace cumemtrace
