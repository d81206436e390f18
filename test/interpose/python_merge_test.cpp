// Python frames merged into the native stack (analysis/stacks/python_stacks.h): each evaluation
// loop's native frame gives way to the group of Python frames it ran.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "stacks/python_stacks.h"

using namespace cumemtrace;

namespace {

Frame native(const std::string& function) {
  Frame f;
  f.function = function;
  return f;
}
Frame py(const std::string& function, bool entry) {
  Frame f;
  f.python = true;
  f.function = function;
  f.entry = entry;
  return f;
}
std::vector<std::string> names(const std::vector<Frame>& fs) {
  std::vector<std::string> out;
  for (const auto& f : fs) out.push_back((f.python ? "py:" : "") + f.function);
  return out;
}

}  // namespace

TEST_CASE("each evaluation-loop frame is replaced by the Python frames it ran, up to its entry frame") {
  // 3.11+: the inner loop (called from C by list()) ran gen; the outer one ran main and f.
  const std::vector<Frame> n = {native("cudaMalloc"),
                                native("ffi_call"),
                                native("_PyEval_EvalFrameDefault"),
                                native("list_extend"),
                                native("_PyEval_EvalFrameDefault"),
                                native("Py_RunMain"),
                                native("main")};
  const std::vector<Frame> p = {py("gen", true), py("f", false), py("main", false), py("<module>", true)};
  CHECK(names(merge_stacks(n, p)) == std::vector<std::string>{"cudaMalloc", "ffi_call", "py:gen", "list_extend", "py:f",
                                                              "py:main", "py:<module>", "Py_RunMain", "main"});
}

TEST_CASE("Python frames beyond a native stack cut short go after its last frame") {
  const std::vector<Frame> n = {native("cudaMalloc"), native("_PyEval_EvalFrameDefault"), native("list_extend")};
  const std::vector<Frame> p = {py("gen", true), py("main", true), py("<module>", true)};
  CHECK(names(merge_stacks(n, p)) ==
        std::vector<std::string>{"cudaMalloc", "py:gen", "list_extend", "py:main", "py:<module>"});
}

TEST_CASE("without symbols (no evaluation-loop frame to be found) the Python frames follow the native ones") {
  const std::vector<Frame> n = {native(""), native("")};
  const std::vector<Frame> p = {py("f", false), py("<module>", true)};
  CHECK(names(merge_stacks(n, p)) == std::vector<std::string>{"", "", "py:f", "py:<module>"});
  CHECK(names(merge_stacks(n, {})) == std::vector<std::string>{"", ""});
}

TEST_CASE("python_frames walks the trace's PyFrame tree innermost first, and stops at a loop") {
  Trace t;
  t.py_strings = {{1, "train.py"}, {2, "forward"}, {3, "<module>"}};
  t.py_frames = {{1, PyFrameNode{1, 0, 1, 3, 90, format::kPyFrameEntry}}, {2, PyFrameNode{2, 1, 1, 2, 88, 0}}};
  const auto fs = python_frames(t, 2);
  REQUIRE(fs.size() == 2);
  CHECK(fs[0].file == "train.py");
  CHECK(fs[0].function == "forward");
  CHECK(fs[0].line == 88);
  CHECK_FALSE(fs[0].entry);
  CHECK(fs[1].function == "<module>");
  CHECK(fs[1].line == 90);
  CHECK(fs[1].entry);
  t.py_frames[1].parent = 2;  // damaged: a loop
  CHECK(python_frames(t, 2).size() == 2);
  CHECK(python_frames(t, 0).empty());
}
