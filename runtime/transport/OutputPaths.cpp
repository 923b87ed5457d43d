#include "runtime/transport/OutputPaths.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace sonde::transport {

FileDescriptor &FileDescriptor::operator=(FileDescriptor &&other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0)
    ::close(fd_);
}

namespace {

constexpr int kMaxLinks = 40; // as the kernel's own path walk
// An entry that appears between looking and creating (or a name taken) is
// looked at again, a bounded number of times.
constexpr int kCreateAttempts = 16;
constexpr int kNameAttempts = 100;

std::string failure(const std::string &what) { return what + ": " + std::strerror(errno); }

bool trustedOwner(uid_t uid) { return uid == geteuid() || uid == 0; }

// Another user could add, remove or swap this directory's entries.
bool othersCanChange(const struct stat &dir) {
  return !trustedOwner(dir.st_uid) || (dir.st_mode & (S_IWGRP | S_IWOTH)) != 0;
}

const char *kindOf(mode_t mode) {
  switch (mode & S_IFMT) {
  case S_IFLNK: return "symbolic link";
  case S_IFDIR: return "directory";
  case S_IFREG: return "file";
  case S_IFIFO: return "FIFO";
  case S_IFSOCK: return "socket";
  default: return "device";
  }
}

// The entries of a path, without empty ones and ".".
std::deque<std::string> entriesOf(const std::string &path) {
  std::deque<std::string> names;
  for (size_t start = 0; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string::npos)
      end = path.size();
    std::string name = path.substr(start, end - start);
    if (!name.empty() && name != ".")
      names.push_back(name);
    start = end + 1;
  }
  return names;
}

