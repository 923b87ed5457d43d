// The Lua consumer sink on its own: what event(ev) sees of a record, lost(),
// finish(), and errors with the script's file and line.
#include "runtime/lua/LuaRecordSink.h"
#include "runtime/session/TraceSchema.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace sonde::lua {
namespace {

class CollectingSink final : public session::RecordSink {
public:
  explicit CollectingSink(std::string &out) : out_(out) {}
  void event(const session::TraceEvent &e) override { out_ += "fallback " + e.type->format; }
  bool close(std::string *) override { return true; }

private:
  std::string &out_;
};

class LuaSinkTest : public ::testing::Test {
protected:
  void SetUp() override {
    char name[] = "/tmp/sonde-lua-XXXXXX";
    int fd = mkstemp(name);
    ASSERT_GE(fd, 0);
    close(fd);
    path_ = name;
    output_ = "/tmp/sonde-lua-out-" + std::to_string(getpid());
    schema_.emplace(
        *session::TraceSchema::build({{"pid=%d comm=%s\n", "kernel.trace(\"x:y\")", 0}}, nullptr));
  }
  void TearDown() override {
    std::remove(path_.c_str());
    std::remove(output_.c_str());
  }
  std::unique_ptr<LuaRecordSink> open(const std::string &lua, std::string *error) {
    std::ofstream(path_) << lua;
    return LuaRecordSink::open(path_, clock_, std::make_unique<CollectingSink>(fallback_), err_,
                               error);
  }
  std::string written() {
    std::stringstream s;
    s << std::ifstream(output_).rdbuf();
    return s.str();
  }
  // A record of the one format: pid and comm.
  void send(session::RecordSink &sink, int64_t pid, const char *comm) {
    SondeFormatArg args[2] = {};
    args[0].i = pid;
    args[1].s = comm;
    session::TraceEvent e;
    e.origin.pid = 7;
    e.origin.tid = 8;
    e.type = schema_->type(0);
    e.args = args;
    sink.event(e);
  }

  std::string path_, output_, fallback_;
  std::ostringstream err_;
  sonde_trace_clock clock_{};
  std::optional<session::TraceSchema> schema_;
};

TEST_F(LuaSinkTest, EventSeesTheRecordsFieldsArgsAndOrigin) {
  std::string error;
  auto sink =
      open("local f = assert(io.open('" + output_ +
               "', 'w'))\n"
               "function begin() f:write('begin\\n') end\n"
               "function event(ev)\n"
               "  f:write(ev.probe, '|', ev.format, ev.fields.pid, '|', ev.fields.comm, '|',\n"
               "          ev.args[1], ev.args[2], '|', table.concat(ev.names, ','), '|',\n"
               "          ev.pid, ' ', ev.tid, '|', math.type(ev.time_ns), '\\n')\n"
               "end\n"
               "function lost(n, tid) f:write('lost ', n, ' ', tid, '\\n') end\n"
               "function finish() f:write('finish\\n') f:close() end\n",
           &error);
  ASSERT_TRUE(sink) << error;
  send(*sink, 42, "bash");
  session::RecordOrigin origin;
  origin.tid = 9;
  sink->lost(origin, 3);
  ASSERT_TRUE(sink->close(&error)) << error;
  EXPECT_EQ(written(), "begin\n"
                       "kernel.trace(\"x:y\")|pid=%d comm=%s\n42|bash|42bash|pid,comm|7 8|integer\n"
                       "lost 3 9\n"
                       "finish\n");
  EXPECT_EQ(err_.str(), "");
}

TEST_F(LuaSinkTest, LoadErrorsNameTheFileAndLine) {
  std::string error;
  EXPECT_FALSE(open("x = 1\nfunction event(ev\n", &error));
  EXPECT_EQ(error, path_ + ":3: ')' expected near <eof>");
  EXPECT_FALSE(open("error('no config')\n", &error));
  EXPECT_EQ(error, path_ + ":1: no config");
}

TEST_F(LuaSinkTest, AFailingEventHandsTheRestToTheFallback) {
  std::string error;
  auto sink = open(
      "n = 0\nfunction event(ev)\n  n = n + 1\n  if n == 2 then error('boom') end\nend\n", &error);
  ASSERT_TRUE(sink) << error;
  send(*sink, 1, "a");
  send(*sink, 2, "b");
  send(*sink, 3, "c");
  EXPECT_FALSE(sink->close(&error));
  EXPECT_EQ(error, "the Lua script raised 1 error");
  EXPECT_NE(err_.str().find(path_ + ":4: boom"), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("for a record of kernel.trace(\"x:y\")"), std::string::npos);
  EXPECT_EQ(fallback_, "fallback pid=%d comm=%s\nfallback pid=%d comm=%s\n")
      << "the failing record and the one after";
}

} // namespace
} // namespace sonde::lua
