/* consts.c: constants.
**
** Every constant's data goes once into one `_Alignas(64)` byte array,
** RC_blob, written as a string literal (C compilers read those much faster
** than initializers of typed arrays; see bench/README.md), each constant
** at a 64-aligned offset; from 1 MiB on, for the host, codegen.c writes
** the same bytes to NAME.blob instead and the C includes them with the
** assembler's .incbin (bench/README.md, "Big models"). A constant is a static rlyrt_tensor C<k> with the
** refcount RLYRT_REFCOUNT_STATIC whose data points into the blob. A
** constant that a GEMM kernel reads packed (lower_loops_prepacked) is
** stored packed, as a float32 vector of its own, once per packing; its
** unpacked data only when something else refers to it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg.h"

static void blob_bytes(StrBuf *b, const unsigned char *p, size_t n) {
  /* 32 bytes per source line; every non-printable byte as a 3-digit octal
  ** escape (never absorbs a following digit). Each line is built in a
  ** local buffer and appended at once: a model's weights are many MB. */
  char line[4 + 32 * 4 + 3];
  for (size_t i = 0; i < n; i += 32) {
    size_t m = 0;
    line[m++] = ' ';
    line[m++] = ' ';
    line[m++] = '"';
    for (size_t k = i; k < n && k < i + 32; k++) {
      unsigned char c = p[k];
      if (c >= 32 && c < 127 && c != '"' && c != '\\' && c != '?') {
        line[m++] = (char)c;
      } else {
        line[m++] = '\\';
        line[m++] = (char)('0' + (c >> 6));
        line[m++] = (char)('0' + ((c >> 3) & 7));
        line[m++] = (char)('0' + (c & 7));
      }
    }
    line[m++] = '"';
    line[m++] = '\n';
    sb_putn(b, line, m);
  }
}

static size_t blob_len(const Cg *cg) {
  size_t n = 0;
  for (int i = 0; i < cg->constdata.len; i++) n = ((n + 63) & ~(size_t)63) + cg->constdata.data[i]->nbytes;
  return n;
}

size_t cg_blob_size(const Cg *cg) { return blob_len(cg); }

/* Writes the blob's bytes to path: the constants' data as they are, no copy. */
bool cg_write_blob(const Cg *cg, const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    snprintf(err, errlen, "cannot create '%s': %s", path, strerror(errno));
    return false;
  }
  static const unsigned char zeros[64];
  size_t off = 0;
  bool ok = true;
  for (int i = 0; ok && i < cg->constdata.len; i++) {
    const ConstData *cd = cg->constdata.data[i];
    size_t start = (off + 63) & ~(size_t)63;
    if (start > off) ok = fwrite(zeros, 1, start - off, f) == start - off;
    if (ok && cd->nbytes) ok = fwrite(cd->data, 1, cd->nbytes, f) == cd->nbytes;
    off = start + cd->nbytes;
  }
  if (!ok) snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
  if (fclose(f) != 0 && ok) {
    snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
    ok = false;
  }
  if (!ok) remove(path);
  return ok;
}

/* The index of constant data c in the blob, registered (with its static
** tensor object C<k>) when new. */
static int const_index(Cg *cg, const ConstData *c) {
  for (int i = 0; i < cg->constdata.len; i++)
    if (cg->constdata.data[i] == c) return i;
  size_t off = (blob_len(cg) + 63) & ~(size_t)63;
  int k = cg->constdata.len;
  VEC_PUSH(&cg->constdata, c);
  int nd = c->ndim;
  /* A real rlyrt_tensor (generated code reads every object through its
  ** own type), its shape in an array of its own. */
  if (nd) {
    sb_printf(&cg->consts, "static const int64_t C%d_shape[] = {", k);
    for (int i = 0; i < nd; i++) sb_printf(&cg->consts, "%s%lld", i ? ", " : "", (long long)c->shape[i]);
    sb_puts(&cg->consts, "};\n");
  }
  /* An empty constant points nowhere: when all are empty there is no
  ** RC_blob to point into. */
  char data[64];
  if (c->nbytes) snprintf(data, sizeof data, "(void *)(RC_blob + %zu)", off);
  else snprintf(data, sizeof data, "NULL");
  sb_printf(&cg->consts,
            "static RC_CONST rlyrt_tensor C%d = {{RLYRT_REFCOUNT_STATIC, RLYRT_TENSOR, 0}, "
            "{%s, {kDLCPU, 0}, %d, {%u, %u, %u}, ",
            k, data, nd, c->dtype.code, c->dtype.bits, c->dtype.lanes);
  if (nd) sb_printf(&cg->consts, "(int64_t *)C%d_shape, NULL, 0}};\n", k);
  else sb_puts(&cg->consts, "NULL, NULL, 0}};\n");
  return k;
}

