// The formats of `cumemtrace export`: export_formats.h says what a row is.
#include "cli/export_formats.h"

#include <iostream>

#include "base/output_file.h"
#include "base/plural.h"
#include "render/export/chrome.h"
#include "render/export/folded.h"
#include "render/export/jsonl.h"
#include "render/export/memviz.h"
#include "render/export/pprof.h"
#include "render/export/speedscope.h"

namespace cumemtrace {
namespace {

// A trace read again after its check: false, having said why, when it is not the file
// checked or changed while it was read (a file is then not put in place; stdout has what
// was written).
template <class Add>
bool read_again(const ExportInput& in, Add&& add) {
  const TraceFile file(in.path);
  if (!as_checked(in.checked, file)) return false;
  add(file);
  if (file.changed()) {
    std::cerr << "cumemtrace export: " << file.changed_message() << "\n";
    return false;
  }
  return true;
}

int write_memviz_format(const ExportRun& run, std::ostream& out, std::string& said) {
  const MemvizCounts c = write_memviz(out, run.whole->trace(), run.whole->events());
  if (run.whole->changed()) {  // a file is not put in place; stdout has what was written
    std::cerr << "cumemtrace export: " << run.whole->changed_message() << "\n";
    return 1;
  }
  said = std::to_string(c.events) + " trace entries, " + std::to_string(c.segments) + " segments live at the end";
  return 0;
}

int write_chrome_format(const ExportRun& run, std::ostream& out, std::string& said) {
  ChromeWriter w(out);
  for (const ExportInput& in : run.inputs)
    if (!read_again(in, [&](const TraceFile& f) { w.add(f.trace(), f.events()); })) return 1;
  said = std::to_string(w.close()) + " trace events";
  return 0;
}

// The stacks live in each trace at its moment, as folded and the formats drawn from its
// lines have them; false, having said why, when a trace was not read as checked.
bool fold(const ExportRun& run, FoldedStacks& stacks) {
  for (const ExportInput& in : run.inputs)
    if (!read_again(in,
                    [&](const TraceFile& f) { stacks.add(f.trace(), f.events(), in.at_ns, run.inputs.size() > 1); }))
      return false;
  return true;
}

int write_folded_format(const ExportRun& run, std::ostream& out, std::string& said) {
  FoldedStacks stacks;
  if (!fold(run, stacks)) return 1;
  said = std::to_string(stacks.write(out)) + " live bytes";
  return 0;
}

int write_pprof_format(const ExportRun& run, std::ostream& out, std::string& said) {
  PprofProfile profile;
  for (const ExportInput& in : run.inputs)
    if (!read_again(in,
                    [&](const TraceFile& f) { profile.add(f.trace(), f.events(), in.at_ns, run.inputs.size() > 1); }))
      return 1;
  said = std::to_string(profile.write(out)) + " bytes in use in a pprof profile";
  return 0;
}

// The profile is named by its traces (docs/cli.md, `export`).
int write_speedscope_format(const ExportRun& run, std::ostream& out, std::string& said) {
  FoldedStacks stacks;
  if (!fold(run, stacks)) return 1;
  std::string name;
  for (const std::string& path : run.opt.paths) name += (name.empty() ? "" : ", ") + path;
  said = std::to_string(write_speedscope(out, stacks, name)) + " live bytes in a speedscope profile";
  return 0;
}

// A directory of tables: it says where they went itself.
int write_jsonl_format(const ExportRun& run, std::ostream&, std::string&) {
  const ExportOptions& opt = run.opt;
  try {
    if (std::string error; !make_output_directory(opt.output, &error)) throw std::runtime_error(error);
    JsonlTables tables(opt.output, opt.paths, opt.zstd);
    for (const ExportInput& in : run.inputs) {
      const TraceFile file(in.path);
      if (!as_checked(in.checked, file)) return 1;
      tables.add(file.trace(), file.events());
      if (file.changed()) throw std::runtime_error(file.changed_message() + "; no table written");
    }
    const JsonlCounts c = tables.close();
    std::cerr << "cumemtrace export: " << count_of(c.rows, "row") << " in " << count_of(c.files, "table") << " in "
              << opt.output << "\n";
  } catch (const std::exception& e) {
    std::cerr << "cumemtrace export: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

const ExportFormat kFormats[] = {
    {"memviz", "PyTorch pickle", ExportReads::kWhole, write_memviz_format},
    {"chrome", "trace-event JSON", ExportReads::kEach, write_chrome_format},
    {"folded", "stacks", ExportReads::kAtMoment, write_folded_format},
    {"jsonl", "tables", ExportReads::kDirectory, write_jsonl_format},
    {"pprof", "profile.proto", ExportReads::kAtMoment, write_pprof_format},
    {"speedscope", "speedscope JSON", ExportReads::kAtMoment, write_speedscope_format},
};

}  // namespace

std::span<const ExportFormat> export_formats() { return kFormats; }

bool as_checked(const FileStamp& then, const TraceFile& file) {
  const std::string why = not_as_checked(then, file);
  if (!why.empty()) std::cerr << "cumemtrace export: " << why << "\n";
  return why.empty();
}

}  // namespace cumemtrace
