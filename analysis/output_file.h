// A file the CLI writes for the user: an export, an html page, a baseline, a JUnit report.
// It is written to a private temporary beside the name given and renamed onto it only when
// whole, so a symlink at that name is replaced rather than written through, a reader never
// sees half a file, and a failed write leaves what was there. The file is created 0600, as
// traces are: it carries command lines, host names and source paths. A character device,
// FIFO or socket at the name, directly or through a symlink (/dev/null, /dev/stdout on a
// pipe or terminal), and a symlink into /proc (/dev/stdout on a file) are written through
// instead, never replaced; a directory or a block device is refused. SIGINT, SIGTERM or
// SIGHUP before the rename removes the temporary (temporaries.h).
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace cumemtrace {

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
  // Flushes, closes and renames the temporary onto the path; false (and error()) on any
  // failure, after which the temporary is gone and the path untouched.
  bool commit();

 private:
  struct Impl;
  std::string path_, tmp_, error_;
  int temp_slot_ = -1;  // temporaries.h: removed if a signal ends the CLI first
  std::unique_ptr<Impl> impl_;
};

// Whether `path` is the same file as one of `inputs` (device and inode); a path that does
// not exist is none of them.
bool names_an_input(const std::string& path, const std::vector<std::string>& inputs);

}  // namespace cumemtrace
