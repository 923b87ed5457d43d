// print(@hist_log(s)) / print(@hist_linear(s, L, H, W)): the table of
// stap's _stp_stat_print_histogram_buf, byte for byte.
#include "runtime/format/Conversions.h"
#include "runtime/format/FormatAbi.h"
#include "runtime/format/TextWriter.h"

#include <algorithm>
#include <cstdint>

using namespace sonde::rt;

namespace {

constexpr int64_t kBarWidth = 50; // stap's HIST_WIDTH

// The rows shown and the column widths, computed before anything is written.
struct Layout {
  int64_t low = -1; // first and last bucket shown
  int64_t high = 0;
  bool underflow = false; // linear: the "<start" and ">..." rows are shown
  bool overflow = false;
  uint64_t scale = 1; // samples per '@'
  int valueWidth = 5; // at least as wide as "value"
  int countWidth = 1;
};

bool isLinear(const SondeHistogram &h) { return h.kind == SONDE_HIST_LINEAR; }

// A bucket's count; negative counts (impossible after a correct merge) show as 0.
uint64_t countOf(const SondeHistogram &h, int64_t i) {
  return h.buckets[i] > 0 ? static_cast<uint64_t>(h.buckets[i]) : 0;
}

// The value printed for row i and its "<" / ">" marker.
int64_t rowValue(const SondeHistogram &h, int64_t i, const char **prefix) {
  *prefix = "";
  if (!isLinear(h))
    return sonde_hist_log_bucket_value(static_cast<int32_t>(i));
  const int64_t last = static_cast<int64_t>(h.bucket_count) - 1;
  if (i == 0) {
    *prefix = "<";
    return h.start;
  }
  if (i == last) {
    *prefix = ">";
    return h.start + (i - 2) * h.interval;
  }
  return h.start + (i - 1) * h.interval;
}

bool layoutOf(const SondeHistogram &h, Layout &l) {
  const int64_t n = h.bucket_count;
  uint64_t maxCount = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (countOf(h, i) == 0)
      continue;
    if (l.low < 0)
      l.low = i;
    l.high = i;
    maxCount = std::max(maxCount, countOf(h, i));
  }
  if (l.low < 0)
    return false;
  // Two empty rows of margin on each side; log histograms only go below the 0
  // row when there are negative values.
  for (int k = 0; k < 2; ++k) {
    if (l.low > 0 && (isLinear(h) || l.low != SONDE_HIST_LOG_BUCKET0))
      --l.low;
    if (l.high < n - 1)
      ++l.high;
  }
  if (isLinear(h)) {
    // Empty under- and overflow rows are not shown.
    if (l.low == 0 && countOf(h, 0) == 0)
      ++l.low;
    if (l.high == n - 1 && countOf(h, l.high) == 0)
      --l.high;
    l.underflow = l.low == 0;
    l.overflow = l.high == n - 1;
  }
  l.scale = maxCount <= kBarWidth ? 1 : (maxCount + kBarWidth - 1) / kBarWidth;
  l.countWidth = decimalWidth(static_cast<int64_t>(maxCount));
  if (isLinear(h)) {
    l.valueWidth = std::max(decimalWidth(h.start) + l.underflow,
                            decimalWidth(h.start + h.interval * l.high) + l.overflow);
  } else {
    l.valueWidth = std::max(decimalWidth(sonde_hist_log_bucket_value(static_cast<int32_t>(l.high))),
                            decimalWidth(sonde_hist_log_bucket_value(static_cast<int32_t>(l.low))));
  }
  l.valueWidth = std::max(l.valueWidth, 5);
  return true;
}

// Whether row i is dropped: it and every row within `elision` of it (inside the
// shown range) are empty.
bool elided(const SondeHistogram &h, const Layout &l, int64_t elision, int64_t i) {
  const int64_t reach = std::min<int64_t>(elision, h.bucket_count);
  const int64_t from = std::max(l.low, i - reach);
  const int64_t to = std::min(l.high, i + reach);
  for (int64_t k = from; k <= to; ++k)
    if (h.buckets[k] != 0)
      return false;
  return true;
}

void writeRow(TextWriter &w, const SondeHistogram &h, const Layout &l, int64_t i) {
  const char *prefix;
  const int64_t value = rowValue(h, i, &prefix);
  const int64_t prefixWidth = l.valueWidth - decimalWidth(value);
  const int64_t prefixLength = prefix[0] != '\0' ? 1 : 0;
  if (prefixWidth > prefixLength)
    w.fill(' ', static_cast<size_t>(prefixWidth - prefixLength));
  w.write(prefix);
  writeDecimal(w, value);
  w.write(" |");
  const uint64_t bar = countOf(h, i) / l.scale;
  w.fill('@', static_cast<size_t>(bar));
  const int64_t countField = kBarWidth - static_cast<int64_t>(bar) + 1 + l.countWidth;
  writeNumber(w, static_cast<uint64_t>(h.buckets[i]), 10, countField, -1, kSigned);
  w.put('\n');
}

void writeHistogram(TextWriter &w, const SondeHistogram &h, const Layout &l, int64_t elision) {
  w.fill(' ', static_cast<size_t>(l.valueWidth - 5));
  w.write("value |");
  w.fill('-', kBarWidth);
  w.write(" count\n");
  bool eliding = false;
  for (int64_t i = l.low; i <= l.high; ++i) {
    if (elision >= 0) {
      if (elided(h, l, elision, i)) {
        eliding = true;
        continue;
      }
      // Mark the rows just skipped on the vertical axis.
      if (eliding) {
        w.fill(' ', static_cast<size_t>(l.valueWidth));
        w.write(" ~\n");
        eliding = false;
      }
    }
    writeRow(w, h, l, i);
  }
  w.put('\n');
}

bool render(TextWriter &w, const SondeHistogram *h, int64_t elision) {
  if (h == nullptr || (h->kind != SONDE_HIST_LOG && h->kind != SONDE_HIST_LINEAR) ||
      (isLinear(*h) && h->interval <= 0))
    return false;
  Layout layout;
  if (!layoutOf(*h, layout))
    return false;
  writeHistogram(w, *h, layout, elision);
  return true;
}

} // namespace

extern "C" size_t sonde_hist_print(const SondeHistogram *hist, int64_t elision, char *out,
                                   size_t cap) {
  TextWriter w(out, cap);
  return render(w, hist, elision) ? w.size() : 0;
}

extern "C" size_t sonde_hist_sprint(const SondeHistogram *hist, int64_t elision, char *out,
                                    size_t cap) {
  TextWriter w(out, cap);
  if (!render(w, hist, elision)) {
    if (cap > 0)
      out[0] = '\0';
    return 0;
  }
  return w.terminate();
}
