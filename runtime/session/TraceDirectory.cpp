#include "runtime/session/TraceDirectory.h"

#include "runtime/session/RecordMerger.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

namespace sonde::session {

namespace {

constexpr const char *kClockHeader = "sonde-trace-clock 1";
constexpr const char *kIndexHeader = "sonde-trace-index 1";
// A frame is at most a sub-buffer or a message; larger sizes mean a damaged file.
constexpr uint32_t kMaxFrame = 1u << 30;
// Frames below this size are staged, up to kStageBytes of one stream file at a
// time (the consumer hands over a stream's frames one after another).
constexpr uint32_t kStagedFrameMax = 64u << 10;
constexpr size_t kStageBytes = 256u << 10;

struct FrameHeader {
  uint32_t magic;
  uint32_t size;
  uint64_t lostBefore;
};
static_assert(sizeof(FrameHeader) == 16);

// writev until every byte of iov[0, count) is written (it may write less);
// returns the bytes written: fewer than all of them after an error (errno).
size_t writeFully(int fd, iovec *iov, int count) {
  size_t written = 0;
  while (count > 0) {
    ssize_t n = ::writev(fd, iov, count);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return written;
    if (n == 0) {
      errno = EIO;
      return written;
    }
    size_t done = static_cast<size_t>(n);
    written += done;
    for (; count > 0 && done >= iov->iov_len; ++iov, --count)
      done -= iov->iov_len;
    if (count > 0) {
      iov->iov_base = static_cast<char *>(iov->iov_base) + done;
      iov->iov_len -= done;
    }
  }
  return written;
}

bool writeAll(int fd, iovec *iov, int count) {
  size_t total = 0;
  for (int i = 0; i < count; ++i)
    total += iov[i].iov_len;
  return writeFully(fd, iov, count) == total;
}

// A new file `name` of trace directory `dirFd` holding `text`.
bool writeTextFile(int dirFd, const std::string &dir, const std::string &name,
                   const std::string &text, std::string *error) {
  int fd = transport::createTraceFile(dirFd, dir, name, error);
  if (fd < 0)
    return false;
  iovec all{const_cast<char *>(text.data()), text.size()};
  bool ok = writeAll(fd, &all, 1);
  ok = ::close(fd) == 0 && ok;
  if (!ok)
    *error = "cannot write '" + dir + "/" + name + "': " + std::strerror(errno);
  return ok;
}

bool readTextFile(const std::string &path, std::string &text, std::string *error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::ostringstream s;
  s << in.rdbuf();
  text = s.str();
  return true;
}

std::string clockText(const sonde_trace_clock &c) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s\nsource %u\nref_reading %" PRIu64 "\nref_mono_ns %" PRId64
                "\nref_real_ns %" PRId64 "\nmult %" PRIu64 "\nshift %u\n",
                kClockHeader, c.source, c.ref_reading, c.ref_mono_ns, c.ref_real_ns, c.mult,
                c.shift);
  return buf;
}

bool parseClock(const std::string &text, const std::string &path, sonde_trace_clock &c,
                std::string *error) {
  std::istringstream in(text);
  std::string line;
  size_t lineNo = 0;
  unsigned seen = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    auto fail = [&](const std::string &what) {
      *error = path + ":" + std::to_string(lineNo) + ": " + what;
      return false;
    };
    if (lineNo == 1) {
      if (line != kClockHeader)
        return fail(std::string("expected \"") + kClockHeader + "\"");
      continue;
    }
    char key[32];
    char value[64];
    if (std::sscanf(line.c_str(), "%31s %63s", key, value) != 2)
      return fail("expected \"NAME VALUE\"");
    char *end = nullptr;
    errno = 0;
    unsigned long long u = std::strtoull(value, &end, 10);
    long long s = std::strtoll(value, nullptr, 10);
    if (*end != '\0' || errno != 0)
      return fail(std::string("bad number '") + value + "'");
    std::string k = key;
    if (k == "source" && u <= SONDE_CLOCK_MONOTONIC)
      c.source = static_cast<uint32_t>(u), seen |= 1;
    else if (k == "ref_reading")
      c.ref_reading = u, seen |= 2;
    else if (k == "ref_mono_ns")
      c.ref_mono_ns = s, seen |= 4;
    else if (k == "ref_real_ns")
      c.ref_real_ns = s, seen |= 8;
    else if (k == "mult")
      c.mult = u, seen |= 16;
    else if (k == "shift" && u < 64)
      c.shift = static_cast<uint32_t>(u), seen |= 32;
    else
      return fail("unexpected '" + line + "'");
  }
  if (seen != 63) {
    *error = path + ": incomplete clock calibration";
    return false;
  }
  return true;
}

