/* sonde/sdt.h - static markers for Sonde (x86-64, C and C++).
 *
 *   SONDE_PROBE(provider, name, args...)   0 to 12 integer or pointer arguments
 *   SONDE_PROBE_ENABLED(provider, name)    nonzero while some tool is attached
 *
 * Each marker emits the standard SystemTap SDT note (.note.stapsdt, type 3, owner
 * "stapsdt") and the .stapsdt.base section in the same layout as <sys/sdt.h>, so
 * readelf, gdb, bpftrace and stap see the markers. The probe site differs: it is
 * the 5-byte NOP `nopl 0(%rax,%rax,1)`, which Sonde's agent patches into a
 * `jmp rel32` to a per-site stub instead of trapping. Not a `call`: it would
 * push its return address into the 128-byte red zone below %rsp, where
 * optimized code often keeps marker arguments (`8@-8(%rsp)`); the stub first
 * steps over the red zone. The bytes are spelled out because GNU as would pick
 * the 4-byte encoding of the same instruction.
 *
 * Every (provider, name) pair gets a 16-bit semaphore in the .probes section,
 * shared by all its sites in one executable or shared library; tools increment it
 * while attached. Arguments are described as SIZE@OPERAND, SIZE negative for
 * signed types, as <sys/sdt.h> does.
 */
#ifndef SONDE_SDT_H
#define SONDE_SDT_H

#if !defined(__x86_64__)
#error "sonde/sdt.h supports x86-64 only"
#endif

/* Signedness and size of an argument, after array-to-pointer decay. */
#ifdef __cplusplus
namespace sonde {
namespace sdt_detail {
template <typename T> T decay(T value);
template <typename T> struct IsSigned { static constexpr bool value = T(-1) < T(0); };
template <typename T> struct IsSigned<T *> { static constexpr bool value = false; };
template <> struct IsSigned<decltype(nullptr)> { static constexpr bool value = false; };
} // namespace sdt_detail
} // namespace sonde
#define _SONDE_SDT_TYPE(x) decltype(::sonde::sdt_detail::decay(x))
#define _SONDE_SDT_SIGNED(x) (::sonde::sdt_detail::IsSigned<_SONDE_SDT_TYPE(x)>::value)
#define _SONDE_SDT_SIZE(x) ((int)sizeof(_SONDE_SDT_TYPE(x)))
#else
/* _Generic drops qualifiers and decays arrays; enums match their underlying type.
 * (clang-format 14 mangles _Generic associations.) */
/* clang-format off */
#define _SONDE_SDT_SIGNED(x)                                                                  \
  _Generic((x), char: ((char)-1 < 0), signed char: 1, short: 1, int: 1, long: 1,             \
           long long: 1, default: 0)
/* clang-format on */
/* __builtin_classify_type: 5 is a pointer, 14 an array. */
#define _SONDE_SDT_SIZE(x)                                                                         \
  ((__builtin_classify_type(x) == 5 || __builtin_classify_type(x) == 14) ? (int)sizeof(void *)     \
                                                                         : (int)sizeof(x))
#endif

