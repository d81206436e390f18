// `cumemtrace export`: docs/cli.md. Reads the traces, checks the options, and hands them
// to one writer of export/ (view code: memviz.h, chrome.h, folded.h, jsonl.h). jsonl,
// chrome and folded read one trace at a time, a large one in passes; memviz reads it whole.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "base/escape.h"
#include "cli/command.h"
#include "cli/nearest_name.h"
#include "read/event_source.h"
#include "render/export/chrome.h"
#include "render/export/folded.h"
#include "render/export/pprof.h"
#include "render/export/jsonl.h"
#include "render/export/memviz.h"
#include "replay/live_time.h"
#include "base/output_file.h"
#include "read/damage/trace_check.h"

namespace cumemtrace {
namespace {

struct ExportOptions {
  std::string format;              // memviz, chrome, folded or jsonl
  std::vector<std::string> paths;  // traces
  std::string output;              // file (jsonl: directory); empty or "-": stdout
  std::string at;                  // folded: a moment (live_time.h) ...
  bool at_given = false;           // ... if --at was given (an empty one is an error); else peak
  std::string from, to;            // folded, pprof: a window (live_time.h peak_moment_between) ...
  bool from_given = false;         // ... its start, else the trace's ("0 s")
  bool to_given = false;           // ... its end, else "end"
  bool window = false;             // either given
  bool zstd = false;               // jsonl: NAME.jsonl.zst
};

// Every trace checked before anything is written: one unreadable writes nothing. The
// writers that take one trace at a time (jsonl, chrome, folded) then read each again, in
// passes when large (event_source.h), so that a job of many traces, or one long trace, is
// never held whole. Returns each file's stamp as checked (nothing when one is unreadable),
// so that a later reading can tell that it reads the file checked (not_as_checked).
std::optional<std::vector<FileStamp>> all_readable(const std::vector<std::string>& paths) {
  std::vector<FileStamp> stamps;
  for (const auto& p : paths) {
    const TraceFile file(p);
    if (!check_trace(file.trace(), std::cerr)) return std::nullopt;
    stamps.push_back(file.stamp());
  }
  return stamps;
}

// False, having said why, when `file` is not the file checked as `then`.
bool as_checked(const FileStamp& then, const TraceFile& file) {
  const std::string why = not_as_checked(then, file);
  if (!why.empty()) std::cerr << "cumemtrace export: " << why << "\n";
  return why.empty();
}

int export_jsonl(const ExportOptions& opt) {
  const auto checked = all_readable(opt.paths);
  if (!checked) return 1;
  try {
    if (std::string error; !make_output_directory(opt.output, &error)) throw std::runtime_error(error);
    JsonlTables tables(opt.output, opt.paths, opt.zstd);
    for (size_t i = 0; i < opt.paths.size(); ++i) {
      const TraceFile file(opt.paths[i]);
      if (!as_checked((*checked)[i], file)) return 1;
      tables.add(file.trace(), file.events());
      if (file.changed()) throw std::runtime_error(file.changed_message() + "; no table written");
    }
    const JsonlCounts c = tables.close();
    std::cerr << "cumemtrace export: " << c.rows << " rows in " << c.files << " tables in " << opt.output << "\n";
  } catch (const std::exception& e) {
    std::cerr << "cumemtrace export: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

struct FoldedAt {
  std::string path;
  FileStamp checked;
  uint64_t at_ns;
};

// The moment of each trace for `--format folded` (`--at`, by default its peak), found in
// a pass of its own over a large trace, as `live` finds it. Returns 0, or the exit status:
// 1 (said on stderr), 2 (a usage error, `error` says which).
int folded_moments(const ExportOptions& opt, const std::vector<FileStamp>& checked, std::vector<FoldedAt>& out,
                   std::string& error) {
  const std::string moment = opt.at_given ? opt.at : "peak";
  for (size_t i = 0; i < opt.paths.size(); ++i) {
    const TraceFile file(opt.paths[i]);
    if (!as_checked(checked[i], file)) return 1;
    const Trace& t = file.trace();
    std::optional<uint64_t> at;
    if (opt.window) {
      const auto bound = [&](const std::string& text, const char* option) -> std::optional<uint64_t> {
        const EventFacts facts = event_facts(t, file.events(), text.find("peak") != std::string::npos);
        auto v = parse_moment(text, t, error, &facts.known);
        // parse_moment names --at; the window's bounds are other options.
        if (!v && error.starts_with("--at")) error.replace(0, 4, option);
        return v;
      };
      const std::optional<uint64_t> from = bound(opt.from_given ? opt.from : "0 s", "--from");
      const std::optional<uint64_t> to = from ? bound(opt.to_given ? opt.to : "end", "--to") : std::nullopt;
      if (!from || !to) return 2;
      if (*to < *from) {
        error = "--to is before --from";
        return 2;
      }
      at = peak_moment_between(t, file.events(), *from, *to);
      if (!at) {
        std::cerr << "cumemtrace export: " << printable(t.path) << ": " << (opt.paths.size() > 1 ? "left out: " : "")
                  << "no device memory was live between --from and --to\n";
        if (opt.paths.size() > 1) continue;
        return 1;
      }
    } else if (file.holds_events()) {
      at = parse_moment(moment, t, error);
    } else {
      const EventFacts facts = event_facts(t, file.events(), moment.find("peak") != std::string::npos);
      at = parse_moment(moment, t, error, &facts.known);
    }
    if (file.changed()) {
      std::cerr << "cumemtrace export: " << file.changed_message() << "\n";
      return 1;
    }
    // Of a job's traces, one with no device memory (a launcher, a data loader) has no
    // peak and nothing to add to the flame graph: it is left out, not the whole export.
    if (!at && moment == "peak" && opt.paths.size() > 1) {
      std::cerr << "cumemtrace export: " << printable(t.path) << ": left out: no device memory was ever live in it\n";
      continue;
    }
    if (!at) return 2;
    out.push_back({opt.paths[i], checked[i], *at});
  }
  return 0;
}

int cmd_export(const ExportOptions& opt) {
  const auto usage = [](const std::string& why) {
    std::cerr << "cumemtrace export: " << why << "\n";
    return 2;
  };
  const std::vector<std::string> formats = {"memviz", "chrome", "folded", "jsonl", "pprof"};
  if (std::find(formats.begin(), formats.end(), opt.format) == formats.end())
    return usage("--format wants memviz, chrome, folded, jsonl or pprof, not '" + opt.format + "'" +
                 did_you_mean(opt.format, formats));
  if (opt.format == "jsonl" && (opt.output.empty() || opt.output == "-"))
    return usage("--format jsonl writes a directory of tables: give it with -o DIR");
  if (opt.format != "jsonl" && opt.zstd) return usage("--zstd applies to --format jsonl only");
  // Two processes' addresses are unrelated: one snapshot cannot hold both.
  if (opt.format == "memviz" && opt.paths.size() != 1) return usage("--format memviz takes exactly one trace");
  const bool at_a_moment = opt.format == "folded" || opt.format == "pprof";
  if (!at_a_moment && opt.at_given) return usage("--at applies to --format folded and pprof only");
  if (!at_a_moment && opt.window) return usage("--from and --to apply to --format folded and pprof only");
  if (opt.at_given && opt.window) return usage("--at is one moment, --from and --to a window: give one or the other");
  const bool to_stdout = opt.output.empty() || opt.output == "-";
  if (!to_stdout && names_an_input(opt.output, opt.paths)) return usage(opt.output + " is one of the input traces");

  if (opt.format == "jsonl") return export_jsonl(opt);

  std::unique_ptr<TraceFile> memviz;  // memviz: the trace, read in passes when large
  std::vector<FoldedAt> folded;       // folded: each trace's moment
  std::vector<FileStamp> checked;
  if (opt.format == "chrome" || at_a_moment) {
    auto stamps = all_readable(opt.paths);
    if (!stamps) return 1;
    checked = std::move(*stamps);
  }
  if (at_a_moment) {
    std::string error;
    if (const int rc = folded_moments(opt, checked, folded, error); rc) return rc == 2 ? usage(error) : rc;
  } else if (opt.format == "memviz") {
    memviz = std::make_unique<TraceFile>(opt.paths.front());
    if (!check_trace(memviz->trace())) return 1;
  }

  std::unique_ptr<OutputFile> file;
  if (!to_stdout) {
    file = std::make_unique<OutputFile>(opt.output, opt.paths);
    if (!file->ok()) {
      std::cerr << "cumemtrace export: " << file->error() << "\n";
      return file->exit_status();
    }
  }
  std::ostream& out = to_stdout ? std::cout : file->stream();
  const std::string where = to_stdout ? "stdout" : opt.output;
  // Said only once the file is in place: a failed write must not follow a success line.
  std::string said;

  if (opt.format == "memviz") {
    const MemvizCounts c = write_memviz(out, memviz->trace(), memviz->events());
    if (memviz->changed()) {  // a file is not put in place; stdout has what was written
      std::cerr << "cumemtrace export: " << memviz->changed_message() << "\n";
      return 1;
    }
    said = std::to_string(c.events) + " trace entries, " + std::to_string(c.segments) + " segments live at the end";
  } else if (opt.format == "chrome") {
    ChromeWriter w(out);
    for (size_t i = 0; i < opt.paths.size(); ++i) {
      const TraceFile tf(opt.paths[i]);
      if (!as_checked(checked[i], tf)) return 1;
      w.add(tf.trace(), tf.events());
      if (tf.changed()) {  // a file is not put in place; stdout has what was written
        std::cerr << "cumemtrace export: " << tf.changed_message() << "\n";
        return 1;
      }
    }
    said = std::to_string(w.close()) + " trace events";
  } else if (opt.format == "pprof") {
    PprofProfile profile;
    for (const FoldedAt& f : folded) {
      const TraceFile tf(f.path);
      if (!as_checked(f.checked, tf)) return 1;
      profile.add(tf.trace(), tf.events(), f.at_ns, folded.size() > 1);
      if (tf.changed()) {
        std::cerr << "cumemtrace export: " << tf.changed_message() << "\n";
        return 1;
      }
    }
    said = std::to_string(profile.write(out)) + " bytes in use in a pprof profile";
  } else {
    FoldedStacks stacks;
    for (const FoldedAt& f : folded) {
      const TraceFile tf(f.path);
      if (!as_checked(f.checked, tf)) return 1;
      stacks.add(tf.trace(), tf.events(), f.at_ns, folded.size() > 1);
      if (tf.changed()) {
        std::cerr << "cumemtrace export: " << tf.changed_message() << "\n";
        return 1;
      }
    }
    said = std::to_string(stacks.write(out)) + " live bytes";
  }
  out.flush();
  if (!out || (file && !file->commit())) {
    std::cerr << "cumemtrace export: "
              << (file && !file->error().empty() ? file->error() : "writing " + where + " failed") << "\n";
    return 1;
  }
  std::cerr << "cumemtrace export: " << said << " to " << where << "\n";
  return 0;
}

}  // namespace

Command register_export(CLI::App& app) {
  const auto o = std::make_shared<ExportOptions>();
  Command c;
  c.sub = app.add_subcommand("export", "Write traces for other tools: memory_viz, Perfetto, flame graphs");
  add_traces(c.sub, o->paths, "Trace files, folders of traces, or a `run` manifest (memviz: one)");
  c.sub
      ->add_option(
          "--format", o->format,
          "memviz (PyTorch pickle), chrome (trace-event JSON), folded (stacks), jsonl (tables), pprof (profile.proto)")
      ->required();
  c.sub->add_option("-o,--output", o->output, "File to write (default: stdout); jsonl: a directory");
  c.sub->add_flag("--zstd", o->zstd, "jsonl: zstd-compressed NAME.jsonl.zst");
  c.sub->add_option("--at", o->at, "folded, pprof: the moment, 'peak' (default), 'end', ns or '12.5 s'");
  c.sub->add_option("--from", o->from,
                    "folded, pprof: the highest moment from WHEN (as --at; default the start) to --to");
  c.sub->add_option("--to", o->to, "folded, pprof: ... up to WHEN (as --at; default 'end')");
  add_shared_options(c.sub, kCallSiteOptions | kForceOutput);
  c.run = [o, sub = c.sub] {
    if (!expand_inputs(o->paths, "export")) return 1;
    o->at_given = sub->count("--at") > 0;
    o->from_given = sub->count("--from") > 0;
    o->to_given = sub->count("--to") > 0;
    o->window = o->from_given || o->to_given;
    return cmd_export(*o);
  };
  return c;
}

}  // namespace cumemtrace