std::string below(const std::string &dir, const std::string &name) {
  if (dir.empty())
    return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string shownDirectory(const std::string &dir) {
  return dir.empty() ? "the current directory" : "'" + dir + "'";
}

// Where a walk ended: the directory holding the last entry and that entry
// (O_PATH, links of trusted owners followed), or no entry if it does not exist.
struct Place {
  FileDescriptor dir;
  std::string dirShown; // as walked, for messages ("" for the current directory)
  bool dirShared = false;
  std::string name;  // of the last entry in `dir`
  std::string shown; // the last entry as walked
  FileDescriptor entry;
  struct stat st {};
};

bool openStart(bool absolute, FileDescriptor &dir, struct stat &st, std::string *error) {
  dir = FileDescriptor(::open(absolute ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir || ::fstat(dir.get(), &st) != 0) {
    *error = failure(absolute ? "cannot open '/'" : "cannot open the current directory");
    return false;
  }
  return true;
}

bool readLink(int fd, const std::string &shown, std::string &target, std::string *error) {
  char buf[4096];
  ssize_t n = ::readlinkat(fd, "", buf, sizeof buf);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof buf) {
    if (n >= 0)
      errno = n == 0 ? ENOENT : ENAMETOOLONG;
    *error = failure("cannot read the symbolic link '" + shown + "'");
    return false;
  }
  target.assign(buf, static_cast<size_t>(n));
  return true;
}

// Walks `path` entry by entry (see the header): in a directory others can
// change, an entry that is not yours or root's ends the walk with an error.
// Links are followed, the last one only if `followLast`.
bool walk(const std::string &path, bool followLast, Place &out, std::string *error) {
  if (path.empty()) {
    *error = "an empty path";
    return false;
  }
  std::deque<std::string> names = entriesOf(path);
  FileDescriptor dir;
  struct stat dirSt {};
  if (!openStart(path[0] == '/', dir, dirSt, error))
    return false;
  std::string at = path[0] == '/' ? "/" : "";
  int links = 0;
  while (!names.empty()) {
    std::string name = names.front();
    names.pop_front();
    bool last = names.empty();
    std::string shown = below(at, name);
    FileDescriptor entry(::openat(dir.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!entry && errno == ENOENT && last) {
      out = Place{std::move(dir), at, othersCanChange(dirSt), name, shown, {}, {}};
      return true;
    }
    if (!entry || ::fstat(entry.get(), &st) != 0) {
      *error = failure("cannot open '" + shown + "'");
      return false;
    }
    // ".." is where the walk came from, not an entry anyone put in its way.
    if (name != ".." && othersCanChange(dirSt) && !trustedOwner(st.st_uid)) {
      *error = "'" + shown + "' is a " + kindOf(st.st_mode) + " of uid " +
               std::to_string(st.st_uid) + " in " + shownDirectory(at) +
               ", which other users can write: sonde does not follow or write what another "
               "user may have put there (remove it, or choose another path)";
      return false;
    }
    if (S_ISLNK(st.st_mode) && (!last || followLast)) {
      if (++links > kMaxLinks) {
        errno = ELOOP;
        *error = failure("cannot open '" + path + "'");
        return false;
      }
      struct statfs fs {};
      if (::fstatfs(entry.get(), &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC) {
        // /proc/self, /proc/self/fd/N (/dev/stdout): the kernel's own links,
        // which may name no path (pipe:[...]); the kernel follows them.
        entry = FileDescriptor(::openat(dir.get(), name.c_str(), O_PATH | O_CLOEXEC));
        if (!entry || ::fstat(entry.get(), &st) != 0) {
          *error = failure("cannot open '" + shown + "'");
          return false;
        }
      } else {
        std::string target;
        if (!readLink(entry.get(), shown, target, error))
          return false;
        std::deque<std::string> more = entriesOf(target);
        names.insert(names.begin(), more.begin(), more.end());
        if (target[0] == '/') {
          if (!openStart(true, dir, dirSt, error))
            return false;
          at = "/";
        }
        if (!names.empty())
          continue;
        // A link to "/" or ".": the directory itself is the last entry.
        entry = FileDescriptor(::openat(dir.get(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!entry || ::fstat(entry.get(), &st) != 0) {
          *error = failure("cannot open '" + shown + "'");
          return false;
        }
        name = ".";
      }
    }
    if (last) {
      out = Place{std::move(dir), at, othersCanChange(dirSt), name, shown, std::move(entry), st};
      return true;
    }
    if (!S_ISDIR(st.st_mode)) {
      errno = ENOTDIR;
      *error = failure("cannot open '" + shown + "'");
      return false;
    }
    dir = std::move(entry);
    dirSt = st;
    at = shown;
  }
  // No entry named ("/", "."): the starting directory itself.
  FileDescriptor self(::openat(dir.get(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!self) {
    *error = failure("cannot open '" + path + "'");
    return false;
  }
  out = Place{std::move(dir), at, othersCanChange(dirSt), ".", path, std::move(self), dirSt};
  return true;
}

// The entry checked, opened for real: through its descriptor, not its name,
// so that nothing swapped in after the check is opened instead.
int reopen(int pathFd, int flags) {
  std::string self = "/proc/self/fd/" + std::to_string(pathFd);
  return ::open(self.c_str(), flags);
}

bool isEmptyDirectory(int dirFd) {
  int fd = ::dup(dirFd);
  DIR *dir = fd < 0 ? nullptr : ::fdopendir(fd);
  if (!dir) {
    if (fd >= 0)
      ::close(fd);
    return false;
  }
  ::rewinddir(dir);
  bool empty = true;
  while (dirent *entry = ::readdir(dir))
    if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0)
      empty = false;
  ::closedir(dir);
  return empty;
}

// A directory sonde has just made, opened without following a link; it must
// still be a directory of ours (a name in a directory others can change may
// have been swapped since).
int openMadeDirectory(int parentFd, const std::string &name, const std::string &shown,
                      std::string *error) {
  FileDescriptor fd(
      ::openat(parentFd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0) {
    *error = failure("cannot open the directory '" + shown + "' sonde created");
    return -1;
  }
  if (st.st_uid != geteuid()) {
    *error = "'" + shown + "' was replaced by a directory of uid " + std::to_string(st.st_uid) +
             " as sonde created it";
    return -1;
  }
  return fd.release();
}

bool randomName(const std::string &stem, std::string &name) {
  static const char kLetters[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  unsigned char bytes[6];
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes))
    return false;
  name = stem + "-";
  for (unsigned char b : bytes)
    name += kLetters[b % 36];
  return true;
}

} // namespace

int openOutputFile(const std::string &path, std::string *error) {
  for (int attempt = 0; attempt < kCreateAttempts; ++attempt) {
    Place p;
    if (!walk(path, true, p, error))
      return -1;
    if (!p.entry) {
      int fd = ::openat(p.dir.get(), p.name.c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
      if (fd >= 0)
        return fd;
      if (errno == EEXIST)
        continue; // made meanwhile: look at what it is
      *error = failure("cannot create '" + p.shown + "'");
      return -1;
    }
    if (S_ISDIR(p.st.st_mode)) {
      *error = "'" + p.shown + "' is a directory";
      return -1;
    }
    // A hard link another user made to a file of yours (or root's) is still
    // that file: not written where others can change the directory.
    if (p.dirShared && S_ISREG(p.st.st_mode) && p.st.st_nlink > 1) {
      *error = "'" + p.shown + "' has " + std::to_string(p.st.st_nlink) + " hard links and " +
               shownDirectory(p.dirShown) +
               " can be written by other users: sonde does not write a file another user may "
               "have linked there (remove it, or choose another path)";
      return -1;
    }
    int fd = reopen(p.entry.get(),
                    O_WRONLY | O_NOCTTY | O_CLOEXEC | (S_ISREG(p.st.st_mode) ? O_TRUNC : 0));
    if (fd < 0)
      *error = failure("cannot open '" + p.shown + "'");
    return fd;
  }
  *error = "cannot create '" + path + "': it keeps changing while sonde opens it";
  return -1;
}

void removeOutputFile(const std::string &path) {
  Place p;
  std::string ignored;
  if (walk(path, false, p, &ignored) && p.entry && !S_ISDIR(p.st.st_mode) &&
      p.st.st_uid == geteuid())
    ::unlinkat(p.dir.get(), p.name.c_str(), 0);
}

int openTraceDirectory(const std::string &path, std::string *error) {
  for (int attempt = 0; attempt < kCreateAttempts; ++attempt) {
    Place p;
    if (!walk(path, true, p, error))
      return -1;
    if (!p.entry) {
      if (::mkdirat(p.dir.get(), p.name.c_str(), 0755) == 0)
        return openMadeDirectory(p.dir.get(), p.name, p.shown, error);
      if (errno == EEXIST)
        continue;
      *error = failure("cannot create the directory '" + p.shown + "'");
      return -1;
    }
    if (!S_ISDIR(p.st.st_mode)) {
      *error = "'" + p.shown + "' exists and is not a directory";
      return -1;
    }
    if (p.st.st_uid != geteuid()) {
      *error = "'" + p.shown + "' belongs to uid " + std::to_string(p.st.st_uid) +
               ", not to you (uid " + std::to_string(geteuid()) +
               "): sonde writes a trace only into a new directory or an empty one of yours";
      return -1;
    }
    FileDescriptor fd(::openat(p.entry.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) {
      *error = failure("cannot open the directory '" + p.shown + "'");
      return -1;
    }
    // Stale files of an earlier trace would be read as part of this one.
    if (!isEmptyDirectory(fd.get())) {
      *error = "'" + p.shown + "' is not empty (a trace directory must be new or empty)";
      return -1;
    }
    return fd.release();
  }
  *error = "cannot create the directory '" + path + "': it keeps changing while sonde opens it";
  return -1;
}

int createTraceDirectory(const std::string &stem, std::string *name, std::string *error) {
  FileDescriptor here(::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!here) {
    *error = failure("cannot open the current directory");
    return -1;
  }
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    std::string candidate = stem;
    if (attempt > 0 && !randomName(stem, candidate)) {
      *error = failure("getrandom");
      return -1;
    }
    if (::mkdirat(here.get(), candidate.c_str(), 0755) == 0) {
      *name = candidate;
      return openMadeDirectory(here.get(), candidate, candidate, error);
    }
    if (errno != EEXIST) {
      *error = failure("cannot create the directory '" + candidate + "'");
      return -1;
    }
  }
  *error = "cannot create a directory named '" + stem + "-...': every name tried exists";
  return -1;
}

int createTraceFile(int dirFd, const std::string &dirPath, const std::string &name,
                    std::string *error) {
  int fd =
      ::openat(dirFd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    *error = failure("cannot create '" + below(dirPath, name) + "'");
  return fd;
}

std::string createPrivateDirectory(const std::string &parent, const std::string &prefix,
                                   std::string *error) {
  char *real = ::realpath(parent.c_str(), nullptr);
  if (!real) {
    *error = failure("cannot use '" + parent + "'");
    return "";
  }
  std::string canonical = real;
  std::free(real);
  // Every directory from the root down: no other user may rename or replace
  // what lies below it (a sticky directory keeps others from renaming ours).
  for (size_t end = 0; end != std::string::npos;) {
    end = canonical.find('/', end + 1);
    std::string dir = end == std::string::npos ? canonical : canonical.substr(0, end);
    if (dir.empty())
      dir = "/";
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) {
      *error = failure("cannot use '" + dir + "'");
      return "";
    }
    if (!S_ISDIR(st.st_mode) || !trustedOwner(st.st_uid) ||
        ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0)) {
      *error = "'" + dir + "' " +
               (!S_ISDIR(st.st_mode)      ? std::string("is not a directory")
                : trustedOwner(st.st_uid) ? std::string("can be written by other users and is "
                                                        "not sticky")
                                          : "belongs to uid " + std::to_string(st.st_uid)) +
               ": another user could replace the compiled module there";
      return "";
    }
  }
  std::string pattern = below(canonical, prefix + "XXXXXX");
  if (!::mkdtemp(pattern.data())) {
    *error = failure("cannot create a directory in '" + canonical + "'");
    return "";
  }
  FileDescriptor fd(::open(pattern.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    *error = "the directory '" + pattern + "' sonde created is not private to it";
    return "";
  }
  return pattern;
}

} // namespace sonde::transport
