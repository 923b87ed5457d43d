#include "runtime/session/RemoteUnwinder.h"

#include <dlfcn.h>
#include <libunwind.h>
#include <mutex>

namespace sonde::session {

namespace {

// The names libunwind's header maps the remote API to on x86-64, and the
// ptrace accessors of libunwind-ptrace.
struct RemoteUnwind {
  unw_addr_space_t (*createAddrSpace)(unw_accessors_t *, int) = nullptr;
  void (*destroyAddrSpace)(unw_addr_space_t) = nullptr;
  int (*initRemote)(unw_cursor_t *, unw_addr_space_t, void *) = nullptr;
  int (*step)(unw_cursor_t *) = nullptr;
  int (*getReg)(unw_cursor_t *, unw_regnum_t, unw_word_t *) = nullptr;
  void *(*uptCreate)(pid_t) = nullptr;
  void (*uptDestroy)(void *) = nullptr;
  unw_accessors_t *uptAccessors = nullptr;
  std::string error;
};

const RemoteUnwind &remoteUnwind() {
  static RemoteUnwind u;
  static std::once_flag once;
  std::call_once(once, [] {
    // libunwind-ptrace leaves the _Ux86_64_* names to libunwind-x86_64.
    void *unwind = dlopen("libunwind-x86_64.so.8", RTLD_NOW | RTLD_GLOBAL);
    void *ptrace = unwind ? dlopen("libunwind-ptrace.so.0", RTLD_NOW | RTLD_LOCAL) : nullptr;
    if (!ptrace) {
      u.error = std::string("cannot load libunwind-ptrace: ") + dlerror();
      return;
    }
    auto get = [](void *lib, const char *name, auto &out) {
      out = reinterpret_cast<std::remove_reference_t<decltype(out)>>(dlsym(lib, name));
    };
    get(unwind, "_Ux86_64_create_addr_space", u.createAddrSpace);
    get(unwind, "_Ux86_64_destroy_addr_space", u.destroyAddrSpace);
    get(unwind, "_Ux86_64_init_remote", u.initRemote);
    get(unwind, "_Ux86_64_step", u.step);
    get(unwind, "_Ux86_64_get_reg", u.getReg);
    get(ptrace, "_UPT_create", u.uptCreate);
    get(ptrace, "_UPT_destroy", u.uptDestroy);
    get(ptrace, "_UPT_accessors", u.uptAccessors);
    if (!u.createAddrSpace || !u.destroyAddrSpace || !u.initRemote || !u.step || !u.getReg ||
        !u.uptCreate || !u.uptDestroy || !u.uptAccessors)
      u.error = "libunwind-ptrace lacks the remote unwinding functions";
  });
  return u;
}

} // namespace

std::vector<StackFrame> unwindStoppedThread(pid_t tid, size_t max, std::string *error,
                                            bool *complete) {
  const RemoteUnwind &u = remoteUnwind();
  std::vector<StackFrame> frames;
  int stepped = -1;
  if (!u.error.empty()) {
    *error = u.error;
    return frames;
  }
  unw_addr_space_t space = u.createAddrSpace(u.uptAccessors, 0);
  void *context = space ? u.uptCreate(tid) : nullptr;
  unw_cursor_t cursor;
  if (context && u.initRemote(&cursor, space, context) == 0) {
    do {
      unw_word_t pc = 0, sp = 0;
      if (u.getReg(&cursor, UNW_REG_IP, &pc) != 0 || u.getReg(&cursor, UNW_REG_SP, &sp) != 0)
        break;
      frames.push_back({pc, sp});
    } while (frames.size() < max && (stepped = u.step(&cursor)) > 0);
  } else {
    *error = "cannot start unwinding the thread";
  }
  if (complete)
    *complete = stepped == 0 && !frames.empty();
  if (context)
    u.uptDestroy(context);
  if (space)
    u.destroyAddrSpace(space);
  return frames;
}

} // namespace sonde::session
