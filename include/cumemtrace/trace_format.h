// The cumemtrace trace file: the contract between libcumemtrace.so (writer) and the
// analysis library (reader). docs/trace-format.md describes every record in prose;
// keep the two in step. It passes 600 lines on purpose: the format is one contract, read
// record by record beside docs/trace-format.md, and a split would scatter the record layouts.
//
// Layout: a 32-byte FileHeader, then records until end of file. Each record is an
// 8-byte RecordHeader {type, flags, payload_bytes} followed by payload_bytes bytes.
// All integers are little-endian; structs below are packed and describe the fixed
// start of a payload. Strings are a u32 byte count followed by that many bytes (no
// terminator).
//
// Compatibility rules (so that an upgrade never breaks old files, unlike readers that
// demand an exact header version):
//   - A reader accepts any file whose major version it knows, whatever the minor.
//   - A reader skips record types it does not know, by payload_bytes.
//   - New fields are only ever appended at the end of a payload (minor version bump);
//     a reader ignores trailing bytes it does not understand and treats fields
//     missing from a shorter payload as absent.
//   - Changing or removing a field bumps the major version.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cumemtrace::format {

inline constexpr char kMagic[8] = {'C', 'U', 'M', 'E', 'M', 'T', 'R', 'C'};
inline constexpr uint16_t kVersionMajor = 1;
inline constexpr uint16_t kVersionMinor = 15;  // 1.1: DeviceSnapshot::pool_reserved_bytes
                                               // 1.2: ChecksumRecord after every flush; capture
                                               //      flags (events, snapshots)
                                               // 1.3: snapshots of one moment, sampled peaks,
                                               //      other processes on each GPU
                                               // 1.4: a caching allocator's block map
                                               // 1.5: marks
                                               // 1.6: Python frames (PyString, PyFrame,
                                               //      EventPython after an EventRecord)
                                               // 1.7: zstd-compressed flushes
                                               // 1.8: the launcher's facts (ProcessLineage)
                                               // 1.9: graph memory, arrays, IPC imports
                                               // 1.10: numbered chunks (ChunkSequenceRecord,
                                               //       FileHeader::trace_id); RangeEnd; the
                                               //       End record's reason and exec target;
                                               //       late NVML readings (kLateReading,
                                               //       moment bit 1)
                                               // 1.11: tags (MarkSource kTagPush, kTagPop)
                                               // 1.12: pools' own heaps and regions (NvtxMem)
                                               // 1.13: inside a caching allocator (BlockSource,
                                               //       BlockEvent)
                                               // 1.14: what the tracer bounded (Bounded)
                                               // 1.15: CUDA IPC handles' identity in share
                                               //       and ipc-import events (kEventIpcId);
                                               //       the framework variables (Process);
                                               //       the exit status (End)

#pragma pack(push, 1)

struct FileHeader {
  char magic[8];           // kMagic
  uint16_t version_major;  // kVersionMajor
  uint16_t version_minor;  // kVersionMinor
  uint32_t header_bytes;   // sizeof(FileHeader) today; records start at this offset
  uint64_t trace_id;       // 1.10: random, never 0: names this trace in every chunk's
                           // ChunkSequenceRecord (0 before 1.10)
  uint64_t reserved;       // zero
};
static_assert(sizeof(FileHeader) == 32);

struct RecordHeader {
  uint16_t type;           // RecordType
  uint16_t flags;          // zero today; readers ignore it
  uint32_t payload_bytes;  // bytes that follow this header
};
static_assert(sizeof(RecordHeader) == 8);

// One value per row of records.def, which says what each record holds.
enum class RecordType : uint16_t {
#define CUMEMTRACE_RECORD(Name, id, since, label, Fixed, strings) k##Name = id,
#include "cumemtrace/records.def"
#undef CUMEMTRACE_RECORD
};

// 1.6: Python stacks form a prefix tree of their own, rooted at the outermost frame, like
// the native one (StackNodeRecord). Names are interned once as PyStringRecords.
struct PyStringRecord {
  uint32_t id;  // > 0, unique in the file, written before any PyFrameRecord that uses it
  // then: string (UTF-8; a Python file name as the code object has it, or a function name)
};
enum PyFrameFlags : uint32_t {
  // The first frame that one C-level call of the interpreter's evaluation loop ran
  // (3.11+ runs several Python frames per _PyEval_EvalFrameDefault call; 3.11's is_entry,
  // 3.12's shim frame): each evaluation-loop frame of the native stack, outermost first,
  // ran one entry frame and the non-entry frames inside it up to the next entry frame.
  kPyFrameEntry = 1u << 0,
};
struct PyFrameRecord {
  uint32_t id;        // > 0, unique in the file, written before any event that uses it
  uint32_t parent;    // 0 for an outermost frame
  uint32_t file;      // PyStringRecord id: co_filename
  uint32_t function;  // PyStringRecord id: co_name
  int32_t line;       // from the code's line table at the frame's instruction; -1 unknown
  uint32_t flags;     // PyFrameFlags
};

