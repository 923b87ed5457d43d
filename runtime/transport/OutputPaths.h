// How sonde opens every file and directory it writes (-o FILE, the -S parts,
// switch_file(), -b and CTF trace directories and their files, the directory
// compiled modules go to), so that no other local user can redirect them.
//
// A path is walked one entry at a time. In a directory another user can change
// (group- or world-writable, or owned by someone other than you and root), an
// entry is used only if it belongs to you or to root: a symlink, subdirectory
// or file someone else put there is refused with an error naming it, never
// followed or written. Elsewhere symlinks are followed as usual (/dev/stdout,
// a link in your home). New files and directories are created exclusively
// (O_EXCL, mkdir), never through a link; nothing is opened for appending.
// docs/cli.md ("Files sonde writes") states the rules for users.
#pragma once

#include <string>

namespace sonde::transport {

// An open descriptor, closed when this goes away.
class FileDescriptor {
public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(FileDescriptor &&other) noexcept : fd_(other.release()) {}
  FileDescriptor &operator=(FileDescriptor &&other) noexcept;
  FileDescriptor(const FileDescriptor &) = delete;
  FileDescriptor &operator=(const FileDescriptor &) = delete;
  ~FileDescriptor();

  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  explicit operator bool() const { return fd_ >= 0; }

private:
  int fd_ = -1;
};

// -o FILE, an -S part, a switch_file() part: `path` opened for writing from
// its start. A new file is created (0644 less the umask); an existing one is
// truncated if it is a regular file (a FIFO or a device is written as it is).
// Returns -1 with the reason (naming the path) in `error`.
int openOutputFile(const std::string &path, std::string *error);

// -S SIZE,N: removes an older part, if it is a file of yours (reached by the
// same walk as openOutputFile).
void removeOutputFile(const std::string &path);

// -b -o DIR, --format=ctf -o DIR: `path` created as a new directory (0755 less
// the umask), or an existing empty one that belongs to you. Returns a
// descriptor of the directory, or -1 with the reason in `error`.
int openTraceDirectory(const std::string &path, std::string *error);

// -b without -o: a new directory in the current one, named `stem`, or, when
// that name is taken, `stem-` and six random letters and digits. `name` gets
// the name chosen. Returns a descriptor of it, or -1 with the reason.
int createTraceDirectory(const std::string &stem, std::string *name, std::string *error);

// A new file `name` in trace directory `dirFd` (shown as `dirPath` in errors),
// for writing: never an existing file, never through a link.
int createTraceFile(int dirFd, const std::string &dirPath, const std::string &name,
                    std::string *error);

// The directory compiled modules go to: a new directory `prefix` + six random
// characters in `parent`, mode 0700, and `parent` a path no other user can
// change (every directory on it yours or root's, none writable by others
// unless sticky), so that the module path sonde and the traced processes load
// cannot be swapped. Returns its path, or "" with the reason in `error`.
std::string createPrivateDirectory(const std::string &parent, const std::string &prefix,
                                   std::string *error);

} // namespace sonde::transport
