#include "runtime/agent/ExecFollow.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <string>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace sonde::agent {

namespace {

// The environment variables of the contract (runtime/agent/README.md).
constexpr const char *kContractNames[] = {
    "SONDE_AGENT_MODULE",       "SONDE_AGENT_SEGMENT_FD",     "SONDE_AGENT_RELAY_FD",
    "SONDE_AGENT_NETLINK_FD",   "SONDE_AGENT_NETLINK_CONFIG", "SONDE_AGENT_CONTROL_FD",
    "SONDE_AGENT_STATUS_FD",    "SONDE_AGENT_OUTPUT_FD",      "SONDE_AGENT_ERROR_FD",
    "SONDE_AGENT_CONSUMER_PID", "SONDE_AGENT_PROBED",         "SONDE_AGENT_MODULE_FD",
    "SONDE_AGENT_TARGET_PID"};
constexpr char kContractPrefix[] = "SONDE_AGENT_";
constexpr char kPreload[] = "LD_PRELOAD=";
// Larger environments are not followed: the copy lives on the exec caller's stack.
constexpr size_t kMaxEnvironmentBytes = 1 << 20;

struct HeldFd {
  int fd;
  dev_t dev;
  ino_t ino;
};

// Built once by the constructor, read-only afterwards (vfork children read it).
struct Follow {
  std::vector<std::string> entries; // NAME=VALUE, descriptors as N:DEV:INO
  std::string agentPath;
  std::vector<HeldFd> fds;
  int statusFd = -1, controlFd = -1;
  bool anyProcess = false;
  std::vector<std::pair<dev_t, ino_t>> probed;
  std::vector<bool> reported; // per probed file: "probed" written (this process)
};
Follow *follow = nullptr; // never freed: forks and late execs read it
std::atomic<bool> enabled{false};

bool sameFd(const HeldFd &h) {
  struct stat st;
  return fstat(h.fd, &st) == 0 && st.st_dev == h.dev && st.st_ino == h.ino;
}

// A line for the status pipe, built without allocation (vfork children).
class Line {
public:
  Line &operator<<(const char *text) {
    size_t n = strnlen(text, sizeof buf_ - 1 - size_);
    memcpy(buf_ + size_, text, n);
    size_ += n;
    return *this;
  }
  Line &operator<<(unsigned long long value) {
    char digits[24];
    size_t n = 0;
    do
      digits[n++] = static_cast<char>('0' + value % 10);
    while ((value /= 10) != 0);
    while (n > 0 && size_ < sizeof buf_ - 1)
      buf_[size_++] = digits[--n];
    return *this;
  }
  // One write: a pipe takes up to PIPE_BUF bytes whole, whoever else writes.
  void send(int fd) {
    buf_[size_++] = '\n';
    while (write(fd, buf_, size_) < 0 && errno == EINTR) {
    }
  }

private:
  char buf_[1024];
  size_t size_ = 0;
};

// The status pipe, when it is still the one sonde gave.
int statusFd() {
  for (const HeldFd &h : follow->fds)
    if (h.fd == follow->statusFd)
      return sameFd(h) ? h.fd : -1;
  return -1;
}

// sonde closed the control pipe (detached or gone): nothing more to follow.
bool sondeGone() {
  pollfd p{follow->controlFd, POLLIN, 0};
  return poll(&p, 1, 0) != 0;
}

// $PATH's first executable `file`, as execvp would run it, in `buf`; or null.
const char *searchPath(const char *file, char *buf, size_t size) {
  if (strchr(file, '/'))
    return file;
  const char *dirs = getenv("PATH");
  if (!dirs)
    dirs = "/bin:/usr/bin";
  size_t fileLen = strlen(file);
  for (const char *p = dirs;;) {
    const char *end = strchrnul(p, ':');
    size_t dirLen = static_cast<size_t>(end - p);
    if (dirLen + fileLen + 2 <= size) {
      memcpy(buf, dirLen ? p : ".", dirLen ? dirLen : 1);
      size_t at = dirLen ? dirLen : 1;
      buf[at] = '/';
      memcpy(buf + at + 1, file, fileLen + 1);
      struct stat st;
      if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
        return buf;
    }
    if (!*end)
      return nullptr;
    p = end + 1;
  }
}

// Why the loader would not preload the agent into the program open at `fd`
// (null: it would, or it is not ELF, or it is a script, whose interpreter is
// what runs).
const char *whyNotPreloaded(int fd) {
  struct stat st;
  struct statvfs fs;
  if (fstat(fd, &st) != 0)
    return nullptr;
  // On a nosuid mount the kernel ignores the set-ID bits and file capabilities.
  bool nosuid = fstatvfs(fd, &fs) == 0 && (fs.f_flag & ST_NOSUID);
  if (nosuid)
    st.st_mode &= ~(S_ISUID | S_ISGID);
  if ((st.st_mode & S_ISUID) && st.st_uid != getuid())
    return "is set-user-ID";
  if ((st.st_mode & S_ISGID) && st.st_gid != getgid())
    return "is set-group-ID";
  if (!nosuid && getuid() != 0 && fgetxattr(fd, "security.capability", nullptr, 0) >= 0)
    return "has file capabilities";
  Elf64_Ehdr eh{};
  if (pread(fd, &eh, sizeof eh, 0) != sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_phentsize != sizeof(Elf64_Phdr))
    return nullptr;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (pread(fd, &ph, sizeof ph, static_cast<off_t>(eh.e_phoff + i * sizeof ph)) != sizeof ph)
      return nullptr;
    if (ph.p_type == PT_INTERP)
      return nullptr;
  }
  return "is statically linked";
}

