// The record encoder (include/cumemtrace/record_encode.h) against bytes put together here
// by hand from trace_format.h: the header's type and payload length as numbers worked out
// in the comments, then the struct's bytes, then each string as its u32 length and bytes.
// Every row of records.def is encoded once; a row added without its case here fails the
// last test.
#include <cumemtrace/record_encode.h>

#include <cstring>
#include <set>
#include <string>

#include <cumemtrace/trace_format.h>

#include <catch2/catch.hpp>

namespace fmt = cumemtrace::format;
using cumemtrace::BytesAt;
using cumemtrace::put_extended_record;
using cumemtrace::put_record;
using cumemtrace::put_record_head;
using cumemtrace::Strings;
using fmt::RecordType;

namespace {

std::set<uint16_t>& record_types_encoded() {
  static std::set<uint16_t> types;
  return types;
}

std::string u16_bytes(uint16_t v) { return std::string(reinterpret_cast<const char*>(&v), 2); }
std::string u32_bytes(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
template <class T>
std::string struct_bytes(const T& v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof v);
}
// A record header by hand: type, flags 0, payload length.
std::string record_header_bytes(uint16_t type, uint32_t payload) {
  record_types_encoded().insert(type);
  return u16_bytes(type) + u16_bytes(0) + u32_bytes(payload);
}
std::string counted_string(const std::string& s) { return u32_bytes(uint32_t(s.size())) + s; }

// Records of a struct and strings, as the reader reads them.
void encode_row_shapes() {
  {  // device: 32-byte struct + name (4 + 4): payload 40
    std::string out;
    const fmt::DeviceRecord r{0, 1, 8ull << 30, {7}};
    put_record<RecordType::kDevice>(out, r, std::string("H200"));
    CHECK(out == record_header_bytes(2, 40) + struct_bytes(r) + counted_string("H200"));
  }
  {  // module: 24-byte struct + path (4 + 9) + build id (4 + 2): payload 43
    std::string out;
    const fmt::ModuleRecord r{0x1000, 0x401000, 0x402000};
    put_record<RecordType::kModule>(out, r, "/lib/a.so", std::string("\x01\x02", 2));
    CHECK(out == record_header_bytes(3, 43) + struct_bytes(r) + counted_string("/lib/a.so") +
                     counted_string(std::string("\x01\x02", 2)));
  }
  {  // stack node: its 16-byte struct
    std::string out;
    const fmt::StackNodeRecord r{5, 2, 0x401234};
    put_record<RecordType::kStackNode>(out, r);
    CHECK(out == record_header_bytes(4, 16) + struct_bytes(r));
  }
  {  // symbol: 16-byte struct + function (4 + 4) + empty file (4): payload 28
    std::string out;
    const fmt::SymbolRecord r{0x401234, 12, 0};
    put_record<RecordType::kSymbol>(out, r, std::string("main"), std::string());
    CHECK(out == record_header_bytes(7, 28) + struct_bytes(r) + counted_string("main") + counted_string(""));
  }
  {  // api name: 2-byte struct + name (4 + 10): payload 16
    std::string out;
    put_record<RecordType::kApiName>(out, fmt::ApiNameRecord{3}, "cudaMalloc");
    CHECK(out == record_header_bytes(9, 16) + u16_bytes(3) + counted_string("cudaMalloc"));
  }
  {  // checksum and chunk sequence: their 24- and 16-byte structs
    std::string out;
    fmt::ChecksumRecord c{};
    std::memcpy(c.marker, fmt::kChecksumMarker, sizeof c.marker);
    c.covered_bytes = 100;
    c.xxh3 = 0x1234;
    put_record<RecordType::kChecksum>(out, c);
    put_record<RecordType::kChunkSequence>(out, fmt::ChunkSequenceRecord{9, 3});
    CHECK(out == record_header_bytes(10, 24) + struct_bytes(c) + record_header_bytes(21, 16) +
                     struct_bytes(uint64_t(9)) + struct_bytes(uint64_t(3)));
  }
  {  // mark and range end: 16-byte struct + name (4 + 4): payload 24, two types of one struct
    std::string out;
    const fmt::MarkRecord m{50, 7, uint8_t(fmt::MarkSource::kNvtxPush), {}};
    put_record<RecordType::kMark>(out, m, std::string_view("step"));
    put_record<RecordType::kRangeEnd>(out, m, std::string_view("step"));
    CHECK(out == record_header_bytes(12, 24) + struct_bytes(m) + counted_string("step") + record_header_bytes(16, 24) +
                     struct_bytes(m) + counted_string("step"));
  }
  {  // python string and frame: 4 + name (4 + 7) = payload 15; the frame's 24 bytes
    std::string out;
    put_record<RecordType::kPyString>(out, fmt::PyStringRecord{4}, std::string("train.py").substr(0, 7));
    const fmt::PyFrameRecord f{2, 1, 4, 4, -1, fmt::kPyFrameEntry};
    put_record<RecordType::kPyFrame>(out, f);
    CHECK(out == record_header_bytes(14, 15) + u32_bytes(4) + counted_string("train.p") + record_header_bytes(15, 24) +
                     struct_bytes(f));
  }
  {  // nvtx memory: 48-byte struct + name (4 + 4): payload 56
    std::string out;
    const fmt::NvtxMemRecord r{1, 2, 3, 4, 5, 6, 7, uint8_t(fmt::NvtxMemOp::kHeapRegister), 1, 0};
    put_record<RecordType::kNvtxMem>(out, r, std::string("pool"));
    CHECK(out == record_header_bytes(17, 56) + struct_bytes(r) + counted_string("pool"));
  }
  {  // block source: 24-byte struct + version (4 + 4) + reason (4) + settings (4 + 3): payload 43
    std::string out;
    fmt::BlockSourceRecord r{};
    r.time_ns = 77;
    put_record<RecordType::kBlockSource>(out, r, "2.11", "", "a=1");
    CHECK(out == record_header_bytes(18, 43) + struct_bytes(r) + counted_string("2.11") + counted_string("") +
                     counted_string("a=1"));
  }
  {  // block event and bounded: their 96- and 24-byte structs
    std::string out;
    fmt::BlockEventRecord b{};
    b.time_ns = 5;
    const fmt::BoundedRecord n{9, 1, 4096, 12};
    put_record<RecordType::kBlockEvent>(out, b);
    put_record<RecordType::kBounded>(out, n);
    CHECK(out == record_header_bytes(19, 96) + struct_bytes(b) + record_header_bytes(22, 24) + struct_bytes(n));
  }
}

// What later minor versions appended after a row's shape.
void encode_extended_rows() {
  {  // event: 64 bytes (1.5), then 68 with the Python stack's id (1.6)
    std::string out;
    fmt::EventRecord e{};
    e.time_ns = 10;
    e.address = 0x7000;
    put_record<RecordType::kEvent>(out, e);
    put_extended_record<RecordType::kEvent>(out, e, Strings{}, fmt::EventPython{42});
    CHECK(out ==
          record_header_bytes(5, 64) + struct_bytes(e) + record_header_bytes(5, 68) + struct_bytes(e) + u32_bytes(42));
  }
  {  // end of an exit: 24-byte struct + reason 4 + empty target 4 + status 4: payload 36
    std::string out;
    const fmt::EndRecord r{100, 3, 0};
    put_extended_record<RecordType::kEnd>(out, r, Strings{}, uint32_t(fmt::EndReason::kExit), std::string_view(),
                                          int32_t(2));
    CHECK(out == record_header_bytes(8, 36) + struct_bytes(r) + u32_bytes(0) + u32_bytes(0) + u32_bytes(2));
  }
  {  // end of an exec: 24-byte struct + reason 4 + target (4 + 9): payload 41
    std::string out;
    const fmt::EndRecord r{100, 3, 0};
    put_extended_record<RecordType::kEnd>(out, r, Strings{}, uint32_t(fmt::EndReason::kExec), "/bin/true");
    CHECK(out == record_header_bytes(8, 41) + struct_bytes(r) + u32_bytes(1) + counted_string("/bin/true"));
  }
  {  // process: 40-byte struct + 3 strings (9 + 8 + 7) + lineage 8 + launcher (4) + environment (4 + 5)
    std::string out;
    // 40 + (4+5) + (4+4) + (4+3) + 8 + (4+0) + (4+5) = 85
    fmt::ProcessRecord p{};
    p.pid = 11;
    p.rank = -1;
    const fmt::ProcessLineage lineage{0, 2};
    put_extended_record<RecordType::kProcess>(out, p, Strings{"host1", std::string("a\0b\0", 4), "1.0"}, lineage,
                                              std::string_view(), std::string("X=1\0Y", 5));
    CHECK(out == record_header_bytes(1, 85) + struct_bytes(p) + counted_string("host1") +
                     counted_string(std::string("a\0b\0", 4)) + counted_string("1.0") + struct_bytes(lineage) +
                     counted_string("") + counted_string(std::string("X=1\0Y", 5)));
  }
}

// The start of records of another shape, and a record put into sized memory.
void encode_record_heads() {
  {  // snapshot: 32-byte head, then the caller's entries (2 x 8 bytes said): payload 48
    std::string out;
    fmt::SnapshotRecord s{};
    s.device_count = 2;
    put_record_head<RecordType::kSnapshot>(out, s, 16);
    CHECK(sizeof s == 32);
    CHECK(out == record_header_bytes(6, 48) + struct_bytes(s));
  }
  {  // allocator segments, gpu processes: heads with what follows counted in
    std::string out;
    fmt::AllocatorSegmentsRecord a{};
    fmt::GpuProcessesRecord g{};
    put_record_head<RecordType::kAllocatorSegments>(out, a, 100);
    put_record_head<RecordType::kGpuProcesses>(out, g, 0);
    // 32-byte head + 100 said; 16-byte head + none
    CHECK(out == record_header_bytes(11, 132) + struct_bytes(a) + record_header_bytes(13, 16) + struct_bytes(g));
  }
  {  // compressed: the 16-byte head written in front of 5 compressed bytes: payload 21
    std::string out;
    char buf[8 + 16];
    BytesAt at{buf};
    const fmt::CompressedRecord c{300, fmt::kCodecZstd, 0};
    put_record_head<RecordType::kCompressed>(at, c, 5);
    CHECK(at.at == buf + sizeof buf);
    CHECK(std::string(buf, sizeof buf) == record_header_bytes(20, 21) + struct_bytes(c));
  }
}

}  // namespace

TEST_CASE("record encode: records of a struct and strings, as the reader reads them") { encode_row_shapes(); }
TEST_CASE("record encode: what later versions appended after a row's shape") { encode_extended_rows(); }
TEST_CASE("record encode: the start of records of another shape, and into sized memory") { encode_record_heads(); }

TEST_CASE("record encode: every row of records.def has its case above") {
  record_types_encoded().clear();
  encode_row_shapes();
  encode_extended_rows();
  encode_record_heads();
  std::set<uint16_t> rows;
#define CUMEMTRACE_RECORD(Name, id, since, label, Fixed, strings) rows.insert(id);
#include <cumemtrace/records.def>
#undef CUMEMTRACE_RECORD
  CHECK(rows.size() == 22);
  CHECK(record_types_encoded() == rows);
}
