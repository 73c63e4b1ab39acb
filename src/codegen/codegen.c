/* codegen.c: the program part of the back end (see codegen.h and, for the
** files of this folder, cg.h): the entry point codegen_module, the helpers
** every file shares, and the assembly of the C file from its sections. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg.h"
#include "driver/compile_ext.h"

void cg_error(Cg *cg, Span at, const char *fmt, const char *arg) {
  if (!cg->failed || cg->d->nerrors < 20) diag_error(cg->d, at, fmt, arg);
  cg->failed = true;
}

void cg_where(Cg *cg, Span s, char *buf, size_t n) {
  const Source *src = cg->o->sm && s.file ? srcmap_get(cg->o->sm, s.file) : NULL;
  if (src && s.line) snprintf(buf, n, "%s:%u:%u", src->name, s.line, s.col);
  else snprintf(buf, n, "%s", cg->o->name);
}

void cg_grow_ids(Cg *cg) {
  uint32_t n = cg->m->nexprs;
  if (n <= cg->nids) return;
  cg->func_of = rly_xrealloc(cg->func_of, n * sizeof(int));
  cg->mark = rly_xrealloc(cg->mark, n * sizeof(uint32_t));
  cg->cand = rly_xrealloc(cg->cand, n * sizeof(uint32_t));
  cg->last = rly_xrealloc(cg->last, n * sizeof(int));
  cg->plan_off = rly_xrealloc(cg->plan_off, n * sizeof(int64_t));
  cg->uvar = rly_xrealloc(cg->uvar, n);
  memset(cg->uvar + cg->nids, 0, n - cg->nids);
  for (uint32_t i = cg->nids; i < n; i++) cg->plan_off[i] = -1;
  memset(cg->func_of + cg->nids, 0, (n - cg->nids) * sizeof(int));
  memset(cg->mark + cg->nids, 0, (n - cg->nids) * sizeof(uint32_t));
  memset(cg->cand + cg->nids, 0, (n - cg->nids) * sizeof(uint32_t));
  memset(cg->last + cg->nids, 0, (n - cg->nids) * sizeof(int));
  cg->nids = n;
}

void cg_indent(StrBuf *o, int n) {
  for (int i = 0; i < n; i++) sb_puts(o, "  ");
}

int cg_type_index(const Cg *cg, const TypeDef *td) {
  for (int i = 0; i < cg->m->ntypes; i++)
    if (cg->m->types[i] == td) return i;
  return -1;
}

bool codegen_name_ok(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n > 64 || (name[0] >= '0' && name[0] <= '9')) return false;
  for (size_t i = 0; i < n; i++) {
    char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  if (strncmp(name, "rlyrt", 5) == 0) return false;
  return true;
}

static void put(StrBuf *c, const StrBuf *part) { sb_putn(c, part->data ? part->data : "", part->len); }

/* {==== The constants in a file of their own (driver/compile_ext.h) ====}
** The blob's bytes come from consts.c (cg_blob_size, cg_write_blob), which
** lays them out. */

/* The last component of path. */
static const char *base_of(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static bool plain_file_name(const char *s) {
  if (!s[0] || s[0] == '.' || s[0] == '-') return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' ||
          *s == '.'))
      return false;
  return true;
}

/* RC_blob as an object the assembler fills from the file `file` (ELF
** targets: GNU as and clang's integrated assembler). The symbol NAME.rc_blob
** is local (no C identifier can clash with it) and hidden (PC-relative
** addressing); it is 64-aligned like the inline blob. */
static void emit_blob_incbin(const Cg *cg, StrBuf *c, size_t bl, const char *file) {
  const char *name = cg->o->name;
  sb_printf(c, "/* Constants: %zu bytes, in %s: the assembler copies them into the object (.incbin). */\n", bl, file);
  sb_printf(c,
            "#if !defined(__ELF__)\n"
            "#error \"%s.c: the constants are in %s, included with .incbin for ELF targets only\"\n"
            "#endif\n",
            name, file);
  sb_printf(c,
            "__asm__(\".pushsection .rodata\\n\"\n"
            "        \"\\t.balign 64\\n\"\n"
            "        \"\\t.type %s.rc_blob, %%object\\n\"\n"
            "        \"\\t.size %s.rc_blob, %zu\\n\"\n"
            "        \"%s.rc_blob:\\n\"\n"
            "        \"\\t.incbin \\\"%s\\\"\\n\"\n"
            "        \"\\t.popsection\");\n",
            name, name, bl, name, file);
  sb_printf(c,
            "extern const unsigned char RC_blob[%zu] __asm__(\"%s.rc_blob\")\n"
            "    __attribute__((visibility(\"hidden\"), aligned(64)));\n",
            bl, name);
}

