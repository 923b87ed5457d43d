// libc calls the agent interposes (it is first in the global scope through
// LD_PRELOAD): thread start and end for thread.begin/end, exec to write
// buffered output first and take the agent along (ExecFollow), _exit to write
// buffered output, dlopen/dlclose to follow loaded objects. Each forwards to
// the next definition (dlsym RTLD_NEXT).
#include "runtime/agent/AgentState.h"
#include "runtime/agent/ExecFollow.h"
#include "runtime/agent/HandlerDispatch.h"

#include <alloca.h>
#include <cerrno>
#include <csignal>
#include <cstdarg>
#include <dlfcn.h>
#include <new>
#include <pthread.h>
#include <spawn.h>
#include <unistd.h>
#include <vector>

using namespace sonde::agent;

namespace {

template <class F> F next(const char *name) { return reinterpret_cast<F>(dlsym(RTLD_NEXT, name)); }

using PthreadCreate = int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
using ExecVE = int (*)(const char *, char *const[], char *const[]);
using FExecVE = int (*)(int, char *const[], char *const[]);

PthreadCreate realPthreadCreate() {
  static PthreadCreate f = next<PthreadCreate>("pthread_create");
  return f;
}

struct ThreadStart {
  void *(*routine)(void *);
  void *arg;
};

void *startTraced(void *p) {
  ThreadStart start = *static_cast<ThreadStart *>(p);
  delete static_cast<ThreadStart *>(p);
  threadStarted();
  void *result = start.routine(start.arg);
  threadFinishing();
  return result;
}

enum class ExecKind { Path, Search, Fd };

// Runs an exec with the agent's output written and the segment left, and the
// agent taken along when the program can have it; undone if the exec returns
// (it failed). Its copy of the environment is on this frame (a vfork child
// must not allocate), so it is never inlined.
using PosixSpawn = int (*)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                           const posix_spawnattr_t *, char *const[], char *const[]);

// Resolved as the agent loads: a vfork child must not run dlsym (it may allocate).
ExecVE realExecve, realExecvpe;
FExecVE realFexecve;
PosixSpawn realPosixSpawn, realPosixSpawnp;
__attribute__((constructor)) void resolveExecCalls() {
  realExecve = next<ExecVE>("execve");
  realExecvpe = next<ExecVE>("execvpe");
  realFexecve = next<FExecVE>("fexecve");
  realPosixSpawn = next<PosixSpawn>("posix_spawn");
  realPosixSpawnp = next<PosixSpawn>("posix_spawnp");
}

// Runs `call` with the environment the exec'd program gets: the agent's
// contract added when the exec is followed, undone when it returns (the exec
// failed, or posix_spawn's caller goes on). The copy lives on this frame, so
// nothing is allocated: safe in a vfork child.
template <typename Call>
__attribute__((noinline)) int withFollowedEnvironment(const char *file, bool search, int fd,
                                                      char *const envp[], Call call) {
  bool follow = followExec(file, search, fd);
  char *const *env = envp;
  if (follow) {
    if (size_t bytes = followEnvironmentBytes(envp); bytes > 0) {
      env = followEnvironment(envp, alloca(bytes));
    } else {
      undoFollowExec();
      follow = false;
    }
  }
  int rc = call(env);
  int saved = errno;
  if (follow)
    undoFollowExec();
  errno = saved;
  return rc;
}

// posix_spawn(p): the child execs; the caller goes on, so only the agent's
// descriptors lose close-on-exec, for the time of the call.
int tracedSpawn(bool search, pid_t *pid, const char *file,
                const posix_spawn_file_actions_t *actions, const posix_spawnattr_t *attr,
                char *const argv[], char *const envp[]) {
  return withFollowedEnvironment(file, search, -1, envp, [&](char *const *env) {
    return (search ? realPosixSpawnp : realPosixSpawn)(pid, file, actions, attr, argv, env);
  });
}

int tracedExec(ExecKind kind, const char *file, int fd, char *const argv[], char *const envp[]) {
  bool prepared = prepareExec();
  int rc = withFollowedEnvironment(kind == ExecKind::Fd ? nullptr : file, kind == ExecKind::Search,
                                   fd, envp, [&](char *const *env) {
                                     return kind == ExecKind::Path ? realExecve(file, argv, env)
                                            : kind == ExecKind::Search
                                                ? realExecvpe(file, argv, env)
                                                : realFexecve(fd, argv, env);
                                   });
  int saved = errno;
  if (prepared)
    execFailed();
  errno = saved;
  return rc;
}

