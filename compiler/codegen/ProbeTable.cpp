#include "codegen/ProbeTable.h"

#include "probes/ProbeFamilies.h"
#include "probes/marker/MarkerCatalog.h"
#include "runtime/session/ModuleAbi.h"

#include <string_view>

namespace sonde::codegen {

using probes::numberArg;
using probes::ProbeKind;
using probes::timerUnitNs;

ProbeInfo describeProbe(const ast::DerivedProbe &probe, const CodegenOptions &opts) {
  ProbeInfo info;
  const ast::ProbePoint &point = *probe.point;
  info.pp = point.str();
  info.pn = probe.originPoint ? probe.originPoint->str() : info.pp;
  const probes::ProbeFamily *family = probes::familyOf(point);
  if (!family) {
    info.disposition = ProbeInfo::Disposition::Unsupported;
    info.problem = "probe point not supported";
    return info;
  }
  switch (family->kind) {
  case ProbeKind::Begin:
  case ProbeKind::End:
  case ProbeKind::Error:
    info.kind = family->kind == ProbeKind::Begin ? SONDE_PROBE_BEGIN
                : family->kind == ProbeKind::End ? SONDE_PROBE_END
                                                 : SONDE_PROBE_ERROR;
    info.sequence = numberArg(point, point.components[0].name, 0);
    info.checksSessionRunning = false;
    break;
  case ProbeKind::Never: info.disposition = ProbeInfo::Disposition::Never; break;
  case ProbeKind::Timer: {
    int64_t unit = timerUnitNs(point.components[1].name);
    info.kind = SONDE_PROBE_TIMER;
    info.periodNs = numberArg(point, point.components[1].name, 0) * unit;
    info.randomizeNs = numberArg(point, "randomize", 0) * unit;
    break;
  }
  case ProbeKind::TimerHz: {
    int64_t hz = numberArg(point, "hz", 1);
    info.kind = SONDE_PROBE_TIMER;
    info.periodNs = (1000000000 + hz - 1) / hz; // stap rounds the period up
    break;
  }
  case ProbeKind::TimerJiffies:
    info.kind = SONDE_PROBE_TIMER;
    info.periodNs = numberArg(point, "jiffies", 1) * opts.jiffyNs;
    info.randomizeNs = numberArg(point, "randomize", 0) * opts.jiffyNs;
    break;
  case ProbeKind::Marker:
    info.kind = SONDE_PROBE_MARKER;
    info.hasContext = true;
    info.checksSessionRunning = false;
    if (!probe.markerSite || probe.markerSite->site.nop == probes::marker::SiteNop::None) {
      info.disposition = ProbeInfo::Disposition::Unsupported;
      info.problem = probe.markerSite
                         ? "marker " + probe.markerSite->site.provider + ":" +
                               probe.markerSite->site.name + " in " + probe.markerSite->binary +
                               " is not on a NOP sonde can patch or trap"
                         : "marker probe without a resolved site";
    }
    break;
  case ProbeKind::ProcessBegin:
  case ProbeKind::ProcessEnd:
  case ProbeKind::ThreadBegin:
  case ProbeKind::ThreadEnd:
    info.kind = family->kind == ProbeKind::ProcessBegin  ? SONDE_PROBE_PROCESS_BEGIN
                : family->kind == ProbeKind::ProcessEnd  ? SONDE_PROBE_PROCESS_END
                : family->kind == ProbeKind::ThreadBegin ? SONDE_PROBE_THREAD_BEGIN
                                                         : SONDE_PROBE_THREAD_END;
    // process("PATH") or process(PID): the executable the probe applies to.
    if (const ast::Expr *arg = point.components[0].arg.get()) {
      using probes::marker::MarkerCatalog;
      std::string error;
      std::optional<std::string> exe;
      if (auto *path = dynamic_cast<const ast::StringLit *>(arg))
        exe = MarkerCatalog::resolveExecutable(path->value, error);
      else if (auto *pid = dynamic_cast<const ast::NumberLit *>(arg))
        exe = MarkerCatalog::executableOfProcess(pid->value, error);
      if (exe) {
        info.processPath = *exe;
      } else if (!error.empty()) {
        info.disposition = ProbeInfo::Disposition::Unsupported;
        info.problem = error;
      }
    }
    break;
  case ProbeKind::KernelTrace:
    info.kind = SONDE_PROBE_KERNEL_TRACE;
    info.hasContext = true;
    break;
  case ProbeKind::TimerProfileTick:
    info.disposition = ProbeInfo::Disposition::Unsupported;
    info.problem = "timer.profile.tick probes are not supported by this build yet";
    break;
  case ProbeKind::Unsupported:
    info.disposition = ProbeInfo::Disposition::Unsupported;
    info.problem = "probe point not supported";
    break;
  }
  return info;
}

} // namespace sonde::codegen
