/* The calls a program may make into libcumemtrace.so. Every one is safe to make when the
   library is not preloaded: find it with dlsym(RTLD_DEFAULT, "cumemtrace_...") (Python:
   ctypes.CDLL(None)), and do nothing when it is absent, so the program runs unchanged
   without the tracer. Of its own API the library exports exactly these names
   (interpose/exports.map).

   cumemtrace_mark and cumemtrace_allocator_segments only copy their arguments into the
   trace's pending records, under the tracker's lock; the live-figure calls read the
   tracker's figures under that lock. None does I/O, a CUDA call, or a callback into the
   caller. Bad arguments are
   ignored with one warning on stderr; a call never fails the program.

   Plain C, fixed-width fields, no padding: the Python package (python/cumemtrace)
   mirrors these structs with ctypes. */
#ifndef CUMEMTRACE_API_H
#define CUMEMTRACE_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Marks (trace record Mark) ---- */

/* Records a mark: a named moment, here and now. Marks of one name delimit iterations
   ("step", "iter"): the report's growth analysis and check --max-growth compare what each
   call site holds at each of them. `name`: at most 4096 bytes are kept. NVTX ranges
   reach the same record without this call (cumemtrace run sets NVTX_INJECTION64_PATH).
   Returns 0 when recorded, -1 when not (not tracing yet or any more, null name, buffer
   full). */
int cumemtrace_mark(const char* name);

/* A tag: every allocation this thread makes between cumemtrace_tag_push(name) and the
   cumemtrace_tag_pop() that closes it is inside tag `name`, as inside an NVTX push range
   of its thread (`report --by range` gives each tag's calls, allocations, bytes, peak
   inside and bytes held after). Tags nest per thread; a pop closes the thread's innermost
   open tag. Recorded as a Mark (source tag-push) and a RangeEnd (tag-pop) named after it
   (trace format 1.11). Both keep the thread's nesting whether or not the trace has begun,
   so that a tag pushed before the first CUDA call still pairs with its pop; they return
   0 when recorded, -1 when not (not tracing, null name, a pop with no tag open). The
   names of a thread's 64 innermost tags are kept; a pop beyond them is not written. */
int cumemtrace_tag_push(const char* name);
int cumemtrace_tag_pop(void);

/* ---- Live figures, for a test that asks what it used (the pytest plugin does) ----

   Unlike the calls above these read the library's own figures and write nothing to the
   trace. They lock the tracker for a pass over the live allocations (microseconds per
   thousand): call them between tests, not per kernel. "Device memory" is what the report
   calls tracked: the kinds that hold device memory (not VMM mappings or reservations). */

/* One device's figures, in bytes. */
struct cumemtrace_device_stats {
  int32_t device;                  /* CUDA device ordinal (-1: calls whose device is unknown) */
  uint32_t reserved;               /* zero */
  uint64_t live_bytes;             /* tracked device memory live now */
  uint64_t peak_bytes;             /* the highest live_bytes since tracing began (the report's peak) */
  uint64_t peak_since_reset_bytes; /* the highest live_bytes since the last cumemtrace_reset_peak() */
  uint64_t live_since_reset_bytes; /* of live_bytes, what was allocated since that reset */
  uint64_t live_since_reset_count; /* ... in so many allocations */
};

/* Fills out[0 .. min(n, capacity)) with the devices seen so far, in ordinal order, and
   returns n (more than `capacity`: call again with more room). Returns -1 when there are
   no figures (not preloaded has no symbol at all; no CUDA call traced yet) or when `out`
   is null with a non-zero capacity. */
int cumemtrace_stats(struct cumemtrace_device_stats* out, size_t capacity);

/* Starts a new "since" for every device: peak_since_reset_bytes becomes live_bytes, and
   only allocations made from now on count as "since reset". Returns 0, or -1 as above. */
int cumemtrace_reset_peak(void);

#define CUMEMTRACE_SITE_FRAMES 16

/* Allocations made since the last reset and live now, grouped by device and stack. */
struct cumemtrace_live_site {
  int32_t device;                          /* CUDA device ordinal */
  uint32_t n_frames;                       /* entries of `frames` in use */
  uint64_t bytes;                          /* live bytes from this stack */
  uint64_t count;                          /* live allocations from this stack */
  uint64_t frames[CUMEMTRACE_SITE_FRAMES]; /* return addresses, innermost first (the tracer's own
                                              frames dropped): name them with dladdr() */
};