// A stream file's frames.
class FileFrames final : public FrameSource {
public:
  explicit FileFrames(std::string path) : path_(std::move(path)) {
    file_ = std::fopen(path_.c_str(), "rbe");
    if (!file_)
      openError_ = std::strerror(errno);
  }
  ~FileFrames() override {
    if (file_)
      std::fclose(file_);
  }
  FileFrames(const FileFrames &) = delete;
  FileFrames &operator=(const FileFrames &) = delete;

  bool next(RecordFrame &frame, std::string *error) override {
    if (!file_) {
      *error = "cannot read '" + path_ + "': " + openError_;
      return false;
    }
    offset_ = static_cast<uint64_t>(std::ftell(file_));
    FrameHeader h;
    size_t n = std::fread(&h, 1, sizeof h, file_);
    if (n == 0)
      return false;
    if (n != sizeof h || h.magic != kTraceFrameMagic || h.size > kMaxFrame) {
      *error = path_ + ": damaged frame at offset " + std::to_string(offset_);
      return false;
    }
    frame.lostBefore = h.lostBefore;
    frame.bytes.resize(h.size);
    if (std::fread(frame.bytes.data(), 1, h.size, file_) != h.size) {
      *error = path_ + ": frame at offset " + std::to_string(offset_) + " is cut short";
      return false;
    }
    return true;
  }
  std::string where() const override {
    return path_ + ", frame at offset " + std::to_string(offset_);
  }

private:
  std::string path_;
  FILE *file_ = nullptr;
  std::string openError_;
  uint64_t offset_ = 0;
};

// Whether `name` is a stream file's name, with its pid and tid.
bool parseStreamName(const char *name, unsigned &pid, unsigned &tid) {
  int used = 0;
  return std::sscanf(name, "stream-%u-%u.bin%n", &pid, &tid, &used) == 2 && name[used] == '\0';
}

} // namespace

// ------------------------------------------------------------------ writer

std::unique_ptr<TraceDirectoryWriter> TraceDirectoryWriter::open(const std::string &dir,
                                                                 const TraceSchema &schema,
                                                                 const sonde_trace_clock &clock,
                                                                 std::string *error) {
  int fd = transport::openTraceDirectory(dir, error);
  return fd < 0 ? nullptr : start(fd, dir, schema, clock, error);
}

std::unique_ptr<TraceDirectoryWriter> TraceDirectoryWriter::create(const std::string &stem,
                                                                   const TraceSchema &schema,
                                                                   const sonde_trace_clock &clock,
                                                                   std::string *error) {
  std::string name;
  int fd = transport::createTraceDirectory(stem, &name, error);
  return fd < 0 ? nullptr : start(fd, name, schema, clock, error);
}

std::unique_ptr<TraceDirectoryWriter> TraceDirectoryWriter::start(int dirFd, const std::string &dir,
                                                                  const TraceSchema &schema,
                                                                  const sonde_trace_clock &clock,
                                                                  std::string *error) {
  std::unique_ptr<TraceDirectoryWriter> w(new TraceDirectoryWriter(dirFd, dir, schema));
  if (!writeTextFile(dirFd, dir, "schema", schema.serialize(), error) ||
      !writeTextFile(dirFd, dir, "clock", clockText(clock), error))
    return nullptr;
  return w;
}

TraceDirectoryWriter::~TraceDirectoryWriter() {
  std::string ignored;
  close(&ignored);
}

TraceDirectoryWriter::File *TraceDirectoryWriter::fileFor(const RecordOrigin &origin) {
  uint64_t key = (uint64_t{origin.pid} << 32) | origin.tid;
  File &f = files_[key];
  if (f.fd < 0) {
    std::string name =
        "stream-" + std::to_string(origin.pid) + "-" + std::to_string(origin.tid) + ".bin";
    // A new file, never an existing one: a thread's stream that ends and
    // starts again (ring released, reclaimed) goes on in the descriptor kept here.
    std::string error;
    f.fd = transport::createTraceFile(dirFd_.get(), dir_, name, &error);
    f.name = name;
    if (f.fd < 0) {
      if (error_.empty())
        error_ = error;
      files_.erase(key);
      return nullptr;
    }
  }
  return &f;
}