// 1.6: an Event payload may continue after its EventRecord with this (only events that
// have Python frames do: the others keep the 64 bytes of 1.5).
struct EventPython {
  uint32_t python_stack_id;  // PyFrameRecord id of the innermost Python frame; 0: none
};

// The records inside decompress to exactly raw_bytes; they are read as if written in
// place, and never contain another CompressedRecord or a ChecksumRecord.
struct CompressedRecord {
  uint64_t raw_bytes;  // bytes of the records inside, at most kMaxCompressedRawBytes
  uint32_t codec;      // kCodecZstd
  uint32_t reserved;   // zero
};
inline constexpr uint32_t kCodecZstd = 1;
inline constexpr uint64_t kMaxCompressedRawBytes = 64ull << 20;

enum class MarkSource : uint8_t {
  kApi = 1,        // cumemtrace_mark() (include/cumemtrace/api.h), e.g. from Python
  kNvtxPush = 2,   // nvtxRangePushA/Ex and domain pushes: a mark named after the range
  kNvtxMark = 3,   // nvtxMarkA/Ex and domain marks
  kNvtxStart = 4,  // nvtxRangeStartA/Ex and domain starts
  kNvtxPop = 5,    // 1.10, RangeEnd records only: nvtxRangePop, domain pops
  kNvtxEnd = 6,    // 1.10, RangeEnd records only: nvtxRangeEnd, domain ends
  kTagPush = 7,    // 1.11: cumemtrace_tag_push (api.h), cumemtrace.tag() from Python
  kTagPop = 8,     // 1.11, RangeEnd records only: cumemtrace_tag_pop, named after its push
};

struct MarkRecord {
  uint64_t time_ns;  // CLOCK_MONOTONIC
  uint32_t tid;
  uint8_t source;  // MarkSource
  uint8_t reserved[3];
  // then: string name
};

// 1.12: what a pool declared through NVTX's memory extension (nvtx3/nvToolsExtMem.h):
// heaps, the device memory it manages, and regions, what it handed out of them.
enum class NvtxMemOp : uint8_t {
  kHeapRegister = 1,      // nvtxMemHeapRegister: heap `heap` is [address, address+size)
                          // (address and size 0 when not a virtual range); usage; name
  kHeapReset = 2,         // nvtxMemHeapReset: every region of `heap` is gone (heap 0: of all)
  kHeapUnregister = 3,    // nvtxMemHeapUnregister: `heap` and its regions are gone
  kRegionRegister = 4,    // nvtxMemRegionsRegister: a region [address, address+size) of `heap`
  kRegionResize = 5,      // nvtxMemRegionsResize: the region at `address` is now `size` bytes
  kRegionUnregister = 6,  // nvtxMemRegionsUnregister: the region at `address` is gone
  kRegionName = 7,        // nvtxMemRegionsName: the region at `address` is called `name`
};

struct NvtxMemRecord {
  uint64_t time_ns;  // CLOCK_MONOTONIC, stamped under the tracker's lock as an event's
  uint64_t heap;     // the heap's handle, as the program holds it; 0 for region ops after
                     // the register (the region is found by its address)
  uint64_t address;
  uint64_t size;  // bytes (register, resize); else 0
  uint32_t tid;
  uint32_t stack_id;         // kHeapRegister, kRegionRegister: StackNodeRecord id; else 0
  uint32_t python_stack_id;  // the same, PyFrameRecord id (0: none)
  uint8_t op;                // NvtxMemOp
  uint8_t usage;             // kHeapRegister: NVTX_MEM_HEAP_USAGE_TYPE_* bits (1 sub-allocator,
                             // 2 layout); else 0
  uint16_t reserved;         // zero
  // then: string name (kHeapRegister: the heap's; kRegionName: the region's; else empty)
};
static_assert(sizeof(NvtxMemRecord) == 48);

