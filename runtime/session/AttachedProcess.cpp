#include "runtime/session/AttachedProcess.h"

#include "runtime/session/AgentHandshake.h"
#include "runtime/session/StoppedThread.h"
#include "runtime/symbols/ElfSymbolTable.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace sonde::session {

namespace {

// dlopen of the agent and its libraries; a loader lock held by another thread
// of the target delays it.
constexpr std::chrono::milliseconds kCallLimit{5000};
// From the injected call to the agent's report: the connection, the module's
// load and the marker patching.
constexpr int kReportLimitMs = 10000;

void closeFd(int &fd) {
  if (fd >= 0)
    close(fd);
  fd = -1;
}

} // namespace

std::string whyNotX86_64(const std::string &path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && (errno == EACCES || errno == EPERM))
    return "permission denied (its executable cannot be read: tracing another user's process "
           "needs root or CAP_SYS_PTRACE)";
  if (fd < 0)
    return std::string("cannot read its executable: ") + std::strerror(errno);
  Elf64_Ehdr eh{};
  ssize_t n = pread(fd, &eh, sizeof eh, 0);
  close(fd);
  if (n < EI_NIDENT || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    return "its executable is not an ELF file";
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
    return "it is not an x86-64 program (sonde's agent runs only in x86-64 processes)";
  return "";
}

namespace {

// Runtime minus link-time addresses of the object whose offset-0 page is
// mapped at `mapStart`.
std::optional<uint64_t> loadBias(const std::string &file, uint64_t mapStart, std::string *error) {
  int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = file + ": " + std::strerror(errno);
    return std::nullopt;
  }
  Elf64_Ehdr eh{};
  bool ok = pread(fd, &eh, sizeof eh, 0) == sizeof eh && eh.e_phentsize == sizeof(Elf64_Phdr);
  std::optional<uint64_t> bias;
  for (unsigned i = 0; ok && i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (pread(fd, &ph, sizeof ph, static_cast<off_t>(eh.e_phoff + i * sizeof ph)) != sizeof ph)
      break;
    if (ph.p_type == PT_LOAD && ph.p_offset == 0) {
      bias = mapStart - (ph.p_vaddr & ~uint64_t{0xfff});
      break;
    }
  }
  close(fd);
  if (!bias)
    *error = file + ": no loadable segment at offset 0";
  return bias;
}

struct CLibrary {
  std::string file; // a path sonde can read it at
  uint64_t bias = 0;
};

// The C library mapped in `pid` (its dlopen and dlsym load the agent).
std::optional<CLibrary> findCLibrary(pid_t pid, std::string *error) {
  std::string proc = "/proc/" + std::to_string(pid);
  std::ifstream maps(proc + "/maps");
  if (!maps) {
    *error = "cannot read " + proc + "/maps: " + std::strerror(errno);
    return std::nullopt;
  }
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    in >> range >> perms >> offset >> dev >> inode;
    std::getline(in >> std::ws, path);
    std::string base = path.substr(path.rfind('/') + 1);
    bool isLibc = base.rfind("libc.so", 0) == 0 ||
                  (base.rfind("libc-", 0) == 0 && base.find(".so") != std::string::npos);
    if (!isLibc || std::strtoull(offset.c_str(), nullptr, 16) != 0)
      continue;
    uint64_t start = std::strtoull(range.c_str(), nullptr, 16);
    // map_files reaches the mapped file even if it was replaced or lives in
    // another mount namespace; it needs root, so the path is the fallback.
    std::string file = proc + "/map_files/" + range;
    if (access(file.c_str(), R_OK) != 0)
      file = proc + "/root" + path;
    std::optional<uint64_t> bias = loadBias(file, start, error);
    if (!bias)
      return std::nullopt;
    return CLibrary{file, *bias};
  }
  *error = "it has no C library mapped (statically linked?), so it cannot load the agent";
  return std::nullopt;
}