/* The C expression of constant e: a static tensor object. */
void cg_const_ref(Cg *cg, StrBuf *out, const Expr *e) {
  sb_printf(out, "(rlyrt_object *)&C%d.obj", const_index(cg, e->u.constant.value));
}

/* A packed constant is constant data of its own (in the module's arena,
** freed with it): a float32 vector of the packed floats, made once per
** constant and packing. */
void cg_const_ref_packed(Cg *cg, StrBuf *out, const Expr *e, const LowerPrepack *p) {
  const ConstData *src = e->u.constant.value;
  int k = -1;
  for (int i = 0; i < cg->packed.len && k < 0; i++) {
    const CgPacked *c = &cg->packed.data[i];
    if (c->src == src && c->p.q == p->q && c->p.k == p->k && c->p.n == p->n && c->p.b_sq == p->b_sq &&
        c->p.b_sk == p->b_sk && c->p.b_sj == p->b_sj && c->p.pw == p->pw && c->p.wino == p->wino &&
        c->p.kc == p->kc && c->p.pad == p->pad)
      k = c->k;
  }
  if (k < 0) {
    Arena *a = cg->m->arena;
    size_t nbytes;
    void *data = lower_prepack(p, src->data, &nbytes);
    ConstData *cd = ARENA_NEW(a, ConstData);
    cd->dtype = src->dtype;
    cd->ndim = 1;
    cd->shape = ARENA_ARRAY(a, int64_t, 1);
    cd->shape[0] = (int64_t)(nbytes / 4);
    cd->data = arena_alloc(a, nbytes ? nbytes : 1, 64);
    memcpy(cd->data, data, nbytes);
    cd->nbytes = nbytes;
    free(data);
    k = const_index(cg, cd);
    CgPacked c = {src, *p, k};
    AVEC_PUSH(a, &cg->packed, c);
  }
  sb_printf(out, "(rlyrt_object *)&C%d.obj", k);
}

/* A shared module copies constants of at least this many bytes into memory
** of their own when it is loaded (rlyrt_consts_copy: runtime/src/consts.c
** says why); its constant tensors are then writable, to be pointed there. */
enum { CONSTS_COPY_MIN = 4 << 20 };

void cg_emit_consts_const(const Cg *cg, StrBuf *c) {
  if (blob_len(cg) >= CONSTS_COPY_MIN)
    sb_puts(c, "#ifdef RLYRT_SHARED_MODULE\n#define RC_CONST\n#else\n#define RC_CONST const\n#endif\n");
  else
    sb_puts(c, "#define RC_CONST const\n");
}

void cg_emit_consts_copy(const Cg *cg, StrBuf *c) {
  size_t bl = blob_len(cg);
  if (bl < CONSTS_COPY_MIN) return;
  sb_printf(c,
            "#ifdef RLYRT_SHARED_MODULE\n"
            "/* The constants' %zu bytes are copied at load into memory of their own\n"
            "** (huge pages where there are; RLYRT_CONSTS_COPY=0 keeps them here). */\n"
            "static rlyrt_tensor *const RC_consts[] = {",
            bl);
  int n = 0;
  for (int i = 0; i < cg->constdata.len; i++)
    if (cg->constdata.data[i]->nbytes) sb_printf(c, "%s&C%d", n++ % 8 ? ", " : n > 1 ? ",\n  " : "\n  ", i);
  sb_puts(c,
          "};\n"
          "static void *RC_consts_at;\n"
          "__attribute__((constructor)) static void RC_consts_load(void) {\n"
          "  RC_consts_at = rlyrt_consts_copy(RC_blob, sizeof RC_blob);\n"
          "  if (!RC_consts_at) return;\n"
          "  for (size_t i = 0; i < sizeof RC_consts / sizeof *RC_consts; i++)\n"
          "    RC_consts[i]->dl.data = (unsigned char *)RC_consts_at + ((const unsigned char *)RC_consts[i]->dl.data - RC_blob);\n"
          "}\n"
          "__attribute__((destructor)) static void RC_consts_unload(void) { rlyrt_consts_free(RC_consts_at, sizeof RC_blob); }\n"
          "#endif\n");
}

void cg_emit_blob(const Cg *cg, StrBuf *c) {
  size_t bl = blob_len(cg);
  sb_printf(c, "/* Constants: %zu bytes. */\n", bl);
  if (bl) {
    sb_printf(c, "static _Alignas(64) const unsigned char RC_blob[%zu] =\n", bl);
    size_t off = 0;
    static const unsigned char zeros[64];
    for (int i = 0; i < cg->constdata.len; i++) {
      const ConstData *cd = cg->constdata.data[i];
      size_t start = (off + 63) & ~(size_t)63;
      if (start > off) blob_bytes(c, zeros, start - off);
      blob_bytes(c, cd->data, cd->nbytes);
      off = start + cd->nbytes;
    }
    sb_puts(c, ";\n");
  }
}