// 1.14: what the tracer keeps in bounded room, so that a program cannot make it grow without
// end, and what past the bound it did not record. Each kind's count goes in the trace, so
// that a report never calls figures whole that a bound cut (docs/trace-format.md, Bounded).
enum class BoundedWhat : uint32_t {
  // nvtxRangeStart while `cap` of its ranges were open: the id is not kept, so its
  // nvtxRangeEnd writes no RangeEnd record (the range reads as open at the end).
  kOpenRangeIds = 1,
  // An NVTX push past the `cap` innermost open on its thread, popped: its name was not
  // kept, so the pop wrote no RangeEnd record.
  kPushNames = 2,
  // The same for tags (cumemtrace_tag_push past the `cap` innermost, popped).
  kTagNames = 3,
  // A chained tool's region handle while `cap` were kept: the regions' later unregister
  // and name records carry the handle, not the region's address.
  kRegionHandles = 4,
  // A string registered past `cap`: marks and heaps named by it read "(registered string)".
  kRegisteredStrings = 5,
  // An NVTX domain created past the first `cap` (by name): it is the default domain to the
  // tracer, so its pushes nest with the default domain's and a pop may close another's.
  kPushDomains = 6,
};
struct BoundedRecord {
  uint64_t time_ns;  // when the count was written
  uint32_t what;     // BoundedWhat
  uint32_t cap;      // the bound: how many the tracer keeps at once
  uint64_t dropped;  // how many the process did not keep so far: a running total, so the
                     // last record of a kind holds its count
};
static_assert(sizeof(BoundedRecord) == 24);

// 1.13: what a caching allocator did inside the device memory it holds, as the allocator
// itself told the tracer (PyTorch's CUDA caching allocator: c10::reportMemoryUsageToProfiler
// for every block handed out and freed, and the entries of its trace trackers). The
// driver sees the segments; these records are the blocks inside them.
enum class BlockAllocator : uint8_t {
  kPyTorch = 1,  // PyTorch's CUDA caching allocator (c10::cuda::CUDACachingAllocator)
};
// The name reports give it ("PyTorch's cache").
inline constexpr std::string_view block_allocator_name(BlockAllocator a) {
  return a == BlockAllocator::kPyTorch ? "PyTorch" : "a caching allocator";
}

// Where block events come from, and when they start and stop (BlockSourceRecord::flags).
enum BlockSourceFlags : uint32_t {
  // Every block handed out and freed, with the block's own bytes and the allocator's
  // allocated and reserved totals right after (c10::reportMemoryUsageToProfiler).
  kBlockSourceUsageReports = 1u << 0,
  // The allocator's own trace entries (attachAllocatorTraceTracker): requested bytes,
  // streams, pools, frees that wait on other streams, its segments and its own OOMs.
  kBlockSourceTraceEntries = 1u << 1,
};
enum class BlockSourceState : uint8_t {
  kOn = 1,   // from this moment the sources in `flags` are recorded
  kOff = 2,  // from this moment the sources in `flags` are not recorded: `reason` says why
};
struct BlockSourceRecord {
  uint64_t time_ns;    // CLOCK_MONOTONIC, in the events' time order
  int32_t device;      // the device it applies to; -1: every device
  uint32_t flags;      // BlockSourceFlags this record turns on or off
  uint8_t allocator;   // BlockAllocator
  uint8_t state;       // BlockSourceState
  uint16_t reserved;   // zero
  uint32_t reserved2;  // zero
  // then: string version (the allocator's library version, e.g. PyTorch's "2.11.0+cu130";
  // empty when unknown), string reason (kOff: why, in words; else empty), string settings
  // (the allocator's configuration as the process had it, e.g. PYTORCH_CUDA_ALLOC_CONF)
};
static_assert(sizeof(BlockSourceRecord) == 24);

