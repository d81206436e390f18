// `report --view top-allocations|temporary|sizes` (render/views/, docs/cli.md "Views") on a
// hand-built trace whose every figure is worked out in three_sites.h.
#include <string>

#include "catch.h"
#include "shell.h"
#include "sizes.h"
#include "temp_dir.h"
#include "three_sites.h"

using cumemtrace::test::kCli;
using cumemtrace::test::read_file;
using cumemtrace::test::shell;
using cumemtrace::test::TempDir;
using cumemtrace::test::three_sites;

namespace {

struct Out {
  int status;
  std::string out, err;
};

Out view(const std::string& args) {
  TempDir d;
  three_sites().write(d.path + "/t.trace");
  const auto r = shell(kCli + " report " + d.path + "/t.trace " + args + " 2>" + d.path + "/err");
  return {r.status, r.out, read_file(d.path + "/err")};
}

}  // namespace

TEST_CASE("report --view top-allocations ranks call sites by how many allocations they made") {
  const Out r = view("--view top-allocations");
  CHECK(r.status == 0);
  CHECK(r.err == "");
  CHECK(r.out ==
        "Call sites by number of allocations (device memory: 6 allocations, 1.01 GiB (1,081,082,368 B) in all)\n"
        "  1. 3 allocations, 2.00 MiB (2,097,664 B): scratch at train.cpp:30\n"
        "       #0 scratch at train.cpp:30 (train)\n"
        "       #1 main at train.cpp:5 (train)\n"
        "  2. 2 allocations, 5.00 MiB (5,242,880 B): step at train.cpp:20\n"
        "       #0 step at train.cpp:20 (train)\n"
        "       #1 main at train.cpp:5 (train)\n"
        "  3. 1 allocation, 1.00 GiB (1,073,741,824 B): load at train.cpp:10\n"
        "       #0 load at train.cpp:10 (train)\n"
        "       #1 main at train.cpp:5 (train)\n");
  // --top 1: the first, then how many were left out.
  CHECK(view("--view top-allocations --top 1").out ==
        "Call sites by number of allocations (device memory: 6 allocations, 1.01 GiB (1,081,082,368 B) in all)\n"
        "  1. 3 allocations, 2.00 MiB (2,097,664 B): scratch at train.cpp:30\n"
        "       #0 scratch at train.cpp:30 (train)\n"
        "       #1 main at train.cpp:5 (train)\n"
        "  ... and 2 more call sites\n");
}

TEST_CASE("report --view temporary counts allocations freed before any other was made") {
  const Out r = view("--view temporary");
  CHECK(r.status == 0);
  // scratch: B and D of its three (2 of 3 = 66.7 %, rounded 67), 1 MiB each.
  CHECK(r.out ==
        "Temporary allocations, freed before any other allocation was made (device memory: 2 of 6 allocations)\n"
        "  1. 2 of 3 allocations temporary (67 %), 2.00 MiB (2,097,152 B): scratch at train.cpp:30\n"
        "       #0 scratch at train.cpp:30 (train)\n"
        "       #1 main at train.cpp:5 (train)\n");
}

