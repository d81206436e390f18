// The fragmentation examples of docs/simulated-driver.md ("Fragmentation
// scenarios"): build the state, print it, hold it for hold_ms so a snapshot
// can see it, then free everything that is still live.
#include "runtime_common.h"

#include <unistd.h>
#include <vector>

namespace {

struct Live {
  std::vector<void*> blocks;
  void* alloc(size_t bytes) {
    void* p;
    CHECK_RT(cudaMalloc(&p, bytes));
    report_alloc("cudaMalloc", p, bytes);
    blocks.push_back(p);
    return p;
  }
  void free(void* p) {
    CHECK_RT(cudaFree(p));
    report_free("cudaFree", p);
    std::erase(blocks, p);
  }
};

constexpr size_t MiB = 1 << 20;

void build(int which, Live& live) {
  switch (which) {
    case 1: {  // live 512 B at base, +0x200, +0x600
      void* p[4];
      for (void*& q : p) q = live.alloc(512);
      live.free(p[2]);
      break;
    }
    case 2: {  // live 64 MiB at base and base+128 MiB
      void* p[3];
      for (void*& q : p) q = live.alloc(64 * MiB);
      live.free(p[1]);
      break;
    }
    case 3:  // one 3 MiB allocation holding two granules
      live.alloc(3 * MiB);
      break;
    case 4: {  // 1 MiB at base+1 MiB, alone in its page
      void* first = live.alloc(MiB);
      live.alloc(MiB);
      live.free(first);
      break;
    }
    case 5: {                                    // two single-page arenas, 1 GiB apart, each holding one 512 B block
      live.alloc(512);                           // page A at base
      void* filler = live.alloc(2 * MiB - 512);  // fills the rest of page A
      void* spacer = live.alloc(1024 * MiB);     // granules after page A
      live.alloc(512);                           // page A is full: new page B after the spacer
      live.free(filler);
      live.free(spacer);
      break;
    }
  }
}

}  // namespace

int scenario_frag(int which, int hold_ms) {
  Live live;
  build(which, live);
  std::printf("holding frag%d %d ms\n", which, hold_ms);
  std::fflush(stdout);
  if (hold_ms < 0) return 0;  // leave the state live at exit: tests read it as the end state
  usleep(useconds_t(hold_ms) * 1000);
  while (!live.blocks.empty()) live.free(live.blocks.front());
  return 0;
}