enum class BlockOp : uint8_t {
  kAlloc = 1,          // a block was handed to the program
  kFree = 2,           // the program freed it: no longer allocated (kBlockPendingFree: it
                       // still waits on other streams and stays out of the cache until a
                       // kFreeCompleted)
  kFreeCompleted = 3,  // a free that waited on other streams completed: the block is back in
                       // the cache
  kSegmentAlloc = 4,   // the allocator took a segment (cudaMalloc, or cuMemCreate for an
                       // expandable segment): address and size as the driver gave them
  kSegmentFree = 5,    // it gave a segment back (empty_cache, a retry after a failure)
  kSegmentMap = 6,     // it mapped [address, address+size) of an expandable segment
  kSegmentUnmap = 7,   // it unmapped [address, address+size) of an expandable segment
  kSnapshot = 8,       // the program asked the allocator for a snapshot of its state
  kOom = 9,            // the allocator refused a request and raised out-of-memory
};
enum BlockEventFlags : uint16_t {
  kBlockUsageReport = 1u << 0,  // size, allocated and reserved are the allocator's own figures
  kBlockTraceEntry = 1u << 1,   // requested, stream and pool come from its trace entry
  kBlockPendingFree = 1u << 2,  // kFree: the block waits on other streams' events
};
struct BlockEventRecord {
  uint64_t time_ns;          // CLOCK_MONOTONIC, stamped under the tracker's lock as an event's
  uint64_t address;          // the block's (segment ops: the segment's or mapping's); 0 for
                             // kSnapshot and kOom
  uint64_t size;             // kAlloc, kFree, kFreeCompleted: the block's bytes as the allocator
                             // rounded and split it (kUnknown64 without kBlockUsageReport);
                             // segment ops: the segment's or mapping's bytes; kOom: bytes asked for
  uint64_t requested;        // kAlloc, kFree, kFreeCompleted: the bytes the program asked for
                             // (kUnknown64 without kBlockTraceEntry); kOom: the free bytes the
                             // driver reported to the allocator; else 0
  uint64_t stream;           // the block's stream (kUnknown64 without kBlockTraceEntry)
  uint64_t pool[2];          // the allocator's pool id (PyTorch's MempoolId_t; {0, 0} is the
                             // default pool, a CUDA graph's or a MemPool's is not); kUnknown64
                             // twice without kBlockTraceEntry
  uint64_t allocated;        // the allocator's bytes allocated on this device right after this
                             // event (PyTorch: torch.cuda.memory_allocated()); kUnknown64
                             // without kBlockUsageReport
  uint64_t reserved;         // its bytes reserved on this device right after (memory_reserved());
                             // kUnknown64 without kBlockUsageReport
  uint32_t tid;              // gettid()
  uint32_t stack_id;         // kAlloc, kOom: the native stack (StackNode id; 0 none); else 0
  uint32_t python_stack_id;  // the same, its Python stack (PyFrame id; 0 none)
  int16_t device;            // CUDA ordinal
  uint8_t op;                // BlockOp
  uint8_t allocator;         // BlockAllocator
  uint16_t flags;            // BlockEventFlags
  uint16_t reserved2;        // zero
  uint32_t reserved3;        // zero
};
static_assert(sizeof(BlockEventRecord) == 96);

// Written once, first. The command line is argv joined with '\0'.
struct ProcessRecord {
  uint32_t pid;
  uint32_t ppid;
  uint64_t start_monotonic_ns;  // CLOCK_MONOTONIC, the clock of every time_ns below
  uint64_t start_realtime_ns;   // CLOCK_REALTIME at the same moment, for wall dates
  uint64_t granule_bytes;       // granule used for fragmentation figures
  uint32_t stack_depth;         // frames captured at most per stack (0: stacks off)
  int32_t rank;                 // from RANK, else LOCAL_RANK; -1 when neither is set
  // then: string hostname, string command_line, string tool_version
  // then (1.8): ProcessLineage, string launcher
  // then (1.15): string environment: "NAME=value" entries joined with '\0', for each
  // variable of kFrameworkVariables (framework_variables.h) that is set, in that order
};

// 1.8: after ProcessRecord's three strings, what the launcher (torchrun, srun, a
// Kubernetes Job) told the process, so that `cumemtrace report` can group the traces
// of one job from many hosts. Read from the environment when the trace file is opened.
struct ProcessLineage {
  int32_t local_rank;  // LOCAL_RANK; -1 when unset or not a number
  int32_t world_size;  // WORLD_SIZE; -1 when unset or not a number
  // then: string launcher: "NAME=value" entries joined with '\0', for each variable of
  // kLauncherVariables that is set, in that order
};
// The environment variables recorded in ProcessLineage's launcher string.
inline constexpr std::string_view kLauncherVariables[] = {
    "SLURM_JOB_ID",       "SLURM_STEP_ID",           "SLURM_PROCID",
    "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID",     "TORCHELASTIC_RUN_ID",
    "GROUP_RANK",         "LOCAL_WORLD_SIZE",        "MASTER_ADDR",
    "MASTER_PORT",        "KUBERNETES_SERVICE_HOST", "POD_NAME",
    "POD_NAMESPACE",      "JOB_COMPLETION_INDEX",
};

// One per device ordinal the process touched, written before its first event is used.
struct DeviceRecord {
  int32_t ordinal;       // CUDA device ordinal (as the process sees it)
  int32_t nvml_index;    // NVML index of the same GPU (matched by UUID); -1 unknown
  uint64_t total_bytes;  // cuDeviceTotalMem
  uint8_t uuid[16];      // cuDeviceGetUuid
  // then: string name
};

// A loaded object, so a stack can be symbolized later, even on another machine.
struct ModuleRecord {
  uint64_t load_bias;  // dlpi_addr: runtime address = file virtual address + load_bias
  uint64_t start;      // lowest mapped address of its PT_LOAD segments
  uint64_t end;        // one past the highest
  // then: string path, string build_id (raw bytes of NT_GNU_BUILD_ID; may be empty)
};