/* The part of each kernel body for each count of parts n from 2 to
** PARTS_MAX (driver.c compiles a file in n parts at the same time): the
** largest body first into the least loaded part, taking the text's length
** for the C compiler's time, part 0 starting with the rest of the file.
** As `#define RC_PART_OF_b (RC_PARTS == 2 ? p2 : ...)`. */
enum { PARTS_MAX = 16 };

static size_t bodies_len(const Cg *cg) {
  size_t n = 0;
  for (int b = 0; b < cg->kernel_bodies.texts.len; b++) n += strlen(cg->kernel_bodies.texts.data[b]);
  return n;
}

static void put_parts(const Cg *cg, StrBuf *c, size_t rest) {
  const TextTable *t = &cg->kernel_bodies;
  int nb = t->texts.len;
  size_t *len = rly_xcalloc((size_t)nb, sizeof *len);
  int *order = rly_xcalloc((size_t)nb, sizeof *order), *part = rly_xcalloc((size_t)nb * PARTS_MAX, sizeof *part);
  for (int b = 0; b < nb; b++) len[b] = strlen(t->texts.data[b]), order[b] = b;
  for (int i = 1; i < nb; i++) /* by length, longest first; ties by index */
    for (int j = i; j > 0 && (len[order[j]] > len[order[j - 1]] ||
                              (len[order[j]] == len[order[j - 1]] && order[j] < order[j - 1])); j--) {
      int x = order[j];
      order[j] = order[j - 1];
      order[j - 1] = x;
    }
  for (int n = 2; n <= PARTS_MAX; n++) {
    size_t load[PARTS_MAX] = {rest};
    for (int i = 0; i < nb; i++) {
      int best = 0;
      for (int p = 1; p < n; p++)
        if (load[p] < load[best]) best = p;
      load[best] += len[order[i]];
      part[order[i] * PARTS_MAX + n - 1] = best;
    }
  }
  for (int b = 0; b < nb; b++) {
    sb_printf(c, "#define RC_PART_OF_%d (", b);
    for (int n = 2; n <= PARTS_MAX; n++) sb_printf(c, "RC_PARTS == %d ? %d : ", n, part[b * PARTS_MAX + n - 1]);
    sb_puts(c, "0)\n");
  }
  free(len);
  free(order);
  free(part);
}

