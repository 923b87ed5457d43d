// `=~` / `!~` for generated handlers, and the built-ins that read the captures of
// the last match (matched, matched_str, ngroups).
//
// Patterns are POSIX extended regular expressions (regcomp). Each module keeps one
// cache slot per pattern; the first match in a process compiles the pattern and
// publishes it there with a compare-and-swap (a thread that loses the race frees
// its copy), so later matches do not compile again. Captures live in the thread's ThreadState: the
// last match on this thread is what matched() reads, as in stap, where it is the
// last match of the running handler. Heap use: the compiled pattern once per
// process, the capture buffer once per thread, and whatever glibc's regexec
// allocates while matching (stap's own DFA matcher allocates nothing).
#include "runtime/session/BuiltinAbi.h"
#include "runtime/session/ContextAbi.h"
#include "runtime/session/Runtime.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <regex.h>
#include <string>

namespace {

using sonde::session::RegexCaptures;
constexpr size_t kMaxGroups = RegexCaptures::kMaxGroups;

regex_t *compiled(void **cache, const char *pattern) {
  auto *slot = reinterpret_cast<std::atomic<regex_t *> *>(cache);
  if (regex_t *re = slot->load(std::memory_order_acquire))
    return re;
  auto *re = new regex_t;
  if (regcomp(re, pattern, REG_EXTENDED) != 0) {
    delete re;
    return nullptr;
  }
  regex_t *expected = nullptr;
  if (!slot->compare_exchange_strong(expected, re, std::memory_order_acq_rel)) {
    regfree(re);
    delete re;
    return expected;
  }
  return re;
}

// Copies capture `n` of the last match into out (MAXSTRINGLEN), or raises.
void copyGroup(sonde_context *ctx, char *out, int64_t n, uint32_t loc) {
  const RegexCaptures &lastMatch = sonde::session::threadOf(ctx).regex;
  out[0] = '\0';
  char message[128];
  if (!lastMatch.valid) {
    std::snprintf(message, sizeof message,
                  "Attempted to get subexpression %lld from failed regex match",
                  static_cast<long long>(n));
    sonde_raise_message(ctx, message, loc);
    return;
  }
  if (n < 0 || static_cast<size_t>(n) >= lastMatch.groups) {
    std::snprintf(message, sizeof message,
                  "Attempted to get subexpression %lld of regex with %zu groups",
                  static_cast<long long>(n), lastMatch.groups);
    sonde_raise_message(ctx, message, loc);
    return;
  }
  const regmatch_t &span = lastMatch.spans[n];
  if (span.rm_so < 0)
    return; // a group the match did not use (alternation): ""
  size_t cap = sonde_segment_limits(ctx->segment)->max_string_len;
  size_t len = static_cast<size_t>(span.rm_eo - span.rm_so);
  if (len > cap - 1)
    len = cap - 1;
  std::memcpy(out, lastMatch.subject.data() + span.rm_so, len);
  out[len] = '\0';
}

} // namespace

extern "C" {

int64_t sonde_regex_match(sonde_context *ctx, void **cache, const char *pattern,
                          const char *subject, uint32_t loc) {
  regex_t *re = compiled(cache, pattern);
  if (!re) {
    sonde_raise_message(ctx, "regex compilation failed", loc);
    return 0;
  }
  RegexCaptures &lastMatch = sonde::session::threadOf(ctx).regex;
  size_t groups = re->re_nsub + 1 < kMaxGroups ? re->re_nsub + 1 : kMaxGroups;
  regmatch_t spans[kMaxGroups];
  if (regexec(re, subject, groups, spans, 0) != 0) {
    lastMatch.valid = false;
    return 0;
  }
  lastMatch.valid = true;
  lastMatch.groups = groups;
  std::memcpy(lastMatch.spans, spans, sizeof(regmatch_t) * groups);
  size_t cap = sonde_segment_limits(ctx->segment)->max_string_len;
  if (lastMatch.subject.capacity() < cap)
    lastMatch.subject.reserve(cap); // subjects are script strings: they fit from now on
  lastMatch.subject.assign(subject);
  return 1;
}

void sonde_fn_matched_1(sonde_context *ctx, char *out, int64_t n, uint32_t loc) {
  copyGroup(ctx, out, n, loc);
}

void sonde_fn_matched_str_0(sonde_context *ctx, char *out, uint32_t loc) {
  copyGroup(ctx, out, 0, loc);
}

int64_t sonde_fn_ngroups_0(sonde_context *ctx, uint32_t loc) {
  const RegexCaptures &lastMatch = sonde::session::threadOf(ctx).regex;
  if (!lastMatch.valid) {
    sonde_raise_message(ctx, "Attempted to get the groups of a failed regex match", loc);
    return 0;
  }
  return static_cast<int64_t>(lastMatch.groups);
}

} // extern "C"