// Stacks form a prefix tree rooted at the outermost frame: a node is (parent, ip) and a
// stack is named by its innermost node. Node 0 is the empty stack and is never written.
struct StackNodeRecord {
  uint32_t id;      // > 0, unique in the file, written before any event that uses it
  uint32_t parent;  // 0 for an outermost frame
  uint64_t ip;      // return address (as unwound; callers subtract 1 to symbolize)
};

// 1.9: graph-launch, graph-exec-destroy, graph-mem-trim (the CUDA graph memory pool)
enum class Op : uint8_t {
  kAlloc = 1,              // memory came into being (incl. cuMemCreate's physical handle)
  kFree = 2,               // ... and went away (incl. cuMemRelease)
  kMap = 3,                // cuMemMap: physical `handle` mapped at [address, address+size)
  kUnmap = 4,              // cuMemUnmap
  kReserve = 5,            // cuMemAddressReserve: address space only
  kReserveFree = 6,        // cuMemAddressFree
  kPoolTrim = 7,           // cuMemPoolTrimTo(handle = pool, size = bytes to keep)
  kContextCreate = 8,      // a context came into being on `device`; size = NVML delta
  kRetain = 9,             // 1.1: cuMemRetainAllocationHandle: one more reference to the
                           // physical `handle`, which then takes one more cuMemRelease
  kGraphLaunch = 10,       // 1.9: cuGraphLaunch(handle = CUgraphExec, stream); size = the
                           // device's graph pool reserve read right after, or kUnknown64
  kGraphExecDestroy = 11,  // 1.9: cuGraphExecDestroy(handle = CUgraphExec); size as above
  kGraphMemTrim = 12,      // 1.9: cuDeviceGraphMemTrim(device); size as above
  kShare = 13,             // 1.9: the allocation at `address` (or the physical `handle`, address 0)
                           // was exported to other processes (cuIpcGetMemHandle,
                           // cuMemExportToShareableHandle). Changes no bytes: a mark on it.
};

// 1.9: kArray, kIpcImport
enum class Kind : uint8_t {
  kUnknown = 0,      // e.g. a free of an address never seen allocated
  kDevice = 1,       // cuMemAlloc / cudaMalloc
  kPitch = 2,        // cuMemAllocPitch / cudaMallocPitch / cudaMalloc3D
  kManaged = 3,      // cuMemAllocManaged / cudaMallocManaged
  kAsyncPool = 4,    // cuMemAllocAsync / cuMemAllocFromPoolAsync (stream-ordered)
  kVmmPhysical = 5,  // cuMemCreate: physical memory behind a handle
  kVmmMap = 6,       // cuMemMap: a mapping of physical memory into reserved space
  kVmmReserve = 7,   // cuMemAddressReserve: virtual address space, no memory
  kHostPinned = 8,   // cuMemAllocHost / cuMemHostAlloc / cudaMallocHost / cudaHostAlloc
  kContext = 9,      // a CUDA context
  kArray = 10,       // 1.9: cuArrayCreate / cuArray3DCreate / cuMipmappedArrayCreate (and the
                     // cudaMalloc*Array calls above them). `address` is the CUarray (or
                     // CUmipmappedArray) handle: an array has no device pointer. `size` is
                     // worked out from its descriptor (docs/trace-format.md, "1.9")
  kIpcImport = 11,   // 1.9: memory of another process mapped here (cuIpcOpenMemHandle at
                     // `address`; cuMemImportFromShareableHandle's physical `handle`). Never
                     // this process's device bytes: the exporter holds them
};
inline constexpr int kKindCount = 12;
// 1.9: kinds whose live bytes sit in DeviceSnapshot::live_bytes (the 1.8 layout); the rest
// are in DeviceSnapshot::live_bytes_more.
inline constexpr int kSnapshotKinds = 10;

inline constexpr std::string_view kind_name(Kind k) {
  constexpr std::string_view names[kKindCount] = {"unknown",     "device",       "pitch",   "managed",
                                                  "async-pool",  "vmm-physical", "vmm-map", "vmm-reserve",
                                                  "host-pinned", "context",      "array",   "ipc-import"};
  return static_cast<int>(k) < kKindCount ? names[static_cast<int>(k)] : "unknown";
}

// Kinds whose bytes occupy device memory: their sum is "tracked device bytes".
// vmm-map is left out because the physical handle it maps is already counted.
// 1.9: an array holds device memory; an ipc-import does not (its exporter holds it).
inline constexpr bool holds_device_memory(Kind k) {
  return k == Kind::kDevice || k == Kind::kPitch || k == Kind::kAsyncPool || k == Kind::kVmmPhysical ||
         k == Kind::kArray;
}
// Kinds laid out in device address space that fragmentation figures are computed over
// (docs/fragmentation.md): a mapping stands for the physical memory behind it. An array's
// "address" is a handle, not a place in the address space, so arrays are left out.
inline constexpr bool counts_for_fragmentation(Kind k) {
  return k == Kind::kDevice || k == Kind::kPitch || k == Kind::kAsyncPool || k == Kind::kVmmMap;
}

