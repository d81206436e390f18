// `cumemtrace export`: docs/cli.md. Reads the traces, checks the options, and hands them
// to the writer of the format's row (export_formats.h): a format held whole reads one trace
// whole; the others read one trace at a time, a large one in passes.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "base/escape.h"
#include "cli/command.h"
#include "cli/export_formats.h"
#include "cli/nearest_name.h"
#include "read/event_source.h"
#include "replay/live_time.h"
#include "base/output_file.h"
#include "read/damage/trace_check.h"

namespace cumemtrace {
namespace {

// Every trace checked before anything is written: one unreadable writes nothing. The
// writers that take one trace at a time (all but the one held whole) then read each again, in
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

// The moment of each trace for a moment's format (`--at`, by default its peak), found in
// a pass of its own over a large trace, as `live` finds it. Returns 0, or the exit status:
// 1 (said on stderr), 2 (a usage error, `error` says which).
int export_moments(const ExportOptions& opt, const std::vector<FileStamp>& checked, std::vector<ExportInput>& out,
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

// "a, b or c"; "a and b" with `last` " and ".
std::string listed(const std::vector<std::string>& names, const char* last = " or ") {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? last : ", ") + names[i];
  return out;
}

// The names of the formats that read as `reads` (all with none), in the table's order.
std::vector<std::string> format_names(std::optional<ExportReads> reads = std::nullopt) {
  std::vector<std::string> out;
  for (const ExportFormat& f : export_formats())
    if (!reads || f.reads == *reads) out.push_back(f.name);
  return out;
}

int cmd_export(const ExportOptions& opt) {
  const auto usage = [](const std::string& why) {
    std::cerr << "cumemtrace export: " << why << "\n";
    return 2;
  };
  const std::vector<std::string> formats = format_names();
  const auto row = std::find_if(export_formats().begin(), export_formats().end(),
                                [&](const ExportFormat& f) { return opt.format == f.name; });
  if (row == export_formats().end())
    return usage("--format wants " + listed(formats) + ", not '" + opt.format + "'" +
                 did_you_mean(opt.format, formats));
  const ExportFormat& format = *row;
  const bool to_stdout = opt.output.empty() || opt.output == "-";
  const std::string directories = listed(format_names(ExportReads::kDirectory), " and ");
  if (format.reads == ExportReads::kDirectory && to_stdout)
    return usage("--format " + opt.format + " writes a directory of tables: give it with -o DIR");
  if (format.reads != ExportReads::kDirectory && opt.zstd)
    return usage("--zstd applies to --format " + directories + " only");
  // Two processes' addresses are unrelated: one snapshot cannot hold both.
  if (format.reads == ExportReads::kWhole && opt.paths.size() != 1)
    return usage("--format " + opt.format + " takes exactly one trace");
  const bool at_a_moment = format.reads == ExportReads::kAtMoment;
  const std::string moments = listed(format_names(ExportReads::kAtMoment), " and ");
  if (!at_a_moment && opt.at_given) return usage("--at applies to --format " + moments + " only");
  if (!at_a_moment && opt.window) return usage("--from and --to apply to --format " + moments + " only");
  if (opt.at_given && opt.window) return usage("--at is one moment, --from and --to a window: give one or the other");
  if (!to_stdout && names_an_input(opt.output, opt.paths)) return usage(opt.output + " is one of the input traces");

  std::unique_ptr<TraceFile> whole;  // kWhole: the one trace, read in passes when large
  ExportRun run{opt, {}, nullptr};
  if (format.reads == ExportReads::kWhole) {
    whole = std::make_unique<TraceFile>(opt.paths.front());
    if (!check_trace(whole->trace())) return 1;
    run.whole = whole.get();
  } else {
    auto stamps = all_readable(opt.paths);
    if (!stamps) return 1;
    if (at_a_moment) {
      std::string error;
      if (const int rc = export_moments(opt, *stamps, run.inputs, error); rc) return rc == 2 ? usage(error) : rc;
    } else {
      for (size_t i = 0; i < opt.paths.size(); ++i) run.inputs.push_back({opt.paths[i], (*stamps)[i], 0});
    }
  }
  std::string said;
  if (format.reads == ExportReads::kDirectory) return format.write(run, std::cout, said);

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
  if (const int rc = format.write(run, out, said); rc) return rc;
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
  // The options' help names the formats each applies to, from the table.
  std::string kinds;
  for (const ExportFormat& f : export_formats())
    kinds += (kinds.empty() ? "" : ", ") + std::string(f.name) + " (" + f.help + ")";
  const std::string whole = listed(format_names(ExportReads::kWhole), ", ");
  const std::string directories = listed(format_names(ExportReads::kDirectory), ", ");
  const std::string moments = listed(format_names(ExportReads::kAtMoment), ", ");
  add_traces(c.sub, o->paths, "Trace files, folders of traces, or a `run` manifest (" + whole + ": one)");
  c.sub->add_option("--format", o->format, kinds)->required();
  c.sub->add_option("-o,--output", o->output, "File to write (default: stdout); " + directories + ": a directory");
  c.sub->add_flag("--zstd", o->zstd, directories + ": zstd-compressed NAME.jsonl.zst");
  c.sub->add_option("--at", o->at, moments + ": the moment, 'peak' (default), 'end', ns or '12.5 s'");
  c.sub->add_option("--from", o->from, moments + ": the highest moment from WHEN (as --at; default the start) to --to");
  c.sub->add_option("--to", o->to, moments + ": ... up to WHEN (as --at; default 'end')");
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
