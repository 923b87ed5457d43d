#include "runtime/transport/CtfWriter.h"

#include "runtime/transport/OutputPaths.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sonde::transport {

namespace {

std::string systemError(const std::string &what) { return what + ": " + std::strerror(errno); }

bool writeAll(int fd, const std::string &text) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool randomUuid(CtfUuid &uuid) {
  if (::getrandom(uuid.data(), uuid.size(), 0) != static_cast<ssize_t>(uuid.size()))
    return false;
  uuid[6] = static_cast<uint8_t>((uuid[6] & 0x0f) | 0x40); // version 4 (random)
  uuid[8] = static_cast<uint8_t>((uuid[8] & 0x3f) | 0x80); // RFC 4122 variant
  return true;
}

} // namespace

std::unique_ptr<CtfWriter> CtfWriter::open(const std::string &dir, const std::string &traceName,
                                           const CtfClock &clock, std::string *error) {
  if (!isCtfIdentifier(clock.name) || clock.frequency == 0) {
    *error = "CTF clock needs an identifier as its name and a nonzero frequency";
    return nullptr;
  }
  CtfTraceDescription trace{{}, traceName, clock, {}};
  if (!randomUuid(trace.uuid)) {
    *error = systemError("getrandom");
    return nullptr;
  }
  // A new directory or an empty one of yours (OutputPaths.h): stale stream
  // files of an earlier trace would be read as part of this one.
  int dirFd = openTraceDirectory(dir, error);
  if (dirFd < 0) {
    *error = "CTF trace directory: " + *error;
    return nullptr;
  }
  std::unique_ptr<CtfWriter> writer(new CtfWriter(dirFd, dir, std::move(trace)));
  if (!writer->writeMetadata(error))
    return nullptr;
  return writer;
}

CtfWriter::CtfWriter(int dirFd, std::string dir, CtfTraceDescription trace)
    : dirFd_(dirFd), dir_(std::move(dir)), trace_(std::move(trace)) {}

CtfWriter::~CtfWriter() {
  std::string ignored;
  close(&ignored);
}

bool CtfWriter::writeMetadata(std::string *error) {
  // Replaced whole through a rename, so a reader never sees half a file; the
  // temporary file is a new one each time (a failed write may have left one).
  if (::unlinkat(dirFd_, "metadata.tmp", 0) != 0 && errno != ENOENT) {
    *error = systemError("creating CTF metadata");
    return false;
  }
  int fd =
      ::openat(dirFd_, "metadata.tmp", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = systemError("creating CTF metadata");
    return false;
  }
  bool written = writeAll(fd, ctfMetadataText(trace_));
  int savedErrno = errno;
  ::close(fd);
  errno = savedErrno;
  if (!written || ::renameat(dirFd_, "metadata.tmp", dirFd_, "metadata") != 0) {
    *error = systemError("cannot write '" + dir_ + "/metadata'");
    return false;
  }
  return true;
}

bool CtfWriter::defineEvent(uint32_t id, const std::string &name,
                            const std::vector<CtfField> &fields, std::string *error) {
  if (dirFd_ < 0) {
    *error = "CTF trace is closed";
    return false;
  }
  if (eventIndex_.count(id)) {
    *error = "CTF event id " + std::to_string(id) + " is already defined";
    return false;
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!isCtfIdentifier(fields[i].name)) {
      *error = "CTF field name '" + fields[i].name + "' is not an identifier";
      return false;
    }
    for (size_t j = 0; j < i; ++j)
      if (fields[j].name == fields[i].name) {
        *error = "CTF event '" + name + "' has two fields named '" + fields[i].name + "'";
        return false;
      }
  }
  eventIndex_.emplace(id, trace_.events.size());
  trace_.events.push_back({id, name, fields});
  return writeMetadata(error);
}

CtfStream *CtfWriter::stream(uint64_t streamId, std::string *error) {
  if (dirFd_ < 0) {
    *error = "CTF trace is closed";
    return nullptr;
  }
  auto found = streams_.find(streamId);
  if (found != streams_.end())
    return found->second.get();
  std::string fileName = "stream_" + std::to_string(streamId);
  int fd = ::openat(dirFd_, fileName.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    0644);
  if (fd < 0) {
    *error = systemError("creating CTF stream " + fileName);
    return nullptr;
  }
  auto created = std::make_unique<CtfStream>(fd, dir_ + "/" + fileName, trace_.uuid, streamId);
  return streams_.emplace(streamId, std::move(created)).first->second.get();
}

bool CtfWriter::write(uint64_t streamId, uint64_t timestamp, uint32_t eventId,
                      std::span<const CtfValue> values, std::string *error) {
  auto found = eventIndex_.find(eventId);
  if (found == eventIndex_.end()) {
    *error = "CTF event id " + std::to_string(eventId) + " is not defined";
    return false;
  }
  const CtfEventClass &event = trace_.events[found->second];
  bool matches = values.size() == event.fields.size();
  for (size_t i = 0; matches && i < values.size(); ++i)
    matches = values[i].kind == event.fields[i].kind;
  if (!matches) {
    *error = "values do not match the fields of CTF event '" + event.name + "'";
    return false;
  }
  CtfStream *target = stream(streamId, error);
  return target && target->write(timestamp, eventId, values, error);
}

bool CtfWriter::setStreamThread(uint64_t streamId, int32_t pid, int32_t tid, std::string *error) {
  CtfStream *target = stream(streamId, error);
  if (!target)
    return false;
  target->setThread(pid, tid);
  return true;
}

bool CtfWriter::discarded(uint64_t streamId, uint64_t count, std::string *error) {
  CtfStream *target = stream(streamId, error);
  if (!target)
    return false;
  target->addDiscarded(count);
  return true;
}

bool CtfWriter::close(std::string *error) {
  if (dirFd_ < 0)
    return true;
  bool ok = true;
  for (auto &[id, stream] : streams_) {
    if (!stream->finish(error))
      ok = false;
    closedNotWritten_ += stream->eventsNotWritten();
  }
  streams_.clear();
  ::close(dirFd_);
  dirFd_ = -1;
  return ok;
}

uint64_t CtfWriter::eventsNotWritten() const {
  uint64_t total = closedNotWritten_;
  for (const auto &[id, stream] : streams_)
    total += stream->eventsNotWritten();
  return total;
}

} // namespace sonde::transport
