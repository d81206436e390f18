#include "write/modules.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <string_view>
#include <vector>

#include <cumemtrace/record_encode.h>
#include <cumemtrace/trace_format.h>

#include "base/loader_lock.h"
#include "resolve/object_range.h"

namespace cumemtrace::interpose {
namespace {

struct Found {
  uint64_t bias, start, end;
  std::string path, build_id;
};

std::string build_id_of(const dl_phdr_info* i) {
  for (int k = 0; k < i->dlpi_phnum; ++k) {
    const ElfW(Phdr)& ph = i->dlpi_phdr[k];
    if (ph.p_type != PT_NOTE) continue;
    auto* p = reinterpret_cast<const char*>(i->dlpi_addr + ph.p_vaddr);
    const char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      auto* n = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const char* name = p + sizeof *n;
      const char* desc = name + ((n->n_namesz + 3) & ~3u);
      if (desc + n->n_descsz > end) break;
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0)
        return std::string(desc, n->n_descsz);
      p = desc + ((n->n_descsz + 3) & ~3u);
    }
  }
  return {};
}

std::string main_program_path() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

}  // namespace

void ModuleScanner::scan_if_changed(std::string& out) {
  struct Ctx {
    unsigned long long adds = 0, subs = 0;
    int visited = 0;
    std::vector<Found> found;
  } ctx;
  if (!loader_usable()) return;  // no stacks to resolve either (loader_lock.h)
  const LoaderUse in_loader;
  dl_iterate_phdr(
      [](dl_phdr_info* i, size_t size, void* p) {
        auto* c = static_cast<Ctx*>(p);
        if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof i->dlpi_subs) {
          c->adds = i->dlpi_adds;
          c->subs = i->dlpi_subs;
        }
        // The first object is the main program, which glibc names "".
        const bool main_program = c->visited++ == 0;
        const AddressRange range = load_segments_range(*i);
        if (range.end == 0) return 0;
        Found f{i->dlpi_addr, range.start, range.end, i->dlpi_name && *i->dlpi_name ? i->dlpi_name : "", {}};
        if (f.path.empty() && main_program) f.path = main_program_path();
        f.build_id = build_id_of(i);
        c->found.push_back(std::move(f));
        return 0;
      },
      &ctx);
  if (scanned_ && ctx.adds == adds_ && ctx.subs == subs_) return;
  scanned_ = true;
  adds_ = ctx.adds;
  subs_ = ctx.subs;
  for (Found& f : ctx.found) {
    // The vDSO has no file to symbolize from.
    if (f.path.empty() || f.path.starts_with("linux-vdso")) continue;
    if (!reported_.emplace(f.bias, f.start, f.path).second) continue;
    put_record<format::RecordType::kModule>(out, format::ModuleRecord{f.bias, f.start, f.end}, f.path, f.build_id);
  }
}

}  // namespace cumemtrace::interpose
