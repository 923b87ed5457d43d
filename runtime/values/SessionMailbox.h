// Requests handlers make of the sonde process (system(), switch_file()), from
// sonde itself or from any traced process: the segment's Mailbox
// (SegmentFormat.h), a bounded multi-producer queue (Vyukov's ring) that sonde
// alone takes from, with futex wake-ups both ways.
#pragma once

#include "runtime/values/ValueAbi.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sonde::values {

enum class MailKind : uint32_t { Command = 1, SwitchFile = 2 };

struct Mail {
  MailKind kind;
  std::string text;
  uint64_t position; // its place in the mailbox's order
};

// Queues a request; its position, or nullopt when the mailbox stays full for
// `waitMs` or `text` does not fit a slot (kMailboxText - 1 bytes).
std::optional<uint64_t> postMail(sonde_segment *seg, MailKind kind, std::string_view text,
                                 int waitMs);
// Waits up to `waitMs` until sonde has served the request at `position`; false
// if it has not by then.
bool waitServed(sonde_segment *seg, uint64_t position, int waitMs);

// sonde, one thread at a time: the oldest request, if one is complete.
std::optional<Mail> takeMail(sonde_segment *seg);
// sonde: every request taken so far has been carried out (wakes their waiters).
void markServed(sonde_segment *seg);
// sonde: requests posted so far (mod 2^32); sleeps until that count moves from
// `seen`, interruptPosted() is called, or `waitMs` pass.
uint32_t postedCount(sonde_segment *seg);
void waitPosted(sonde_segment *seg, uint32_t seen, int waitMs);
void interruptPosted(sonde_segment *seg);

} // namespace sonde::values
