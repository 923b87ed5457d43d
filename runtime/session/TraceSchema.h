// What a consumer needs to turn binary records back into output, with or without
// the module at hand (a recorded trace is read later by `sonde report`): per
// format id, the printf text (parsed), where it is used, how its arguments travel
// and what to call them as fields (CTF, JSON). Producers ask it which formats
// travel as records: those with %m/%M read target memory, so they are formatted
// in the handler and travel as text, like all print/println/log output (id kTextId).
#pragma once

#include "runtime/format/FormatAbi.h"
#include "runtime/transport/RecordCodec.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sonde::session {

class LoadedModule;

struct TraceEventType {
  std::string source; // a probe point, "function NAME", or "" (sprintf, text)
  std::string format; // the printf text
  std::vector<SondeFormatItem> items;
  SondeFormatSpec spec{};
  uint64_t timeArgs = 0;           // arguments that are the record's time (gettimeofday_ns())
  std::vector<uint8_t> kinds;      // sonde_record_arg_kind, one per argument
  std::vector<std::string> fields; // one C identifier per argument, unique
  bool binary = false;             // travels as a record (else as text)
};

// How each argument of `spec` travels in a record (sonde_record_arg_kind, appended
// to `kinds`); false when the format reads target memory (%m/%M) and must be
// formatted in the handler, as text.
bool recordArgKinds(const SondeFormatSpec &spec, uint64_t timeArgs, std::vector<uint8_t> &kinds);

class TraceSchema {
public:
  static constexpr uint32_t kTextId = SONDE_RECORD_MAX_ID;
  // A user stack for the consumer to symbolize: style (enum StackRecordStyle)
  // and the addresses in ubacktrace()'s hex form.
  static constexpr uint32_t kUserStackId = kTextId - 1;
  // The objects the writing process has mapped (symbols::serializeObjects), sent
  // before its first stack record and again when they change.
  static constexpr uint32_t kObjectsId = kTextId - 2;
  // Format ids stay below the fixed ones.
  static constexpr uint32_t kMaxFormats = kObjectsId;

  struct Format {
    std::string text, source;
    uint64_t timeArgs = 0; // ModuleAbi.h format_time_args
  };
  // Formats by id. Fails on a text that does not parse or more formats than
  // record ids.
  static std::optional<TraceSchema> build(const std::vector<Format> &formats, std::string *error);
  static TraceSchema fromModule(const LoadedModule &module);
  // The text serialize() writes (a trace directory's schema), back; errors name
  // the line.
  static std::optional<TraceSchema> parse(std::string_view text, std::string *error);
  std::string serialize() const;

  TraceSchema(TraceSchema &&) noexcept = default;
  TraceSchema &operator=(TraceSchema &&) noexcept = default;

  // Producers: the descriptor of format `fmt`, or null when it travels as text.
  const sonde_record_desc *desc(uint32_t fmt) const {
    return fmt < binary_.size() ? binary_[fmt] : nullptr;
  }
  // The most a record of `id` takes when that does not depend on its strings,
  // else 0 (then sonde_record_max_size() tells).
  uint32_t fixedMaxSize(uint32_t id) const { return id < maxSizes_.size() ? maxSizes_[id] : 0; }
  // Consumers: every id's descriptor (kTextId's included), for the decoder.
  const sonde_record_desc *table() const { return descs_.data(); }
  uint32_t tableSize() const { return static_cast<uint32_t>(descs_.size()); }
  // The type of record id `id` (kTextId: one string field "text"; the stack
  // and object records likewise), or null.
  const TraceEventType *type(uint32_t id) const;
  uint32_t formatCount() const { return static_cast<uint32_t>(types_.size()); }

private:
  TraceSchema() = default;
  bool add(Format format, std::string *error);
  void finish();

  std::vector<TraceEventType> types_; // by format id
  TraceEventType text_, userStack_, objects_;
  std::vector<sonde_record_desc> descs_;          // kTextId + 1 entries
  std::vector<const sonde_record_desc *> binary_; // per format: &descs_[fmt], or null (text)
  std::vector<uint32_t> maxSizes_;                // per format, fixedMaxSize()
};

// Field names for a format's arguments, from the literal text before each
// conversion ("pid=%d comm=%s" gives pid, comm), else argN; '*' values get
// NAME_width / NAME_precision. C identifiers, unique within the format.
std::vector<std::string> formatFieldNames(const SondeFormatSpec &spec);

} // namespace sonde::session