/* Fills out[0 .. min(n, capacity)) with the sites, most bytes first, and returns n.
   -1 as for cumemtrace_stats. */
int cumemtrace_live_sites(struct cumemtrace_live_site* out, size_t capacity);

#define CUMEMTRACE_SITE_PYTHON_FRAMES 16

/* One Python frame of a live site, as the trace's PyFrameRecord names it. */
struct cumemtrace_python_frame {
  int32_t line;       /* line being run in that frame; -1 when unknown */
  uint32_t reserved;  /* 0 */
  char file[240];     /* co_filename, NUL-terminated, cut to fit */
  char function[128]; /* co_qualname (co_name before 3.11), NUL-terminated, cut to fit */
};

/* A live site by native stack and Python stack together: two lines of Python that reach
   the allocator through the same native frames are two sites here. */
struct cumemtrace_live_site_python {
  struct cumemtrace_live_site site; /* as cumemtrace_live_sites gives it */
  uint32_t n_python;                /* entries of `python` in use (0: no Python frames) */
  uint32_t reserved;                /* 0 */
  struct cumemtrace_python_frame python[CUMEMTRACE_SITE_PYTHON_FRAMES]; /* innermost first */
};

/* As cumemtrace_live_sites, grouped by Python stack too, each with its innermost Python
   frames (the pytest plugin names a test's own line from them). Returns n, or -1 as
   for cumemtrace_stats. */
int cumemtrace_live_sites_python(struct cumemtrace_live_site_python* out, size_t capacity);

/* As cumemtrace_live_sites_python, of what was live when each device reached its peak since
   the last cumemtrace_reset_peak() (peak_since_reset_bytes), made since that reset, whether
   freed since or not: what held the memory at the test's peak (the pytest plugin names it
   when max_peak fails). Empty until cumemtrace_reset_peak() is first called (before the first
   CUDA call counts: "since" is then the trace's start). Returns n, or -1 as for
   cumemtrace_stats. */
int cumemtrace_peak_sites_python(struct cumemtrace_live_site_python* out, size_t capacity);

/* ---- A caching allocator's segment/block map (trace record AllocatorSegments) ---- */

/* A block's state, as PyTorch's torch.cuda.memory_snapshot() names it. */
enum cumemtrace_block_state {
  CUMEMTRACE_BLOCK_INACTIVE = 0,            /* "inactive": free, reusable */
  CUMEMTRACE_BLOCK_ACTIVE_ALLOCATED = 1,    /* "active_allocated": handed out */
  CUMEMTRACE_BLOCK_ACTIVE_PENDING_FREE = 2, /* "active_pending_free": freed, waiting on a stream */
};

/* One segment: one cudaMalloc (or expandable range) the allocator holds. Bytes. */
struct cumemtrace_segment {
  uint64_t address;        /* device address of the segment's start */
  uint64_t total_size;     /* bytes of the segment */
  uint64_t allocated_size; /* bytes in active_allocated blocks, as the allocator counts them */
  uint64_t stream;         /* the stream the segment belongs to (cudaStream_t as an integer) */
  uint32_t first_block;    /* index of its first block in `blocks` */
  uint32_t block_count;    /* its blocks, in address order, tiling the segment */
  uint32_t is_small;       /* 1: the small pool ("small" segment_type), 0: large */
  uint32_t reserved;       /* zero */
};

struct cumemtrace_block {
  uint64_t size;     /* bytes */
  uint32_t state;    /* enum cumemtrace_block_state */
  uint32_t reserved; /* zero */
};

/* Records a caching allocator's map of device `device` at this moment: `allocator` names
   it ("pytorch"; at most 64 bytes), segments[i] owns blocks[first_block, first_block +
   block_count). Call it right after an out-of-memory error (PyTorch's OOM observer does,
   from torch.cuda.memory_snapshot()); the report joins each segment to the traced
   allocation at its address and explains the failure before it.
   Returns 0 when recorded, -1 when not (not preloaded has no symbol at all; not tracing:
   no CUDA call traced yet, tracing disabled or stopped, or the trace buffer is full; bad
   arguments: null pointers, a block range outside `blocks`, an unknown state, more than
   2^19 segments or 2^21 blocks). */
int cumemtrace_allocator_segments(const char* allocator, int32_t device, const struct cumemtrace_segment* segments,
                                  size_t n_segments, const struct cumemtrace_block* blocks, size_t n_blocks);

#ifdef __cplusplus
}
#endif

#endif /* CUMEMTRACE_API_H */
