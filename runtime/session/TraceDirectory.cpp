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

// writev until every byte of iov[0, count) is written (it may write less).
bool writeAll(int fd, iovec *iov, int count) {
  while (count > 0) {
    ssize_t n = ::writev(fd, iov, count);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return false;
    if (n == 0) {
      errno = EIO;
      return false;
    }
    size_t done = static_cast<size_t>(n);
    for (; count > 0 && done >= iov->iov_len; ++iov, --count)
      done -= iov->iov_len;
    if (count > 0) {
      iov->iov_base = static_cast<char *>(iov->iov_base) + done;
      iov->iov_len -= done;
    }
  }
  return true;
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
  std::unique_ptr<TraceDirectoryWriter> w(new TraceDirectoryWriter(dirFd, dir));
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
  if (size < kStagedFrameMax) {
    if (stagedFor_ != &f || staged_.size() + sizeof h + size > kStageBytes)
      writeStaged();
    if (staged_.capacity() < kStageBytes)
      staged_.reserve(kStageBytes);
    stagedFor_ = &f;
    const char *header = reinterpret_cast<const char *>(&h);
    staged_.insert(staged_.end(), header, header + sizeof h);
    staged_.insert(staged_.end(), data, data + size);
  } else {
    writeStaged(); // the file's earlier frames first
    iovec parts[2] = {{&h, sizeof h}, {const_cast<char *>(data), size}};
    if (!write(f, parts, 2))
      return;
  }
  f.pendingLost = 0;
  bytes_ += sizeof h + size;
}

void TraceDirectoryWriter::writeStaged() {
  if (!staged_.empty()) {
    iovec all{staged_.data(), staged_.size()};
    write(*stagedFor_, &all, 1);
    staged_.clear();
  }
  stagedFor_ = nullptr;
}

bool TraceDirectoryWriter::write(File &f, iovec *parts, int count) {
  if (writeAll(f.fd, parts, count))
    return true;
  if (error_.empty())
    error_ = "cannot write to trace directory '" + dir_ + "': " + std::strerror(errno);
  return false;
}

void TraceDirectoryWriter::chunk(const RecordOrigin &origin, const char *data, uint32_t size) {
  if (File *f = fileFor(origin))
    frame(*f, data, size);
}

void TraceDirectoryWriter::lost(const RecordOrigin &origin, uint64_t count) {
  if (File *f = fileFor(origin))
    f->pendingLost += count;
}

void TraceDirectoryWriter::flush() { writeStaged(); }

bool TraceDirectoryWriter::close(std::string *error) {
  for (auto &[key, f] : files_)
    if (f.pendingLost > 0)
      frame(f, nullptr, 0); // losses after the last frame
  writeStaged();
  for (auto &[key, f] : files_) {
    if (::close(f.fd) != 0 && error_.empty())
      error_ = "cannot write to trace directory '" + dir_ + "': " + std::strerror(errno);
  }
  files_.clear();
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
    int used = 0;
    if (std::sscanf(e->d_name, "stream-%u-%u.bin%n", &pid, &tid, &used) == 2 &&
        e->d_name[used] == '\0')
      t.streams.push_back({dir + "/" + e->d_name, pid, tid});
  }
  closedir(d);
  std::sort(t.streams.begin(), t.streams.end(), [](const Stream &a, const Stream &b) {
    return std::tie(a.pid, a.tid) < std::tie(b.pid, b.tid);
  });
  return t;
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
