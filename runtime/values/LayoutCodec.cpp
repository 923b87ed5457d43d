// GlobalLayout <-> bytes. Only the inputs of build() are stored (limits, CPU slots,
// descriptors); reading re-runs build(), which is deterministic, so offsets cannot
// disagree with the descriptors they came from.
#include "runtime/values/GlobalLayout.h"

#include <cstring>

namespace sonde::values {

namespace {

constexpr char kLayoutMagic[8] = {'S', 'N', 'D', 'L', 'A', 'Y', 'T', '1'};
constexpr uint32_t kLayoutVersion = 1;

class Writer {
public:
  void bytes(const void *p, size_t n) {
    auto *b = static_cast<const uint8_t *>(p);
    out_.insert(out_.end(), b, b + n);
  }
  template <class T> void num(T v) {
    for (size_t i = 0; i < sizeof(T); ++i)
      out_.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i)));
  }
  std::vector<uint8_t> take() { return std::move(out_); }

private:
  std::vector<uint8_t> out_;
};

class Reader {
public:
  Reader(const uint8_t *p, size_t n) : p_(p), n_(n) {}
  bool bytes(void *dst, size_t n) {
    if (n > n_ - pos_)
      return fail();
    std::memcpy(dst, p_ + pos_, n);
    pos_ += n;
    return true;
  }
  template <class T> bool num(T &v) {
    if (sizeof(T) > n_ - pos_)
      return fail();
    uint64_t acc = 0;
    for (size_t i = 0; i < sizeof(T); ++i)
      acc |= uint64_t{p_[pos_ + i]} << (8 * i);
    v = static_cast<T>(acc);
    pos_ += sizeof(T);
    return true;
  }
  bool ok() const { return ok_; }
  bool atEnd() const { return pos_ == n_; }

private:
  bool fail() {
    ok_ = false;
    return false;
  }
  const uint8_t *p_;
  size_t n_, pos_ = 0;
  bool ok_ = true;
};

void writeLimits(Writer &w, const sonde_limits &l) {
  w.num(l.max_string_len);
  w.num(l.max_map_entries);
  w.num(l.max_action);
  w.num(l.max_action_interruptible);
  w.num(l.max_try_lock);
  w.num(l.try_lock_delay_us);
  w.num(l.max_errors);
  w.num(l.max_skipped);
  w.num(l.hist_elision);
  w.num(l.suppress_time_limits);
  w.num(l.max_backtrace);
}

void readLimits(Reader &r, sonde_limits &l) {
  r.num(l.max_string_len);
  r.num(l.max_map_entries);
  r.num(l.max_action);
  r.num(l.max_action_interruptible);
  r.num(l.max_try_lock);
  r.num(l.try_lock_delay_us);
  r.num(l.max_errors);
  r.num(l.max_skipped);
  r.num(l.hist_elision);
  r.num(l.suppress_time_limits);
  r.num(l.max_backtrace);
}

bool readGlobal(Reader &r, GlobalDesc &d) {
  uint32_t nameLength = 0;
  if (!r.num(nameLength) || nameLength > kMaxGlobalNameLength)
    return false;
  d.name.resize(nameLength);
  r.bytes(d.name.data(), nameLength);
  uint8_t value = 0, wrap = 0, hist = 0, usesVariance = 0;
  r.num(value);
  r.num(d.keyCount);
  for (KeyKind &k : d.keys) {
    uint8_t kind = 0;
    r.num(kind);
    if (kind > 1)
      return false;
    k = static_cast<KeyKind>(kind);
  }
  r.num(d.maxEntries);
  r.num(wrap);
  r.num(hist);
  r.num(d.histLow);
  r.num(d.histHigh);
  r.num(d.histWidth);
  r.num(d.varianceShift);
  r.num(usesVariance);
  if (value > 2 || hist > 2 || wrap > 1 || usesVariance > 1)
    return false;
  d.value = static_cast<ValueKind>(value);
  d.wrap = wrap != 0;
  d.hist = static_cast<HistKind>(hist);
  d.usesVariance = usesVariance != 0;
  return r.ok();
}

} // namespace

std::vector<uint8_t> GlobalLayout::serialize() const {
  Writer w;
  w.bytes(kLayoutMagic, sizeof(kLayoutMagic));
  w.num(kLayoutVersion);
  writeLimits(w, limits_);
  w.num(cpuSlots_);
  w.num(static_cast<uint32_t>(globals_.size()));
  for (const GlobalDesc &d : globals_) {
    w.num(static_cast<uint32_t>(d.name.size()));
    w.bytes(d.name.data(), d.name.size());
    w.num(static_cast<uint8_t>(d.value));
    w.num(d.keyCount);
    for (KeyKind k : d.keys)
      w.num(static_cast<uint8_t>(k));
    w.num(d.maxEntries);
    w.num(static_cast<uint8_t>(d.wrap));
    w.num(static_cast<uint8_t>(d.hist));
    w.num(d.histLow);
    w.num(d.histHigh);
    w.num(d.histWidth);
    w.num(d.varianceShift);
    w.num(static_cast<uint8_t>(d.usesVariance));
  }
  return w.take();
}

std::optional<GlobalLayout> GlobalLayout::deserialize(const uint8_t *data, size_t size,
                                                      std::string *error) {
  auto fail = [&](const char *msg) {
    if (error)
      *error = msg;
    return std::nullopt;
  };
  Reader r(data, size);
  char magic[8];
  uint32_t version = 0, cpuSlots = 0, count = 0;
  if (!r.bytes(magic, sizeof(magic)) || std::memcmp(magic, kLayoutMagic, sizeof(magic)) != 0)
    return fail("not a sonde global layout");
  if (!r.num(version) || version != kLayoutVersion)
    return fail("unsupported global layout version");
  sonde_limits limits{};
  readLimits(r, limits);
  r.num(cpuSlots);
  r.num(count);
  if (!r.ok() || count > size)
    return fail("truncated global layout");
  std::vector<GlobalDesc> globals(count);
  for (GlobalDesc &d : globals)
    if (!readGlobal(r, d))
      return fail("corrupt global descriptor");
  if (!r.atEnd())
    return fail("trailing bytes after global layout");
  return build(std::move(globals), limits, cpuSlots, error);
}

uint64_t GlobalLayout::fingerprint() const {
  uint64_t h = 0xCBF29CE484222325ull;
  for (uint8_t b : serialize())
    h = (h ^ b) * 0x100000001B3ull;
  return h;
}

} // namespace sonde::values