// 1.9: bit 6 (kEventGraphNode)
enum EventFlags : uint32_t {
  kEventUnknownAddress = 1u << 0,  // a free/unmap of an address the tracker never saw
  kEventRuntimeLayer = 1u << 1,    // recorded by a runtime hook (no driver call seen);
                                   // result is then a cudaError_t, not a CUresult
  kEventRestored = 1u << 2,        // an alloc putting back what the preceding free of the
                                   // same address removed: that free then failed (result).
                                   // 1.8: on a free with kEventUnknownAddress: the preceding
                                   // free of that unknown address failed (result); no change
  kEventCaptured = 1u << 3,        // 1.2: made on a stream under capture. An alloc is a graph
                                   // memory node's virtual address: no device memory now, so
                                   // never counted. A free is a node of the graph: it happens
                                   // when the graph runs, unseen, so it is not applied either.
  kEventDeviceInferred = 1u << 4,  // 1.2: the driver was not asked (a stream capture was open):
                                   // `device` is that of the thread's last event that was asked
  kEventTeardown = 1u << 5,        // 1.8: a free made by a context's teardown (cudaDeviceReset,
                                   // cuDevicePrimaryCtxReset, the last cuDevicePrimaryCtxRelease,
                                   // cuCtxDestroy), one per allocation it took; `api` is that call
  kEventGraphNode = 1u << 6,       // 1.9: with kEventCaptured: a graph memory node added by
                                   // cuGraphAddMemAllocNode/FreeNode (handle = the CUgraph), not
                                   // by a stream capture
  kEventSizeUnknown = 1u << 7,     // 1.9: an ipc-import whose size the driver could not be
                                   // asked (a stream capture was open): `size` is 0
  kEventIpcId = 1u << 8,           // 1.15: on a share of an address and an ipc-import of one:
                                   // `handle` is the CUDA IPC handle's identity (rules/ipc_id.h),
                                   // the same in the exporter's and the importer's trace
};

struct EventRecord {
  uint64_t time_ns;   // CLOCK_MONOTONIC
  uint64_t address;   // device/host address; 0 for a failed allocation
  uint64_t size;      // requested bytes (pitch allocations: pitch × height)
  uint64_t stream;    // CUstream for stream-ordered calls, else 0
  uint64_t handle;    // VMM: CUmemGenericAllocationHandle; pools: CUmemoryPool;
                      // contexts: CUcontext; 1.9: a cuIpcOpenMemHandle ipc-import: the
                      // exporter's pid, 0 when unknown (a real driver's handle is opaque);
                      // 1.15, with kEventIpcId: the IPC handle's identity, on the share
                      // and the import alike; else 0
  uint32_t tid;       // gettid()
  int32_t device;     // device ordinal; -1 for host memory or when unknown
  uint32_t stack_id;  // StackNodeRecord id of the innermost frame; 0: none
  int32_t result;     // CUresult (or cudaError_t with kEventRuntimeLayer); frees are
                      // recorded as the call is made, with 0 (see kEventRestored)
  uint16_t api;       // ApiNameRecord id of the entry point the program called
  uint8_t op;         // Op
  uint8_t kind;       // Kind
  uint32_t flags;     // EventFlags
};
static_assert(sizeof(EventRecord) == 64);

enum class SnapshotReason : uint32_t {
  kPeriodic = 1,          // every CUMEMTRACE_SNAPSHOT_MS
  kFailedAllocation = 2,  // right after an allocation failed
  kExit = 3,              // at process exit
  kPeak = 4,              // 1.1: the tracked peak rose since the last snapshot (at most
                          // one per flush), so NVML's figure is sampled near every peak
  kSampledPeak = 5,       // 1.3: a device's tracked bytes rose past its last sampled peak
                          // by kSampledPeakMargin: NVML read right after the allocation (on
                          // the reader thread, the allocating thread waiting), while the
                          // peak held (see `moment` flags)
  kLateReading = 6,       // an NVML reading that came after its requester stopped waiting
                          // (NVML slower than CUMEMTRACE_NVML_WAIT_MS): appended when it
                          // came, with the tracker's figures of that moment; the snapshot
                          // it was for carries kMomentReadingMissed
};

// A sampled peak is taken when tracked bytes exceed the last sampled peak by
// max(1 % of it, 64 MiB): at most total/64 MiB of them per device over a whole run
// (about 2,200 on an H200), each one NVML query on the tracer's reader thread, which the
// allocating thread waits for at most CUMEMTRACE_NVML_WAIT_MS.
inline constexpr uint64_t sampled_peak_margin(uint64_t last) {
  return last / 100 > (64ull << 20) ? last / 100 : (64ull << 20);
}