/* One input operand pair per argument: its signed size and its location. */
#define _SONDE_SDT_OPERAND(n, x)                                                                   \
  [_sonde_s##n] "n"(_SONDE_SDT_SIGNED(x) ? -_SONDE_SDT_SIZE(x) : _SONDE_SDT_SIZE(x)),              \
      [_sonde_a##n] "nor"(x)

/* Writes "[-]SIZE@OPERAND" for argument n; only 1, 2, 4 and 8 bytes exist on x86-64. */
#define _SONDE_SDT_ARGSPEC(n)                                                                      \
  ".iflt %c[_sonde_s" #n "]\n"                                                                     \
  ".ascii \"-\"\n"                                                                                 \
  ".endif\n"                                                                                       \
  ".if (%c[_sonde_s" #n "]) * (%c[_sonde_s" #n "]) == 1\n"                                         \
  ".ascii \"1\"\n"                                                                                 \
  ".elseif (%c[_sonde_s" #n "]) * (%c[_sonde_s" #n "]) == 4\n"                                     \
  ".ascii \"2\"\n"                                                                                 \
  ".elseif (%c[_sonde_s" #n "]) * (%c[_sonde_s" #n "]) == 16\n"                                    \
  ".ascii \"4\"\n"                                                                                 \
  ".elseif (%c[_sonde_s" #n "]) * (%c[_sonde_s" #n "]) == 64\n"                                    \
  ".ascii \"8\"\n"                                                                                 \
  ".else\n"                                                                                        \
  ".error \"sonde/sdt.h: marker argument " #n " is not 1, 2, 4 or 8 bytes\"\n"                     \
  ".endif\n"                                                                                       \
  ".ascii \"@%[_sonde_a" #n "]\"\n"

#define _SONDE_SDT_NEXT(n) ".ascii \" \"\n" _SONDE_SDT_ARGSPEC(n)
#define _SONDE_SDT_SPECS_0 ""
#define _SONDE_SDT_SPECS_1 _SONDE_SDT_ARGSPEC(1)
#define _SONDE_SDT_SPECS_2 _SONDE_SDT_SPECS_1 _SONDE_SDT_NEXT(2)
#define _SONDE_SDT_SPECS_3 _SONDE_SDT_SPECS_2 _SONDE_SDT_NEXT(3)
#define _SONDE_SDT_SPECS_4 _SONDE_SDT_SPECS_3 _SONDE_SDT_NEXT(4)
#define _SONDE_SDT_SPECS_5 _SONDE_SDT_SPECS_4 _SONDE_SDT_NEXT(5)
#define _SONDE_SDT_SPECS_6 _SONDE_SDT_SPECS_5 _SONDE_SDT_NEXT(6)
#define _SONDE_SDT_SPECS_7 _SONDE_SDT_SPECS_6 _SONDE_SDT_NEXT(7)
#define _SONDE_SDT_SPECS_8 _SONDE_SDT_SPECS_7 _SONDE_SDT_NEXT(8)
#define _SONDE_SDT_SPECS_9 _SONDE_SDT_SPECS_8 _SONDE_SDT_NEXT(9)
#define _SONDE_SDT_SPECS_10 _SONDE_SDT_SPECS_9 _SONDE_SDT_NEXT(10)
#define _SONDE_SDT_SPECS_11 _SONDE_SDT_SPECS_10 _SONDE_SDT_NEXT(11)
#define _SONDE_SDT_SPECS_12 _SONDE_SDT_SPECS_11 _SONDE_SDT_NEXT(12)

#define _SONDE_SDT_OPERANDS_0()
#define _SONDE_SDT_OPERANDS_1(a) _SONDE_SDT_OPERAND(1, a)
#define _SONDE_SDT_OPERANDS_2(a, b) _SONDE_SDT_OPERANDS_1(a), _SONDE_SDT_OPERAND(2, b)
#define _SONDE_SDT_OPERANDS_3(a, b, c) _SONDE_SDT_OPERANDS_2(a, b), _SONDE_SDT_OPERAND(3, c)
#define _SONDE_SDT_OPERANDS_4(a, b, c, d) _SONDE_SDT_OPERANDS_3(a, b, c), _SONDE_SDT_OPERAND(4, d)
#define _SONDE_SDT_OPERANDS_5(a, b, c, d, e)                                                       \
  _SONDE_SDT_OPERANDS_4(a, b, c, d), _SONDE_SDT_OPERAND(5, e)
#define _SONDE_SDT_OPERANDS_6(a, b, c, d, e, f)                                                    \
  _SONDE_SDT_OPERANDS_5(a, b, c, d, e), _SONDE_SDT_OPERAND(6, f)
#define _SONDE_SDT_OPERANDS_7(a, b, c, d, e, f, g)                                                 \
  _SONDE_SDT_OPERANDS_6(a, b, c, d, e, f), _SONDE_SDT_OPERAND(7, g)
#define _SONDE_SDT_OPERANDS_8(a, b, c, d, e, f, g, h)                                              \
  _SONDE_SDT_OPERANDS_7(a, b, c, d, e, f, g), _SONDE_SDT_OPERAND(8, h)
#define _SONDE_SDT_OPERANDS_9(a, b, c, d, e, f, g, h, i)                                           \
  _SONDE_SDT_OPERANDS_8(a, b, c, d, e, f, g, h), _SONDE_SDT_OPERAND(9, i)
#define _SONDE_SDT_OPERANDS_10(a, b, c, d, e, f, g, h, i, j)                                       \
  _SONDE_SDT_OPERANDS_9(a, b, c, d, e, f, g, h, i), _SONDE_SDT_OPERAND(10, j)
#define _SONDE_SDT_OPERANDS_11(a, b, c, d, e, f, g, h, i, j, k)                                    \
  _SONDE_SDT_OPERANDS_10(a, b, c, d, e, f, g, h, i, j), _SONDE_SDT_OPERAND(11, k)
#define _SONDE_SDT_OPERANDS_12(a, b, c, d, e, f, g, h, i, j, k, l)                                 \
  _SONDE_SDT_OPERANDS_11(a, b, c, d, e, f, g, h, i, j, k), _SONDE_SDT_OPERAND(12, l)

/* The semaphore symbol, as a string for the assembler. */
#define _SONDE_SDT_SEMAPHORE(provider, name) "_sonde_semaphore." #provider "." #name

/* The semaphore: hidden and in a COMDAT group, so each module has exactly one per
 * (provider, name) however many translation units mention it. */
#define _SONDE_SDT_DEFINE_SEMAPHORE(provider, name)                                                \
  ".ifndef " _SONDE_SDT_SEMAPHORE(                                                                 \
      provider, name) "\n"                                                                         \
                      ".pushsection .probes,\"awG\",\"progbits\"," _SONDE_SDT_SEMAPHORE(           \
                          provider,                                                                \
                          name) ",comdat\n"                                                        \
                                ".weak " _SONDE_SDT_SEMAPHORE(                                     \
                                    provider,                                                      \
                                    name) "\n"                                                     \
                                          ".hidden " _SONDE_SDT_SEMAPHORE(                         \
                                              provider,                                            \
                                              name) "\n"                                           \
                                                    ".balign 2\n" _SONDE_SDT_SEMAPHORE(            \
                                                        provider,                                  \
                                                        name) ": .2byte 0\n"                       \
                                                              ".size " _SONDE_SDT_SEMAPHORE(       \
                                                                  provider, name) ", 2\n"          \
                                                                                  ".popsection\n"  \
                                                                                  ".endif\n"

/* The one-byte anchor tools use to compute prelink offsets; a COMDAT group, so one
 * per module. */
#define _SONDE_SDT_DEFINE_BASE                                                                     \
  ".ifndef _.stapsdt.base\n"                                                                       \
  ".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n"                          \
  ".weak _.stapsdt.base\n"                                                                         \
  ".hidden _.stapsdt.base\n"                                                                       \
  "_.stapsdt.base: .space 1\n"                                                                     \
  ".size _.stapsdt.base, 1\n"                                                                      \
  ".popsection\n"                                                                                  \
  ".endif\n"

/* Note layout: namesz, descsz, type; "stapsdt"; then pc, base and semaphore
 * addresses and the provider, name and argument strings. "?" keeps the note in the
 * COMDAT group of the function holding the site, so it is dropped with it. */
#define _SONDE_SDT_ASM(provider, name, specs)                                                      \
  _SONDE_SDT_DEFINE_SEMAPHORE(provider, name)                                                      \
  "990: .byte 0x0f,0x1f,0x44,0x00,0x00\n"                                                          \
  ".pushsection .note.stapsdt,\"?\",\"note\"\n"                                                    \
  ".balign 4\n"                                                                                    \
  ".4byte 992f-991f, 994f-993f, 3\n"                                                               \
  "991: .asciz \"stapsdt\"\n"                                                                      \
  "992: .balign 4\n"                                                                               \
  "993: .8byte 990b\n"                                                                             \
  ".8byte _.stapsdt.base\n"                                                                        \
  ".8byte " _SONDE_SDT_SEMAPHORE(provider, name) "\n"                                              \
                                                 ".asciz \"" #provider "\"\n"                      \
                                                 ".asciz \"" #name "\"\n" specs ".ascii \"\\0\"\n" \
                                                 "994: .balign 4\n"                                \
                                                 ".popsection\n" _SONDE_SDT_DEFINE_BASE

#define _SONDE_SDT_PROBE_N(provider, name, n, ...)                                                 \
  __asm__ __volatile__(_SONDE_SDT_ASM(provider, name, _SONDE_SDT_SPECS_##n)                        \
                       :                                                                           \
                       : _SONDE_SDT_OPERANDS_##n(__VA_ARGS__))
#define _SONDE_SDT_PROBE_COUNTED(provider, name, n, ...)                                           \
  _SONDE_SDT_PROBE_N(provider, name, n, __VA_ARGS__)
#define _SONDE_SDT_NARG(...) _SONDE_SDT_NARG_(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define _SONDE_SDT_NARG_(_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, n, ...) n

#define SONDE_PROBE(provider, name, ...)                                                           \
  _SONDE_SDT_PROBE_COUNTED(provider, name, _SONDE_SDT_NARG(0, ##__VA_ARGS__), ##__VA_ARGS__)

/* A volatile load of the semaphore, defining it if no marker did yet. */
#define SONDE_PROBE_ENABLED(provider, name)                                                        \
  __extension__({                                                                                  \
    unsigned short _sonde_count;                                                                   \
    __asm__ __volatile__(                                                                          \
        _SONDE_SDT_DEFINE_SEMAPHORE(provider, name) "movzwl " _SONDE_SDT_SEMAPHORE(                \
            provider, name) "(%%rip), %k0\n"                                                       \
        : "=r"(_sonde_count));                                                                     \
    _sonde_count != 0;                                                                             \
  })

#endif /* SONDE_SDT_H */
