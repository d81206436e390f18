// Option files and patterns are input too (docs/cli.md, "Patterns of yours"): a pattern
// past the bounds of stacks/pattern_bounds.h, or a file past 1 MiB, is a usage error (2)
// naming the rule, its line and the bound, never a crash of regcomp or an exhausted memory.
#include "stacks/pattern_bounds.h"

#include <fstream>
#include <string>

#include "catch.h"
#include "shell.h"
#include "temp_dir.h"
#include "trace_builder.h"

using cumemtrace::pattern_out_of_bounds;
using cumemtrace::test::kCli;
using cumemtrace::test::shell;
using cumemtrace::test::TempDir;
using cumemtrace::test::TraceBuilder;

namespace {

std::string nested(size_t depth) { return std::string(depth, '(') + "a" + std::string(depth, ')'); }

std::string one_alloc(const TempDir& d) {
  const std::string t = d.path + "/t.trace";
  TraceBuilder().process().device(0, 1ull << 30).alloc(10, 0x7000000000, 4096).end(20).write(t);
  return t;
}

}  // namespace

TEST_CASE("pattern bounds: length, nesting and repetition counts as regcomp would expand them") {
  CHECK(pattern_out_of_bounds("^(torch|c10)::.*alloc[a-z_]*$").empty());
  CHECK(pattern_out_of_bounds(nested(32)).empty());
  CHECK(pattern_out_of_bounds(nested(33)) == "parentheses nested more than 32 deep");
  // Parentheses inside a bracket expression or escaped are characters, not groups.
  std::string literal;
  for (int i = 0; i < 40; ++i) literal += "\\([(]";
  CHECK(pattern_out_of_bounds(literal).empty());
  CHECK(pattern_out_of_bounds(std::string(4096, 'a')).empty());
  CHECK(pattern_out_of_bounds(std::string(4097, 'a')) == "4097 bytes long, more than 4096");
  // 20,000 nested: 40,001 bytes, refused before regcomp recurses 20,000 deep.
  CHECK(pattern_out_of_bounds(nested(20000)) == "40001 bytes long, more than 4096");
  CHECK(pattern_out_of_bounds("a{1000}").empty());  // 1,000 atoms
  // 10 + (1 * 1000) * 100 = 100,010 atoms, past 100,000.
  CHECK(pattern_out_of_bounds("0123456789(a{1000}){100}") ==
        "its repetition counts expand it to 100010 atoms, more than 100000");
  // a: 1; {1000}: 1,000; the group {1000}: 1,000,000; the outer {1000}: 10^9.
  CHECK(pattern_out_of_bounds("((a{1000}){1000}){1000}") ==
        "its repetition counts expand it to 1000000000 atoms, more than 100000");
  // {m,} copies m + 1 times, {m,n} n times: (ab){99,} is 200, x{2,50000} 50,000, together 50,200.
  CHECK(pattern_out_of_bounds("(ab){99,}x{2,50000}").empty());
  CHECK(pattern_out_of_bounds("(ab){99,}x{2,99801}") ==
        "its repetition counts expand it to 100001 atoms, more than 100000");
  // Counts past 64 bits saturate rather than wrap to a small number.
  CHECK(pattern_out_of_bounds("((((a{99999}){99999}){99999}){99999}){99999}") ==
        "its repetition counts expand it to over a trillion atoms, more than 100000");
}

TEST_CASE("option patterns: --categories and --allocator-frames, a pattern out of bounds is a usage error naming it") {
  TempDir d;
  const std::string t = one_alloc(d), rules = d.path + "/deep.rules";
  std::ofstream(rules) << "# fine\nweights  " << nested(20000) << "\n";
  auto r = shell(kCli + " report --categories " + rules + " " + t + " 2>&1");
  CHECK(r.status == 2);
  CHECK(r.out == "cumemtrace report: --categories " + rules + ": line 2: not a regular expression: '" +
                     std::string(64, '(') + "'…: 40001 bytes long, more than 4096\n");
  // The pattern last: a repeatable option takes every word after it.
  for (const std::string& command : {std::string("report"), std::string("check"), "html -o " + d.path + "/p.html",
                                     "baseline -o " + d.path + "/b.json"}) {
    INFO(command);
    const std::string limit = command == "check" ? " --max-peak 1GiB" : "";
    r = shell(kCli + " " + command + " " + t + limit + " --allocator-frames '" + nested(33) + "' 2>&1");
    CHECK(r.status == 2);
    CHECK(r.out == "cumemtrace: --allocator-frames: not a regular expression: '" + std::string(33, '(') + "a" +
                       std::string(30, ')') + "'…: parentheses nested more than 32 deep\n");
    r = shell(kCli + " " + command + " " + t + limit + " --allocator-frames '((a{1000}){1000}){1000}' 2>&1");
    CHECK(r.status == 2);
    CHECK(r.out ==
          "cumemtrace: --allocator-frames: not a regular expression: '((a{1000}){1000}){1000}': its "
          "repetition counts expand it to 1000000000 atoms, more than 100000\n");
  }
}

TEST_CASE(
    "option files: --categories reads at most 1 MiB: /dev/zero and a larger file are usage errors, 1 MiB is read") {
  TempDir d;
  const std::string t = one_alloc(d);
  auto r = shell(kCli + " report --categories /dev/zero " + t + " 2>&1");
  CHECK(r.status == 2);
  CHECK(r.out == "cumemtrace report: --categories /dev/zero: larger than 1.00 MiB, the most an option file may hold\n");
  // Exactly 1 MiB of comment lines: read, no rule added.
  const std::string full = d.path + "/full.rules", over = d.path + "/over.rules";
  std::string text;
  while (text.size() < (1u << 20)) text += "#" + std::string(62, 'c') + "\n";  // 64 B a line, 16,384 lines
  std::ofstream(full) << text;
  std::ofstream(over) << text << "#";
  r = shell(kCli + " report --categories " + full + " " + t + " 2>&1 >/dev/null");
  CHECK(r.status == 0);
  CHECK(r.out.empty());
  r = shell(kCli + " report --categories " + over + " " + t + " 2>&1");
  CHECK(r.status == 2);
  CHECK(r.out ==
        "cumemtrace report: --categories " + over + ": larger than 1.00 MiB, the most an option file may hold\n");
}