/* The C file: prelude, constants, prototypes, kernels, code, checkers,
** descriptors and the module description. Objects defined late and used
** early are declared first (tentative definitions). With blob_file, the
** constants' bytes are in that file (.incbin), else a string literal. */
static void assemble(Cg *cg, StrBuf *c, const char *blob_file) {
  const char *name = cg->o->name;
  sb_printf(c, "/* %s.c: generated by relayc from Relay; do not edit. */\n", name);
  int nbodies = cg->kernel_bodies.texts.len;
  /* The kernels' bodies can be compiled apart (driver.c reads this line). */
  if (nbodies > 1) sb_printf(c, "/* relayc-parts: %d, %zu bytes */\n", nbodies, bodies_len(cg));
  sb_puts(c, "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n\n");
  sb_printf(c, "#include \"%s.h\"\n\n", name);
  sb_puts(c, "#define RC_TRUE(x) (*(const uint8_t *)RLYRT_AS_TENSOR(x)->dl.data != 0)\n"
             "#define RC_CALL(c, a, out) \\\n"
             "  (((const rlyrt_code *)RLYRT_AS_CLOSURE(c)->code)->fn(RLYRT_AS_CLOSURE(c), (a), (out)))\n"
                          "#define RC_retain rlyrt_retain_inline\n"
             "/* Drops the reference x holds (NULL: nothing) and clears x. */\n"
             "#define RC_DROP(x) \\\n"
             "  do { \\\n"
             "    rlyrt_release_inline(x); \\\n"
             "    (x) = NULL; \\\n"
             "  } while (0)\n"
             "/* The tensor v of the unboxed scalar s, made when first needed. */\n"
             "#define RC_BOX(v, s, T, code, bits) \\\n"
             "  do { \\\n"
             "    if (!(v)) { \\\n"
             "      rlyrt_tensor *bx_ = rlyrt_tensor_new((DLDataType){code, bits, 1}, 0, NULL, false); \\\n"
             "      if (!bx_) { st = RLYRT_E_NOMEM; goto fail; } \\\n"
             "      *(T *)bx_->dl.data = (s); \\\n"
             "      (v) = &bx_->obj; \\\n"
             "    } \\\n"
             "  } while (0)\n");
  /* The kernels read the module's thread count at each call (lower.h). */
  int threads = cg->o->threads == 0 ? 1 : cg->o->threads < 0 ? 0 : cg->o->threads;
  sb_puts(c, "/* The kernels' thread count (0: one per CPU): relayc build --threads,\n"
             "** rlyrt_module_set_threads. */\n");
  if (nbodies > 0) {
    StrBuf parts = {0};
    put_parts(cg, &parts, cg->code.len + cg->checkers.len + cg->info.len + cg->protos.len + cg->consts.len +
                              (cg->kernels.len > bodies_len(cg) ? cg->kernels.len - bodies_len(cg) : 0));
    /* Compiled in parts (-DRC_PART=i -DRC_PARTS=n, part 0 the rest of the
    ** file), the kernels' bodies (kernels.c) are spread over the parts and
    ** share the thread count; compiled whole, everything is static. */
    sb_printf(c,
              "#ifdef RC_PART\n"
              "#define RC_BODY __attribute__((noinline, visibility(\"hidden\")))\n"
              "#if RC_PARTS > %d\n#error \"%s.c: at most %d parts\"\n#endif\n"
              "#define RC_threads %s_rc_threads\n"
              "%s"
              "#if RC_PART == 0\n"
              "__attribute__((visibility(\"hidden\"))) int32_t RC_threads = %d;\n"
              "#else\n"
              "extern __attribute__((visibility(\"hidden\"))) int32_t RC_threads;\n"
              "#endif\n"
              "#else\n"
              "#define RC_BODY static __attribute__((noinline))\n"
              "static int32_t RC_threads = %d;\n"
              "#endif\n",
              PARTS_MAX, name, PARTS_MAX, name, sb_str(&parts), threads, threads);
    sb_free(&parts);
  } else {
    sb_printf(c, "static int32_t RC_threads = %d;\n", threads);
  }
  sb_puts(c, "#define RLYRT_KERNEL_THREADS rlyrt_thread_count(__atomic_load_n(&RC_threads, __ATOMIC_RELAXED))\n\n");
  if (cg->kdecls.len) {
    sb_puts(c, "/* Reference kernels of the runtime. */\n");
    put(c, &cg->kdecls);
    sb_puts(c, "\n");
  }
  if (nbodies > 0) sb_puts(c, "#if !defined(RC_PART) || RC_PART == 0\n");
  if (cg->used_unit) sb_puts(c, "static const rlyrt_tuple RC_unit = {{RLYRT_REFCOUNT_STATIC, RLYRT_TUPLE, 0}, 0};\n");
  sb_puts(c, "static const rlyrt_module_info RC_module;\n");
  if (blob_file) emit_blob_incbin(cg, c, cg_blob_size(cg), blob_file);
  else cg_emit_blob(cg, c);
  cg_emit_consts_const(cg, c);
  put(c, &cg->consts);
  cg_emit_consts_copy(cg, c);
  sb_puts(c, "\n/* Functions, argument checkers and their descriptors. */\n");
  put(c, &cg->protos);
  for (int i = 0; i < cg->funcs.len; i++) {
    CFunc *F = cg->funcs.data[i];
    sb_printf(c, "static const rlyrt_code %s_code;\n", F->cname);
    if (F->g && F->closure_used) sb_printf(c, "static const rlyrt_closure %s_closure;\n", F->cname);
  }
  for (int k = 0; k < cg->ctor_values.len; k++)
    sb_printf(c, "static const rlyrt_closure CT%d_%d_closure;\n", cg_type_index(cg, cg->ctor_values.data[k]->adt),
              cg->ctor_values.data[k]->tag);
  if (nbodies > 0) sb_puts(c, "#endif\n");
  sb_puts(c, "\n/* Kernels. */\n");
  put(c, &cg->kernels);
  if (nbodies > 0) sb_puts(c, "#if !defined(RC_PART) || RC_PART == 0\n");
  sb_puts(c, "/* Code. */\n");
  put(c, &cg->code);
  sb_puts(c, "/* Argument checkers. */\n");
  put(c, &cg->checkers);
  sb_puts(c, "/* The module. */\n");
  put(c, &cg->info);
  if (nbodies > 0) sb_puts(c, "#endif\n");
}

