#include "reports/framework_limit.h"

#include <cstdlib>
#include <string_view>

#include "base/units.h"
#include "reports/report.h"

namespace cumemtrace {
namespace {

constexpr double kXlaDefaultFraction = 0.75;  // XLA_PYTHON_CLIENT_MEM_FRACTION unset

bool xla_in_use(const Trace& trace, const ProcessInfo& p) {
  if (!p.environment.empty()) return true;  // every recorded variable is XLA's
  for (const ModuleInfo& m : trace.modules)
    for (std::string_view mark : {"jaxlib", "xla_extension", "jax_cuda"})
      if (m.path.find(mark) != std::string::npos) return true;
  return false;
}

// The fraction as XLA reads it; nullopt when set but not a number in (0, 1].
std::optional<double> fraction_of(const std::string& text) {
  char* end = nullptr;
  const double f = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(f > 0 && f <= 1)) return std::nullopt;
  return f;
}

// |peak - limit| x 100 <= limit, without the product (it may not fit 64 bits).
bool within_one_percent(uint64_t peak, uint64_t limit) {
  return (peak > limit ? peak - limit : limit - peak) <= limit / 100;
}

}  // namespace

std::optional<FrameworkLimit> framework_limit(const Trace& trace, const Report& rep) {
  const bool died = !trace.end;  // no End record: killed, or a fatal signal
  if ((!died && (trace.end->exec || trace.end->exit_status <= 0)) || rep.failed_total > 0 || !rep.process)
    return std::nullopt;
  const ProcessInfo& p = *rep.process;
  if (!xla_in_use(trace, p)) return std::nullopt;
  if (const std::string* a = p.environment_value("XLA_PYTHON_CLIENT_ALLOCATOR"); a && *a == "platform")
    return std::nullopt;
  FrameworkLimit l;
  l.framework = "XLA";
  l.fraction = kXlaDefaultFraction;
  l.setting = "XLA_PYTHON_CLIENT_MEM_FRACTION unset: 0.75";
  if (const std::string* f = p.environment_value("XLA_PYTHON_CLIENT_MEM_FRACTION")) {
    const auto parsed = fraction_of(*f);
    if (!parsed) return std::nullopt;
    l.fraction = *parsed;
    l.setting = "XLA_PYTHON_CLIENT_MEM_FRACTION=" + *f;
  }
  if (const std::string* pre = p.environment_value("XLA_PYTHON_CLIENT_PREALLOCATE"))
    l.preallocated = !(*pre == "false" || *pre == "0");
  if (died && l.preallocated) return std::nullopt;
  l.exit_status = died ? -1 : trace.end->exit_status;
  l.trace_ended = !died;
  for (const DeviceReport& d : rep.devices) {
    if (d.device < 0 || d.total_bytes == 0) continue;
    const auto limit = uint64_t(double(d.total_bytes) * l.fraction);
    if (!within_one_percent(d.peak_bytes, limit)) continue;
    l.device = d.device, l.peak_bytes = d.peak_bytes, l.limit_bytes = limit, l.total_bytes = d.total_bytes;
    l.message = "peak " + iec(d.peak_bytes) + " of XLA's limit " + iec(limit) + " (" + l.setting + " of " +
                iec(d.total_bytes) + ")";
    return l;
  }
  return std::nullopt;
}

}  // namespace cumemtrace
