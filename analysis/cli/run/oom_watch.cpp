#include "cli/run/oom_watch.h"

#include "cumemtrace/rules/manifest_line.h"
#include <cumemtrace/trace_format.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "base/escape.h"
#include "base/plural.h"
#include "read/event_source.h"
#include "reports/report.h"
#include "render/report_text.h"
#include "symbols/symbolize.h"

namespace cumemtrace {

void OomWatch::poll() {
  std::ifstream in(manifest_, std::ios::binary);
  if (!in) return;
  in.seekg(std::streamoff(offset_));
  std::string fresh((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  offset_ += fresh.size();
  partial_ += fresh;
  std::set<std::string> traces;  // several failures since the last poll: one post-mortem each
  size_t start = 0;
  for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
    const std::string_view line(partial_.data() + start, nl - start);
    if (line.starts_with(format::kManifestOomPrefix))
      traces.emplace(manifest::unescape_path(line.substr(format::kManifestOomPrefix.size())));
  }
  partial_.erase(0, start);
  for (const auto& t : traces) write_post_mortem(t);
}

bool write_post_mortem(const std::string& trace) {
  // A long job's trace is read in passes (event_source.h), as `report` reads it: the watch
  // runs beside the job, and must not take the memory the job may be short of.
  const TraceFile file(trace);
  const Trace& t = file.trace();
  if (!t.header_ok) return false;
  std::unordered_map<uint64_t, Symbol> symbols;
  if (t.symbols.empty()) symbols = resolve_symbols(t);  // the modules are on this machine
  ReportOptions opt;
  opt.extra_symbols = &symbols;
  const Report rep = build_report(t, file.events(), opt);
  if (file.changed()) {
    std::cerr << "cumemtrace: no post-mortem: " << file.changed_message() << "\n";
    return false;
  }
  std::ostringstream text;
  text << "cumemtrace post-mortem, written by `cumemtrace run` while the job was running, from the trace as it was"
       << " then (" << count_of(file.events().size(), "event") << ")\n\n";
  write_text(text, rep);
  // Replaced whole, never written through a link: a new private file renamed over the old.
  const std::string out = trace + ".oom.txt", tmp = out + ".tmp";
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const std::string s = text.str();
  const bool ok = ::write(fd, s.data(), s.size()) == ssize_t(s.size());
  ::close(fd);
  if (!ok || std::rename(tmp.c_str(), out.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return false;
  }
  std::cerr << "cumemtrace: an allocation failed in pid " << (t.process ? t.process->pid : 0) << ": post-mortem in "
            << printable(out) << "\n";
  return true;
}

}  // namespace cumemtrace
