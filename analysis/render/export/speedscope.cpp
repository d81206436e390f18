#include "render/export/speedscope.h"

#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "base/json_text.h"

namespace cumemtrace {

uint64_t write_speedscope(std::ostream& out, const FoldedStacks& stacks, const std::string& name) {
  using json = nlohmann::ordered_json;
  json frames = json::array(), samples = json::array(), weights = json::array();
  std::map<std::tuple<std::string, std::string, uint32_t>, size_t> index;  // a frame's place in `frames`
  uint64_t total = 0;
  for (const auto& [line, stack] : stacks.stacks()) {
    json sample = json::array();
    for (const FoldedFrame& f : stack.frames) {
      const auto [it, fresh] = index.try_emplace({f.name, f.file, f.line}, frames.size());
      if (fresh) {
        json frame = {{"name", f.name}};
        if (!f.file.empty()) frame["file"] = f.file;
        if (f.line) frame["line"] = f.line;
        frames.push_back(std::move(frame));
      }
      sample.push_back(it->second);
    }
    samples.push_back(std::move(sample));
    weights.push_back(stack.bytes);
    total += stack.bytes;
  }
  const json file = {{"$schema", "https://www.speedscope.app/file-format-schema.json"},
                     {"shared", {{"frames", std::move(frames)}}},
                     {"profiles", json::array({{{"type", "sampled"},
                                                {"name", name},
                                                {"unit", "bytes"},
                                                {"startValue", 0},
                                                {"endValue", total},
                                                {"samples", std::move(samples)},
                                                {"weights", std::move(weights)}}})},
                     {"name", name},
                     {"activeProfileIndex", 0},
                     {"exporter", "cumemtrace"}};
  out << json_text(file) << '\n';
  out.flush();
  return total;
}

}  // namespace cumemtrace