/* Frees everything cg holds (not the module). */
static void cg_free(Cg *cg) {
  for (int i = 0; i < cg->funcs.len; i++) {
    VEC_FREE(&cg->funcs.data[i]->fvs);
    VEC_FREE(&cg->funcs.data[i]->locals);
    free(cg->funcs.data[i]);
  }
  VEC_FREE(&cg->funcs);
  for (int i = 0; i < cg->groups.len; i++) {
    VEC_FREE(&cg->groups.data[i]->members);
    free(cg->groups.data[i]);
  }
  VEC_FREE(&cg->groups);
  cg_text_table_free(&cg->kernel_texts);
  cg_text_table_free(&cg->kernel_bodies);
  for (int i = 0; i < cg->checker_keys.len; i++) free((char *)cg->checker_keys.data[i]);
  VEC_FREE(&cg->checker_keys);
  VEC_FREE(&cg->checker_types);
  VEC_FREE(&cg->constdata);
  sb_free(&cg->kdecls);
  sb_free(&cg->protos);
  sb_free(&cg->consts);
  sb_free(&cg->kernels);
  sb_free(&cg->checkers);
  sb_free(&cg->code);
  sb_free(&cg->info);
  VEC_FREE(&cg->ctor_values);
  VEC_FREE(&cg->nullary);
  lowering_free(cg->L);
  free(cg->func_of);
  free(cg->mark);
  free(cg->cand);
  free(cg->last);
  free(cg->plan_off);
  free(cg->uvar);
  VEC_FREE(&cg->uvars);
}

bool codegen_target_native(const CodegenOptions *o) { return o->target && strcmp(o->target, "native") == 0; }

static void descs_free(KernelDescs *k) {
  for (int i = 0; i < k->len; i++) {
    free(k->data[i].ops);
    free(k->data[i].shape);
    free(k->data[i].schedule);
  }
  VEC_FREE(k);
}

/* The statistics lines of driver/compile_ext.h: fused groups, kernels,
** workspaces, constants. */
static void put_stats(const Cg *cg, const KernelDescs *k, const char *blob_file, StrBuf *o) {
  int fused = 0;
  for (int i = 0; i < k->len; i++) fused += strstr(k->data[i].ops, ", ") != NULL;
  sb_printf(o, "fused groups: %d kernels, %d of several operators\n", k->len, fused);
  for (int i = 0; i < k->len; i++)
    sb_printf(o, "kernel %d: %s | %s | %s\n", i + 1, k->data[i].ops, k->data[i].shape, k->data[i].schedule);
  /* A group of globals shares one frame, planned with its first member. */
  int64_t total = 0;
  for (int i = 0; i < cg->funcs.len; i++) {
    const CFunc *F = cg->funcs.data[i];
    total += F->plan_size + (F->member == 0 ? F->frame_size : 0);
  }
  sb_printf(o, "workspace: %lld bytes\n", (long long)total);
  for (int i = 0; i < cg->funcs.len; i++) {
    const CFunc *F = cg->funcs.data[i];
    if (F->plan_size) sb_printf(o, "workspace %s: %lld bytes (static plan)\n", F->where, (long long)F->plan_size);
    if (F->frame_size && F->member == 0)
      sb_printf(o, "workspace %s: %lld bytes (frame%s)\n", F->where, (long long)F->frame_size,
                F->g && cg->groups.data[F->group]->members.len > 1 ? " of its group" : "");
  }
  size_t bytes = cg_blob_size(cg);
  sb_printf(o, "constants: %d tensors, %zu bytes", cg->constdata.len, bytes);
  if (blob_file) sb_printf(o, " (in %s, assembled with .incbin)\n", blob_file);
  else sb_puts(o, bytes ? " (a C string literal)\n" : "\n");
}

