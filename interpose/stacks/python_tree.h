// Python stacks deduplicated into a prefix tree (PyFrameRecords) with interned names
// (PyStringRecords), as StackTree does for native stacks: each node and each name is
// written once, the first time it is seen; an event carries only its innermost node.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "stacks/python_frames.h"
#include "stacks/python_walk.h"

namespace cumemtrace::interpose {

// How names and lines are read from the process: python_frames.h's functions, or a
// test's own.
struct PyReader {
  std::string (*string)(uint64_t str);   // "?" when unreadable
  int32_t (*line)(const PyRawFrame& f);  // -1 when unknown
};

class PyStackTree {
 public:
  explicit PyStackTree(PyReader reader = {python_string, python_line}) : read_(reader) {}

  // One thread's previous stack as StackTree::Memo keeps it (stack_memo.h).
  struct Memo {
    std::vector<PyRawFrame> frame;
    std::vector<uint32_t> node;
  };

  // Returns the id of `s` (0 when empty), appending records not written before to `out`.
  // Reads the names and lines of code objects and places it has not seen
  // (python_frames.h): call it under the tracker's lock, which it never leaves.
  uint32_t intern(const PyRawStack& s, std::string& out);
  // The same id, looking up only the frames inside the outer part `s` shares with `memo`,
  // and `memo` made `s`'s. Frames are compared as recorded, not by their address: a
  // frame at the address of one in the previous walk, with the same code and offset, may
  // still be another activation with other callers (two functions of equal frame size
  // calling the same one, a generator resumed from elsewhere), and a code object may
  // be another at a freed one's address (exec in a loop), so no walk stops early there.
  uint32_t intern(const PyRawStack& s, std::string& out, Memo& memo);

  // One frame of an interned stack, as its PyFrameRecord names it; the strings live as
  // long as the tree.
  struct Frame {
    const std::string* file;
    const std::string* function;
    int32_t line;  // -1 when unknown
  };
  // The frames of stack `id` (an id intern() returned), innermost first, at most `max`;
  // none for 0 or an id it never gave. For cumemtrace_live_sites_python (api.h), which
  // names a live site's Python line while the program runs.
  std::vector<Frame> frames(uint32_t id, size_t max) const;

 private:
  // A code object, as far as its names go. Its address alone could be reused by another
  // code object after the first is freed, and exec or compile in a loop reuses the name
  // objects' addresses in step with it: on 3.12+ co_version tells them apart; before,
  // such a reuse gets the earlier code's names (README, "What it does not see").
  struct CodeKey {
    uint64_t code, filename, name;
    uint32_t version;
    bool operator==(const CodeKey&) const = default;
  };
  struct CodeHash {
    size_t operator()(const CodeKey& k) const {
      return std::hash<uint64_t>()((k.code ^ uint64_t(k.version) << 47) * 0x9E3779B97F4A7C15ull ^ k.filename * 31 ^
                                   k.name);
    }
  };
  using NodeKey = std::tuple<uint32_t, uint32_t, uint32_t, int32_t, uint32_t>;  // parent, file, function, line, flags
  struct NodeHash {
    size_t operator()(const NodeKey& k) const {
      const auto [p, f, fn, l, fl] = k;
      return std::hash<uint64_t>()((uint64_t(p) << 32 | f) * 0x9E3779B97F4A7C15ull ^
                                   (uint64_t(fn) << 33 | uint32_t(l) << 1 | fl));
    }
  };

  uint32_t string_id(const std::string& s, std::string& out);
  // The node of frame `f` called from node `parent`, made (and written) if new.
  uint32_t child(uint32_t parent, const PyRawFrame& f, std::string& out);

  // A frame's place in its code: the line table's answer, decoded once per place. The
  // table object is in the key for the reason the names are in CodeKey.
  struct PlaceKey {
    uint64_t code, linetable;
    int32_t offset;
    uint32_t version;
    bool operator==(const PlaceKey&) const = default;
  };
  struct PlaceHash {
    size_t operator()(const PlaceKey& k) const {
      return std::hash<uint64_t>()((k.code ^ uint64_t(k.version) << 47) * 0x9E3779B97F4A7C15ull ^ k.linetable * 31 ^
                                   uint64_t(uint32_t(k.offset)));
    }
  };

  PyReader read_;

  std::unordered_map<CodeKey, std::pair<uint32_t, uint32_t>, CodeHash> codes_;  // -> file, function ids
  std::unordered_map<PlaceKey, int32_t, PlaceHash> lines_;
  // Whole stacks seen before, by a 64-bit hash of every frame's keys: a training loop
  // allocates from the same few stacks over and over, and one lookup then replaces three
  // per frame (an equal hash of different stacks, at odds of 2^-64, would misname one).
  std::unordered_map<uint64_t, uint32_t> stacks_;
  std::unordered_map<std::string, uint32_t> strings_;
  std::unordered_map<NodeKey, uint32_t, NodeHash> nodes_;
  // By id (index 0 unused): the keys above, which an unordered_map never moves.
  std::vector<const std::string*> string_of_{nullptr};
  std::vector<const NodeKey*> node_of_{nullptr};
  uint32_t next_string_ = 1, next_node_ = 1;
};

}  // namespace cumemtrace::interpose
