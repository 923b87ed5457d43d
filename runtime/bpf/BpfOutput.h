/* Part of the BPF runtime, included once by BpfRuntime.bpf.c (not a
 * standalone header): printf as ring-buffer records. */

/* ------------------------------------------------------------------ printf */

/* printf(format #fmt, args): the record; bit i of string_mask: args[i] is a string. */
SONDE_INLINE void sonde_bpf_printf(sonde_context *ctx, uint32_t fmt, const SondeFormatArg *args,
                                   uint32_t count, uint64_t stringMask) {
  char *rec = recordArea((char *)ctx);
  sonde_bpf_record *r = (sonde_bpf_record *)rec;
  fillHeader(r, SONDE_BPF_RECORD_PRINTF, fmt);
  r->string_mask = stringMask;
  uint32_t off = sizeof *r;
  for (uint32_t c = 0; c < 64; ++c) {
    if (c >= count)
      break;
    // The record is sized for every string at full length, so the mask never
    // changes the offset; it gives the verifier the bound the arithmetic hides
    // (the scratch has a string's room past the masked range).
    asm volatile("" : "+r"(off));
    off &= sonde_cfg_record_mask;
    if (stringMask & (1ull << c)) {
      long n = bpf_probe_read_kernel_str(rec + off + 2, sonde_cfg_str_cap, args[c].s);
      if (n < 1) {
        n = 1;
        rec[off + 2] = 0;
      }
      if (n > sonde_cfg_str_cap)
        n = sonde_cfg_str_cap;
      *(uint16_t *)(rec + off) = (uint16_t)(n - 1);
      off += ((uint32_t)n + 2 + 7) & ~7u;
    } else {
      *(int64_t *)(rec + off) = args[c].i;
      off += 8;
    }
  }
  r->size = off;
  if (off <= sonde_cfg_record_bytes)
    emit(rec, off);
}