// A large frame goes with one writev straight from the ring's memory (a copy
// would only cost a memcpy more). Small ones (small sub-buffers, netlink
// batches) are copied and written together: a syscall each would cost more.
void TraceDirectoryWriter::frame(File &f, const char *data, uint32_t size) {
  FrameHeader h{kTraceFrameMagic, size, f.pendingLost};
  f.pendingLost = 0;
  if (size < kStagedFrameMax) {
    if (stagedFor_ != &f || staged_.size() + sizeof h + size > kStageBytes)
      writeStaged();
    if (staged_.capacity() < kStageBytes)
      staged_.reserve(kStageBytes);
    stagedFor_ = &f;
    const char *header = reinterpret_cast<const char *>(&h);
    staged_.insert(staged_.end(), header, header + sizeof h);
    staged_.insert(staged_.end(), data, data + size);
    return;
  }
  writeStaged(); // the file's earlier frames first
  iovec parts[2] = {{&h, sizeof h}, {const_cast<char *>(data), size}};
  size_t written = error_.empty() ? writeFully(f.fd, parts, 2) : 0;
  if (written == sizeof h + size)
    f.bytes += written;
  else
    fail(f, written, data, size);
}

void TraceDirectoryWriter::writeStaged() {
  if (!staged_.empty()) {
    File &f = *stagedFor_;
    iovec all{staged_.data(), staged_.size()};
    size_t written = error_.empty() ? writeFully(f.fd, &all, 1) : 0;
    // Frames written whole stay; those after them (records counted) do not.
    size_t at = 0;
    while (at < staged_.size()) {
      FrameHeader h;
      std::memcpy(&h, staged_.data() + at, sizeof h);
      size_t end = at + sizeof h + h.size;
      if (end > written) {
        fail(f, written > at ? written - at : 0, staged_.data() + at + sizeof h, h.size);
        written = at; // the file ends before this frame now
      } else {
        f.bytes += sizeof h + h.size;
      }
      at = end;
    }
    staged_.clear();
  }
  stagedFor_ = nullptr;
}

// A frame of `size` bytes at `data` was not written (`partial` of its bytes,
// header included, were): the file goes back to its last whole frame, so it
// stays readable, and the frame's records count as not written. The first
// error is kept; nothing is written after it.
void TraceDirectoryWriter::fail(File &f, size_t partial, const char *data, uint32_t size) {
  if (error_.empty()) {
    error_ = "cannot write '" + dir_ + "/" + f.name + "': " + std::strerror(errno);
    if (partial > 0 && ::ftruncate(f.fd, static_cast<off_t>(f.bytes)) == 0)
      ::lseek(f.fd, static_cast<off_t>(f.bytes), SEEK_SET);
  }
  notWritten_ += countRecords(schema_, data, size);
}

void TraceDirectoryWriter::chunk(const RecordOrigin &origin, const char *data, uint32_t size) {
  if (!error_.empty()) {
    notWritten_ += countRecords(schema_, data, size);
    return;
  }
  if (File *f = fileFor(origin))
    frame(*f, data, size);
  else
    notWritten_ += countRecords(schema_, data, size);
}

void TraceDirectoryWriter::lost(const RecordOrigin &origin, uint64_t count) {
  // Losses no stream reported (e.g. netlink losses after the consumer
  // stalled) have no thread: the index keeps them.
  if (origin.pid == 0 && origin.tid == 0)
    unattributedLost_ += count;
  else if (File *f = fileFor(origin))
    f->pendingLost += count;
}

void TraceDirectoryWriter::flush() { writeStaged(); }

uint64_t TraceDirectoryWriter::bytesWritten() const {
  uint64_t total = 0;
  for (const auto &[key, f] : files_)
    total += f.bytes;
  return total;
}

bool TraceDirectoryWriter::close(std::string *error) {
  if (closed_) {
    *error = error_;
    return error_.empty();
  }
  closed_ = true;
  for (auto &[key, f] : files_)
    if (f.pendingLost > 0)
      frame(f, nullptr, 0); // losses after the last frame
  writeStaged();
  // The index lists every stream file and its size, so `sonde report` can
  // tell a trace whose files were removed or cut from a complete one.
  std::string index = std::string(kIndexHeader) + "\n";
  for (auto &[key, f] : files_) {
    if (::close(f.fd) != 0 && error_.empty())
      error_ = "cannot write '" + dir_ + "/" + f.name + "': " + std::strerror(errno);
    f.fd = -1;
    index += "stream " + f.name + " " + std::to_string(f.bytes) + "\n";
  }
  index += "lost " + std::to_string(unattributedLost_) + "\n";
  index += "not-written " + std::to_string(notWritten_) + "\n";
  std::string indexError;
  if (!writeTextFile(dirFd_.get(), dir_, "index", index, &indexError) && error_.empty())
    error_ = indexError;
  if (!error_.empty()) {
    *error = error_;
    return false;
  }
  return true;
}

