#include "render/export/pprof.h"

#include <zlib.h>

#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "base/escape.h"
#include "render/export/export_frames.h"
#include "reports/stack_profile.h"

namespace cumemtrace {
namespace {

// Protocol buffers' wire format (protobuf.dev, "Encoding"): varints, and length-delimited
// fields for strings, sub-messages and packed repeated numbers.
class Message {
 public:
  void varint(uint64_t v) {
    while (v >= 0x80) bytes_.push_back(char(v | 0x80)), v >>= 7;
    bytes_.push_back(char(v));
  }
  void number(int field, uint64_t v) {  // wire type 0; zero is left out, as proto3 does
    if (!v) return;
    varint(uint64_t(field) << 3);
    varint(v);
  }
  void bytes(int field, const std::string& b) {  // wire type 2
    varint(uint64_t(field) << 3 | 2);
    varint(b.size());
    bytes_ += b;
  }
  void packed(int field, const std::vector<uint64_t>& vs) {
    Message m;
    for (uint64_t v : vs) m.varint(v);
    bytes(field, m.str());
  }
  const std::string& str() const { return bytes_; }

 private:
  std::string bytes_;
};

std::string gzip(const std::string& raw) {
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("zlib: deflateInit2 failed");
  std::string out(deflateBound(&z, uLong(raw.size())) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = uInt(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("zlib: deflate did not finish");
  return out;
}

}  // namespace

void PprofProfile::add(const Trace& t, const EventSource& events, uint64_t at_ns, bool name_process) {
  std::vector<Frame> prefix;  // outermost first: the device, then the process when named
  if (name_process && t.process)
    prefix.push_back(
        {t.process->rank >= 0 ? "rank " + std::to_string(t.process->rank) : "pid " + std::to_string(t.process->pid), "",
         "", 0});
  ExportFrames frames(t);
  const auto stack_of = [&](int32_t device, uint32_t stack, uint32_t python) {
    std::vector<Frame> out;
    for (const auto& f : frames.of(stack, python))
      out.push_back({describe(f, FrameStyle::kExport), f.file, f.python ? "" : f.module, int64_t(f.line)});
    if (out.empty()) out.push_back({"[no stack]", "", "", 0});
    out.push_back({"cuda:" + std::to_string(device), "", "", 0});
    for (auto p = prefix.rbegin(); p != prefix.rend(); ++p) out.push_back(*p);
    return out;
  };
  StackProfile by_stack;
  add_allocated(by_stack, events);
  add_live_at(by_stack, events, t.granule(), at_ns);
  for (const auto& [key, f] : by_stack) {
    Values& s = samples_[stack_of(std::get<0>(key), std::get<1>(key), std::get<2>(key))];
    s.alloc_objects += int64_t(f.alloc_objects), s.alloc_space += int64_t(f.alloc_bytes);
    s.inuse_objects += int64_t(f.live_objects), s.inuse_space += int64_t(f.live_bytes);
  }
}

uint64_t PprofProfile::write(std::ostream& out) const {
  std::vector<std::string> strings{""};  // the string table: index 0 is ""
  std::unordered_map<std::string, uint64_t> string_index{{"", 0}};
  const auto str = [&](const std::string& s) {
    auto [it, fresh] = string_index.try_emplace(s, strings.size());
    if (fresh) strings.push_back(s);
    return it->second;
  };
  Message profile;
  const auto value_type = [&](const char* type, const char* unit) {
    Message m;
    m.number(1, str(type));
    m.number(2, str(unit));
    return m.str();
  };
  // Profile.sample_type = 1: the four values of every sample, in this order.
  profile.bytes(1, value_type("alloc_objects", "count"));
  profile.bytes(1, value_type("alloc_space", "bytes"));
  profile.bytes(1, value_type("inuse_objects", "count"));
  profile.bytes(1, value_type("inuse_space", "bytes"));
  std::map<Frame, uint64_t> location_of;       // each distinct frame: one Function, one Location
  std::map<std::string, uint64_t> mapping_of;  // each module: one Mapping
  Message functions, locations, mappings;
  uint64_t inuse = 0;
  for (const auto& [stack, v] : samples_) {
    std::vector<uint64_t> ids;
    for (const Frame& f : stack) {
      auto [it, fresh] = location_of.try_emplace(f, location_of.size() + 1);
      if (fresh) {
        uint64_t mapping = 0;
        if (!f.module.empty()) {
          auto [m, new_module] = mapping_of.try_emplace(f.module, mapping_of.size() + 1);
          if (new_module) {
            Message mm;  // Mapping: id 1, filename 5; no addresses: locations carry names
            mm.number(1, m->second);
            mm.number(5, str(f.module));
            mm.number(7, 1);  // has_functions
            mappings.bytes(3, mm.str());
          }
          mapping = m->second;
        }
        Message fn;  // Function: id 1, name 2, system_name 3, filename 4
        fn.number(1, it->second);
        fn.number(2, str(f.name));
        fn.number(3, str(f.name));
        fn.number(4, str(f.file));
        functions.bytes(5, fn.str());
        Message line;  // Line: function_id 1, line 2
        line.number(1, it->second);
        line.number(2, uint64_t(f.line));
        Message loc;  // Location: id 1, mapping_id 2, line 4
        loc.number(1, it->second);
        loc.number(2, mapping);
        loc.bytes(4, line.str());
        locations.bytes(4, loc.str());
      }
      ids.push_back(it->second);
    }
    Message sample;  // Sample: location_id 1 (innermost first), value 2
    sample.packed(1, ids);
    sample.packed(
        2, {uint64_t(v.alloc_objects), uint64_t(v.alloc_space), uint64_t(v.inuse_objects), uint64_t(v.inuse_space)});
    profile.bytes(2, sample.str());
    inuse += uint64_t(v.inuse_space);
  }
  // period_type 11 (space, bytes), period 12 = 1, default_sample_type 14 = "inuse_space":
  // their strings go into the table before it is written.
  const std::string period_type = value_type("space", "bytes");
  const uint64_t default_type = str("inuse_space");
  std::string raw = profile.str() + mappings.str() + locations.str() + functions.str();
  Message tail;
  // string_table = 6. Protobuf strings are UTF-8, and pprof prints them as they are on a
  // terminal: a name of the trace is printable (escape.h).
  for (const std::string& s : strings) tail.bytes(6, printable(s));
  tail.bytes(11, period_type);
  tail.number(12, 1);
  tail.number(14, default_type);
  raw += tail.str();
  out << gzip(raw);
  return inuse;
}

}  // namespace cumemtrace