// The scheduler state of thread `tid` of `pid` (R, S, D, T, t, Z, ...), '?'
// if it cannot be read.
char threadState(pid_t pid, const std::string &tid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/task/" + tid + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() ? text[paren + 2] : '?';
}

// The thread to stop: the main one, unless it has ended (a zombie leader),
// then any other live one; nullopt when none is left (the process has exited).
std::optional<pid_t> threadToStop(pid_t pid) {
  if (threadState(pid, std::to_string(pid)) != 'Z')
    return pid;
  std::optional<pid_t> live;
  if (DIR *dir = opendir(("/proc/" + std::to_string(pid) + "/task").c_str())) {
    while (dirent *e = readdir(dir))
      if (e->d_name[0] != '.' && threadState(pid, e->d_name) != 'Z') {
        live = static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10));
        break;
      }
    closedir(dir);
  }
  return live;
}

// An abstract unix socket only this session knows the name of.
int listenSocket(const std::string &name, std::string *error) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr *>(&addr), len) != 0 || listen(fd, 1) != 0) {
    *error = std::string("cannot open the agent's socket: ") + std::strerror(errno);
    if (fd >= 0)
      close(fd);
    return -1;
  }
  return fd;
}

// Accepts the agent's connection, from `pid` only.
int acceptAgent(int listenFd, pid_t pid, std::string *error) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kReportLimitMs);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{listenFd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0)
      continue;
    int fd = accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0)
      continue;
    ucred peer{};
    socklen_t len = sizeof peer;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && peer.pid == pid)
      return fd;
    close(fd);
  }
  *error = "the agent did not connect back within " + std::to_string(kReportLimitMs / 1000) + " s";
  return -1;
}

// The agent's first line: "ready" or "error: ...".
bool awaitReady(int fd, std::string *error) {
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kReportLimitMs);
  while (line.find('\n') == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) == 0) {
      *error = "the agent did not report within " + std::to_string(kReportLimitMs / 1000) + " s";
      return false;
    }
    char buf[512];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      *error = "the agent closed its connection before reporting";
      return false;
    }
    line.append(buf, static_cast<size_t>(n));
  }
  line.resize(line.find('\n'));
  if (line == "ready")
    return true;
  *error = line.rfind("error: ", 0) == 0 ? line.substr(7) : line;
  return false;
}

// dlopen(agent), dlsym(sonde_agent_attach), then the call, on thread `tid`, stopped.
// RTLD_GLOBAL: the handler module resolves the runtime (sonde_*) from the agent.
bool injectAgent(pid_t tid, const CLibrary &libc, const std::string &agentPath,
                 const std::string &socketName, std::chrono::microseconds *pause,
                 std::string *error) {
  std::unique_ptr<symbols::ElfSymbolTable> symbols = symbols::ElfSymbolTable::load(libc.file);
  const symbols::ElfSymbol *dlopenSym = symbols->named("dlopen");
  const symbols::ElfSymbol *dlsymSym = symbols->named("dlsym");
  const symbols::ElfSymbol *dlerrorSym = symbols->named("dlerror");
  if (!dlopenSym || !dlsymSym || !dlerrorSym) {
    *error = "its C library has no dlopen/dlsym (glibc before 2.34?), so it cannot load the agent";
    return false;
  }
  std::optional<StoppedThread> thread = StoppedThread::seize(tid, error);
  if (!thread)
    return false;
  auto text = [&](const std::string &s) { return thread->push(s + std::string(1, '\0'), error); };
  std::optional<uint64_t> pathAt = text(agentPath), nameAt = text(socketName),
                          entryAt = text("sonde_agent_attach");
  bool ok = pathAt && nameAt && entryAt;
  std::optional<uint64_t> handle, entry, rc;
  if (ok)
    ok = (handle = thread->call(dlopenSym->address + libc.bias, {*pathAt, RTLD_NOW | RTLD_GLOBAL},
                                kCallLimit, error))
             .has_value();
  if (ok && *handle == 0) {
    std::optional<uint64_t> why =
        thread->call(dlerrorSym->address + libc.bias, {}, kCallLimit, error);
    *error = "it cannot load the agent: " +
             (why && *why ? thread->readString(*why, 512) : std::string("dlopen failed"));
    ok = false;
  }
  if (ok)
    ok = (entry =
              thread->call(dlsymSym->address + libc.bias, {*handle, *entryAt}, kCallLimit, error))
             .has_value();
  if (ok && *entry == 0) {
    *error = "the library loaded as the agent has no sonde_agent_attach: " + agentPath;
    ok = false;
  }
  if (ok)
    ok = (rc = thread->call(*entry, {*nameAt}, kCallLimit, error)).has_value();
  thread->release();
  *pause = thread->heldFor();
  if (ok && static_cast<int>(*rc) != 0) {
    *error = static_cast<int>(*rc) == 1
                 ? "it already has a sonde agent attached (another sonde session, or its -c)"
                 : "the agent could not start its thread in it";
    ok = false;
  }
  return ok;
}

} // namespace

