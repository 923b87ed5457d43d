// The Lua consumer sink on its own: what event(ev) sees of a record, lost(),
// begin() and finish(), where the script's output goes, and errors with the
// script's file and line that lose no record.
#include "runtime/lua/LuaRecordSink.h"
#include "runtime/session/TraceSchema.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace sonde::lua {
namespace {

// Stands in for the text output: buffers each record's format until flush(),
// as TextRecordSink does, into the same output the script prints to.
class TextStandIn final : public session::RecordSink {
public:
  explicit TextStandIn(std::string &out) : out_(out) {}
  void event(const session::TraceEvent &e) override {
    pending_ += e.id == session::TraceSchema::kTextId ? e.args[0].s : "text: " + e.type->format;
  }
  void flush() override {
    out_ += pending_;
    pending_.clear();
  }
  bool close(std::string *) override {
    flush();
    return true;
  }

private:
  std::string &out_;
  std::string pending_;
};

class LuaSinkTest : public ::testing::Test {
protected:
  void SetUp() override {
    char name[] = "/tmp/sonde-lua-XXXXXX";
    int fd = mkstemp(name);
    ASSERT_GE(fd, 0);
    ::close(fd);
    path_ = name;
    std::string error;
    auto schema = session::TraceSchema::build(
        {{"pid=%d comm=%s\n", "process(\"./app\").mark(\"go\")", 0}}, &error);
    ASSERT_TRUE(schema) << error;
    schema_.emplace(std::move(*schema));
    clock_.ref_reading = 1000;
    clock_.ref_real_ns = 1'700'000'000'000'000'000;
    clock_.mult = 2;
  }
  void TearDown() override { std::remove(path_.c_str()); }

  std::unique_ptr<LuaRecordSink> open(const std::string &lua, std::string *error) {
    std::ofstream(path_) << lua;
    return LuaRecordSink::open(
        path_, clock_, [this](const char *data, size_t n) { output_.append(data, n); },
        std::make_unique<TextStandIn>(output_), err_, error);
  }
  // A record of the one format (pid, comm) from pid 7, tid 8, at reading 1500.
  void send(session::RecordSink &sink, int64_t pid, const char *comm) {
    SondeFormatArg args[2] = {};
    args[0].i = pid;
    args[1].s = comm;
    session::TraceEvent e;
    e.origin.pid = 7;
    e.origin.tid = 8;
    e.reading = 1500;
    e.type = schema_->type(0);
    e.args = args;
    sink.event(e);
  }
  void sendText(session::RecordSink &sink, const char *text) {
    SondeFormatArg args[1] = {};
    args[0].s = text;
    session::TraceEvent e;
    e.origin.pid = 7;
    e.origin.tid = 9;
    e.reading = 1000;
    e.id = session::TraceSchema::kTextId;
    e.type = schema_->type(session::TraceSchema::kTextId);
    e.args = args;
    sink.event(e);
  }

