// errno_str (tapset/errno.stp): the symbolic name of an errno value, from the
// same list of names stap compiles in, numbered by this platform's <errno.h>.
#include "runtime/format/TextWriter.h"
#include "runtime/strings/StringAbi.h"

#include <cerrno>
#include <cstdint>

namespace {

struct ErrnoName {
  int number;
  const char *name;
};

#define NAME(e)                                                                                    \
  { e, #e }
constexpr ErrnoName kNames[] = {
    NAME(EPERM),
    NAME(ENOENT),
    NAME(ESRCH),
    NAME(EINTR),
    NAME(EIO),
    NAME(ENXIO),
    NAME(E2BIG),
    NAME(ENOEXEC),
    NAME(EBADF),
    NAME(ECHILD),
    NAME(EAGAIN),
    NAME(ENOMEM),
    NAME(EACCES),
    NAME(EFAULT),
    NAME(ENOTBLK),
    NAME(EBUSY),
    NAME(EEXIST),
    NAME(EXDEV),
    NAME(ENODEV),
    NAME(ENOTDIR),
    NAME(EISDIR),
    NAME(EINVAL),
    NAME(ENFILE),
    NAME(EMFILE),
    NAME(ENOTTY),
    NAME(ETXTBSY),
    NAME(EFBIG),
    NAME(ENOSPC),
    NAME(ESPIPE),
    NAME(EROFS),
    NAME(EMLINK),
    NAME(EPIPE),
    NAME(EDOM),
    NAME(ERANGE),
    NAME(EDEADLK),
    NAME(ENAMETOOLONG),
    NAME(ENOLCK),
    NAME(ENOSYS),
    NAME(ENOTEMPTY),
    NAME(ELOOP),
    NAME(ENOMSG),
    NAME(EIDRM),
    NAME(ECHRNG),
    NAME(EL2NSYNC),
    NAME(EL3HLT),
    NAME(EL3RST),
    NAME(ELNRNG),
    NAME(EUNATCH),
    NAME(ENOCSI),
    NAME(EL2HLT),
    NAME(EBADE),
    NAME(EBADR),
    NAME(EXFULL),
    NAME(ENOANO),
    NAME(EBADRQC),
    NAME(EBADSLT),
    NAME(EBFONT),
    NAME(ENOSTR),
    NAME(ENODATA),
    NAME(ETIME),
    NAME(ENOSR),
    NAME(ENONET),
    NAME(ENOPKG),
    NAME(EREMOTE),
    NAME(ENOLINK),
    NAME(EADV),
    NAME(ESRMNT),
    NAME(ECOMM),
    NAME(EPROTO),
    NAME(EMULTIHOP),
    NAME(EDOTDOT),
    NAME(EBADMSG),
    NAME(EOVERFLOW),
    NAME(ENOTUNIQ),
    NAME(EBADFD),
    NAME(EREMCHG),
    NAME(ELIBACC),
    NAME(ELIBBAD),
    NAME(ELIBSCN),
    NAME(ELIBMAX),
    NAME(ELIBEXEC),
    NAME(EILSEQ),
    NAME(ERESTART),
    NAME(ESTRPIPE),
    NAME(EUSERS),
    NAME(ENOTSOCK),
    NAME(EDESTADDRREQ),
    NAME(EMSGSIZE),
    NAME(EPROTOTYPE),
    NAME(ENOPROTOOPT),
    NAME(EPROTONOSUPPORT),
    NAME(ESOCKTNOSUPPORT),
    NAME(EOPNOTSUPP),
    NAME(EPFNOSUPPORT),
    NAME(EAFNOSUPPORT),
    NAME(EADDRINUSE),
    NAME(EADDRNOTAVAIL),
    NAME(ENETDOWN),
    NAME(ENETUNREACH),
    NAME(ENETRESET),
    NAME(ECONNABORTED),
    NAME(ECONNRESET),
    NAME(ENOBUFS),
    NAME(EISCONN),
    NAME(ENOTCONN),
    NAME(ESHUTDOWN),
    NAME(ETOOMANYREFS),
    NAME(ETIMEDOUT),
    NAME(ECONNREFUSED),
    NAME(EHOSTDOWN),
    NAME(EHOSTUNREACH),
    NAME(EALREADY),
    NAME(EINPROGRESS),
    NAME(ESTALE),
    NAME(EUCLEAN),
    NAME(ENOTNAM),
    NAME(ENAVAIL),
    NAME(EISNAM),
    NAME(EREMOTEIO),
    NAME(EDQUOT),
    NAME(ENOMEDIUM),
    NAME(EMEDIUMTYPE),
    NAME(ECANCELED),
    NAME(ENOKEY),
    NAME(EKEYEXPIRED),
    NAME(EKEYREVOKED),
    NAME(EKEYREJECTED),
    NAME(EOWNERDEAD),
    NAME(ENOTRECOVERABLE),
#if defined(EDEADLOCK) && EDEADLOCK != EDEADLK
    NAME(EDEADLOCK),
#endif
};
#undef NAME

const char *nameOf(uint64_t err) {
  for (const ErrnoName &e : kNames)
    if (static_cast<uint64_t>(e.number) == err)
      return e.name;
  return "";
}

} // namespace

extern "C" size_t sonde_str_errno_str(int64_t err, char *out, size_t cap) {
  // The sign is ignored: syscalls return -ENOENT.
  const uint64_t magnitude = err < 0 ? 0 - static_cast<uint64_t>(err) : static_cast<uint64_t>(err);
  sonde::rt::TextWriter w(out, cap);
  w.write(nameOf(magnitude));
  return w.terminate();
}