std::optional<AttachedProcess> AttachedProcess::attach(const AttachSpec &spec, std::string *error) {
  std::string what = "-x " + std::to_string(spec.pid) + ": ";
  auto fail = [&](const std::string &why) -> std::optional<AttachedProcess> {
    *error = what + why;
    return std::nullopt;
  };
  if (kill(spec.pid, 0) != 0 && errno == ESRCH)
    return fail("no such process");
  if (spec.pid == getpid())
    return fail("sonde cannot attach to itself");
  // A stopped process cannot run the agent's thread; a zombie runs nothing.
  if (threadState(spec.pid, std::to_string(spec.pid)) == 'T')
    return fail("it is stopped (by SIGSTOP or a terminal): continue it (SIGCONT) first");
  std::optional<pid_t> tid = threadToStop(spec.pid);
  if (!tid)
    return fail("it has exited (a zombie its parent has not reaped)");
  std::string exe = "/proc/" + std::to_string(spec.pid) + "/exe";
  if (std::string why = whyNotX86_64(exe); !why.empty())
    return fail(why);
  std::string why;
  std::optional<CLibrary> libc = findCLibrary(spec.pid, &why);
  if (!libc)
    return fail(why);

  static std::atomic<unsigned> serial{0};
  std::string name = "sonde-attach-" + std::to_string(getpid()) + "-" + std::to_string(spec.pid) +
                     "-" + std::to_string(serial++);
  int listenFd = listenSocket(name, &why);
  if (listenFd < 0)
    return fail(why);
  AttachedProcess p;
  p.pid_ = spec.pid;
  bool ok = injectAgent(*tid, *libc, spec.agentPath, name, &p.pause_, &why);
  if (ok)
    ok = (p.socket_ = acceptAgent(listenFd, spec.pid, &why)) >= 0;
  close(listenFd);
  if (ok)
    ok = sendAgentContract(p.socket_, spec.contract, &why) && awaitReady(p.socket_, &why);
  if (!ok)
    return fail(why);
  fcntl(p.socket_, F_SETFL, O_NONBLOCK);
  return p;
}

AttachedProcess::AttachedProcess(AttachedProcess &&o) noexcept
    : pid_(o.pid_), socket_(o.socket_), pause_(o.pause_) {
  o.socket_ = -1;
}

AttachedProcess::~AttachedProcess() { closeFd(socket_); }

void AttachedProcess::detachAgent() { closeFd(socket_); }

void AttachedProcess::takeAgentReports(int errFd) {
  char buf[512];
  while (socket_ >= 0) {
    ssize_t n = read(socket_, buf, sizeof buf);
    if (n > 0) {
      std::string msg = "sonde: agent in pid " + std::to_string(pid_) + ": " +
                        std::string(buf, static_cast<size_t>(n));
      (void)!write(errFd, msg.data(), msg.size());
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR))
      closeFd(socket_);
    break;
  }
}

bool AttachedProcess::running() const { return kill(pid_, 0) == 0 || errno != ESRCH; }

} // namespace sonde::session