  std::string path_, output_;
  std::ostringstream err_;
  sonde_trace_clock clock_{};
  std::optional<session::TraceSchema> schema_;
};

TEST_F(LuaSinkTest, EventSeesTheRecordsFieldsArgsTimeAndOrigin) {
  std::string error;
  auto sink = open("function begin() print('begin') end\n"
                   "function event(ev)\n"
                   "  if ev.text then print('text', ev.text, ev.probe, ev.tid) return end\n"
                   "  print(ev.probe, ev.format == 'pid=%d comm=%s\\n', ev.fields.pid,\n"
                   "        math.type(ev.fields.pid), ev.fields.comm, ev.args[1], ev.args[2],\n"
                   "        #ev.args, table.concat(ev.names, ','), ev.pid, ev.tid, ev.cpu,\n"
                   "        ev.time_ns, math.type(ev.time_ns))\n"
                   "end\n"
                   "function lost(n, tid) print('lost', n, tid) end\n"
                   "function finish() print('finish') end\n",
                   &error);
  ASSERT_TRUE(sink) << error;
  EXPECT_EQ(output_, "begin\n") << "begin()'s output goes out at once";
  send(*sink, 42, "bash");
  send(*sink, -1, "");
  sendText(*sink, "hello\n");
  session::RecordOrigin origin;
  origin.tid = 9;
  sink->lost(origin, 3);
  ASSERT_TRUE(sink->close(&error)) << error;
  EXPECT_EQ(
      output_,
      "begin\n"
      "process(\"./app\").mark(\"go\")\ttrue\t42\tinteger\tbash\t42\tbash\t2\tpid,comm\t7\t8\t"
      "nil\t1700000000000001000\tinteger\n"
      "process(\"./app\").mark(\"go\")\ttrue\t-1\tinteger\t\t-1\t\t2\tpid,comm\t7\t8\t"
      "nil\t1700000000000001000\tinteger\n"
      "text\thello\n\tnil\t9\n"
      "lost\t3\t9\n"
      "finish\n");
  EXPECT_EQ(err_.str(), "");
}

TEST_F(LuaSinkTest, PrintAndIoWriteShareTheOutputAndGoOutOnFlush) {
  std::string error;
  auto sink = open("function event(ev)\n"
                   "  io.write('w', ev.fields.pid) print(' p') io.stdout:write('s\\n')\n"
                   "  assert(io.stdout:close() == nil)\n"
                   "end\n",
                   &error);
  ASSERT_TRUE(sink) << error;
  send(*sink, 1, "a");
  EXPECT_EQ(output_, "") << "buffered until the drain round ends";
  sink->flush();
  EXPECT_EQ(output_, "w1 p\ns\n");
  send(*sink, 2, "b");
  ASSERT_TRUE(sink->close(&error)) << error;
  EXPECT_EQ(output_, "w1 p\ns\nw2 p\ns\n");
}

TEST_F(LuaSinkTest, LoadErrorsNameTheFileAndLine) {
  std::string error;
  EXPECT_FALSE(open("x = 1\nfunction event(ev\n", &error));
  EXPECT_EQ(error, path_ + ":3: ')' expected near <eof>");
  EXPECT_FALSE(open("error('no config')\n", &error));
  EXPECT_EQ(error, path_ + ":1: no config");
  EXPECT_FALSE(open("function begin()\n  local t = nil\n  return t.x\nend\n", &error));
  EXPECT_EQ(error,
            "Lua error in begin(): " + path_ + ":3: attempt to index a nil value (local 't')");
  std::remove(path_.c_str());
  EXPECT_FALSE(LuaRecordSink::open(
      path_, clock_, [](const char *, size_t) {}, std::make_unique<TextStandIn>(output_), err_,
      &error));
  EXPECT_EQ(error, "cannot open " + path_ + ": No such file or directory");
}

TEST_F(LuaSinkTest, AFailingEventIsReportedOnceAndTheRestIsPrintedAsText) {
  std::string error;
  auto sink = open("n = 0\n"
                   "function event(ev)\n"
                   "  n = n + 1\n"
                   "  if n == 2 then error('boom') end\n"
                   "  print('lua', ev.fields.comm)\n"
                   "end\n"
                   "function lost() error('not called') end\n"
                   "function finish() print('events', n) end\n",
                   &error);
  ASSERT_TRUE(sink) << error;
  send(*sink, 1, "a");
  send(*sink, 2, "b");
  send(*sink, 3, "c");
  sink->lost(session::RecordOrigin{}, 1);
  sendText(*sink, "d\n");
  EXPECT_FALSE(sink->close(&error));
  EXPECT_EQ(error, "the Lua script failed; 3 records were printed as text instead");
  EXPECT_EQ(err_.str(), "sonde: Lua error in event() for a record of "
                        "process(\"./app\").mark(\"go\") (pid 7, tid 8): " +
                            path_ +
                            ":4: boom\n"
                            "sonde: the Lua script gets no more records: they are printed as "
                            "text\n");
  // The script's own lines, then the failing record and the later ones as
  // text, then finish(), which still runs.
  EXPECT_EQ(output_, "lua\ta\n"
                     "text: pid=%d comm=%s\ntext: pid=%d comm=%s\nd\n"
                     "events\t2\n");
}

TEST_F(LuaSinkTest, FinishErrorsAreReportedAndFailTheRun) {
  std::string error;
  auto sink = open("function finish()\n  print('partial')\n  error({})\nend\n", &error);
  ASSERT_TRUE(sink) << error;
  send(*sink, 1, "a");
  EXPECT_FALSE(sink->close(&error));
  EXPECT_EQ(error, "the Lua script failed in finish()");
  EXPECT_EQ(err_.str(), "sonde: Lua error in finish(): (error object is a table value)\n");
  EXPECT_EQ(output_, "partial\n");

  err_.str("");
  output_.clear();
  sink = open("function finish() local s = 'x' .. {} end\n", &error);
  ASSERT_TRUE(sink) << error;
  EXPECT_FALSE(sink->close(&error));
  EXPECT_EQ(err_.str(), "sonde: Lua error in finish(): " + path_ +
                            ":1: attempt to concatenate a table value\n");
}

TEST_F(LuaSinkTest, AScriptWithoutFunctionsTakesEveryRecord) {
  std::string error;
  auto sink = open("-- nothing\n", &error);
  ASSERT_TRUE(sink) << error;
  send(*sink, 1, "a");
  sink->lost(session::RecordOrigin{}, 2);
  EXPECT_TRUE(sink->close(&error)) << error;
  EXPECT_EQ(output_, "");
  EXPECT_EQ(err_.str(), "");
}

} // namespace
} // namespace sonde::lua
