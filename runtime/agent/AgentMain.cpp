// libsonde-agent.so's start: read the SONDE_AGENT_* contract (docs in README.md),
// load the module, attach the segment and the marker sites before the target's
// main, and detach when sonde closes the control pipe or the process ends. In a
// running process (-x), sonde calls sonde_agent_attach() instead, and the
// contract comes over a socket; such a process may be attached again later.
#include "runtime/agent/AgentState.h"
#include "runtime/agent/ExecFollow.h"
#include "runtime/agent/HandlerDispatch.h"
#include "runtime/agent/SignalActions.h"
#include "runtime/agent/SiteFinder.h"
#include "runtime/session/AgentHandshake.h"
#include "runtime/session/LoadedModule.h"
#include "runtime/session/OutputSink.h"
#include "runtime/session/RecordWriter.h"
#include "runtime/session/Runtime.h"
#include "runtime/symbols/LoadedObjects.h"
#include "runtime/transport/NetlinkChannel.h"
#include "runtime/transport/RelayChannel.h"
#include "runtime/values/Segment.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <poll.h>
#include <pthread.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <utility>

namespace sonde::agent {

namespace {

// How long output may wait in a quiet thread's buffers.
constexpr int kQuietFlushMs = 100;

struct Contract {
  std::string module;
  int segmentFd = -1, controlFd = -1, statusFd = -1, outputFd = -1, errorFd = -1;
  int relayFd = -1;   // --transport=relay: the channel's memfd
  int netlinkFd = -1; // --transport=netlink: the channel's sending socket
  int moduleFd = -1;  // -c: the module, loaded through /proc/self/fd
  std::string netlinkConfig;
  int64_t consumerPid = 0;
  int64_t targetPid = 0; // -c: the command's pid, target() in every process of it
};

// Never destroyed: stubs, traps and late threads may reach it until the end.
struct Agent {
  std::optional<session::LoadedModule> module;
  std::optional<values::Segment> segment;
  std::unique_ptr<session::OutputSink> sink;
  std::optional<transport::RelayChannel> relay;
  std::optional<transport::NetlinkChannel> netlink;
  std::optional<session::TraceSchema> schema;
  session::RecordTransport records;
  session::Runtime rt;
  std::unique_ptr<SiteSet> sites;
  int controlFd = -1;
  pid_t pid = 0;
  // The descriptors sonde passed, closed when this session is released.
  std::vector<int> ownedFds;
};
Agent *agent = nullptr;
// Loaded by sonde -x (sonde_agent_attach), not preloaded: no libc call is
// interposed, so loaded objects are polled and thread.begin/end do not fire.
bool injected = false;
std::atomic<bool> attached{false};
// A session is starting or attached in this process (one at a time).
std::atomic<bool> starting{false};
// Guards the site set and detach; recursive because a dlopen can happen inside
// an attach (a library's constructor).
std::recursive_mutex agentLock;

void writeAll(int fd, const std::string &text) {
  const char *p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

// "N", or "N:DEV:INO" as an exec passes them on (ExecFollow): then N must
// still be that file, not another one the program opened under that number.
bool readFd(const char *name, int *out, std::string *error) {
  const char *v = getenv(name);
  char *end = nullptr;
  long n = v ? std::strtol(v, &end, 10) : -1;
  bool same = n >= 0 && fcntl(static_cast<int>(n), F_GETFD) >= 0;
  if (same && end && *end == ':') {
    unsigned long long dev = std::strtoull(end + 1, &end, 10);
    unsigned long long ino = *end == ':' ? std::strtoull(end + 1, &end, 10) : 0;
    struct stat st;
    same = fstat(static_cast<int>(n), &st) == 0 && st.st_dev == dev && st.st_ino == ino;
  }
  if (!v || *end || !same) {
    *error = std::string(name) + " is not an open file descriptor";
    return false;
  }
  *out = static_cast<int>(n);
  fcntl(*out, F_SETFD, FD_CLOEXEC);
  return true;
}

bool readContract(Contract *c, std::string *error) {
  c->module = getenv("SONDE_AGENT_MODULE");
  if (const char *pid = getenv("SONDE_AGENT_CONSUMER_PID"))
    c->consumerPid = std::strtoll(pid, nullptr, 10);
  if (const char *pid = getenv("SONDE_AGENT_TARGET_PID"))
    c->targetPid = std::strtoll(pid, nullptr, 10);
  if (getenv("SONDE_AGENT_RELAY_FD") && !readFd("SONDE_AGENT_RELAY_FD", &c->relayFd, error))
    return false;
  if (getenv("SONDE_AGENT_MODULE_FD")) {
    if (!readFd("SONDE_AGENT_MODULE_FD", &c->moduleFd, error))
      return false;
    c->module = "/proc/self/fd/" + std::to_string(c->moduleFd);
  }
  if (getenv("SONDE_AGENT_NETLINK_FD")) {
    if (!readFd("SONDE_AGENT_NETLINK_FD", &c->netlinkFd, error))
      return false;
    const char *config = getenv("SONDE_AGENT_NETLINK_CONFIG");
    c->netlinkConfig = config ? config : "";
  }
  return readFd("SONDE_AGENT_SEGMENT_FD", &c->segmentFd, error) &&
         readFd("SONDE_AGENT_CONTROL_FD", &c->controlFd, error) &&
         readFd("SONDE_AGENT_OUTPUT_FD", &c->outputFd, error) &&
         readFd("SONDE_AGENT_ERROR_FD", &c->errorFd, error);
}

bool sameFile(const std::string &a, const char *b) {
  struct stat sa, sb;
  return stat(a.c_str(), &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// The program never sees the contract: it and our LD_PRELOAD entry go before
// main can copy the environment (execs get them back from ExecFollow).
void forgetContract() {
  for (const char *name : {"SONDE_AGENT_MODULE", "SONDE_AGENT_SEGMENT_FD", "SONDE_AGENT_CONTROL_FD",
                           "SONDE_AGENT_STATUS_FD", "SONDE_AGENT_OUTPUT_FD", "SONDE_AGENT_ERROR_FD",
                           "SONDE_AGENT_CONSUMER_PID", "SONDE_AGENT_RELAY_FD",
                           "SONDE_AGENT_NETLINK_FD", "SONDE_AGENT_NETLINK_CONFIG",
                           "SONDE_AGENT_PROBED", "SONDE_AGENT_MODULE_FD", "SONDE_AGENT_TARGET_PID"})
    unsetenv(name);
  const char *preload = getenv("LD_PRELOAD");
  Dl_info self{};
  if (!preload || !dladdr(reinterpret_cast<void *>(&forgetContract), &self) || !self.dli_fname)
    return;
  std::string kept, entry;
  for (const char *p = preload;; ++p) {
    if (*p && *p != ':' && *p != ' ' && *p != '\t') {
      entry += *p;
      continue;
    }
    if (!entry.empty() && entry != self.dli_fname && !sameFile(entry, self.dli_fname))
      kept += (kept.empty() ? "" : ":") + entry;
    entry.clear();
    if (!*p)
      break;
  }
  if (kept.empty())
    unsetenv("LD_PRELOAD");
  else
    setenv("LD_PRELOAD", kept.c_str(), 1);
}

void warn(const std::string &text) {
  writeAll(agent->rt.errorFd, "WARNING: sonde agent: " + text + "\n");
}

// Ends the session in this process: markers restored, output written. With
// `release` (the process lives on after the session: sonde detached or died)
// the session's module, segment, channel and descriptors go too, once no
// handler runs any more; the site records stay, as stubs may still reach them.
void detach(bool release) {
  std::lock_guard<std::recursive_mutex> g(agentLock);
  if (!attached.exchange(false))
    return;
  bool quiet = stopEntries();
  agent->sites->detachAll();
  flushAllThreads();
  sonde_session_agent_leave(agent->segment->abi());
  if (!release || !quiet)
    return;
  retireThreads();
  stopFollowingExec(); // the descriptors an exec would pass on close below
  (void)agent->sites.release();
  std::vector<int> fds = std::move(agent->ownedFds);
  fds.push_back(agent->controlFd);
  delete agent;
  agent = nullptr;
  for (int fd : fds)
    close(fd);
  starting.store(false);
}

// -x: libraries the target dlopen()s or dlclose()s while attached, noticed
// within kQuietFlushMs (the preloaded agent interposes dlopen instead).
void followLoadedObjects(uint64_t *seen) {
  uint64_t now = symbols::loadedObjectsGeneration();
  if (now == *seen)
    return;
  *seen = now;
  std::lock_guard<std::recursive_mutex> g(agentLock);
  if (!attached.load())
    return;
  agent->sites->forgetUnloaded();
  agent->sites->attachLoaded();
}

void *controlLoop(void *) {
  char buf[64];
  uint64_t objects = symbols::loadedObjectsGeneration();
  for (;;) {
    pollfd control{agent->controlFd, POLLIN, 0};
    int ready = poll(&control, 1, kQuietFlushMs);
    if (ready == 0) {
      flushQuietThreads();
      if (injected) {
        followLoadedObjects(&objects);
        prepareSpareStates();
      }
      continue;
    }
    ssize_t n = ready > 0 ? read(agent->controlFd, buf, sizeof buf) : -1;
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break; // EOF: sonde closed the pipe or died
  }
  detach(true);
  return nullptr;
}

void startControlThread() {
  if (createAgentThread(controlLoop) != 0)
    warn("cannot start the control thread; detaching only at exit");
}

void onExit() { processExiting(); }

void forkPrepare() {
  agentLock.lock();
  lockPatching();
  agent::forkPrepare();
}

void forkParent() {
  agent::forkParent();
  unlockPatching();
  agentLock.unlock();
}

void forkChild() {
  sonde_values_forked(); // before process.begin below touches any stats slot
  // The locks record the parent thread as owner: start them afresh.
  new (&agentLock) std::recursive_mutex();
  resetPatchingLockInChild();
  agent::forkChild();
  if (!attached.load())
    return;
  agent->pid = getpid();
  sonde_session_agent_enter(agent->segment->abi());
  startControlThread();
  runLifecycle(SONDE_PROBE_PROCESS_BEGIN);
}

// Loads and attaches; returns the error text on failure (the target then runs
// untraced).
std::string start(const Contract &c) {
  std::string error;
  auto *a = new Agent;
  a->ownedFds = {c.segmentFd, c.outputFd, c.errorFd, c.relayFd, c.netlinkFd, c.moduleFd};
  std::erase(a->ownedFds, -1);
  // A failed start leaves nothing behind in the process, which runs on.
  struct Undo {
    Agent *&a;
    ~Undo() {
      if (!a)
        return;
      for (int fd : a->ownedFds)
        close(fd);
      delete a;
    }
  } undo{a};
  a->module = session::LoadedModule::open(c.module, &error);
  if (!a->module)
    return error;
  a->segment = values::Segment::attach(c.segmentFd, a->module->desc().layout_fingerprint, &error);
  if (!a->segment)
    return error;
  if (!initPatching(&error))
    return error;
  a->sink = std::make_unique<session::OutputSink>(c.outputFd);
  a->rt.module = &*a->module;
  a->rt.segment = &*a->segment;
  a->rt.output = a->sink.get();
  a->rt.errorFd = c.errorFd;
  a->rt.target = c.targetPid > 0 ? c.targetPid : getpid();
  a->rt.consumerPid = c.consumerPid;
  a->controlFd = c.controlFd;
  a->pid = getpid();
  if (c.relayFd >= 0 || c.netlinkFd >= 0) {
    if (c.relayFd >= 0) {
      a->relay = transport::RelayChannel::attach(c.relayFd, &error);
      if (!a->relay)
        return error;
      a->records.relay = &*a->relay;
    } else {
      std::optional<transport::NetlinkConfig> config =
          transport::NetlinkConfig::decode(c.netlinkConfig, &error);
      if (config)
        a->netlink = transport::NetlinkChannel::attach(c.netlinkFd, *config, &error);
      if (!a->netlink)
        return "SONDE_AGENT_NETLINK_FD: " + error;
      a->records.netlink = &*a->netlink;
    }
    a->schema.emplace(session::TraceSchema::fromModule(*a->module));
    a->records.schema = &*a->schema;
    // sonde converts the readings with its own calibration of the same source.
    a->records.clock.source =
        sonde_trace_clock_tsc_invariant() ? SONDE_CLOCK_TSC : SONDE_CLOCK_MONOTONIC;
    a->rt.records = &a->records;
  }
  // Output this process cannot write, and netlink records it drops, are
  // counted where sonde reads them at the end of the run.
  session::countOutputLossesInSegment(a->rt);
  agent = a;
  a = nullptr; // the session owns it now
  Agent *self = agent;
  // The module's site table is writable (load_bias); the agent owns it now.
  auto &desc = const_cast<sonde_module_desc &>(self->module->desc());
  self->sites = std::make_unique<SiteSet>(desc, fireSite, warn);
  initDispatch(self->rt);
  sonde_session_agent_enter(self->segment->abi());
  // In-place user memory reads need the program's signal calls to reach us:
  // a preloaded agent's do, an injected one's do not (SignalActions.h).
  if (!injected)
    installFaultHandling();
  attached.store(true);
  static std::once_flag hooks;
  std::call_once(hooks, [] {
    atexit(onExit);
    pthread_atfork(forkPrepare, forkParent, forkChild);
  });
  runLifecycle(SONDE_PROBE_PROCESS_BEGIN);
  // The preloaded agent starts on the main thread; an injected one on its own.
  if (!injected)
    runLifecycle(SONDE_PROBE_THREAD_BEGIN);
  {
    std::lock_guard<std::recursive_mutex> g(agentLock);
    self->sites->attachLoaded();
  }
  if (injected)
    prepareSpareStates();
  else
    startControlThread();
  return {};
}

// Where sonde_agent_attach() was told to connect.
struct AttachRequest {
  std::string socketName;
  pid_t consumer = 0;
};

// A connection to sonde's socket, or -1. The name is sonde's secret, but the
// peer is checked too: only the sonde that asked may hand over a contract.
int connectToSonde(const AttachRequest &request) {
  int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (request.socketName.size() >= sizeof addr.sun_path - 1)
    return -1;
  std::memcpy(addr.sun_path + 1, request.socketName.data(), request.socketName.size());
  socklen_t len =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + request.socketName.size());
  ucred peer{};
  socklen_t peerLen = sizeof peer;
  if (sock >= 0 && connect(sock, reinterpret_cast<sockaddr *>(&addr), len) == 0 &&
      getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &peer, &peerLen) == 0 &&
      (request.consumer == 0 || peer.pid == request.consumer))
    return sock;
  if (sock >= 0)
    close(sock);
  return -1;
}

// -x: the thread sonde_agent_attach() starts. Connects to sonde's socket,
// takes the contract, starts, reports on the socket, then serves as the
// control thread (the socket's EOF detaches).
void *attachThread(void *arg) {
  std::unique_ptr<AttachRequest> request(static_cast<AttachRequest *>(arg));
  int sock = connectToSonde(*request);
  if (sock < 0) {
    starting.store(false);
    return nullptr; // sonde sees no connection and says so
  }
  std::string error;
  std::optional<session::AgentContract> received = session::receiveAgentContract(sock, &error);
  Contract c;
  if (received) {
    c.module = received->module;
    c.consumerPid = received->consumerPid;
    c.segmentFd = received->segmentFd;
    c.outputFd = received->outputFd;
    c.errorFd = received->errorFd;
    c.relayFd = received->relayFd;
    c.netlinkFd = received->netlinkFd;
    c.netlinkConfig = received->netlinkConfig;
    c.controlFd = sock;
    // A sealed copy of the module sonde built: loaded through its descriptor,
    // whose mapping outlives it.
    if (received->moduleFd >= 0)
      c.module = "/proc/self/fd/" + std::to_string(received->moduleFd);
    error = start(c);
    if (received->moduleFd >= 0)
      close(received->moduleFd);
  }
  // sonde may have given up and closed its end: no SIGPIPE for the process.
  std::string report = error.empty() ? "ready\n" : "error: " + error + "\n";
  (void)!send(sock, report.data(), report.size(), MSG_NOSIGNAL);
  if (!error.empty()) {
    close(sock);
    starting.store(false);
    return nullptr;
  }
  return controlLoop(nullptr);
}

// A -c process whose program has no probed file yet: the agent only passes the
// contract on to what it execs, and starts if a probed library is loaded.
// Never destroyed: a dlopen at exit may still look at it.
Contract *dormant = nullptr;
int dormantStatusFd = -1;

// Starts the session here and reports on the status pipe; a failed start ends
// exec following (its descriptors are closed).
void startAndReport(const Contract &c, int statusFd) {
  std::string error = start(c);
  writeAll(statusFd, error.empty() ? "ready\n" : "error: " + error + "\n");
  if (!error.empty())
    stopFollowingExec();
}

__attribute__((constructor)) void agentMain() {
  if (!getenv("SONDE_AGENT_MODULE"))
    return;             // preloaded outside sonde (or loaded by sonde -x): stay inert
  starting.store(true); // the -c session is this process's only one
  int statusFd = -1;
  std::string error;
  Contract c;
  bool valid = readFd("SONDE_AGENT_STATUS_FD", &statusFd, &error) && readContract(&c, &error);
  Dl_info self{};
  if (valid && dladdr(reinterpret_cast<void *>(&agentMain), &self) && self.dli_fname)
    captureExecContract(self.dli_fname);
  forgetContract();
  if (statusFd < 0)
    return;
  if (!valid) {
    writeAll(statusFd, "error: " + error + "\n");
    close(statusFd);
    return;
  }
  pollfd control{c.controlFd, POLLIN, 0};
  if (poll(&control, 1, 0) != 0) {
    // sonde has detached (or died) already: nothing of the session stays here.
    stopFollowingExec();
    for (int fd :
         {c.segmentFd, c.outputFd, c.errorFd, c.relayFd, c.netlinkFd, c.moduleFd, c.controlFd})
      if (fd >= 0)
        close(fd);
    return;
  }
  std::lock_guard<std::recursive_mutex> g(agentLock);
  if (!followsExec()) {
    // Nothing to pass on (as for an injected agent): attach here, as before.
    startAndReport(c, statusFd);
    close(statusFd);
  } else if (probedFilesLoaded()) {
    startAndReport(c, statusFd);
  } else {
    dormant = new Contract(c);
    dormantStatusFd = statusFd;
    writeAll(statusFd, "following\n");
  }
}

} // namespace

// Called by sonde -x on a thread it borrowed: returns at once (0), the work
// goes on in a thread of ours, which connects to `socketName` and accepts only
// `consumer` as its peer. 1: a session is attached already; 2: no thread.
extern "C" __attribute__((visibility("default"))) int sonde_agent_attach(const char *socketName,
                                                                         pid_t consumer) {
  bool expected = false;
  // Claimed here, before the thread runs, so two sondes cannot both attach.
  if (!starting.compare_exchange_strong(expected, true) || attached.load()) {
    if (!expected)
      starting.store(false);
    return 1;
  }
  injected = true;
  auto *request = new (std::nothrow) AttachRequest{socketName, consumer};
  if (!request || createAgentThread(attachThread, request) != 0) {
    delete request;
    starting.store(false);
    return 2;
  }
  return 0;
}

bool tracingThisProcess() { return attached.load() && agent && getpid() == agent->pid; }

void processExiting() {
  if (!tracingThisProcess())
    return;
  threadFinishing();
  runLifecycle(SONDE_PROBE_PROCESS_END);
  detach(false);
}

bool prepareExec() {
  if (!tracingThisProcess())
    return false;
  std::lock_guard<std::recursive_mutex> g(agentLock);
  stopEntries();
  flushAllThreads();
  sonde_session_agent_leave(agent->segment->abi());
  return true;
}

void execFailed() {
  sonde_session_agent_enter(agent->segment->abi());
  resumeEntries();
}

void objectsLoaded() {
  if (dormant) {
    // A probed library arrived in a program that had none: attach now.
    std::lock_guard<std::recursive_mutex> g(agentLock);
    if (!dormant)
      return;
    pollfd control{dormant->controlFd, POLLIN, 0};
    if (poll(&control, 1, 0) == 0 && probedFilesLoaded()) {
      std::unique_ptr<Contract> c(std::exchange(dormant, nullptr));
      startAndReport(*c, dormantStatusFd);
    }
    return;
  }
  if (!tracingThisProcess())
    return;
  std::lock_guard<std::recursive_mutex> g(agentLock);
  if (attached.load()) {
    agent->sites->attachLoaded();
    probedFilesLoaded(); // reports a probed library loaded now
  }
}

void objectsUnloaded() {
  if (!tracingThisProcess())
    return;
  std::lock_guard<std::recursive_mutex> g(agentLock);
  if (attached.load())
    agent->sites->forgetUnloaded();
}

} // namespace sonde::agent
