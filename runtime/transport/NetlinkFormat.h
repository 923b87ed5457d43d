// The netlink transport's wire format: one message per batch of records, as
// the kernel carries it between two user processes on a NETLINK_USERSOCK
// socket. A message is an nlmsghdr, a NetlinkBatchHeader, then `records`
// whole records back to back (opaque bytes: framing is the codec's).
#pragma once

#include <cstdint>
#include <linux/netlink.h>

namespace sonde::transport {

inline constexpr uint32_t kNetlinkMagic = 0x534e4c4b; // "SNLK"
inline constexpr uint16_t kNetlinkVersion = 1;
// Our nlmsg_type: above the kernel's reserved control types (NLMSG_MIN_TYPE).
inline constexpr uint16_t kNetlinkMessageType = NLMSG_MIN_TYPE + 1;
// The most record bytes one message carries: the sender's socket buffer must
// hold a whole message, and one message is always admitted to an empty queue.
inline constexpr uint32_t kNetlinkMaxMessageBytes = 64 * 1024;

struct NetlinkBatchHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t headerSize; // sizeof(NetlinkBatchHeader)
  uint32_t pid;
  uint32_t tid;
  uint32_t generation; // with pid and tid: a stream id unique across processes
  uint32_t records;    // whole records in this message
  uint64_t seq;        // the stream's delivered messages before this one
  uint64_t lost;       // records the stream lost since its previous delivered message
};
static_assert(sizeof(NetlinkBatchHeader) == 40);

inline constexpr uint32_t kNetlinkHeadersSize = sizeof(nlmsghdr) + sizeof(NetlinkBatchHeader);
static_assert(kNetlinkHeadersSize % NLMSG_ALIGNTO == 0);

} // namespace sonde::transport
