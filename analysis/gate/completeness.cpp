#include "gate/completeness.h"

#include "base/plural.h"

namespace cumemtrace {

std::vector<std::string> incomplete_reasons(const Report& rep) {
  const Integrity& in = rep.integrity;
  std::vector<std::string> out;
  if (!in.damage.empty())
    out.push_back(count_of(in.damage.size(), "damaged or unread byte range") + ", the first at byte " +
                  std::to_string(in.damage.front().byte_offset));
  if (in.end_mismatch)
    out.push_back("its End record counts " + std::to_string(in.end_mismatch->announced) + " events written, " +
                  std::to_string(in.end_mismatch->read) + " were read");
  if (in.events_dropped) out.push_back(std::to_string(in.events_dropped) + " events dropped by the writer");
  if (!in.impossible.empty()) out.push_back(count_of(in.impossible.size(), "impossible event") + " set aside");
  if (in.incomplete() && out.empty()) out.push_back("the report marks its figures incomplete");
  if (!rep.complete) out.push_back("no End record (the process was killed, or the trace was cut short)");
  bool device = false;
  for (const auto& d : rep.devices) device |= d.device >= 0;
  if (!device) out.push_back("no device seen");
  return out;
}

std::string join_reasons(const std::vector<std::string>& reasons) {
  std::string out;
  for (const auto& r : reasons) out += (out.empty() ? "" : "; ") + r;
  return out;
}

}  // namespace cumemtrace
