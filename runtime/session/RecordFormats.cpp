#include "runtime/session/RecordFormats.h"

namespace sonde::session {

RecordFormats::RecordFormats(const LoadedModule &module)
    : kinds_(kTextId + 1), descs_(kTextId + 1), binary_(kTextId, false) {
  uint32_t count = module.desc().format_count;
  for (uint32_t fmt = 0; fmt < count && fmt < kTextId; ++fmt) {
    const SondeFormatSpec &spec = module.format(fmt);
    std::vector<uint8_t> &kinds = kinds_[fmt];
    bool inHandler = false;
    for (uint32_t i = 0; i < spec.item_count; ++i) {
      const SondeFormatItem &item = spec.items[i];
      if (item.conv == SONDE_CONV_LITERAL || item.conv == SONDE_CONV_PERCENT)
        continue;
      inHandler = inHandler || item.conv == SONDE_CONV_MEMORY || item.conv == SONDE_CONV_MEMORY_HEX;
      if (item.width_kind == SONDE_SIZE_STAR)
        kinds.push_back(SONDE_RECORD_ARG_LONG);
      if (item.precision_kind == SONDE_SIZE_STAR)
        kinds.push_back(SONDE_RECORD_ARG_LONG);
      kinds.push_back(item.conv == SONDE_CONV_STRING ? SONDE_RECORD_ARG_STRING
                                                     : SONDE_RECORD_ARG_LONG);
    }
    descs_[fmt] = {kinds.data(), static_cast<uint32_t>(kinds.size())};
    binary_[fmt] = !inHandler;
  }
  kinds_[kTextId] = {SONDE_RECORD_ARG_STRING};
  descs_[kTextId] = {kinds_[kTextId].data(), 1};
}

} // namespace sonde::session
