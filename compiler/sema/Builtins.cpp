#include "sema/Builtins.h"

#include <string>
#include <unordered_map>

namespace sonde::sema {

namespace {

constexpr BuiltinScope U = BuiltinScope::User;
constexpr BuiltinScope K = BuiltinScope::Kernel;
constexpr BuiltinScope A = BuiltinScope::Anywhere;

// name, scope, return ('L' long, 'S' string, 'V' none), parameters, minimum arity.
// Functions marked "–" (not planned) in language.md §6 are deliberately absent.
const BuiltinFunction kBuiltins[] = {
    // Control and errors.
    {"exit", A, 'V', "", 0},
    {"abort", A, 'V', "", 0},
    {"error", A, 'V', "S", 1},
    {"warn", A, 'V', "S", 1},
    {"log", A, 'V', "S", 1},
    {"assert", A, 'V', "LS", 1},
    // Time.
    {"gettimeofday_s", A, 'L', "", 0},
    {"gettimeofday_ms", A, 'L', "", 0},
    {"gettimeofday_us", A, 'L', "", 0},
    {"gettimeofday_ns", A, 'L', "", 0},
    {"local_clock_s", A, 'L', "", 0},
    {"local_clock_ms", A, 'L', "", 0},
    {"local_clock_us", A, 'L', "", 0},
    {"local_clock_ns", A, 'L', "", 0},
    {"cpu_clock_s", A, 'L', "L", 1},
    {"cpu_clock_ms", A, 'L', "L", 1},
    {"cpu_clock_us", A, 'L', "L", 1},
    {"cpu_clock_ns", A, 'L', "L", 1},
    {"ktime_get_ns", A, 'L', "", 0},
    {"get_cycles", A, 'L', "", 0},
    {"jiffies", K, 'L', "", 0},
    {"HZ", K, 'L', "", 0},
    {"ctime", A, 'S', "L", 0},
    {"tz_ctime", A, 'S', "L", 1},
    {"tz_gmtoff", A, 'L', "", 0},
    {"tz_name", A, 'S', "", 0},
    // The current task.
    {"pid", A, 'L', "", 0},
    {"tid", A, 'L', "", 0},
    {"ppid", A, 'L', "", 0},
    {"pgrp", A, 'L', "", 0},
    {"sid", A, 'L', "", 0},
    {"uid", A, 'L', "", 0},
    {"euid", A, 'L', "", 0},
    {"gid", A, 'L', "", 0},
    {"egid", A, 'L', "", 0},
    {"ns_pid", A, 'L', "", 0},
    {"ns_tid", A, 'L', "", 0},
    {"ns_ppid", A, 'L', "", 0},
    {"ns_pgrp", A, 'L', "", 0},
    {"ns_sid", A, 'L', "", 0},
    {"ns_uid", A, 'L', "", 0},
    {"ns_euid", A, 'L', "", 0},
    {"ns_gid", A, 'L', "", 0},
    {"ns_egid", A, 'L', "", 0},
    {"execname", A, 'S', "", 0},
    {"pexecname", A, 'S', "", 0},
    {"pid2execname", A, 'S', "L", 1},
    {"cpu", A, 'L', "", 0},
    {"target", A, 'L', "", 0},
    {"is_myproc", A, 'L', "", 0},
    {"stp_pid", A, 'L', "", 0},
    {"user_mode", A, 'L', "", 0},
    {"cmdline_str", U, 'S', "", 0},
    {"cmdline_arg", U, 'S', "L", 1},
    {"cmdline_args", U, 'S', "LLS", 3},
    {"env_var", U, 'S', "S", 1},
    // The probe.
    {"pp", A, 'S', "", 0},
    {"pn", A, 'S', "", 0},
    {"ppfunc", U, 'S', "", 0},
    {"probefunc", U, 'S', "", 0},
    {"probe_type", A, 'S', "", 0},
    {"is_return", A, 'L', "", 0},
    {"uaddr", U, 'L', "", 0},
    // User memory.
    {"user_string", U, 'S', "LS", 1},
    {"user_string_n", U, 'S', "LLS", 2},
    {"user_string_quoted", U, 'S', "L", 1},
    {"user_string_n_quoted", U, 'S', "LL", 2},
    {"user_string_warn", U, 'S', "LS", 1},
    {"user_buffer_quoted", U, 'S', "LLL", 3},
    {"user_char", U, 'L', "L", 1},
    {"user_short", U, 'L', "L", 1},
    {"user_ushort", U, 'L', "L", 1},
    {"user_int", U, 'L', "L", 1},
    {"user_long", U, 'L', "L", 1},
    {"user_ulong", U, 'L', "L", 1},
    {"user_int8", U, 'L', "L", 1},
    {"user_uint8", U, 'L', "L", 1},
    {"user_int16", U, 'L', "L", 1},
    {"user_uint16", U, 'L', "L", 1},
    {"user_int32", U, 'L', "L", 1},
    {"user_uint32", U, 'L', "L", 1},
    {"user_int64", U, 'L', "L", 1},
    {"user_uint64", U, 'L', "L", 1},
    {"user_char_error", U, 'L', "L", 1},
    {"user_short_error", U, 'L', "L", 1},
    {"user_ushort_error", U, 'L', "L", 1},
    {"user_int_error", U, 'L', "L", 1},
    {"user_long_error", U, 'L', "L", 1},
    {"user_ulong_error", U, 'L', "L", 1},
    {"user_int8_error", U, 'L', "L", 1},
    {"user_uint8_error", U, 'L', "L", 1},
    {"user_int16_error", U, 'L', "L", 1},
    {"user_uint16_error", U, 'L', "L", 1},
    {"user_int32_error", U, 'L', "L", 1},
    {"user_uint32_error", U, 'L', "L", 1},
    {"user_int64_error", U, 'L', "L", 1},
    {"user_uint64_error", U, 'L', "L", 1},
    // Kernel memory.
    {"kernel_string", K, 'S', "LS", 1},
    {"kernel_string_n", K, 'S', "LL", 2},
    {"kernel_string_quoted", K, 'S', "L", 1},
    {"kernel_char", K, 'L', "L", 1},
    {"kernel_short", K, 'L', "L", 1},
    {"kernel_int", K, 'L', "L", 1},
    {"kernel_long", K, 'L', "L", 1},
    {"kernel_pointer", K, 'L', "L", 1},
    // Symbols and stacks.
    {"usymname", U, 'S', "L", 1},
    {"usymdata", U, 'S', "L", 1},
    {"umodname", U, 'S', "L", 1},
    {"usymfile", U, 'S', "L", 1},
    {"usymline", U, 'S', "L", 1},
    {"usymfileline", U, 'S', "L", 1},
    {"ubacktrace", U, 'S', "", 0},
    {"ucallers", U, 'S', "L", 1},
    {"ustack", U, 'L', "L", 1},
    {"print_ubacktrace", U, 'V', "", 0},
    {"print_ubacktrace_brief", U, 'V', "", 0},
    {"sprint_ubacktrace", U, 'S', "", 0},
    {"print_ustack", U, 'V', "S", 1},
    {"sprint_ustack", U, 'S', "S", 1},
    {"backtrace", K, 'S', "", 0},
    {"print_backtrace", K, 'V', "", 0},
    {"sprint_backtrace", K, 'S', "", 0},
    {"callers", K, 'S', "L", 1},
    {"symname", K, 'S', "L", 1},
    {"symdata", K, 'S', "L", 1},
    {"print_stack", K, 'V', "S", 1},
    {"sprint_stack", K, 'S', "S", 1},
    // Strings.
    {"strlen", A, 'L', "S", 1},
    {"substr", A, 'S', "SLL", 3},
    {"stringat", A, 'L', "SL", 2},
    {"isinstr", A, 'L', "SS", 2},
    {"strpos", A, 'L', "SS", 2},
    {"str_replace", A, 'S', "SSS", 3},
    {"tokenize", A, 'S', "SS", 2},
    {"tokenize", A, 'S', "S", 1},
    {"text_str", A, 'S', "S", 1},
    {"text_strn", A, 'S', "SLL", 3},
    {"string_quoted", A, 'S', "S", 1},
    {"strtol", A, 'L', "SL", 2},
    {"isdigit", A, 'L', "S", 1},
    {"matched", A, 'S', "L", 1},
    {"matched_str", A, 'S', "", 0},
    {"ngroups", A, 'L', "", 0},
    // Numbers and misc.
    {"randint", A, 'L', "L", 1},
    // Extensions beyond stap's tapset (language.md §6).
    {"abs", A, 'L', "L", 1},
    {"min", A, 'L', "LL", 2},
    {"max", A, 'L', "LL", 2},
    {"errno_str", A, 'S', "L", 1},
    {"htonl", A, 'L', "L", 1},
    {"htons", A, 'L', "L", 1},
    {"htonll", A, 'L', "L", 1},
    {"ntohl", A, 'L', "L", 1},
    {"ntohs", A, 'L', "L", 1},
    {"ntohll", A, 'L', "L", 1},
    {"switch_file", A, 'V', "", 0},
    {"system", A, 'V', "S", 1},
};

ast::Type typeOf(char c) {
  switch (c) {
  case 'L': return ast::Type::Long;
  case 'S': return ast::Type::String;
  default: return ast::Type::Unknown;
  }
}

const std::unordered_multimap<std::string_view, const BuiltinFunction *> &byName() {
  static const auto table = [] {
    std::unordered_multimap<std::string_view, const BuiltinFunction *> m;
    for (const auto &b : kBuiltins)
      m.emplace(b.name, &b);
    return m;
  }();
  return table;
}

} // namespace

ast::Type BuiltinFunction::returnType() const { return typeOf(returns); }

ast::Type BuiltinFunction::paramType(size_t i) const {
  return i < params.size() ? typeOf(params[i]) : ast::Type::Unknown;
}

const BuiltinFunction *findBuiltin(std::string_view name, size_t arity) {
  auto [first, last] = byName().equal_range(name);
  for (auto it = first; it != last; ++it)
    if (arity >= it->second->minArgs && arity <= it->second->maxArgs())
      return it->second;
  return nullptr;
}

const BuiltinFunction *findBuiltinByName(std::string_view name) {
  const BuiltinFunction *widest = nullptr;
  auto [first, last] = byName().equal_range(name);
  for (auto it = first; it != last; ++it)
    if (!widest || it->second->maxArgs() > widest->maxArgs())
      widest = it->second;
  return widest;
}

const std::vector<std::string> &builtinNames() {
  static const auto names = [] {
    std::vector<std::string> v;
    for (const auto &b : kBuiltins)
      if (v.empty() || v.back() != b.name)
        v.emplace_back(b.name);
    return v;
  }();
  return names;
}

} // namespace sonde::sema