TEST_CASE("report --view sizes is a histogram by powers of two, every range from the smallest to the largest") {
  const Out r = view("--view sizes");
  CHECK(r.status == 0);
  // F (512 B) in 2^9; B and D (1 MiB) in 2^20; C (2 MiB) and E (3 MiB) in 2^21; A in 2^30:
  // the rows from 2^9 to 2^30, 22 of them. The bar is 40 '#' for the most (2 allocations),
  // 1 allocation 40 / 2 = 20.
  const std::string bar40(40, '#'), bar20 = std::string(20, '#') + std::string(20, ' '), none(40, ' ');
  const std::string expected =
      "Allocation sizes (device memory: 6 allocations, 1.01 GiB (1,081,082,368 B) in all)\n"
      "  each row: sizes from the first up to (not including) the second, allocations, and their bytes\n"
      "  512 B to 1 KiB                 1  " +
      bar20 +
      "  512 B\n"
      "  1 KiB to 2 KiB                 0  " +
      none +
      "  0 B\n"
      "  2 KiB to 4 KiB                 0  " +
      none +
      "  0 B\n"
      "  4 KiB to 8 KiB                 0  " +
      none +
      "  0 B\n"
      "  8 KiB to 16 KiB                0  " +
      none +
      "  0 B\n"
      "  16 KiB to 32 KiB               0  " +
      none +
      "  0 B\n"
      "  32 KiB to 64 KiB               0  " +
      none +
      "  0 B\n"
      "  64 KiB to 128 KiB              0  " +
      none +
      "  0 B\n"
      "  128 KiB to 256 KiB             0  " +
      none +
      "  0 B\n"
      "  256 KiB to 512 KiB             0  " +
      none +
      "  0 B\n"
      "  512 KiB to 1 MiB               0  " +
      none +
      "  0 B\n"
      "  1 MiB to 2 MiB                 2  " +
      bar40 +
      "  2.00 MiB (2,097,152 B)\n"
      "  2 MiB to 4 MiB                 2  " +
      bar40 +
      "  5.00 MiB (5,242,880 B)\n"
      "  4 MiB to 8 MiB                 0  " +
      none +
      "  0 B\n"
      "  8 MiB to 16 MiB                0  " +
      none +
      "  0 B\n"
      "  16 MiB to 32 MiB               0  " +
      none +
      "  0 B\n"
      "  32 MiB to 64 MiB               0  " +
      none +
      "  0 B\n"
      "  64 MiB to 128 MiB              0  " +
      none +
      "  0 B\n"
      "  128 MiB to 256 MiB             0  " +
      none +
      "  0 B\n"
      "  256 MiB to 512 MiB             0  " +
      none +
      "  0 B\n"
      "  512 MiB to 1 GiB               0  " +
      none +
      "  0 B\n"
      "  1 GiB to 2 GiB                 1  " +
      bar20 + "  1.00 GiB (1,073,741,824 B)\n";
  CHECK(r.out == expected);
}

TEST_CASE("report --view tree and callers: top-down and bottom-up, bytes and allocations below each frame") {
  // Top-down: main made all six; below it the sites by bytes: load 1 GiB, step 2 + 3 MiB,
  // scratch 1 + 1 MiB + 512 B.
  const std::string tree_title =
      "Top-down tree: each frame with the bytes and allocations made below it (device memory: 6 allocations, "
      "1.01 GiB (1,081,082,368 B) in all)\n";
  CHECK(view("--view tree").out == tree_title +
                                       "  main [train]: 1.01 GiB (1,081,082,368 B), 6 allocations\n"
                                       "    load [train]: 1.00 GiB (1,073,741,824 B), 1 allocation\n"
                                       "    step [train]: 5.00 MiB (5,242,880 B), 2 allocations\n"
                                       "    scratch [train]: 2.00 MiB (2,097,664 B), 3 allocations\n");
  CHECK(view("--view tree --top 1").out == tree_title +
                                               "  main [train]: 1.01 GiB (1,081,082,368 B), 6 allocations\n"
                                               "    load [train]: 1.00 GiB (1,073,741,824 B), 1 allocation\n"
                                               "    ... and 2 more frames (--top)\n");
  // Bottom-up: each site first, main (its one caller) below it with the site's figures.
  const std::string callers_title =
      "Bottom-up: each call site's frame, below it the frames that called it, --frames deep (device memory: 6 "
      "allocations, 1.01 GiB (1,081,082,368 B) in all)\n";
  CHECK(view("--view callers").out == callers_title +
                                          "  load [train]: 1.00 GiB (1,073,741,824 B), 1 allocation\n"
                                          "    main [train]: 1.00 GiB (1,073,741,824 B), 1 allocation\n"
                                          "  step [train]: 5.00 MiB (5,242,880 B), 2 allocations\n"
                                          "    main [train]: 5.00 MiB (5,242,880 B), 2 allocations\n"
                                          "  scratch [train]: 2.00 MiB (2,097,664 B), 3 allocations\n"
                                          "    main [train]: 2.00 MiB (2,097,664 B), 3 allocations\n");
  CHECK(view("--view callers --frames 1").out == callers_title +
                                                     "  load [train]: 1.00 GiB (1,073,741,824 B), 1 allocation\n"
                                                     "  step [train]: 5.00 MiB (5,242,880 B), 2 allocations\n"
                                                     "  scratch [train]: 2.00 MiB (2,097,664 B), 3 allocations\n");
}