bool codegen_module(Module *m, const CodegenOptions *o, StrBuf *c, StrBuf *h, Diag *d) {
  return codegen_module_ext(m, o, NULL, c, h, d);
}

bool codegen_module_ext(Module *m, const CodegenOptions *o, CodegenExtra *x, StrBuf *c, StrBuf *h, Diag *d) {
  Cg cg = {0};
  /* A copy of the options holds this run's kernel descriptions (kernels.c
  ** adds one per kernel; interface.c reads them). */
  KernelDescs descs = {0};
  CodegenOptions own = *o;
  own.kernels = &descs;
  cg.m = m;
  cg.o = &own;
  cg.d = d;
  cg.L = lowering_new();
  /* Analyses: C functions and free variables, tail-call groups, plans. */
  cg_collect_funcs(&cg);
  cg_make_groups(&cg);
  for (int i = 0; i < cg.funcs.len; i++) cg_plan_function(&cg, cg.funcs.data[i]);
  /* Code: globals by group, then closures, each alone. */
  cg_emit_descriptors(&cg);
  for (int i = 0; i < cg.groups.len; i++) cg_emit_group(&cg, cg.groups.data[i]);
  for (int i = 0; i < cg.funcs.len; i++) {
    CFunc *F = cg.funcs.data[i];
    if (F->g) continue;
    Group G = {0};
    VEC_PUSH(&G.members, F);
    snprintf(G.cname, sizeof G.cname, "%s", F->cname);
    F->member = 0;
    cg_emit_group(&cg, &G);
    VEC_FREE(&G.members);
  }
  cg_emit_ctor_values(&cg);
  /* Checkers (the description may ask for more), the description, the header. */
  for (int i = 0; i < cg.funcs.len; i++) cg_emit_function_checker(&cg, cg.funcs.data[i]);
  StrBuf hdr = {0};
  cg_emit_info(&cg, &hdr);
  while (cg.nchecked < cg.checker_keys.len) cg_emit_checker(&cg, cg.nchecked++);
  for (int i = 0; i < cg.funcs.len; i++) {
    CFunc *F = cg.funcs.data[i];
    if (F->g && F->closure_used)
      sb_printf(&cg.info,
                "static const rlyrt_closure %s_closure = {{RLYRT_REFCOUNT_STATIC, RLYRT_CLOSURE, RLYRT_CLOSURE_NATIVE}, "
                "&%s_code, 0};\n", F->cname, F->cname);
  }
  bool ok = !cg.failed;
  /* The constants in a file of their own when asked and big enough. */
  const char *blob_file = NULL;
  if (x) x->blob_written = false;
  if (ok && x && x->blob_path && cg.constdata.len && cg_blob_size(&cg) >= x->blob_min) {
    const char *file = base_of(x->blob_path);
    char err[1024];
    if (!plain_file_name(file)) {
      diag_error(d, (Span){0, 0, 0, 0}, "the constants' file needs a plain name, not '%s'", file);
      ok = false;
    } else if (!cg_write_blob(&cg, x->blob_path, err, sizeof err)) {
      diag_error(d, (Span){0, 0, 0, 0}, "%s", err);
      ok = false;
    } else {
      blob_file = file;
      x->blob_written = true;
    }
  }
  if (ok) assemble(&cg, c, blob_file);
  if (ok) sb_putn(h, hdr.data ? hdr.data : "", hdr.len);
  if (ok && x && x->stats) put_stats(&cg, &descs, blob_file, x->stats);
  sb_free(&hdr);
  cg_free(&cg);
  descs_free(&descs);
  return ok;
}

