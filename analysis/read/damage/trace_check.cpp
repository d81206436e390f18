#include "read/damage/trace_check.h"

#include <iostream>

#include "base/escape.h"
#include "base/plural.h"

namespace cumemtrace {

bool check_trace(const Trace& t, std::ostream& err) {
  if (!t.header_ok) {
    err << "cumemtrace: " << printable(t.path) << ": " << (t.error ? t.error->message : "unreadable") << "\n";
    return false;
  }
  for (const auto& d : t.damage) err << "cumemtrace: " << printable(t.path) << ": " << d.message << "\n";
  if (!t.damage.empty())
    err << "warning: " << count_of(t.damage.size(), "damaged or unread byte range") << ", the first at byte "
        << t.damage.front().byte_offset << "; figures from this trace are incomplete\n";
  return true;
}

}  // namespace cumemtrace
