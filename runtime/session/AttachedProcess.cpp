#include "runtime/session/AttachedProcess.h"

#include "runtime/session/AgentHandshake.h"
#include "runtime/session/AgentInjection.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace sonde::session {

namespace {

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

// The scheduler state of thread `tid` of `pid` (R, S, D, T, t, Z, ...), '?'
// if it cannot be read.
char threadState(pid_t pid, const std::string &tid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/task/" + tid + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() ? text[paren + 2] : '?';
}

// Whether some thread of `pid` other than a zombie leader is alive.
bool hasLiveThread(pid_t pid) {
  bool live = false;
  if (DIR *dir = opendir(("/proc/" + std::to_string(pid) + "/task").c_str())) {
    while (dirent *e = readdir(dir))
      live = live || (e->d_name[0] != '.' && threadState(pid, e->d_name) != 'Z');
    closedir(dir);
  }
  return live;
}

// An abstract unix socket with a name no one can guess (128 random bits), so
// no other local user can bind it first and keep the agent from connecting;
// a name already taken is replaced by another. The agent checks that its peer
// is this sonde (SO_PEERCRED), sonde that its peer is the target.
int listenSocket(std::string *name, std::string *error) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    unsigned char random[16];
    if (getrandom(random, sizeof random, 0) != static_cast<ssize_t>(sizeof random)) {
      *error = std::string("getrandom: ") + std::strerror(errno);
      return -1;
    }
    *name = "sonde-attach-";
    for (unsigned char c : random)
      *name += "0123456789abcdef"[c >> 4], *name += "0123456789abcdef"[c & 15];
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
      break;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path + 1, name->data(), name->size());
    socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name->size());
    if (bind(fd, reinterpret_cast<sockaddr *>(&addr), len) == 0 && listen(fd, 8) == 0)
      return fd;
    int err = errno;
    close(fd);
    if (err != EADDRINUSE) {
      errno = err;
      break;
    }
  }
  *error = std::string("cannot open the agent's socket: ") + std::strerror(errno);
  return -1;
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
    // Anyone may read the name from /proc/net/unix and connect: only the
    // target's own connection counts.
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && peer.pid == pid)
      return fd;
    close(fd);
  }
  *error = "the agent did not connect back within " + std::to_string(kReportLimitMs / 1000) + " s";
  return -1;
}

// A sealed memfd holding the file at `path`, or -1.
int sealedCopy(const std::string &path, std::string *error) {
  int in = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  int out = memfd_create("sonde-module", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  bool ok = in >= 0 && out >= 0;
  char buf[65536];
  for (ssize_t n; ok && (n = read(in, buf, sizeof buf)) != 0;)
    ok = n > 0 && write(out, buf, static_cast<size_t>(n)) == n;
  ok = ok && fcntl(out, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) == 0;
  if (!ok)
    *error = "cannot copy the module " + path + " for the agent: " + std::strerror(errno);
  if (in >= 0)
    close(in);
  if (!ok && out >= 0)
    close(out), out = -1;
  return out;
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
  if (threadState(spec.pid, std::to_string(spec.pid)) == 'Z' && !hasLiveThread(spec.pid))
    return fail("it has exited (a zombie its parent has not reaped)");
  std::string exe = "/proc/" + std::to_string(spec.pid) + "/exe";
  if (std::string why = whyNotX86_64(exe); !why.empty())
    return fail(why);

  std::string why, name;
  int listenFd = listenSocket(&name, &why);
  if (listenFd < 0)
    return fail(why);
  AttachedProcess p;
  p.pid_ = spec.pid;
  InjectionRequest request{spec.pid, spec.agentPath, name, getpid()};
  bool ok = injectAgent(request, &p.pause_, &why);
  if (ok)
    ok = (p.socket_ = acceptAgent(listenFd, spec.pid, &why)) >= 0;
  close(listenFd);
  AgentContract contract = spec.contract;
  if (ok)
    ok = (contract.moduleFd = sealedCopy(spec.contract.module, &why)) >= 0;
  if (ok)
    ok = sendAgentContract(p.socket_, contract, &why) && awaitReady(p.socket_, &why);
  if (contract.moduleFd >= 0)
    close(contract.moduleFd);
  if (!ok)
    return fail(why);
  fcntl(p.socket_, F_SETFL, O_NONBLOCK);
  return p;
}

AttachedProcess::AttachedProcess(AttachedProcess &&o) noexcept
    : pid_(o.pid_), socket_(o.socket_), pause_(o.pause_), reports_(std::move(o.reports_)) {
  o.socket_ = -1;
}

AttachedProcess::~AttachedProcess() { closeFd(socket_); }

void AttachedProcess::detachAgent() { closeFd(socket_); }

void AttachedProcess::takeAgentReports(int errFd) {
  // After "ready" the agent sends nothing: whatever comes is the process's,
  // taken in bounded pieces.
  if (socket_ >= 0 && !reports_.readFrom(socket_))
    closeFd(socket_);
  while (std::optional<std::string> line = reports_.next()) {
    std::string msg = "sonde: agent in pid " + std::to_string(pid_) + ": " + *line + "\n";
    (void)!write(errFd, msg.data(), msg.size());
  }
}

bool AttachedProcess::running() const { return kill(pid_, 0) == 0 || errno != ESRCH; }

} // namespace sonde::session
