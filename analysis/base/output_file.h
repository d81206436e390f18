// A file the CLI writes for the user: an export, an html page, a baseline, a JUnit report,
// an index. The directory it goes in is reached without following any link (a symlink in
// the path is refused: include/cumemtrace/rules/no_follow.h), and a symlink at the name itself is
// refused too, never written through nor replaced: a link to /proc/self/root/<path>/file
// would otherwise reach any file the user can write. A regular file (or nothing) at the
// name is written to a private temporary beside it and renamed onto it only when whole, so
// a reader never sees half a file and a failed write leaves what was there; it is created
// 0600, as traces are: it carries command lines, host names and source paths. A character
// device at the name (/dev/null) is written through, never replaced; so is a FIFO that has
// a reader (one without would make the command wait for one: refused, unless --force). The
// names of the CLI's own descriptors (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N)
// write to that descriptor. A directory, a block device or a socket is refused. SIGINT,
// SIGTERM or SIGHUP before the rename removes the temporary (temporaries.h).
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace cumemtrace {

// --force: wait for a reader of a FIFO at the output name instead of refusing it.
void set_output_force(bool force);

class OutputFile {
 public:
  // Opens the temporary. error() is set (and stream() discards) when `path` names one of
  // `inputs` (the same file by device and inode, however it is spelt) or cannot be created.
  explicit OutputFile(std::string path, const std::vector<std::string>& inputs = {});
  ~OutputFile();  // removes the temporary unless commit() succeeded
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream();
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  // The command's exit status after a failure (docs/cli.md, "Files the commands write"):
  // 2 when the name is one of the inputs (a usage error), 1 for anything else.
  int exit_status() const { return is_input_ ? 2 : 1; }
  // Flushes, closes and renames the temporary onto the path; false (and error()) on any
  // failure, after which the temporary is gone and the path untouched.
  bool commit();

 private:
  struct Impl;
  void open_at_name();
  std::string path_, tmp_, tmp_name_, name_, error_;
  bool is_input_ = false;
  int dir_fd_ = -1;     // the name's directory, reached without links
  int temp_slot_ = -1;  // temporaries.h: removed if a signal ends the CLI first
  std::unique_ptr<Impl> impl_;
};

// Makes directory `path` and any missing parent (0700): `export --format jsonl -o DIR`, and
// the folder of `run -o`. Folders on the way may be ordinary links, as above any file the
// CLI writes (no_follow.h: DirLinks::kOrdinary), never a magic one (/proc/self/root/...);
// `path` itself must not be a link unless `itself_may_be_link` (it is the folder above a
// file). True when it is a directory reached so; else false and `error`.
bool make_output_directory(const std::string& path, std::string* error, bool itself_may_be_link = false);

// Whether `path` is the same file as one of `inputs` (device and inode); a path that does
// not exist is none of them.
bool names_an_input(const std::string& path, const std::vector<std::string>& inputs);

}  // namespace cumemtrace
