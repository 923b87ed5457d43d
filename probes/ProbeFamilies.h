// Which concrete probe points exist: one table row per accepted shape of each
// probe family, with the argument checks of language.md §4 and the typing of
// `$` context variables. Sema builds its probe-point match tree from this table;
// later issues add discovery (ELF notes, tracefs) per family here.
#pragma once

#include "ast/Ast.h"

#include <string>
#include <string_view>
#include <vector>

namespace sonde::probes {

enum class ProbeKind : uint8_t {
  Begin,
  End,
  Error,
  Never,
  Timer,            // timer.s/ms/us/ns(N)[.randomize(M)]
  TimerHz,          // timer.hz(N)
  TimerJiffies,     // timer.jiffies(N)[.randomize(M)]
  TimerProfileTick, // timer.profile.tick
  Marker,           // process(...).mark(...)
  ProcessBegin,
  ProcessEnd,
  ThreadBegin,
  ThreadEnd,
  KernelTrace, // kernel.trace("sys:name")
  Unsupported, // DWARF, procfs, perf, ...: rejected in pass 2
};

// What a probe-point component takes in parentheses.
enum class ArgKind : uint8_t { None, Number, String };

struct PatternComponent {
  std::string_view name;
  ArgKind arg = ArgKind::None;
};

struct ProbeFamily {
  ProbeKind kind;
  std::vector<PatternComponent> pattern;
  // Checks the literal arguments of a point of this shape (e.g. timer ranges);
  // returns the error message, or "" when they are fine. May be null.
  std::string (*validate)(const ast::ProbePoint &point) = nullptr;

  // Unsupported families match any point that merely starts with `pattern`.
  bool supported() const { return kind != ProbeKind::Unsupported; }
  bool hasContextVariables() const;
};

// Every row, supported and unsupported.
const std::vector<ProbeFamily> &families();

ArgKind argKindOf(const ast::ProbePointComponent &c);

// The numeric argument of component `name` of a point, or `fallback` when absent.
int64_t numberArg(const ast::ProbePoint &p, std::string_view name, int64_t fallback);
// Nanoseconds per unit of timer.s/ms/us/ns(N) (and sec/msec/usec/nsec); 0 otherwise.
int64_t timerUnitNs(std::string_view unit);

// The family of a concrete (wildcard-free, alias-free) point, or null.
const ProbeFamily *familyOf(const ast::ProbePoint &point);

// What `$name` means inside a probe on `point` (family null = a function body,
// which has no context). This is the one place later issues extend to resolve
// `$argN` against a marker's ELF note or `$field` against a tracepoint format.
struct ContextVariable {
  bool found = false;
  ast::Type type = ast::Type::Unknown;
  std::string error; // the variable exists nowhere in this context, and why
};
// What pass 2 resolved a concrete probe to, when anything: the marker site of a
// process(...).mark(...) probe, the tracepoint of a kernel.trace(...) probe.
struct ResolvedPoint {
  const marker::CatalogSite *site = nullptr;
  const tracepoint::ResolvedTracepoint *tracepoint = nullptr;
};
ContextVariable contextVariable(const ProbeFamily *family, const ast::ProbePoint *point,
                                const ResolvedPoint &resolved, const ast::TargetSymbol &sym);
// The error for an assignment to a context variable of `family`.
std::string contextVariableWriteError(const ProbeFamily *family, const ast::TargetSymbol &sym);

} // namespace sonde::probes
