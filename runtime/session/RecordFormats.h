// How each printf format of a module travels as a binary record (relay
// transport): the argument kinds of its record descriptor, by format id. Formats
// with %m/%M read target memory, so they are formatted in the handler and travel
// as text, like every print/println/log output: id kTextId, one string argument.
#pragma once

#include "runtime/session/LoadedModule.h"
#include "runtime/transport/RecordCodec.h"

#include <cstdint>
#include <vector>

namespace sonde::session {

class RecordFormats {
public:
  static constexpr uint32_t kTextId = SONDE_RECORD_MAX_ID;

  explicit RecordFormats(const LoadedModule &module);

  // The descriptor of printf format `fmt`, or null when it travels as text.
  const sonde_record_desc *desc(uint32_t fmt) const {
    return fmt < binary_.size() && binary_[fmt] ? &descs_[fmt] : nullptr;
  }
  // Every id's descriptor (kTextId's included), for the decoder.
  const sonde_record_desc *table() const { return descs_.data(); }
  uint32_t tableSize() const { return static_cast<uint32_t>(descs_.size()); }

private:
  std::vector<std::vector<uint8_t>> kinds_;
  std::vector<sonde_record_desc> descs_;
  std::vector<bool> binary_;
};

} // namespace sonde::session
