// End-to-end target that writes over what it shares with sonde, as a buggy
// program could: fires `work` COUNT times (the script fills globals of every
// kind and sends records), then for 300 ms keeps overwriting its own writable
// mappings of sonde's memfds (found in /proc/self/maps by their names,
// "memfd:sonde-state" and "memfd:sonde-relay"), and exits 0.
//
// Usage: e2e_scribble WHAT PATTERN SEED [COUNT]
//   WHAT     state (the whole state segment), globals (the segment past its
//            header), relay (the whole relay channel), relaydata (the rings'
//            sub-buffers, past the channel's headers), mailbox (PATTERN is a
//            shell command, posted to the segment's mailbox as a system()
//            request once, whether the script calls system() or not), zone
//            (the time zone's name sonde shared left without its terminator,
//            the mailbox's first word after it not zero)
//   PATTERN  random (xorshift bytes from SEED), ones (0xff), zeros, huge:
//            state/globals: every 32-bit word a huge count or offset, except
//            the free lock words heading 64-byte lines (so that sonde looks past
//            the locks); relay: the header intact, every ring's producer far
//            ahead of its consumer and every slot claiming a huge byte count.
#include <sonde/sdt.h>

#include "runtime/transport/RelayFormat.h"
#include "runtime/values/SegmentFormat.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

uint64_t rngState = 1;

uint8_t randomByte() {
  rngState ^= rngState << 13;
  rngState ^= rngState >> 7;
  rngState ^= rngState << 17;
  return static_cast<uint8_t>(rngState >> 24);
}

struct Region {
  unsigned char *begin = nullptr;
  size_t size = 0;
};

// The writable mapping of the memfd named `name` (the first one).
Region mappingOf(const char *name) {
  Region r;
  FILE *maps = std::fopen("/proc/self/maps", "r");
  if (!maps)
    return r;
  char line[512];
  std::string wanted = std::string("/memfd:") + name + " ";
  while (std::fgets(line, sizeof line, maps)) {
    unsigned long start = 0, end = 0;
    char perms[8] = {};
    if (std::sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3 || perms[1] != 'w' ||
        !std::strstr(line, wanted.c_str()))
      continue;
    r.begin = reinterpret_cast<unsigned char *>(start);
    r.size = end - start;
    break;
  }
  std::fclose(maps);
  return r;
}

void fill(Region r, const std::string &pattern) {
  for (size_t i = 0; i < r.size; ++i)
    r.begin[i] = pattern == "random" ? randomByte() : pattern == "ones" ? 0xff : 0;
}

// Huge values in every word but the lock words at the start of 64-byte lines
// that are free (0): counts, links, offsets and lengths all go out of range.
void hugeWords(Region r) {
  for (size_t at = 0; at + 4 <= r.size; at += 4) {
    uint32_t word;
    std::memcpy(&word, r.begin + at, 4);
    if (at % 64 == 0 && word == 0)
      continue;
    word = 0x7ffffff0u + (randomByte() & 7);
    std::memcpy(r.begin + at, &word, 4);
  }
}

// The relay header stays as it is; every ring's producer claims to be far
// ahead and every slot to hold more bytes than a sub-buffer has.
void hugeRings(Region r) {
  using namespace sonde::transport;
  const auto *h = reinterpret_cast<const RelayHeader *>(r.begin);
  auto *rings = reinterpret_cast<RelayRingHeader *>(r.begin + h->ringsOffset);
  auto *slots = reinterpret_cast<RelaySlotHeader *>(r.begin + h->slotsOffset);
  for (uint32_t i = 0; i < h->ringCount; ++i)
    rings[i].head.store(rings[i].tail.load() + 0x40000000u);
  for (auto *s = slots; reinterpret_cast<unsigned char *>(s + 1) <= r.begin + h->dataOffset; ++s)
    s->used.store(0xfffffff0u);
}

// Posts `command` to sonde as a handler's system() would, without one.
void forgeRequest(Region r, const std::string &command) {
  using namespace sonde::values;
  Mailbox &mb = reinterpret_cast<SegmentHeader *>(r.begin)->mailbox;
  uint64_t pos = mb.head.load();
  MailboxSlot &slot = mb.slots[pos % kMailboxSlots];
  slot.kind = 1; // MailKind::Command
  slot.length = static_cast<uint32_t>(command.size());
  std::memcpy(slot.text, command.c_str(), command.size() + 1);
  slot.stamp.store(2 * (pos / kMailboxSlots) + 1);
  mb.head.store(pos + 1);
  mb.posted.fetch_add(1);
}

// False once the mapping is gone: sonde ended the session and the agent
// detached (and unmapped it).
bool scribble(const std::string &what, const std::string &pattern) {
  bool relay = what == "relay" || what == "relaydata";
  Region r = mappingOf(relay ? "sonde-relay" : "sonde-state");
  if (!r.begin)
    return false;
  if (what == "zone") {
    auto *h = reinterpret_cast<sonde::values::SegmentHeader *>(r.begin);
    std::memset(h->facts.tzName, 'Z', sizeof h->facts.tzName);
    h->mailbox.head.store(0x4141414141414141ull);
    return true;
  }
  if (what == "mailbox") {
    static bool posted = false;
    if (!posted)
      forgeRequest(r, pattern);
    posted = true;
    return true;
  }
  if (what == "relaydata") {
    uint64_t data = reinterpret_cast<const sonde::transport::RelayHeader *>(r.begin)->dataOffset;
    r.begin += data;
    r.size -= data;
  }
  if (what == "globals") {
    r.begin += sonde::values::kSegmentHeaderSize;
    r.size -= sonde::values::kSegmentHeaderSize;
  }
  if (pattern == "huge")
    relay ? hugeRings(r) : hugeWords(r);
  else
    fill(r, pattern);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: e2e_scribble state|globals|relay|relaydata|mailbox|zone "
                         "random|ones|zeros|huge|COMMAND SEED [COUNT]\n");
    return 2;
  }
  std::string what = argv[1], pattern = argv[2];
  rngState = std::strtoull(argv[3], nullptr, 0) | 1;
  long count = argc > 4 ? std::strtol(argv[4], nullptr, 10) : 3000;
  for (long i = 0; i < count; ++i)
    SONDE_PROBE(e2e, work, i, i * 3);
  // Meanwhile sonde's timer probes and its consumer read what is written here.
  if (!scribble(what, pattern)) {
    std::fprintf(stderr, "e2e_scribble: no writable mapping of sonde's memfd for %s\n",
                 what.c_str());
    return 2;
  }
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  while (std::chrono::steady_clock::now() < end && scribble(what, pattern))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::printf("scribbled %s with %s\n", what.c_str(), pattern.c_str());
  return 0;
}