void warnNotFollowed(const char *program, const char *why) {
  int fd = statusFd();
  if (fd < 0)
    return;
  Line line;
  line << "warning: process " << static_cast<unsigned long long>(getpid()) << " runs " << program
       << ", which " << why
       << ": the agent cannot come along, so it and the programs it runs are not traced";
  line.send(fd);
}

int findProbed(const char *name) {
  struct stat st;
  if (stat(*name ? name : "/proc/self/exe", &st) != 0)
    return -1;
  for (size_t i = 0; i < follow->probed.size(); ++i)
    if (follow->probed[i].first == st.st_dev && follow->probed[i].second == st.st_ino)
      return static_cast<int>(i);
  return -1;
}

} // namespace

void captureExecContract(const char *agentPath) {
  auto *f = new Follow;
  f->agentPath = agentPath;
  // Without a list of probed files, every process attaches (as before -c followed exec).
  f->anyProcess = !getenv("SONDE_AGENT_PROBED");
  for (const char *name : kContractNames) {
    const char *value = getenv(name);
    if (!value)
      continue;
    std::string text = value;
    size_t len = strlen(name);
    if (len > 3 && strcmp(name + len - 3, "_FD") == 0) {
      int fd = atoi(value);
      struct stat st;
      if (fstat(fd, &st) != 0) {
        delete f;
        return;
      }
      f->fds.push_back({fd, st.st_dev, st.st_ino});
      text = std::to_string(fd) + ":" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
      if (strcmp(name, "SONDE_AGENT_STATUS_FD") == 0)
        f->statusFd = fd;
      if (strcmp(name, "SONDE_AGENT_CONTROL_FD") == 0)
        f->controlFd = fd;
    }
    if (strcmp(name, "SONDE_AGENT_PROBED") == 0) {
      for (const char *p = value; *p;) {
        if (*p == '*') {
          f->anyProcess = true;
          ++p;
        } else {
          char *end = nullptr;
          unsigned long long dev = strtoull(p, &end, 10);
          unsigned long long ino = *end == ':' ? strtoull(end + 1, &end, 10) : 0;
          f->probed.emplace_back(static_cast<dev_t>(dev), static_cast<ino_t>(ino));
          p = end;
        }
        if (*p && *p != ',')
          break;
        if (*p)
          ++p;
      }
      f->reported.assign(f->probed.size(), false);
    }
    f->entries.push_back(std::string(name) + "=" + text);
  }
  if (f->statusFd < 0 || f->controlFd < 0) {
    delete f;
    return;
  }
  follow = f;
  enabled.store(true);
}