enum SnapshotFlags : uint32_t {
  // 1.2: a stream capture was open, so the tracer asked the driver nothing: driver-sourced
  // figures (pool_reserved_bytes) are kUnknown64. NVML's are still read (NVML is not CUDA).
  kSnapshotCaptureOpen = 1u << 0,
};

inline constexpr uint64_t kUnknown64 = ~0ull;  // "not measured" in u64 fields

// First line of the file named by CUMEMTRACE_MANIFEST (made by `cumemtrace run`); each
// traced process appends its trace's path and '\n'. The library appends only to a
// private regular file of its own user that starts with this line.
inline constexpr std::string_view kManifestMarker = "# cumemtrace manifest\n";
// A later line "# oom PATH": the trace at PATH has just written a failed allocation (so
// `run` can put its post-mortem beside it while the job is still running). Readers of
// older manifests skip it as a comment.
inline constexpr std::string_view kManifestOomPrefix = "# oom ";

struct SnapshotRecord {
  uint64_t time_ns;
  uint32_t reason;          // SnapshotReason
  uint32_t device_count;    // DeviceSnapshot entries that follow
  uint32_t entry_bytes;     // size of each entry (grows with minor versions)
  uint32_t flags;           // SnapshotFlags (1.2; zero before)
  uint64_t events_dropped;  // events lost so far because the writer fell behind
};

// Per device ordinal (-1: host memory, e.g. pinned). Figures are over live allocations.
struct DeviceSnapshot {
  int32_t device;
  uint32_t reserved;
  uint64_t live_bytes[kSnapshotKinds];  // requested bytes live, indexed by Kind (1.9: kSnapshotKinds)
  uint64_t live_count;                  // live allocations of all kinds on this device
  uint64_t device_bytes;                // sum over holds_device_memory kinds
  uint64_t peak_device_bytes;           // highest device_bytes so far ...
  uint64_t peak_time_ns;                // ... and when it was first reached
  uint64_t arena_bytes;                 // FragmentationFigures, granule from ProcessRecord
  uint64_t arena_count;
  uint64_t gap_bytes;
  uint64_t largest_gap;
  uint64_t nvml_process_used;  // NVML: this process's used device memory, or kUnknown64
  uint64_t nvml_device_free;   // NVML: device free bytes, or kUnknown64
  uint64_t nvml_device_total;  // NVML: device total bytes, or kUnknown64
  // 1.1: memory the device's default stream-ordered pool holds (live async allocations
  // plus what it keeps for reuse: CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), or kUnknown64.
  uint64_t pool_reserved_bytes;
  // 1.3: when NVML was read for this entry (CLOCK_MONOTONIC), or kUnknown64 ...
  uint64_t nvml_read_ns;
  // ... and how many events (recorded and dropped) the tracker had seen when it took this
  // entry's own figures. With kMomentSame, none came between the NVML reading and them.
  uint64_t event_seq;
  uint32_t moment;  // MomentFlags
  uint32_t reserved2;
  // 1.9: the device's CUDA graph memory pool (cuDeviceGetGraphMemAttribute), each kUnknown64
  // when not read (a capture was open, or the driver has no such attribute)
  uint64_t graph_used_current;
  uint64_t graph_reserved_current;
  uint64_t graph_used_high;
  uint64_t graph_reserved_high;
  // 1.9: live bytes of the kinds from kSnapshotKinds on (array, ipc-import), indexed by Kind - kSnapshotKinds
  uint64_t live_bytes_more[kKindCount - kSnapshotKinds];
};

enum MomentFlags : uint32_t {
  // 1.3: no event happened between NVML's reading and the tracker's figures of this
  // entry: process_used and device_bytes/arena_bytes describe one moment. Without it
  // (NVML was not read, or events kept coming in three attempts) they may not.
  kMomentSame = 1u << 0,
  // NVML was asked for this entry but did not answer within CUMEMTRACE_NVML_WAIT_MS: the
  // NVML fields are kUnknown64, and the reading, if it comes, is a later kLateReading
  // snapshot of its own moment. A sampled peak with this flag: the peak was not read.
  kMomentReadingMissed = 1u << 1,
};

// 1.3: NVML's list of the compute processes on one GPU at a snapshot, this one included.
struct GpuProcessesRecord {
  uint64_t time_ns;  // the NVML reading
  int32_t device;    // CUDA ordinal (as in DeviceSnapshot)
  uint32_t count;    // GpuProcess entries that follow
};
struct GpuProcess {
  uint32_t pid;
  uint32_t reserved;
  uint64_t used_bytes;  // kUnknown64 when NVML cannot tell
};