// The execl family's argument lists, NULL included; envp after the NULL for execle.
std::vector<char *> collectArgs(const char *first, va_list ap, char ***envp) {
  std::vector<char *> argv{const_cast<char *>(first)};
  while (argv.back())
    argv.push_back(va_arg(ap, char *));
  if (envp)
    *envp = va_arg(ap, char **);
  return argv;
}

// execv and execvp run with the process's environment, as execve and execvpe.
int doExecve(const char *path, char *const argv[], char *const envp[]) {
  return tracedExec(ExecKind::Path, path, -1, argv, envp);
}
int doExecv(const char *path, char *const argv[]) { return doExecve(path, argv, environ); }
int doExecvp(const char *file, char *const argv[]) {
  return tracedExec(ExecKind::Search, file, -1, argv, environ);
}

} // namespace

namespace sonde::agent {

int createAgentThread(void *(*start)(void *), void *arg) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  // The target's signals stay with the target's threads.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t t;
  int rc = realPthreadCreate()(&t, &attr, start, arg);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  pthread_attr_destroy(&attr);
  return rc;
}

} // namespace sonde::agent

extern "C" {

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*routine)(void *),
                   void *arg) noexcept {
  if (!tracingThisProcess())
    return realPthreadCreate()(thread, attr, routine, arg);
  auto *start = new (std::nothrow) ThreadStart{routine, arg};
  if (!start)
    return realPthreadCreate()(thread, attr, routine, arg);
  int rc = realPthreadCreate()(thread, attr, startTraced, start);
  if (rc != 0)
    delete start;
  return rc;
}

void pthread_exit(void *value) {
  static auto f = next<void (*)(void *)>("pthread_exit");
  threadFinishing();
  f(value);
  __builtin_unreachable();
}

void _exit(int status) {
  static auto f = next<void (*)(int)>("_exit");
  processExiting();
  f(status);
  __builtin_unreachable();
}

void _Exit(int status) {
  static auto f = next<void (*)(int)>("_Exit");
  processExiting();
  f(status);
  __builtin_unreachable();
}

int execve(const char *path, char *const argv[], char *const envp[]) noexcept {
  return doExecve(path, argv, envp);
}

int execv(const char *path, char *const argv[]) noexcept { return doExecv(path, argv); }

int execvp(const char *file, char *const argv[]) noexcept { return doExecvp(file, argv); }

int execvpe(const char *file, char *const argv[], char *const envp[]) noexcept {
  return tracedExec(ExecKind::Search, file, -1, argv, envp);
}

int fexecve(int fd, char *const argv[], char *const envp[]) noexcept {
  return tracedExec(ExecKind::Fd, nullptr, fd, argv, envp);
}

int execl(const char *path, const char *arg, ...) noexcept {
  va_list ap;
  va_start(ap, arg);
  std::vector<char *> argv = collectArgs(arg, ap, nullptr);
  va_end(ap);
  return doExecv(path, argv.data());
}

int execlp(const char *file, const char *arg, ...) noexcept {
  va_list ap;
  va_start(ap, arg);
  std::vector<char *> argv = collectArgs(arg, ap, nullptr);
  va_end(ap);
  return doExecvp(file, argv.data());
}

int execle(const char *path, const char *arg, ...) noexcept {
  va_list ap;
  va_start(ap, arg);
  char **envp = nullptr;
  std::vector<char *> argv = collectArgs(arg, ap, &envp);
  va_end(ap);
  return doExecve(path, argv.data(), envp);
}

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
  return tracedSpawn(false, pid, path, actions, attr, argv, envp);
}

int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
  return tracedSpawn(true, pid, file, actions, attr, argv, envp);
}

void *dlopen(const char *file, int mode) noexcept {
  static auto f = next<void *(*)(const char *, int)>("dlopen");
  void *handle = f(file, mode);
  if (handle)
    objectsLoaded();
  return handle;
}

void *dlmopen(Lmid_t lmid, const char *file, int mode) noexcept {
  static auto f = next<void *(*)(Lmid_t, const char *, int)>("dlmopen");
  void *handle = f(lmid, file, mode);
  if (handle)
    objectsLoaded();
  return handle;
}

int dlclose(void *handle) noexcept {
  static auto f = next<int (*)(void *)>("dlclose");
  int rc = f(handle);
  objectsUnloaded();
  return rc;
}

} // extern "C"
