// `cumemtrace index`: docs/cli.md.
#include <iostream>
#include <optional>

#include "replay/checkpoint.h"
#include "cli/command.h"
#include "base/escape.h"
#include "base/plural.h"
#include "base/output_file.h"
#include "base/progress.h"
#include "read/reader_chunks.h"
#include "read/damage/trace_check.h"

namespace cumemtrace {
namespace {

// Writes `output` (default TRACE.idx): a checkpoint at least every `every` events (checkpoint.h).
int cmd_index(const std::string& path, const std::string& output, uint64_t every) {
  const std::string out = output.empty() ? path + ".idx" : output;
  if (names_an_input(out, {path})) {
    std::cerr << "cumemtrace index: " << printable(out) << " is the input trace\n";
    return 2;
  }
  std::optional<ProgressScope> progress(std::in_place, "cumemtrace index");
  const MappedFile file(path);
  Trace t;
  IndexStats stats;
  std::string index, why;
  if (file.error().empty()) {
    why = make_index(file.bytes(), path, every, t, index, stats);
  } else {
    t.path = path;
    t.error = ReadError{0, "cannot read " + path + ": " + file.error(), false};
  }
  progress.reset();
  if (!check_trace(t)) return 1;
  if (!why.empty()) {
    std::cerr << "cumemtrace index: no index for " << printable(path) << ": " << why << "\n";
    return 1;
  }
  OutputFile f(out, {path});
  if (f.ok()) f.stream().write(index.data(), std::streamsize(index.size()));
  if (!f.ok() || !f.commit()) {
    std::cerr << "cumemtrace index: " << f.error() << "\n";
    return f.exit_status();
  }
  std::cout << printable(out) << ": " << count_of(stats.checkpoints, "checkpoint") << " over "
            << count_of(stats.events, "event") << " (at chunk ends, at least " << every << " events apart), "
            << stats.index_bytes << " bytes\n";
  if (stats.checkpoints == 1)
    std::cerr << "cumemtrace index: only the start of the trace: it has fewer than " << every
              << " events or one chunk, so `live` gains nothing from this index\n";
  return 0;
}

}  // namespace

Command register_index(CLI::App& app) {
  struct Options {
    std::string trace, output;
    int64_t every = 500'000;
  };
  const auto o = std::make_shared<Options>();
  Command c;
  c.sub = app.add_subcommand("index", "Write TRACE.idx: checkpoints that let `live --at` start near a moment");
  c.sub->add_option("trace", o->trace, "Trace file")->required();
  c.sub->add_option("-o,--output", o->output, "Index file (default TRACE.idx, where `live` looks for it)")
      ->check(kNonEmpty);
  c.sub->add_option("--every", o->every, "Events between checkpoints, at least (they fall at chunk ends)")
      ->capture_default_str()
      ->check(kPositiveCount);
  add_shared_options(c.sub, kForceOutput);
  c.run = [o] { return cmd_index(o->trace, o->output, uint64_t(o->every)); };
  return c;
}

}  // namespace cumemtrace
