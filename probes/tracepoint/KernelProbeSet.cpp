#include "probes/tracepoint/KernelProbeSet.h"

#include "runtime/bpf/BpfAbi.h"
#include "runtime/bpf/KernelStats.h"
#include "runtime/session/BuiltinAbi.h"
#include "runtime/session/LoadedModule.h"
#include "runtime/session/ProbeRunner.h"
#include "runtime/symbols/KernelSymbols.h"
#include "runtime/values/MapTable.h"
#include "runtime/values/ScalarStats.h"
#include "runtime/values/Segment.h"
#include "runtime/values/SegmentFormat.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <charconv>
#include <linux/bpf.h>

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <unistd.h>

namespace sonde::probes::tracepoint {

namespace {

int64_t clockNs(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

static_assert(sizeof(sonde_bpf_control) == SONDE_BPF_CONTROL_BYTES);

uint32_t idOf(const std::string &key) {
  uint64_t id = 0;
  std::memcpy(&id, key.data(), sizeof id);
  return static_cast<uint32_t>(id);
}

} // namespace

std::unique_ptr<KernelProbeSet> KernelProbeSet::open(const std::string &path, uint64_t ringBytes,
                                                     std::string *error) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> image((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (!in && !in.eof()) {
    *error = "cannot read " + path;
    return nullptr;
  }
  std::unique_ptr<BpfObject> object = BpfObject::open(image, "kernel probes", error);
  if (!object)
    return nullptr;
  return std::unique_ptr<KernelProbeSet>(new KernelProbeSet(std::move(object), ringBytes));
}

KernelProbeSet::KernelProbeSet(std::unique_ptr<BpfObject> object, uint64_t ringBytes)
    : object_(std::move(object)), ringBytes_(ringBytes) {}

KernelProbeSet::~KernelProbeSet() {
  stop();
  if (ring_)
    ring_buffer__free(ring_);
}

char *KernelProbeSet::segmentBase() const { return static_cast<char *>(rt_->segment->base()); }

// "program 'sonde_probe_3'" also says which probe of the script that is.
void KernelProbeSet::nameRefusedProgram(std::string *error) const {
  static const std::string prefix = "program 'sonde_probe_";
  size_t at = error->find(prefix);
  if (at == std::string::npos)
    return;
  size_t digits = at + prefix.size(), end = error->find('\'', digits);
  uint32_t index = 0;
  auto [next, ec] = std::from_chars(error->data() + digits, error->data() + end, index);
  if (ec != std::errc() || next != error->data() + end || index >= rt_->module->desc().probe_count)
    return;
  error->insert(end + 1, " (the handler of " + std::string(rt_->module->probe(index).pp) + ")");
}

// The syscalls:* programs the raw syscall dispatchers run, from the object's
// sonde_syscall_slots (BpfAbi.h).
std::vector<BpfObject::TailCall> KernelProbeSet::syscallTailCalls() const {
  std::vector<uint8_t> bytes = object_->symbolBytes("sonde_syscall_slots");
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  std::vector<BpfObject::TailCall> calls;
  for (size_t i = 0; i + 2 < words.size(); i += 3)
    calls.push_back({"sonde_probe_" + std::to_string(words[i]),
                     words[i + 1] ? SONDE_BPF_SYSCALL_EXIT_MAP : SONDE_BPF_SYSCALL_ENTER_MAP,
                     words[i + 2]});
  return calls;
}

std::string KernelProbeSet::attachment() const {
  std::string text =
      "kernel probes: " + std::to_string(object_->attachedCount()) + " program(s) on tracepoints";
  static const char *const kEvents[] = {"sys_enter", "sys_exit"};
  for (int d = 0; d < 2; ++d)
    if (dispatched_[d])
      text += std::string(", ") + std::to_string(dispatched_[d]) + " syscalls:" + kEvents[d] +
              "_* run by call number from raw_syscalls:" + kEvents[d];
  return text;
}

// The maps sized for this script, from the object's sonde_kernel_info.
bool KernelProbeSet::size(std::string *error) {
  std::vector<uint8_t> info = object_->symbolBytes("sonde_kernel_info");
  std::vector<int64_t> words(info.size() / 8);
  std::memcpy(words.data(), info.data(), words.size() * 8);
  if (words.size() < 3 || words.size() != 3 + static_cast<size_t>(words[2])) {
    *error = "kernel probes: the object has no valid sonde_kernel_info";
    return false;
  }
  scratchBytes_ = static_cast<uint64_t>(words[0]);
  for (size_t i = 3; i < words.size(); ++i)
    globals_.push_back(static_cast<uint32_t>(words[i]));
  if (scratchBytes_ > SONDE_BPF_MAX_SCRATCH_BYTES) {
    *error = bpf::scratchLimitError(scratchBytes_);
    return false;
  }
  return object_->resizeMap("sonde_scratch", 4, static_cast<uint32_t>(scratchBytes_), 1, 0,
                            error) &&
         object_->resizeMap("sonde_arrays", shape_.keyBytes, shape_.valueBytes, shape_.arrayEntries,
                            BPF_F_NO_PREALLOC, error) &&
         object_->resizeMap("sonde_aggregates", shape_.keyBytes, shape_.valueBytes,
                            shape_.aggregateEntries, BPF_F_NO_PREALLOC, error) &&
         object_->resizeMap("sonde_events", 0, 0, static_cast<uint32_t>(ringBytes_), 0, error);
}

bool KernelProbeSet::start(session::Runtime &rt, std::string *error) {
  rt_ = &rt;
  shape_ = bpf::KernelStateShape::of(rt.module->layout());
  cpus_ = std::max(libbpf_num_possible_cpus(), 1);
  if (!size(error))
    return false;
  sonde_bpf_control control{};
  control.target_pid = rt.target;
  control.consumer_pid = rt.consumerPid;
  control.consumer_uid = getuid();
  control.realtime_offset_ns = clockNs(CLOCK_REALTIME) - clockNs(CLOCK_MONOTONIC);
  const values::SessionFacts &facts = values::segmentHeader(rt.segment->abi()).facts;
  control.tz_seconds_west = facts.tzSecondsWest;
  static_assert(sizeof control.tz_name == sizeof facts.tzName);
  std::memcpy(control.tz_name, facts.tzName, sizeof control.tz_name);
  control.tz_name[sizeof control.tz_name - 1] = 0;
  control.cpus = sysconf(_SC_NPROCESSORS_CONF);
  control.running = 1;
  control.max_errors = rt.module->layout().limits().max_errors;
  if (!object_->setGlobal(".bss", 0, &control, sizeof control, error))
    return false;
  if (!object_->load(error)) {
    nameRefusedProgram(error);
    return false;
  }
  bss_ = static_cast<char *>(object_->mapGlobal(".bss", error));
  if (!bss_)
    return false;
  // The state begin probes left, then the records, then the events.
  for (uint32_t g : globals_) {
    Entries now = nativeEntries(g);
    writeKernel(g, {}, now);
    snapshot_[g] = std::move(now);
  }
  ring_ =
      ring_buffer__new(object_->mapFd("sonde_events"), &KernelProbeSet::onRecord, this, nullptr);
  if (!ring_) {
    *error = std::string("kernel probes: cannot read their ring buffer: ") + std::strerror(errno);
    return false;
  }
  drainer_ = std::thread([this] { drain(); });
  std::vector<BpfObject::TailCall> tailCalls = syscallTailCalls();
  for (const BpfObject::TailCall &t : tailCalls)
    ++dispatched_[t.map == SONDE_BPF_SYSCALL_EXIT_MAP ? 1 : 0];
  if (!object_->attach(tailCalls, error)) {
    stop();
    return false;
  }
  return true;
}

void KernelProbeSet::drain() {
  while (!stopping_.load(std::memory_order_acquire)) {
    ring_buffer__poll(ring_, 100);
    rt_->thread().flushOutput(*rt_->output);
  }
  ring_buffer__consume(ring_);
  session::ThreadState &ts = rt_->thread();
  ts.flushOutput(*rt_->output);
  if (rt_->records)
    ts.stopRecords();
}

void KernelProbeSet::stop() {
  if (!drainer_.joinable())
    return;
  object_->detach();
  if (bss_)
    reinterpret_cast<sonde_bpf_control *>(bss_)->running = 0;
  stopping_.store(true, std::memory_order_release);
  drainer_.join();
  if (uint64_t lost = lostRecords()) {
    std::string text = "WARNING: kernel probes lost " + std::to_string(lost) +
                       " records: their ring buffer was full (raise it with -s MB)\n";
    session::writeError(*rt_, text.c_str(), text.size());
  }
}

uint64_t KernelProbeSet::lostRecords() const {
  if (!bss_)
    return 0;
  return __atomic_load_n(&reinterpret_cast<sonde_bpf_control *>(bss_)->lost_records,
                         __ATOMIC_RELAXED);
}

int KernelProbeSet::onRecord(void *self, void *data, size_t size) {
  static_cast<KernelProbeSet *>(self)->record(static_cast<const char *>(data), size);
  return 0;
}

// A string of a record at `offset`: u16 length, then the bytes ("" if cut short).
std::string KernelProbeSet::recordString(const char *data, size_t size, size_t offset) {
  uint16_t length = 0;
  if (offset + 2 > size)
    return {};
  std::memcpy(&length, data + offset, 2);
  if (offset + 2 + length > size)
    return {};
  return std::string(data + offset + 2, length);
}

// One record of a kernel probe, handled as the handler would have in sonde.
void KernelProbeSet::record(const char *data, size_t size) {
  sonde_bpf_record r;
  if (size < sizeof r)
    return;
  std::memcpy(&r, data, sizeof r);
  session::ThreadState &ts = rt_->thread();
  sonde_context ctx{};
  ctx.segment = rt_->segment->abi();
  ctx.probe_index = r.id;
  ctx.error_message = ts.errorMessage.data();
  ctx.error_message[0] = '\0';
  ctx.runtime = rt_;
  ctx.thread = &ts;
  switch (r.kind) {
  case SONDE_BPF_RECORD_PRINTF: {
    std::vector<SondeFormatArg> args;
    size_t off = sizeof r;
    for (uint32_t i = 0; i < 64 && off < size; ++i) {
      if (r.string_mask >> i & 1) {
        uint16_t len = 0;
        std::memcpy(&len, data + off, sizeof len);
        if (off + 2 + len >= size)
          break;
        args.push_back(SondeFormatArg{.s = data + off + 2}); // NUL-terminated by the helper
        off += (size_t{len} + 1 + 2 + 7) & ~size_t{7};
      } else {
        if (off + 8 > size)
          break;
        SondeFormatArg a{};
        std::memcpy(&a.i, data + off, 8);
        args.push_back(a);
        off += 8;
      }
    }
    // Only a record that carries every argument its format takes is printed.
    if (r.id >= rt_->module->desc().format_count ||
        args.size() != rt_->module->format(r.id).arg_count)
      return;
    args.push_back(SondeFormatArg{});
    sonde_out_printf(&ctx, r.id, args.data(), SONDE_NO_LOCATION);
    return;
  }
  case SONDE_BPF_RECORD_ERROR: {
    sonde_bpf_error e{};
    if (size < sizeof r + sizeof e)
      return;
    std::memcpy(&e, data + sizeof r, sizeof e);
    std::string text;
    if (e.status == SONDE_BPF_ERROR_KERNEL_STRING || e.status == SONDE_BPF_ERROR_USER_STRING) {
      char line[128];
      std::snprintf(line, sizeof line,
                    "%s string copy fault %" PRId64 " at 0x%" PRIx64 " [man error::fault]",
                    e.status == SONDE_BPF_ERROR_USER_STRING ? "user" : "kernel", e.rc, e.detail);
      text = line;
    } else if (e.status == SONDE_BPF_ERROR_MESSAGE) {
      text = recordString(data, size, sizeof r + sizeof e);
    } else if (e.status == SONDE_BPF_ERROR_MAP_MEMORY) {
      text = SONDE_BPF_MAP_MEMORY_TEXT;
    } else if (e.status == SONDE_BPF_ERROR_UNWIND) {
      text = "reached end of stack before unwinding to level " + std::to_string(e.rc);
    } else if (e.status == SONDE_BPF_ERROR_READ) {
      char line[96];
      std::snprintf(line, sizeof line, "read fault [man error::fault] at 0x%" PRIx64, e.detail);
      text = line;
    } else {
      text = session::runtimeErrorText(e.status);
    }
    size_t cap = ts.errorMessage.size();
    std::strncpy(ctx.error_message, text.c_str(), cap - 1);
    ctx.error_message[cap - 1] = '\0';
    ctx.error = e.status == SONDE_ERROR_ABORT ? SONDE_CONTEXT_ABORTED : 1;
    ctx.error_location = e.location;
    ts.flushOutput(*rt_->output);
    session::finishFailedHandler(*rt_, ctx);
    return;
  }
  case SONDE_BPF_RECORD_WARN:
  case SONDE_BPF_RECORD_LOG: {
    std::string text = recordString(data, size, sizeof r);
    if (r.kind == SONDE_BPF_RECORD_WARN)
      sonde_out_warn(&ctx, text.c_str());
    else
      sonde_out_log(&ctx, text.c_str());
    ts.flushOutput(*rt_->output);
    return;
  }
  case SONDE_BPF_RECORD_STACK: {
    // print_backtrace(): the addresses, symbolized here with kallsyms.
    int64_t depth = 0;
    if (size < sizeof r + 8)
      return;
    std::memcpy(&depth, data + sizeof r, 8);
    std::string addresses;
    for (int64_t i = 0; i < depth && sizeof r + 8 + 8 * (i + 1) <= size; ++i) {
      uint64_t pc = 0;
      std::memcpy(&pc, data + sizeof r + 8 + 8 * i, 8);
      char hex[24];
      std::snprintf(hex, sizeof hex, "0x%" PRIx64 " ", pc);
      addresses += hex;
    }
    std::string text =
        symbols::formatStack(addresses, symbols::SymbolStyle::Full, 0, [](uint64_t a) {
          return symbols::KernelSymbolTable::running().resolve(a);
        });
    ts.output->append(text.data(), text.size(), *rt_->output);
    ts.flushOutput(*rt_->output);
    return;
  }
  case SONDE_BPF_RECORD_SYSTEM: {
    std::string command = recordString(data, size, sizeof r);
    sonde_fn_system_1(&ctx, command.c_str(), 0);
    return;
  }
  case SONDE_BPF_RECORD_PRINT_STACK: {
    std::string stack = recordString(data, size, sizeof r);
    sonde_fn_print_stack_1(&ctx, stack.c_str(), 0);
    ts.flushOutput(*rt_->output);
    return;
  }
  case SONDE_BPF_RECORD_SWITCH_FILE:
    // What the handlers printed before it belongs in the file being closed.
    ts.flushOutput(*rt_->output);
    sonde_fn_switch_file_0(&ctx, 0);
    return;
  case SONDE_BPF_RECORD_EXIT:
    sonde_session_request_exit(rt_->segment->abi());
    if (rt_->wake)
      rt_->wake();
    return;
  default: return;
  }
}

// ------------------------------------------------------------------ state

KernelProbeSet::Entries KernelProbeSet::readMap(int fd, bool perCpu) const {
  Entries out;
  std::string key(shape_.keyBytes, '\0'), next(shape_.keyBytes, '\0');
  std::vector<char> value(shape_.valueBytes * (perCpu ? cpus_ : 1));
  const void *prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, next.data()) == 0) {
    if (bpf_map_lookup_elem(fd, next.data(), value.data()) == 0) {
      out[next].assign(value.data(), value.size());
    }
    key = next;
    prev = key.data();
  }
  return out;
}

// A per-CPU map value: one block per CPU, each valueBytes apart.
std::vector<bpf::KernelStatBlock> KernelProbeSet::statBlocks(const std::string &value) const {
  std::vector<bpf::KernelStatBlock> cpus(static_cast<size_t>(cpus_));
  for (size_t c = 0; c < cpus.size() && (c + 1) * shape_.valueBytes <= value.size(); ++c)
    std::memcpy(&cpus[c], value.data() + c * shape_.valueBytes, sizeof cpus[c]);
  return cpus;
}

std::string KernelProbeSet::statBytes(const std::vector<bpf::KernelStatBlock> &cpus) const {
  std::string value(cpus.size() * shape_.valueBytes, '\0');
  for (size_t c = 0; c < cpus.size(); ++c)
    std::memcpy(value.data() + c * shape_.valueBytes, &cpus[c], sizeof cpus[c]);
  return value;
}

// The global as the segment holds it, in the kernel's encoding.
KernelProbeSet::Entries KernelProbeSet::nativeEntries(uint32_t global) const {
  const values::GlobalDesc &d = rt_->module->layout().globals()[global];
  const values::GlobalPlacement &p = rt_->module->layout().placements()[global];
  char *base = segmentBase();
  Entries out;
  if (shape_.scalarOffset[global] >= 0) {
    size_t n = d.value == values::ValueKind::String ? shape_.strColumn : 8;
    std::string bytes(n, '\0');
    if (d.value == values::ValueKind::String)
      values::copyBoundedString(bytes.data(), base + p.dataOffset, shape_.strCap);
    else
      std::memcpy(bytes.data(), base + p.dataOffset, 8);
    out[""] = bytes;
    return out;
  }
  std::string key(shape_.keyBytes, '\0');
  uint64_t id = global;
  std::memcpy(key.data(), &id, 8);
  auto *header = reinterpret_cast<values::GlobalHeader *>(base + p.offset);
  if (d.keyCount == 0) { // scalar stats
    auto cpus = bpf::scalarToKernel(values::globalData<values::StatsHeader>(header), cpus_);
    if (std::any_of(cpus.begin(), cpus.end(), [](const auto &b) { return b.count != 0; }))
      out[key] = statBytes(cpus);
    return out;
  }
  values::MapTable table(values::globalData<values::MapHeader>(header));
  for (uint32_t ref = table.oldest(); ref; ref = table.nextNewer(ref)) {
    std::string k = key;
    for (uint32_t c = 0; c < d.keyCount; ++c) {
      uint32_t off = shape_.keyColumnOffset(d, c);
      if (d.keys[c] == values::KeyKind::String)
        values::copyBoundedString(k.data() + off, table.key(ref, c), shape_.strCap);
      else
        std::memcpy(k.data() + off, table.key(ref, c), 8);
    }
    std::string v(shape_.valueBytes, '\0');
    if (d.value == values::ValueKind::Stats) {
      v = statBytes(bpf::entryToKernel(*table.statValue(ref), table.header().valueShape, cpus_));
    } else if (d.value == values::ValueKind::String) {
      values::copyBoundedString(v.data(), table.value(ref), shape_.strCap);
    } else {
      std::memcpy(v.data(), table.value(ref), 8);
    }
    out[k] = v;
  }
  return out;
}

// Replaces the segment's value of the global with `entries`.
void KernelProbeSet::writeNative(uint32_t global, const Entries &entries) {
  const values::GlobalDesc &d = rt_->module->layout().globals()[global];
  const values::GlobalPlacement &p = rt_->module->layout().placements()[global];
  char *base = segmentBase();
  if (shape_.scalarOffset[global] >= 0) {
    auto it = entries.find("");
    if (it == entries.end())
      return;
    if (d.value == values::ValueKind::String)
      values::copyBoundedString(base + p.dataOffset, it->second.data(), shape_.strCap);
    else
      std::memcpy(base + p.dataOffset, it->second.data(), 8);
    return;
  }
  auto *header = reinterpret_cast<values::GlobalHeader *>(base + p.offset);
  if (d.keyCount == 0) { // scalar stats: the kernel's CPUs in the per-CPU slots
    auto *h = values::globalData<values::StatsHeader>(header);
    if (entries.empty())
      values::scalarStatsClear(h);
    else
      bpf::scalarFromKernel(h, statBlocks(entries.begin()->second));
    return;
  }
  auto *map = reinterpret_cast<sonde_map *>(header);
  sonde_map_clear(map);
  values::MapTable table(values::globalData<values::MapHeader>(header));
  for (const auto &[k, v] : entries) {
    sonde_key keys[9]{};
    for (uint32_t c = 0; c < d.keyCount && c < 9; ++c) {
      const char *col = k.data() + shape_.keyColumnOffset(d, c);
      if (d.keys[c] == values::KeyKind::String)
        keys[c].s = col;
      else
        std::memcpy(&keys[c].l, col, 8);
    }
    if (d.value == values::ValueKind::Stats) {
      uint32_t ref = table.findOrInsert(keys);
      if (!ref)
        continue;
      bpf::entryFromKernel(*table.statValue(ref), table.header().valueShape, statBlocks(v));
    } else if (d.value == values::ValueKind::String) {
      sonde_map_set_string(map, keys, v.data());
    } else {
      int64_t n = 0;
      std::memcpy(&n, v.data(), 8);
      sonde_map_set_long(map, keys, n);
    }
  }
}

// Applies to the kernel's maps what changed from `before` to `after`.
void KernelProbeSet::writeKernel(uint32_t global, const Entries &before, const Entries &after) {
  if (shape_.scalarOffset[global] >= 0) {
    auto it = after.find("");
    if (it != after.end())
      std::memcpy(bss_ + SONDE_BPF_CONTROL_BYTES + shape_.scalarOffset[global], it->second.data(),
                  it->second.size());
    return;
  }
  bool stats = rt_->module->layout().globals()[global].value == values::ValueKind::Stats;
  int fd = object_->mapFd(stats ? "sonde_aggregates" : "sonde_arrays");
  for (const auto &[k, v] : before)
    if (!after.count(k))
      bpf_map_delete_elem(fd, k.data());
  std::vector<char> value(shape_.valueBytes * (stats ? cpus_ : 1), '\0');
  for (const auto &[k, v] : after) {
    auto it = before.find(k);
    if (it != before.end() && it->second == v)
      continue;
    std::fill(value.begin(), value.end(), '\0');
    std::memcpy(value.data(), v.data(), std::min(v.size(), value.size()));
    bpf_map_update_elem(fd, k.data(), value.data(), BPF_ANY);
  }
}

void KernelProbeSet::importState() {
  if (!bss_)
    return;
  Entries arrays = readMap(object_->mapFd("sonde_arrays"), false);
  Entries aggregates = readMap(object_->mapFd("sonde_aggregates"), true);
  for (uint32_t g : globals_) {
    Entries kernel;
    if (int64_t off = shape_.scalarOffset[g]; off >= 0) {
      bool string = rt_->module->layout().globals()[g].value == values::ValueKind::String;
      kernel[""].assign(bss_ + SONDE_BPF_CONTROL_BYTES + off, string ? shape_.strColumn : 8);
    } else {
      bool stats = rt_->module->layout().globals()[g].value == values::ValueKind::Stats;
      for (const auto &[k, v] : stats ? aggregates : arrays)
        if (idOf(k) == g)
          kernel.emplace(k, v);
    }
    writeNative(g, kernel);
    snapshot_[g] = nativeEntries(g);
  }
}

void KernelProbeSet::exportChanges() {
  if (!bss_)
    return;
  for (uint32_t g : globals_) {
    Entries now = nativeEntries(g);
    Entries &before = snapshot_[g];
    if (now != before) {
      writeKernel(g, before, now);
      before = std::move(now);
    }
  }
}

} // namespace sonde::probes::tracepoint
