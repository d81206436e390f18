// A streaming writer of Python pickles, protocol 4, restricted to the opcodes that
// PyTorch's memory_viz page parses (its hand-written unpickler in MemoryViz.js knows
// only PROTO 2-4, FRAME, containers, BININT*, LONG1, SHORT_BINUNICODE/BINUNICODE,
// NONE/NEWTRUE/NEWFALSE, MEMOIZE/BINGET/LONG_BINGET and STOP; it rejects protocol 5).
// The opcodes and their limits: docs/formats.md, "Pickle encoding".
//
// Framing follows protocol 4 as CPython writes it: PROTO 4 outside any frame, then the
// opcodes in FRAME blocks (opcode 0x95, u64 length, that many bytes) of about 64 KiB,
// each cut only between opcodes, because CPython's unpickler refuses an opcode that
// straddles two frames ("pickle exhausted before end of frame"). STOP ends the last frame.
//
// Containers are written as CPython does: EMPTY_LIST/EMPTY_DICT, MARK, items,
// APPENDS/SETITEMS, in batches of 1000 items (CPython's _BATCHSIZE). Strings are
// memoized (MEMOIZE on first use, BINGET after), since a snapshot repeats the same file
// and function names in every frame; so are objects the caller names (remember/recall): a
// stack's frame list, written once and referred to from every block and event that has
// it, so that the pickle grows with the distinct stacks, not with their uses.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cumemtrace {

class PickleWriter {
 public:
  explicit PickleWriter(std::ostream& out);

  void integer(int64_t v);
  void unsigned_integer(uint64_t v);  // LONG1 above INT64_MAX
  void string(std::string_view s);
  void boolean(bool v);
  void none();

  // A list: begin_list(), then each item written and followed by item(), then end().
  void begin_list();
  // A dict: begin_dict(), then key and value written and followed by item(), then end().
  void begin_dict();
  void item();
  void end();

  // A tuple of the two values written since the call.
  void tuple2();

  // The object just written (a container: after its end()) is kept in the memo as `key`.
  void remember(const std::string& key);
  // When an object was remembered as `key`: writes a reference to it (BINGET) and returns
  // true. Else writes nothing and returns false.
  bool recall(const std::string& key);
  // Memo entries so far (strings and remembered objects), and references written to them.
  uint64_t memo_entries() const { return next_memo_; }
  uint64_t memo_references() const { return references_; }

  // STOP and the last frame; the writer must not be used after.
  void finish();

 private:
  void op(uint8_t code);
  void bytes(const void* p, size_t n);
  void le(uint64_t v, int n);
  void maybe_flush();
  void flush_frame();
  void get(uint32_t index);
  uint32_t memoize();

  struct Open {
    bool dict = false;
    size_t pending = 0;  // items since the last MARK
  };

  std::ostream& out_;
  std::string frame_;
  std::vector<Open> open_;
  std::unordered_map<std::string, uint32_t> memo_;     // strings
  std::unordered_map<std::string, uint32_t> objects_;  // remembered objects, by the caller's key
  uint32_t next_memo_ = 0;
  uint64_t references_ = 0;
};

}  // namespace cumemtrace
