#include "runtime/values/SessionMailbox.h"

#include "runtime/values/SegmentFormat.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sonde::values {

namespace {

Mailbox &mailboxOf(sonde_segment *seg) { return segmentHeader(seg).mailbox; }

int64_t monotonicMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Shared (not FUTEX_PRIVATE) operations: the word lives in a mapping several
// processes share.
void futexWait(std::atomic<uint32_t> &word, uint32_t expected, int64_t ms) {
  timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000};
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futexWakeAll(std::atomic<uint32_t> &word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Waits until `done()` or `waitMs` have passed, sleeping on `word` between checks.
template <class Done> bool waitOn(std::atomic<uint32_t> &word, int waitMs, Done done) {
  int64_t deadline = monotonicMs() + waitMs;
  for (;;) {
    uint32_t seen = word.load(std::memory_order_acquire);
    if (done())
      return true;
    int64_t left = deadline - monotonicMs();
    if (left <= 0)
      return false;
    futexWait(word, seen, left);
  }
}

// Claims the next position if its slot is free: the position, or nullopt when
// the slot still holds an unserved request (full).
std::optional<uint64_t> claim(Mailbox &mb) {
  uint64_t pos = mb.head.load(std::memory_order_relaxed);
  for (;;) {
    MailboxSlot &slot = mb.slots[pos % kMailboxSlots];
    uint64_t stamp = slot.stamp.load(std::memory_order_acquire);
    uint64_t free = 2 * (pos / kMailboxSlots);
    if (stamp == free) {
      if (mb.head.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed))
        return pos;
    } else if (stamp < free) {
      return std::nullopt;
    } else {
      pos = mb.head.load(std::memory_order_relaxed);
    }
  }
}

} // namespace

std::optional<uint64_t> postMail(sonde_segment *seg, MailKind kind, std::string_view text,
                                 int waitMs) {
  if (text.size() >= kMailboxText)
    return std::nullopt;
  Mailbox &mb = mailboxOf(seg);
  std::optional<uint64_t> pos;
  // Full: sonde frees slots as it serves.
  waitOn(mb.served, waitMs, [&] { return (pos = claim(mb)).has_value(); });
  if (!pos)
    return std::nullopt;
  MailboxSlot &slot = mb.slots[*pos % kMailboxSlots];
  slot.kind = static_cast<uint32_t>(kind);
  slot.length = static_cast<uint32_t>(text.size());
  std::memcpy(slot.text, text.data(), text.size());
  slot.stamp.store(2 * (*pos / kMailboxSlots) + 1, std::memory_order_release);
  mb.posted.fetch_add(1, std::memory_order_release);
  futexWakeAll(mb.posted);
  return pos;
}

bool waitServed(sonde_segment *seg, uint64_t position, int waitMs) {
  Mailbox &mb = mailboxOf(seg);
  uint32_t after = static_cast<uint32_t>(position + 1);
  return waitOn(mb.served, waitMs, [&] {
    return static_cast<int32_t>(mb.served.load(std::memory_order_acquire) - after) >= 0;
  });
}

std::optional<Mail> takeMail(sonde_segment *seg) {
  Mailbox &mb = mailboxOf(seg);
  uint64_t pos = mb.tail.load(std::memory_order_relaxed);
  MailboxSlot &slot = mb.slots[pos % kMailboxSlots];
  uint64_t round = pos / kMailboxSlots;
  // A poster that died between claiming and writing blocks the queue here.
  if (slot.stamp.load(std::memory_order_acquire) != 2 * round + 1)
    return std::nullopt;
  Mail mail{static_cast<MailKind>(slot.kind),
            std::string(slot.text, std::min<uint32_t>(slot.length, kMailboxText - 1)), pos};
  slot.stamp.store(2 * (round + 1), std::memory_order_release);
  mb.tail.store(pos + 1, std::memory_order_relaxed);
  return mail;
}

void markServed(sonde_segment *seg) {
  Mailbox &mb = mailboxOf(seg);
  mb.served.store(static_cast<uint32_t>(mb.tail.load(std::memory_order_relaxed)),
                  std::memory_order_release);
  futexWakeAll(mb.served);
}

uint32_t postedCount(sonde_segment *seg) {
  return mailboxOf(seg).posted.load(std::memory_order_acquire);
}

void waitPosted(sonde_segment *seg, uint32_t seen, int waitMs) {
  futexWait(mailboxOf(seg).posted, seen, waitMs);
}

void interruptPosted(sonde_segment *seg) {
  Mailbox &mb = mailboxOf(seg);
  mb.posted.fetch_add(1, std::memory_order_release); // the count only wakes; no request
  futexWakeAll(mb.posted);
}

} // namespace sonde::values