// 1.4: a caching allocator's segment/block map at one moment, as the program gave it
// through cumemtrace_allocator_segments (include/cumemtrace/api.h); PyTorch's figures come
// from torch.cuda.memory_snapshot() in its out-of-memory observer. Written in event order:
// the events before it in the file are those that happened before it.
struct AllocatorSegmentsRecord {
  uint64_t time_ns;
  int32_t device;          // CUDA ordinal
  uint32_t segment_count;  // AllocatorSegment entries that follow the name
  uint32_t block_count;    // AllocatorBlock entries that follow the segments
  uint32_t segment_bytes;  // size of each segment entry (readers step by this)
  uint32_t block_bytes;    // size of each block entry (readers step by this)
  uint32_t reserved;
  // then: string allocator ("pytorch"), segment_count × AllocatorSegment, block_count × AllocatorBlock
};
struct AllocatorSegment {
  uint64_t address;  // device address of the segment
  uint64_t total_bytes;
  uint64_t allocated_bytes;  // the allocator's own count of its active_allocated bytes
  uint64_t stream;
  uint32_t first_block;  // its blocks: [first_block, first_block + block_count), in
  uint32_t block_count;  // address order, tiling the segment
  uint32_t flags;        // AllocatorSegmentFlags
  uint32_t reserved;
};
enum AllocatorSegmentFlags : uint32_t {
  kSegmentSmall = 1u << 0,  // the allocator's small pool (PyTorch: segment_type "small")
};
enum class BlockState : uint32_t {
  kInactive = 0,           // free, reusable by a request that fits
  kActiveAllocated = 1,    // handed out
  kActivePendingFree = 2,  // freed by the program, waiting on a stream event
};
inline constexpr uint32_t kBlockStateCount = 3;
struct AllocatorBlock {
  uint64_t size;
  uint32_t state;  // BlockState
  uint32_t reserved;
};

// Appended after the process ended, by `cumemtrace run` / `cumemtrace symbolize`, on the
// machine that ran the job (where the modules' files are).
struct SymbolRecord {
  uint64_t ip;    // as in StackNodeRecord
  uint32_t line;  // 0 unknown
  uint32_t reserved;
  // then: string function (demangled; may be empty), string file (may be empty)
};

struct EndRecord {
  uint64_t time_ns;
  uint64_t events_written;
  uint64_t events_dropped;
  // then (since 1.10; older readers skip it, older writers leave it out, read as
  // kExit): u32 EndReason, string exec target (empty unless kExec); then (1.15, an exit's
  // End) i32 exit status: what exit() or _exit() was given, 0-255; -1 unknown
};
enum class EndReason : uint32_t {
  kExit = 0,  // exit, _exit, quick_exit, a return from main
  // An exec replaced the image: written just before the exec call, with the program it
  // names. If the exec fails, the process goes on and a later End record follows; an
  // event after a kExec End therefore voids it (a failed exec, or another thread that went
  // on allocating while the exec was under way: the trace is then not known to be whole).
  kExec = 1,
};

struct ApiNameRecord {
  uint16_t id;
  // then: string name, e.g. "cudaMalloc", "cuMemAlloc_v2"
};

// 1.2: written after every flush, so that a reader detects any damaged byte and finds
// the next good chunk again. It seals the `covered_bytes` bytes just before its own
// RecordHeader (the first one also covers the FileHeader): everything written since the
// previous ChecksumRecord. `marker` is what a reader searches for after damage; the
// hash makes a chance match in event data harmless.
inline constexpr char kChecksumMarker[8] = {'C', 'M', 'T', 'S', 'E', 'A', 'L', '1'};
struct ChecksumRecord {
  char marker[8];          // kChecksumMarker
  uint64_t covered_bytes;  // bytes sealed, ending where this record's header starts
  uint64_t xxh3;           // XXH3-64 (seed 0) of the covered bytes, then marker and covered_bytes
};
static_assert(sizeof(ChecksumRecord) == 24);

// 1.10: the last record of every chunk, just before the ChecksumRecord that seals it, so
// that a seal covers the chunk's place in the sequence as well as its bytes: a reader finds
// chunks dropped, repeated, swapped or taken from another trace, though each checksum
// matches. Chunks are numbered from 0 (the one holding the FileHeader) in the order written.
struct ChunkSequenceRecord {
  uint64_t trace_id;  // FileHeader::trace_id of the trace the chunk was written for
  uint64_t sequence;  // 0, 1, 2, ... one per seal
};
static_assert(sizeof(ChunkSequenceRecord) == 16);

#pragma pack(pop)

}  // namespace cumemtrace::format