TEST_CASE("report --view: a view that does not exist, or with --json, is a usage error") {
  const Out typo = view("--view temporay");
  CHECK(typo.status == 2);
  CHECK(typo.out == "");
  CHECK(typo.err ==
        "cumemtrace report: --view temporay: not one of top-allocations, temporary, sizes, tree, callers; did you "
        "mean 'temporary'?\n");
  const Out json = view("--view sizes --json");
  CHECK(json.status == 2);
  CHECK(json.out == "");
}

// Device bytes of three_sites() over time: 1 GiB from 1 s; +1 MiB at 2 s, back at 3 s; +2,
// +3 MiB at 4 s, 5 s; +1 MiB at 6 s; 1 GiB at 7 s; +3 MiB at 8 s, +3 MiB + 512 B at 9 s (the
// whole run's peak); 1 GiB + 512 B from 10 s.
TEST_CASE("export --format folded --from --to: the stacks at the highest moment of the window") {
  TempDir d;
  const std::string trace = d.path + "/t.trace";
  three_sites().write(trace);
  const std::string cli = kCli + " export --format folded " + trace;
  // 2 s to 7 s: highest at 5 s (1 GiB + 3 MiB: A, C and D live).
  auto r = shell(cli + " --from 2s --to 7s 2>/dev/null");
  CHECK(r.status == 0);
  CHECK(r.out ==
        "cuda:0;main [train];load [train] 1073741824\n"
        "cuda:0;main [train];scratch [train] 1048576\n"
        "cuda:0;main [train];step [train] 2097152\n");
  // 6 s to 7.5 s: at 6 s (its own event, C's free, applied) A and D, 1 GiB + 1 MiB; nothing
  // after rises higher (D freed at 7 s), so the window's first moment, 6 s.
  r = shell(cli + " --from 6s --to 7.5s 2>/dev/null");
  CHECK(r.out ==
        "cuda:0;main [train];load [train] 1073741824\n"
        "cuda:0;main [train];scratch [train] 1048576\n");
  // From 8 s to the end (--to by default): the whole run's peak at 9 s, A, E and F.
  r = shell(cli + " --from 8s 2>/dev/null");
  CHECK(r.out ==
        "cuda:0;main [train];load [train] 1073741824\n"
        "cuda:0;main [train];scratch [train] 512\n"
        "cuda:0;main [train];step [train] 3145728\n");
  // Up to 0.5 s: nothing was live yet.
  r = shell(cli + " --to 0.5s 2>" + d.path + "/err");
  CHECK(r.status == 1);
  CHECK(r.out == "");
  CHECK(read_file(d.path + "/err") ==
        "cumemtrace export: " + trace + ": no device memory was live between --from and --to\n");
  CHECK(shell(cli + " --from 7s --to 2s 2>/dev/null").status == 2);
  CHECK(shell(cli + " --from 2s --at peak 2>/dev/null").status == 2);
  CHECK(shell(kCli + " export --format chrome " + trace + " --from 2s 2>/dev/null").status == 2);
  r = shell(cli + " --from soon 2>&1");
  CHECK(r.status == 2);
  CHECK(r.out.starts_with("cumemtrace export: --from wants"));
  // An empty bound is a mistake, not the trace's start or end.
  r = shell(cli + " --to '' 2>&1");
  CHECK(r.status == 2);
  CHECK(r.out == "cumemtrace export: --to wants a moment, not an empty value\n");
}
