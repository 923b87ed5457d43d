// The end-of-run dump of globals written but never read: the lines stap's
// synthesized end probes print (elaborate.cxx, add_global_var_display).
#include "runtime/format/Conversions.h"
#include "runtime/format/FormatAbi.h"
#include "runtime/format/TextWriter.h"

#include <algorithm>
#include <cstring>

using namespace sonde::rt;

namespace {

// A stable sort that needs no buffer (merging by rotation, O(n log^2 n)), so the
// dump never allocates; std::stable_sort would.
template <typename Less>
void mergeInPlace(SondeDumpEntry *first, SondeDumpEntry *mid, SondeDumpEntry *last, Less less) {
  const ptrdiff_t left = mid - first;
  const ptrdiff_t right = last - mid;
  if (left == 0 || right == 0)
    return;
  if (left + right == 2) {
    if (less(*mid, *first))
      std::swap(*first, *mid);
    return;
  }
  SondeDumpEntry *cutLeft;
  SondeDumpEntry *cutRight;
  if (left >= right) {
    cutLeft = first + left / 2;
    cutRight = std::lower_bound(mid, last, *cutLeft, less);
  } else {
    cutRight = mid + right / 2;
    cutLeft = std::upper_bound(first, mid, *cutRight, less);
  }
  SondeDumpEntry *newMid = std::rotate(cutLeft, mid, cutRight);
  mergeInPlace(first, cutLeft, newMid, less);
  mergeInPlace(newMid, cutRight, last, less);
}

template <typename Less> void stableSort(SondeDumpEntry *first, SondeDumpEntry *last, Less less) {
  if (last - first < 2)
    return;
  SondeDumpEntry *mid = first + (last - first) / 2;
  stableSort(first, mid, less);
  stableSort(mid, last, less);
  mergeInPlace(first, mid, last, less);
}

void writeQuoted(TextWriter &w, const char *s) {
  w.put('"');
  writeString(w, s, -1, -1, 0);
  w.put('"');
}

void writeKey(TextWriter &w, const SondeValue &key) {
  if (key.kind == SONDE_VALUE_STRING)
    writeQuoted(w, key.s);
  else
    writeDecimal(w, key.i);
}

void writeStats(TextWriter &w, const SondeStatsSummary &s) {
  w.write(" @count=");
  writeDecimal(w, s.count);
  w.write(" @min=");
  writeDecimal(w, s.min);
  w.write(" @max=");
  writeDecimal(w, s.max);
  w.write(" @sum=");
  writeDecimal(w, s.sum);
  w.write(" @avg=");
  // stap's _stp_div64: C division, which truncates toward zero.
  writeDecimal(w, s.count == 0 ? 0 : s.sum / s.count);
}

void writeValue(TextWriter &w, uint32_t kind, const SondeDumpEntry &e) {
  switch (kind) {
  case SONDE_DUMP_STRING:
    w.put('=');
    writeQuoted(w, e.value.s);
    break;
  case SONDE_DUMP_STATS: writeStats(w, e.stats); break;
  default:
    w.put('=');
    writeDecimal(w, e.value.i);
    break;
  }
}

} // namespace

extern "C" void sonde_dump_sort(SondeDumpGlobal *global) {
  if (global->arity == 0 || global->entry_count < 2)
    return;
  SondeDumpEntry *begin = global->entries;
  SondeDumpEntry *end = begin + global->entry_count;
  switch (global->value_kind) {
  case SONDE_DUMP_STRING:
    stableSort(begin, end, [](const SondeDumpEntry &a, const SondeDumpEntry &b) {
      return std::strcmp(a.value.s, b.value.s) > 0;
    });
    break;
  case SONDE_DUMP_STATS:
    stableSort(begin, end, [](const SondeDumpEntry &a, const SondeDumpEntry &b) {
      return a.stats.count > b.stats.count;
    });
    break;
  default:
    stableSort(begin, end, [](const SondeDumpEntry &a, const SondeDumpEntry &b) {
      return a.value.i > b.value.i;
    });
    break;
  }
}

extern "C" size_t sonde_dump_line_count(const SondeDumpGlobal *global) {
  return global->arity == 0 ? 1 : global->entry_count;
}

extern "C" size_t sonde_dump_line(const SondeDumpGlobal *global, size_t index, char *out,
                                  size_t cap) {
  TextWriter w(out, cap);
  if (index >= sonde_dump_line_count(global) || (global->arity == 0 && global->entry_count == 0))
    return 0;
  const SondeDumpEntry &entry = global->entries[index];
  w.write(global->name);
  if (global->arity == 0 && global->value_kind == SONDE_DUMP_STATS && entry.stats.count == 0) {
    w.write(" @count=0x0\n"); // an empty scalar aggregate
    return w.size();
  }
  if (global->arity > 0) {
    w.put('[');
    for (uint32_t k = 0; k < global->arity; ++k) {
      if (k > 0)
        w.put(',');
      writeKey(w, entry.keys[k]);
    }
    w.put(']');
  }
  writeValue(w, global->value_kind, entry);
  w.put('\n');
  return w.size();
}
