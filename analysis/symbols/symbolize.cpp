#include "symbols/symbolize.h"

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

#include "stacks/stacks.h"

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

}  // namespace cumemtrace