// ------------------------------------------------------------------ reader

std::optional<TraceDirectory> TraceDirectory::open(const std::string &dir, std::string *error) {
  TraceDirectory t;
  std::string text;
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    *error = "'" + dir + "' is not a trace directory (" +
             (errno ? std::strerror(errno) : "not a directory") + ")";
    return std::nullopt;
  }
  if (!readTextFile(dir + "/schema", text, error))
    return std::nullopt;
  std::string why;
  t.schema = TraceSchema::parse(text, &why);
  if (!t.schema) {
    *error = dir + "/schema: " + why;
    return std::nullopt;
  }
  if (!readTextFile(dir + "/clock", text, error) ||
      !parseClock(text, dir + "/clock", t.clock, error))
    return std::nullopt;
  DIR *d = opendir(dir.c_str());
  if (!d) {
    *error = "cannot read directory '" + dir + "': " + std::strerror(errno);
    return std::nullopt;
  }
  while (dirent *e = readdir(d)) {
    unsigned pid = 0, tid = 0;
    if (parseStreamName(e->d_name, pid, tid))
      t.streams.push_back({dir + "/" + e->d_name, pid, tid});
  }
  closedir(d);
  std::sort(t.streams.begin(), t.streams.end(), [](const Stream &a, const Stream &b) {
    return std::tie(a.pid, a.tid) < std::tie(b.pid, b.tid);
  });
  checkIndex(dir, t);
  return t;
}

// The index the recording wrote when it ended (TraceDirectoryWriter::close)
// against the stream files there are: missing or cut short ones are damage.
void TraceDirectory::checkIndex(const std::string &dir, TraceDirectory &t) {
  std::string path = dir + "/index", text, ignored;
  if (!readTextFile(path, text, &ignored)) {
    if (t.streams.empty())
      t.damage.push_back("'" + dir + "' holds no stream files (stream-PID-TID.bin) and no index: " +
                         "there are no records to report");
    else
      t.warnings.push_back(path + " is missing: the recording did not end normally (sonde "
                                  "killed, or a write error); reading the stream files there are");
    return;
  }
  std::istringstream in(text);
  std::string line;
  size_t lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    auto bad = [&] {
      t.damage.push_back(path + ":" + std::to_string(lineNo) + ": unexpected '" +
                         line.substr(0, 80) + "'");
    };
    if (lineNo == 1) {
      if (line != kIndexHeader) {
        t.damage.push_back(path + ":1: expected \"" + std::string(kIndexHeader) + "\"");
        return;
      }
      continue;
    }
    char kind[16], name[64];
    unsigned long long number = 0;
    unsigned pid = 0, tid = 0;
    if (std::sscanf(line.c_str(), "%15s %63s %llu", kind, name, &number) == 3 &&
        std::strcmp(kind, "stream") == 0 && parseStreamName(name, pid, tid)) {
      struct stat st;
      std::string file = dir + "/" + name;
      if (stat(file.c_str(), &st) != 0)
        t.damage.push_back(file + " is missing (" + std::strerror(errno) + "); the index lists " +
                           std::to_string(number) + " bytes of records in it");
      else if (static_cast<unsigned long long>(st.st_size) < number)
        t.damage.push_back(file + " is cut short: " + std::to_string(st.st_size) + " of the " +
                           std::to_string(number) + " bytes the recording wrote");
    } else if (std::sscanf(line.c_str(), "%15s %llu", kind, &number) == 2 &&
               std::strcmp(kind, "lost") == 0) {
      t.unattributedLost = number;
    } else if (std::sscanf(line.c_str(), "%15s %llu", kind, &number) == 2 &&
               std::strcmp(kind, "not-written") == 0) {
      t.notWritten = number;
    } else {
      bad();
    }
  }
}

bool replayTraceDirectory(const TraceDirectory &trace, RecordSink &sink,
                          const RecordStreams::Warn &warn, std::string *error) {
  std::vector<MergedStream> streams;
  for (size_t i = 0; i < trace.streams.size(); ++i) {
    const TraceDirectory::Stream &s = trace.streams[i];
    streams.push_back({RecordOrigin{i, s.pid, s.tid}, std::make_unique<FileFrames>(s.path)});
  }
  return mergeRecordStreams(streams, *trace.schema, trace.clock, sink, warn, error);
}

} // namespace sonde::session
