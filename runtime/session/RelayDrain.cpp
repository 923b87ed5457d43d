#include "runtime/session/RelayDrain.h"

#include <string>
#include <unistd.h>

namespace sonde::session {

namespace {

constexpr uint64_t kWaitNs = 50'000'000; // also how often `stop_` is noticed

} // namespace

RelayDrain::RelayDrain(const transport::RelayChannel &channel, const LoadedModule &module,
                       const RecordFormats &records, OutputSink &output, int errorFd)
    : channel_(channel), module_(module), records_(records), output_(output), errorFd_(errorFd),
      consumer_(channel), decoders_(channel.ringCount()), args_(1024) {
  // Records carry no time argument yet; the clock only has to exist.
  clock_.source = SONDE_CLOCK_TSC;
  for (sonde_record_decoder &d : decoders_)
    d = {{}, &clock_, records_.table(), records_.tableSize()};
}

RelayDrain::~RelayDrain() {
  stop_ = true;
  if (thread_.joinable())
    thread_.join();
}

void RelayDrain::start() {
  thread_ = std::thread([this] { run(); });
}

void RelayDrain::finish() {
  stop_ = true;
  if (thread_.joinable())
    thread_.join();
  consumer_.flushAll([this](uint32_t r, const char *d, uint32_t n) { consume(r, d, n); });
  pending_.flush(output_);
}

void RelayDrain::run() {
  auto sink = [this](uint32_t r, const char *d, uint32_t n) { consume(r, d, n); };
  while (!stop_.load(std::memory_order_relaxed)) {
    consumer_.wait(kWaitNs);
    consumer_.poll(sink);
    pending_.flush(output_); // a write per round, not per record
  }
  consumer_.poll(sink);
  pending_.flush(output_);
}

// Whole records, back to back, in the order ring `ring`'s thread wrote them.
void RelayDrain::consume(uint32_t ring, const char *data, uint32_t size) {
  if (scratch_.size() < size + args_.size())
    scratch_.resize(size + args_.size());
  const auto *in = reinterpret_cast<const uint8_t *>(data);
  for (uint32_t at = 0; at < size;) {
    sonde_decoded_record rec{};
    int status = sonde_record_decode(&decoders_[ring], in + at, size - at, args_.data(),
                                     args_.size(), scratch_.data(), scratch_.size(), &rec);
    if (status == SONDE_RECORD_CLOCK) {
      at += rec.size;
      continue;
    }
    if (status != SONDE_RECORD_EVENT) {
      // A ring that cannot be decoded is skipped to its next chunk, and counted.
      ++malformed_;
      std::string msg = "sonde: relay: cannot decode a record of ring " + std::to_string(ring) +
                        " (status " + std::to_string(status) + "); skipping its chunk\n";
      (void)!write(errorFd_, msg.data(), msg.size());
      return;
    }
    at += rec.size;
    if (rec.id == RecordFormats::kTextId) {
      std::string_view text(args_[0].s);
      pending_.append(text.data(), text.size(), output_);
      continue;
    }
    SondeFormatError err{};
    char *out = pending_.reserve(SONDE_PRINT_BUFFER_SIZE, output_);
    pending_.commit(sonde_format_print(&module_.format(rec.id), args_.data(), out,
                                       SONDE_PRINT_BUFFER_SIZE, nullptr, &err));
  }
}

} // namespace sonde::session
