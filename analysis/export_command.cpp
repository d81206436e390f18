// `cumemtrace export`: docs/cli.md. Reads the traces, checks the options, and hands them
// to one writer of export/ (view code: memviz.h, chrome.h, folded.h, jsonl.h).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "commands.h"
#include "export/chrome.h"
#include "export/folded.h"
#include "export/jsonl.h"
#include "export/memviz.h"
#include "live_time.h"
#include "trace_check.h"

namespace cumemtrace {

int cmd_export(const ExportOptions& opt) {
  const auto usage = [](const std::string& why) {
    std::cerr << "cumemtrace export: " << why << "\n";
    return 2;
  };
  if (opt.format != "memviz" && opt.format != "chrome" && opt.format != "folded" && opt.format != "jsonl")
    return usage("--format wants memviz, chrome, folded or jsonl, not '" + opt.format + "'");
  if (opt.format == "jsonl" && (opt.output.empty() || opt.output == "-"))
    return usage("--format jsonl writes a directory of tables: give it with -o DIR");
  if (opt.format != "jsonl" && opt.zstd) return usage("--zstd applies to --format jsonl only");
  // Two processes' addresses are unrelated: one snapshot cannot hold both.
  if (opt.format == "memviz" && opt.paths.size() != 1) return usage("--format memviz takes exactly one trace");
  if (opt.format != "folded" && !opt.at.empty()) return usage("--at applies to --format folded only");

  std::vector<std::unique_ptr<Trace>> traces;
  for (const auto& p : opt.paths) {
    traces.push_back(std::make_unique<Trace>(read_trace(p)));
    if (!check_trace(*traces.back())) return 1;
  }
  std::vector<FoldedInput> folded;
  if (opt.format == "folded")
    for (const auto& t : traces) {
      std::string error;
      auto at = parse_moment(opt.at.empty() ? "peak" : opt.at, *t, error);
      if (!at) return usage(error);
      folded.push_back({t.get(), *at});
    }

  if (opt.format == "jsonl") {
    std::vector<const Trace*> ts;
    for (const auto& t : traces) ts.push_back(t.get());
    try {
      std::filesystem::create_directories(opt.output);
      const JsonlCounts c = write_jsonl(opt.output, ts, opt.zstd);
      std::cerr << "cumemtrace export: " << c.rows << " rows in " << c.files << " tables in " << opt.output << "\n";
    } catch (const std::exception& e) {
      std::cerr << "cumemtrace export: " << e.what() << "\n";
      return 1;
    }
    return 0;
  }

  std::ofstream file;
  const bool to_stdout = opt.output.empty() || opt.output == "-";
  if (!to_stdout) {
    file.open(opt.output, std::ios::binary | std::ios::trunc);
    if (!file) {
      std::cerr << "cumemtrace export: cannot write " << opt.output << "\n";
      return 1;
    }
  }
  std::ostream& out = to_stdout ? std::cout : file;
  const std::string where = to_stdout ? "stdout" : opt.output;

  if (opt.format == "memviz") {
    const MemvizCounts c = write_memviz(out, *traces.front());
    std::cerr << "cumemtrace export: " << c.events << " trace entries, " << c.segments << " segments live at the end, to "
              << where << "\n";
  } else if (opt.format == "chrome") {
    std::vector<const Trace*> ts;
    for (const auto& t : traces) ts.push_back(t.get());
    const uint64_t n = write_chrome(out, ts);
    std::cerr << "cumemtrace export: " << n << " trace events to " << where << "\n";
  } else {
    const uint64_t bytes = write_folded(out, folded);
    std::cerr << "cumemtrace export: " << bytes << " live bytes to " << where << "\n";
  }
  if (!out) {
    std::cerr << "cumemtrace export: writing " << where << " failed\n";
    return 1;
  }
  return 0;
}

}  // namespace cumemtrace