bool followsExec() { return enabled.load(); }

bool probedFilesLoaded() {
  if (!follow)
    return true;
  bool found = false;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        int i = findProbed(info->dlpi_name ? info->dlpi_name : "");
        if (i >= 0) {
          *static_cast<bool *>(data) = true;
          if (!follow->reported[i] && statusFd() >= 0) {
            follow->reported[i] = true;
            Line line;
            line << "probed " << static_cast<unsigned long long>(follow->probed[i].first) << ":"
                 << static_cast<unsigned long long>(follow->probed[i].second);
            line.send(follow->statusFd);
          }
        }
        return 0;
      },
      &found);
  return found || follow->anyProcess;
}

void stopFollowingExec() {
  if (!enabled.exchange(false) || !follow)
    return;
  if (follow->statusFd >= 0)
    close(follow->statusFd);
}

bool followExec(const char *path, bool search, int fd) {
  if (!enabled.load() || !follow || sondeGone())
    return false;
  for (const HeldFd &h : follow->fds)
    if (!sameFd(h))
      return false; // the program closed or replaced them: nothing to pass on
  char found[PATH_MAX];
  const char *program = path && search ? searchPath(path, found, sizeof found) : path;
  int programFd = fd >= 0 ? fd : program ? open(program, O_RDONLY | O_CLOEXEC) : -1;
  const char *why = programFd >= 0 ? whyNotPreloaded(programFd) : nullptr;
  if (programFd >= 0 && programFd != fd)
    close(programFd);
  if (why) {
    warnNotFollowed(program ? program : "a program (fexecve)", why);
    return false;
  }
  for (const HeldFd &h : follow->fds)
    fcntl(h.fd, F_SETFD, 0);
  return true;
}

void undoFollowExec() {
  for (const HeldFd &h : follow->fds)
    fcntl(h.fd, F_SETFD, FD_CLOEXEC);
}

size_t followEnvironmentBytes(char *const envp[]) {
  size_t slots = follow->entries.size() + 2, bytes = sizeof kPreload + follow->agentPath.size() + 1;
  for (char *const *e = envp; e && *e; ++e) {
    ++slots;
    if (strncmp(*e, kPreload, sizeof kPreload - 1) == 0)
      bytes += strlen(*e);
  }
  size_t total = slots * sizeof(char *) + bytes;
  return total <= kMaxEnvironmentBytes ? total : 0;
}

char **followEnvironment(char *const envp[], void *buffer) {
  char **out = static_cast<char **>(buffer), **at = out;
  const char *oldPreload = nullptr;
  for (char *const *e = envp; e && *e; ++e) {
    if (strncmp(*e, kContractPrefix, sizeof kContractPrefix - 1) == 0)
      continue; // an earlier contract's: ours replaces it
    if (strncmp(*e, kPreload, sizeof kPreload - 1) == 0) {
      oldPreload = *e + sizeof kPreload - 1;
      continue;
    }
    *at++ = *e;
  }
  for (const std::string &entry : follow->entries)
    *at++ = const_cast<char *>(entry.c_str());
  size_t slots = follow->entries.size() + 2;
  for (char *const *e = envp; e && *e; ++e)
    ++slots;
  char *preload = reinterpret_cast<char *>(out + slots);
  char *p = stpcpy(stpcpy(preload, kPreload), follow->agentPath.c_str());
  if (oldPreload && *oldPreload)
    stpcpy(stpcpy(p, ":"), oldPreload);
  *at++ = preload;
  *at = nullptr;
  return out;
}

} // namespace sonde::agent
