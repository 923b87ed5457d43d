#include "runtime/session/ProbeHitReport.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace sonde::session {

void printProbeHitReport(Runtime &rt) {
  const LoadedModule &module = *rt.module;
  const auto &layout = module.layout();
  auto *base = static_cast<char *>(rt.segment->base());
  OutputBuffer &out = *rt.thread().output;
  bool header = false;
  for (uint32_t i = 0; i < module.desc().probe_count; ++i) {
    const sonde_probe_desc &p = module.probe(i);
    if (p.timing_global == 0 || p.timing_global > layout.placements().size())
      continue;
    if (!header) {
      char *buf = out.reserve(SONDE_PRINT_BUFFER_SIZE, *rt.output);
      out.commit(std::snprintf(buf, SONDE_PRINT_BUFFER_SIZE, "----- probe hit report: \n"));
      header = true;
    }
    // Stats globals are per-CPU slots merged on read: no lock to take.
    sonde_stat_summary s{};
    const values::GlobalPlacement &place = layout.placements()[p.timing_global - 1];
    sonde_stats_summary(reinterpret_cast<const sonde_stats *>(base + place.offset), &s);
    const char *location = p.location ? p.location : "";
    char *buf = out.reserve(SONDE_PRINT_BUFFER_SIZE, *rt.output);
    // stap's lines, in ns rather than cycles; a probe that never ran has no times.
    int n = s.count == 0
                ? std::snprintf(buf, SONDE_PRINT_BUFFER_SIZE,
                                "%s, (%s), hits: 0, from: %s, index: %u\n", p.pp, location, p.pn, i)
                : std::snprintf(buf, SONDE_PRINT_BUFFER_SIZE,
                                "%s, (%s), hits: %" PRId64 ", ns: %" PRId64 "min/%" PRId64
                                "avg/%" PRId64 "max, variance: %" PRId64 ", from: %s, index: %u\n",
                                p.pp, location, s.count, s.min, s.avg, s.max, s.variance, p.pn, i);
    out.commit(n < 0 ? 0 : std::min<size_t>(n, SONDE_PRINT_BUFFER_SIZE - 1));
  }
  out.flush(*rt.output);
}

} // namespace sonde::session
