#include "runtime/session/GlobalDisplay.h"

#include <cstring>
#include <deque>
#include <string>
#include <vector>

namespace sonde::session {

namespace {

using values::GlobalDesc;
using values::KeyKind;
using values::ValueKind;

SondeStatsSummary statsOf(const sonde_stat_summary &s) { return {s.count, s.sum, s.min, s.max}; }

// Owns the strings and key arrays a SondeDumpGlobal points into. Strings are
// read from the segment, where a traced process may have dropped their
// terminator: at most a string global's size is taken.
struct DumpStorage {
  explicit DumpStorage(uint32_t maxStringLen) : maxStringLen(maxStringLen) {}
  uint32_t maxStringLen;
  std::deque<std::string> strings;
  std::deque<std::vector<SondeValue>> keys;
  const char *keep(const char *s) {
    return strings.emplace_back(s, strnlen(s, maxStringLen - 1)).c_str();
  }
};

void collectArray(const GlobalDesc &g, const sonde_map *map, DumpStorage &store,
                  std::vector<SondeDumpEntry> &entries) {
  sonde_foreach_spec spec{};
  spec.sort_column = SONDE_SORT_NONE;
  spec.limit = SONDE_NO_LIMIT;
  sonde_iter it;
  if (sonde_foreach_begin(map, &spec, &it) != SONDE_OK)
    return;
  while (sonde_foreach_next(&it)) {
    auto &keys = store.keys.emplace_back(g.keyCount);
    for (uint32_t k = 0; k < g.keyCount; ++k) {
      if (g.keys[k] == KeyKind::String)
        keys[k] = {SONDE_VALUE_STRING, 0, store.keep(sonde_iter_key_string(&it, k + 1))};
      else
        keys[k] = {SONDE_VALUE_LONG, sonde_iter_key_long(&it, k + 1), nullptr};
    }
    SondeDumpEntry e{};
    e.keys = keys.data();
    switch (g.value) {
    case ValueKind::Long: e.value = {SONDE_VALUE_LONG, sonde_iter_value_long(&it), nullptr}; break;
    case ValueKind::String:
      e.value = {SONDE_VALUE_STRING, 0, store.keep(sonde_iter_value_string(&it))};
      break;
    case ValueKind::Stats: {
      sonde_stat_summary s;
      sonde_iter_stats_summary(&it, &s);
      e.stats = statsOf(s);
      break;
    }
    }
    entries.push_back(e);
  }
  sonde_foreach_end(&it);
}

} // namespace

void displayGlobals(Runtime &rt) {
  const auto &desc = rt.module->desc();
  const auto &layout = rt.module->layout();
  auto *base = static_cast<char *>(rt.segment->base());
  OutputBuffer &out = *rt.thread().output;
  for (uint32_t i = 0; i < desc.display_count; ++i) {
    uint32_t index = desc.display[i].layout_index;
    const GlobalDesc &g = layout.globals()[index];
    const values::GlobalPlacement &p = layout.placements()[index];
    uint64_t offset = p.offset;
    if (sonde_locks_take(rt.segment->abi(), &offset, 1) != SONDE_OK)
      continue; // a dead or stuck holder: skip rather than print torn state

    DumpStorage store(layout.limits().max_string_len);
    std::vector<SondeDumpEntry> entries;
    SondeDumpGlobal dump{};
    dump.name = g.name.c_str();
    dump.arity = g.keyCount;
    dump.value_kind = g.value == ValueKind::Long     ? SONDE_DUMP_LONG
                      : g.value == ValueKind::String ? SONDE_DUMP_STRING
                                                     : SONDE_DUMP_STATS;
    if (g.keyCount > 0) {
      collectArray(g, reinterpret_cast<const sonde_map *>(base + p.offset), store, entries);
    } else {
      SondeDumpEntry e{};
      if (g.value == ValueKind::Long)
        e.value = {SONDE_VALUE_LONG, *reinterpret_cast<int64_t *>(base + p.dataOffset), nullptr};
      else if (g.value == ValueKind::String)
        e.value = {SONDE_VALUE_STRING, 0, store.keep(base + p.dataOffset)};
      else {
        sonde_stat_summary s;
        sonde_stats_summary(reinterpret_cast<const sonde_stats *>(base + p.offset), &s);
        e.stats = statsOf(s);
      }
      entries.push_back(e);
    }
    sonde_locks_release(rt.segment->abi(), &offset, 1);

    dump.entries = entries.data();
    dump.entry_count = entries.size();
    if (g.keyCount > 0)
      sonde_dump_sort(&dump);
    size_t lines = sonde_dump_line_count(&dump);
    for (size_t line = 0; line < lines; ++line) {
      char *buf = out.reserve(SONDE_PRINT_BUFFER_SIZE, *rt.output);
      out.commit(sonde_dump_line(&dump, line, buf, SONDE_PRINT_BUFFER_SIZE));
    }
  }
  out.flush(*rt.output);
}

} // namespace sonde::session
