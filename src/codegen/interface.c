/* interface.c: the module's interface.
**
** The module description (rlyrt_module_info, RC_module): every global,
** sorted by name, with its Relay type, parameter names and types, its code
** and checker; the constructors by name. NAME_module() returns it, and
** rlyrt_module_entry() too in a shared library. The header NAME.h declares
** NAME_module() and, for every global whose parameters are static tensors
** and whose result is a static tensor or a tuple of them, a typed entry
** point NAME_FN(const DLTensor *x, ..., DLTensor *out, void *workspace):
** the inputs are wrapped without copying, the result is copied into the
** caller's buffers, the workspace (NAME_FN_WORKSPACE_SIZE bytes) holds the
** static memory plan's tensors.
**
** What was built (relayc's version, target, levels, kernels by schedule)
** heads the header and, for modules built with --profile or --target
** native, is also an rlyrt_module_build (NAME_module_build(),
** rlyrt_module_build_entry()) with the profile records and the ISA list;
** native modules check the CPU in NAME_module(), rlyrt_module_entry() and
** every typed entry point (docs/design.md, "What was built, profiling and
** the CPU check"). Ordinary modules' C is unchanged by all this. */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg.h"

static int cmp_defs(const void *a, const void *b) {
  const GlobalDef *x = *(const GlobalDef *const *)a, *y = *(const GlobalDef *const *)b;
  return strcmp(x->name->text, y->name->text);
}

static bool static_tensor(const Type *t) {
  if (!t || t->kind != TYPE_TENSOR || t->u.tensor.dtype.lanes != 1) return false;
  for (int i = 0; i < t->u.tensor.ndim; i++)
    if (t->u.tensor.shape[i] < 0) return false;
  return true;
}

static const char *const c_keywords[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
    "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "out",
    "bool", "true", "false", "NULL"};

static void param_cname(const Expr *p, int i, char *buf, size_t n) {
  const char *s = p->u.var.name ? p->u.var.name->text : "";
  cg_sanitize(s, buf, n);
  bool ok = buf[0] && !(buf[0] >= '0' && buf[0] <= '9') && strncmp(buf, "out", 3) != 0 && buf[0] != '_' &&
            strncmp(buf, "rc_", 3) != 0;
  for (size_t k = 0; ok && k < RLY_COUNTOF(c_keywords); k++)
    if (strcmp(buf, c_keywords[k]) == 0) ok = false;
  if (!ok) snprintf(buf, n, "arg%d", i);
}

static void emit_typed_entry(Cg *cg, StrBuf *h, CFunc *F, const char *entry) {
  const Expr *fn = F->fn;
  const Type *ft = fn->type;
  const Type *rt = ft && ft->kind == TYPE_FUNC ? ft->u.func.ret : NULL;
  int np = fn->u.func.nparams;
  for (int i = 0; i < np; i++)
    if (!static_tensor(fn->u.func.params[i]->type)) return;
  int nouts = 0;
  if (static_tensor(rt)) nouts = 1;
  else if (rt && rt->kind == TYPE_TUPLE && rt->u.tuple.n > 0) {
    for (int i = 0; i < rt->u.tuple.n; i++)
      if (!static_tensor(rt->u.tuple.fields[i])) return;
    nouts = rt->u.tuple.n;
  } else {
    return;
  }
  /* Unique parameter names. */
  char (*names)[64] = rly_xcalloc((size_t)(np ? np : 1), 64);
  for (int i = 0; i < np; i++) {
    param_cname(fn->u.func.params[i], i, names[i], 64);
    for (int j = 0; j < i; j++)
      if (strcmp(names[i], names[j]) == 0) snprintf(names[i], 64, "arg%d", i);
  }
  StrBuf sig = {0}, params = {0}, argv = {0};
  for (int i = 0; i < np; i++) {
    sb_printf(&params, "%sconst DLTensor *%s", i ? ", " : "", names[i]);
    sb_printf(&argv, "%s, ", names[i]);
  }
  for (int i = 0; i < nouts; i++) {
    sb_printf(&params, "%sDLTensor *out", np || i ? ", " : "");
    sb_puts(&argv, "out");
    if (nouts > 1) {
      sb_printf(&params, "%d", i);
      sb_printf(&argv, "%d", i);
    }
    sb_puts(&argv, ", ");
  }
  sb_puts(&params, ", void *workspace");
  sb_puts(&argv, "workspace");
  sb_printf(&sig, "rlyrt_status %s(%s)", entry, sb_str(&params));
  char *ty = cg_type_string(ft);
  char macro[200];
  size_t ml = 0;
  for (const char *p = entry; *p && ml + 1 < sizeof macro; p++)
    macro[ml++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
  macro[ml] = 0;
  sb_printf(h, "/* %s: %s\n** Inputs and outputs are CPU tensors of exactly these dtypes and shapes\n"
               "** (compact, row-major); the outputs' data is written. workspace: NULL, or\n"
               "** %s_WORKSPACE_SIZE bytes aligned to 64 for the intermediate tensors\n"
               "** (one per concurrent call; 0 when the function has no static memory plan:\n"
               "** its intermediates then come from the runtime's allocator). */\n"
               "#define %s_WORKSPACE_SIZE %lld\n%s;\n\n",
            F->where, ty, macro, macro, (long long)F->plan_size, sb_str(&sig));
  free(ty);
  StrBuf *o = &cg->info;
  if (codegen_target_native(cg->o)) {
    /* The entry point checks the CPU (built for baseline x86-64), then
    ** runs the code built for this one. */
    sb_printf(o, "static rlyrt_status RC_%s_run(%s);\n", entry, sb_str(&params));
    sb_printf(o, "RC_BASELINE %s {\n  if (!RC_cpu_ok()) return RLYRT_E_UNSUPPORTED;\n  return RC_%s_run(%s);\n}\n",
              sb_str(&sig), entry, sb_str(&argv));
    sb_clear(&sig);
    sb_printf(&sig, "static rlyrt_status RC_%s_run(%s)", entry, sb_str(&params));
  }
  sb_printf(o, "%s {\n  rlyrt_status rc_s;\n  rlyrt_object *rc_r = NULL;\n", sb_str(&sig));
  sb_free(&sig);
  sb_free(&params);
  sb_free(&argv);
  for (int i = 0; i < np; i++) {
    sb_printf(o, "  if (!%s) return rlyrt_error(RLYRT_E_ARG, \"%s: %s is NULL\");\n", names[i], entry, names[i]);
    sb_printf(o, "  rlyrt_tensor rc_w%d = {{RLYRT_REFCOUNT_STATIC, RLYRT_TENSOR, 0}, *%s};\n", i, names[i]);
  }
  if (np) {
    sb_puts(o, "  rlyrt_object *rc_args[] = {");
    for (int i = 0; i < np; i++) sb_printf(o, "%s&rc_w%d.obj", i ? ", " : "", i);
    sb_puts(o, "};\n");
  }
  for (int i = 0; i < nouts; i++) {
    const char *on = nouts > 1 ? "out%d" : "out";
    char oname[16];
    snprintf(oname, sizeof oname, on, i);
    sb_printf(o, "  if (!%s) return rlyrt_error(RLYRT_E_ARG, \"%s: %s is NULL\");\n", oname, entry, oname);
    sb_printf(o, "  rlyrt_tensor rc_o%d = {{RLYRT_REFCOUNT_STATIC, RLYRT_TENSOR, 0}, *%s};\n", i, oname);
    const Type *ot = nouts > 1 ? rt->u.tuple.fields[i] : rt;
    int c = cg_checker_for(cg, ot);
    sb_printf(o, "  if ((rc_s = CHK%d(&rc_o%d.obj, \"%s: %s\")) != RLYRT_OK) return rc_s;\n", c, i, entry, oname);
  }
  sb_printf(o, "  if ((rc_s = %s_check(%s, %d)) != RLYRT_OK) return rc_s;\n", F->cname, np ? "rc_args" : "NULL", np);
  if (F->plan_size) {
    sb_printf(o, "  if ((uintptr_t)workspace %% 64)\n"
                 "    return rlyrt_error(RLYRT_E_ARG, \"%s: the workspace is not aligned to 64 bytes\");\n", entry);
    sb_printf(o, "  void *rc_ws = workspace ? workspace : rlyrt_scratch_alloc(%lld);\n", (long long)F->plan_size);
    sb_puts(o, "  if (!rc_ws) return RLYRT_E_NOMEM;\n");
    sb_printf(o, "  rc_s = %s_ws(NULL, %s, &rc_r, rc_ws);\n", F->cname, np ? "rc_args" : "NULL");
    sb_puts(o, "  if (!workspace) rlyrt_scratch_free(rc_ws);\n  if (rc_s != RLYRT_OK) return rc_s;\n");
  } else {
    sb_puts(o, "  (void)workspace;\n");
    sb_printf(o, "  if ((rc_s = %s(NULL, %s, &rc_r)) != RLYRT_OK) return rc_s;\n", F->cname, np ? "rc_args" : "NULL");
  }
  for (int i = 0; i < nouts; i++) {
    const char *on = nouts > 1 ? "out%d" : "out";
    char oname[16];
    snprintf(oname, sizeof oname, on, i);
    if (nouts > 1)
      sb_printf(o, "  { const rlyrt_tensor *rc_t = RLYRT_AS_TENSOR(RLYRT_AS_TUPLE(rc_r)->fields[%d]);\n", i);
    else
      sb_puts(o, "  { const rlyrt_tensor *rc_t = RLYRT_AS_TENSOR(rc_r);\n");
    sb_printf(o, "    size_t rc_n = rlyrt_tensor_nbytes(rc_t);\n    if (rc_n) memcpy(%s->data, rc_t->dl.data, rc_n); }\n", oname);
  }
  sb_puts(o, "  rlyrt_release(rc_r);\n  return RLYRT_OK;\n}\n\n");
  free(names);
}

/* {==== What was built ====} */

/* The kernels by schedule: "10 (4 reference, 2 GEMV float32, ...)", most
** frequent first, ties by name (deterministic). */
static void put_kernel_counts(StrBuf *o, const KernelDescs *k) {
  sb_printf(o, "%d", k->len);
  bool *done = rly_xcalloc((size_t)(k->len ? k->len : 1), sizeof *done);
  for (int round = 0; round < k->len; round++) {
    int best = -1, best_n = 0;
    for (int i = 0; i < k->len; i++) {
      if (done[i]) continue;
      int n = 0;
      for (int j = i; j < k->len; j++) n += strcmp(k->data[j].schedule, k->data[i].schedule) == 0;
      if (best < 0 || n > best_n || (n == best_n && strcmp(k->data[i].schedule, k->data[best].schedule) < 0)) {
        best = i;
        best_n = n;
      }
    }
    if (best < 0) break;
    for (int j = best; j < k->len; j++)
      if (strcmp(k->data[j].schedule, k->data[best].schedule) == 0) done[j] = true;
    sb_printf(o, "%s%d %s", round ? ", " : " (", best_n, k->data[best].schedule);
  }
  if (k->len) sb_putc(o, ')');
  free(done);
}

/* The build description, one fact a line: relayc's version, the target,
** the levels, the kernels by schedule. */
static void build_summary(const Cg *cg, StrBuf *o) {
  const CodegenOptions *op = cg->o;
  sb_printf(o, "relayc %s\n", op->version && op->version[0] ? op->version : "(unknown version)");
  if (codegen_target_native(op)) {
    sb_puts(o, "target: native (-march=native): ");
    if (op->isa && op->isa[0]) sb_printf(o, "%s", op->isa);
    else sb_puts(o, "the extensions the C compiler enables");
    sb_puts(o, "; checked when the module is loaded\n");
  } else if (op->target && op->target[0]) {
    sb_printf(o, "target: %s (--target=%s)\n", op->target, op->target);
  } else {
    sb_puts(o, "target: baseline x86-64; GEMV/GEMM kernels pick AVX-512, AVX2+FMA or portable code at run time\n");
  }
  if (op->opt_size) sb_puts(o, "optimisation: -Os (the passes of -O2)");
  else sb_printf(o, "optimisation: -O%d", op->opt_level);
  sb_printf(o, ", fusion %s, profiling %s\n", op->fuse ? "on" : "off", op->profile ? "on" : "off");
  if (op->threads < 0) sb_puts(o, "threads: one per CPU (rlyrt_module_set_threads changes it)\n");
  else sb_printf(o, "threads: %d (rlyrt_module_set_threads changes it)\n", op->threads ? op->threads : 1);
  sb_puts(o, "kernels: ");
  put_kernel_counts(o, op->kernels);
  sb_putc(o, '\n');
}

/* The summary as the header's second comment. */
static void put_summary_comment(StrBuf *h, const char *summary) {
  sb_puts(h, "/* Built by");
  for (const char *p = summary; *p;) {
    size_t n = strcspn(p, "\n");
    sb_puts(h, p == summary ? " " : "\n**   ");
    sb_putn(h, p, n);
    p += n;
    if (*p) p++;
  }
  sb_puts(h, " */\n");
}

/* Predefined macros of the C compiler and the extensions they mean (GCC's
** -m names, as rlyrt_cpu_check knows them). */
static const char *const isa_macros[][2] = {
    {"__SSE3__", "sse3"},         {"__SSSE3__", "ssse3"},       {"__SSE4_1__", "sse4.1"},
    {"__SSE4_2__", "sse4.2"},     {"__POPCNT__", "popcnt"},     {"__MOVBE__", "movbe"},
    {"__AES__", "aes"},           {"__PCLMUL__", "pclmul"},     {"__XSAVE__", "xsave"},
    {"__RDRND__", "rdrnd"},       {"__AVX__", "avx"},           {"__F16C__", "f16c"},
    {"__FMA__", "fma"},           {"__BMI__", "bmi"},           {"__BMI2__", "bmi2"},
    {"__LZCNT__", "lzcnt"},       {"__AVX2__", "avx2"},         {"__ADX__", "adx"},
    {"__RDSEED__", "rdseed"},     {"__SHA__", "sha"},           {"__GFNI__", "gfni"},
    {"__VAES__", "vaes"},         {"__VPCLMULQDQ__", "vpclmulqdq"}, {"__AVXVNNI__", "avxvnni"},
    {"__AVX512F__", "avx512f"},   {"__AVX512CD__", "avx512cd"}, {"__AVX512DQ__", "avx512dq"},
    {"__AVX512BW__", "avx512bw"}, {"__AVX512VL__", "avx512vl"}, {"__AVX512IFMA__", "avx512ifma"},
    {"__AVX512VBMI__", "avx512vbmi"},   {"__AVX512VBMI2__", "avx512vbmi2"},
    {"__AVX512VNNI__", "avx512vnni"},   {"__AVX512BITALG__", "avx512bitalg"},
    {"__AVX512VPOPCNTDQ__", "avx512vpopcntdq"}, {"__AVX512BF16__", "avx512bf16"},
    {"__AVX512FP16__", "avx512fp16"},
};

void codegen_isa_names(const char *predefined, StrBuf *out) {
  for (size_t i = 0; i < RLY_COUNTOF(isa_macros); i++) {
    char line[64];
    snprintf(line, sizeof line, "#define %s ", isa_macros[i][0]);
    if (strstr(predefined, line)) sb_printf(out, "%s%s", out->len ? " " : "", isa_macros[i][1]);
  }
}

/* Native code: the extensions it is compiled for (from the C compiler's
** own macros, so they are what it really used) and the CPU check, built
** for baseline x86-64 so that it runs, and fails cleanly, on any CPU. */
static void emit_cpu_check(Cg *cg) {
  StrBuf *o = &cg->info;
  sb_puts(o, "#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))\n"
             "#define RC_BASELINE __attribute__((target(\"arch=x86-64\")))\n#else\n#define RC_BASELINE\n#endif\n");
  sb_puts(o, "/* The extensions this file is compiled for (--target native). */\nstatic const char RC_isa[] = \"\"\n");
  for (size_t i = 0; i < RLY_COUNTOF(isa_macros); i++)
    sb_printf(o, "#ifdef %s\n  \"%s \"\n#endif\n", isa_macros[i][0], isa_macros[i][1]);
  sb_puts(o, "  ;\n/* 1 once this CPU is known to have them (the check is the runtime's). */\n"
             "static int RC_cpu_known;\n"
             "static RC_BASELINE int RC_cpu_ok(void) {\n"
             "  if (__atomic_load_n(&RC_cpu_known, __ATOMIC_RELAXED)) return 1;\n"
             "  if (rlyrt_cpu_check(RC_isa, \"the module ");
  sb_puts(o, cg->o->name);
  sb_puts(o, "\") != RLYRT_OK) return 0;\n"
             "  __atomic_store_n(&RC_cpu_known, 1, __ATOMIC_RELAXED);\n  return 1;\n}\n");
}

/* The build description (rlyrt_module_build) of a native or profiled
** module, its records, NAME_module_build() and rlyrt_module_build_entry(). */
static void emit_build(Cg *cg, const char *summary) {
  StrBuf *o = &cg->info;
  bool native = codegen_target_native(cg->o);
  const KernelDescs *k = cg->o->kernels;
  if (native) emit_cpu_check(cg);
  bool records = cg->o->profile && k->len > 0;
  if (records) {
    sb_puts(o, "static rlyrt_kernel_record *const RC_records[] = {");
    for (int i = 0; i < k->len; i++) sb_printf(o, "%s&K%d_prof", i ? ", " : "", i);
    sb_puts(o, "};\n");
  }
  const char *target = cg->o->target ? cg->o->target : "";
  sb_puts(o, "static const rlyrt_module_build RC_build = {sizeof(rlyrt_module_build), ");
  const char *version = cg->o->version ? cg->o->version : "";
  lower_cstring(o, version, strlen(version));
  sb_puts(o, ", ");
  lower_cstring(o, target, strlen(target));
  sb_printf(o, ", %s, ", native ? "RC_isa" : "\"\"");
  lower_cstring(o, summary, strlen(summary));
  sb_printf(o, ", %d, %d, %s};\n", cg->o->profile ? 1 : 0, k->len, records ? "RC_records" : "NULL");
  const char *baseline = native ? "RC_BASELINE " : "";
  sb_printf(o, "%sconst rlyrt_module_build *%s_module_build(void) { return &RC_build; }\n", baseline, cg->o->name);
  sb_puts(o, "#ifdef RLYRT_SHARED_MODULE\n#if defined(__GNUC__) || defined(__clang__)\n"
             "__attribute__((visibility(\"default\")))\n#endif\n"
             "const rlyrt_module_build *rlyrt_module_build_entry(void);\n"
             "#if defined(__GNUC__) || defined(__clang__)\n__attribute__((visibility(\"default\")))\n#endif\n");
  sb_printf(o, "%sconst rlyrt_module_build *rlyrt_module_build_entry(void) { return &RC_build; }\n#endif\n", baseline);
}

void cg_emit_info(Cg *cg, StrBuf *h) {
  const char *name = cg->o->name;
  int n = cg->m->ndefs;
  GlobalDef **sorted = rly_xcalloc((size_t)(n ? n : 1), sizeof *sorted);
  memcpy(sorted, cg->m->defs, sizeof *sorted * (size_t)n);
  qsort(sorted, (size_t)n, sizeof *sorted, cmp_defs);
  StrBuf *o = &cg->info;
  StrBuf table = {0};
  for (int i = 0; i < n; i++) {
    CFunc *F = cg_func_of(cg, sorted[i]->func);
    const Expr *fn = F->fn;
    int np = fn->u.func.nparams;
    if (np) {
      sb_printf(o, "static const char *const %s_pnames[] = {", F->cname);
      for (int k = 0; k < np; k++) {
        const Symbol *s = fn->u.func.params[k]->u.var.name;
        sb_puts(o, k ? ", " : "");
        lower_cstring(o, s ? s->text : "", s ? s->len : 0);
      }
      sb_puts(o, "};\n");
      sb_printf(o, "static const char *const %s_ptypes[] = {", F->cname);
      for (int k = 0; k < np; k++) {
        char *ty = cg_type_string(fn->u.func.params[k]->type);
        sb_puts(o, k ? ", " : "");
        lower_cstring(o, ty, strlen(ty));
        free(ty);
      }
      sb_puts(o, "};\n");
    }
    sb_puts(&table, "  {");
    lower_cstring(&table, sorted[i]->name->text, sorted[i]->name->len);
    sb_puts(&table, ", ");
    char *ty = cg_type_string(fn->type);
    lower_cstring(&table, ty, strlen(ty));
    free(ty);
    if (np) sb_printf(&table, ", %d, %s_pnames, %s_ptypes, ", np, F->cname, F->cname);
    else sb_puts(&table, ", 0, NULL, NULL, ");
    ty = cg_type_string(fn->type && fn->type->kind == TYPE_FUNC ? fn->type->u.func.ret : NULL);
    lower_cstring(&table, ty, strlen(ty));
    free(ty);
    sb_printf(&table, ", &%s_code},\n", F->cname);
  }
  if (n) sb_printf(o, "static const rlyrt_function_info RC_functions[] = {\n%s};\n", sb_str(&table));
  sb_free(&table);
  int nctors = 0;
  for (int t = 0; t < cg->m->ntypes; t++) {
    const TypeDef *td = cg->m->types[t];
    for (int c = 0; c < td->nctors; c++) {
      sb_puts(&table, "  {");
      lower_cstring(&table, td->ctors[c]->name->text, td->ctors[c]->name->len);
      sb_puts(&table, ", ");
      lower_cstring(&table, td->name->text, td->name->len);
      sb_printf(&table, ", %d, %d},\n", c, td->ctors[c]->nfields);
      nctors++;
    }
  }
  if (nctors) sb_printf(o, "static const rlyrt_ctor_info RC_ctors[] = {\n%s};\n", sb_str(&table));
  sb_free(&table);
  StrBuf summary = {0};
  build_summary(cg, &summary);
  bool native = codegen_target_native(cg->o), described = native || cg->o->profile;
  if (described) emit_build(cg, sb_str(&summary));
  /* The thread count, read by the kernels; set through the description. */
  sb_puts(o, "static int32_t RC_set_threads(int32_t n) {\n"
             "  if (n >= 0) __atomic_store_n(&RC_threads, n, __ATOMIC_RELAXED);\n"
             "  return __atomic_load_n(&RC_threads, __ATOMIC_RELAXED);\n}\n");
  sb_puts(o, "static const rlyrt_module_info RC_module = {RLYRT_ABI_VERSION, ");
  lower_cstring(o, name, strlen(name));
  sb_printf(o, ", %d, %s, %d, %s, rlyrt_last_error, rlyrt_set_allocator, RC_set_threads};\n\n", n,
            n ? "RC_functions" : "NULL", nctors, nctors ? "RC_ctors" : "NULL");
  /* Native code: the module is only handed out on a CPU that can run it. */
  const char *module_ref = native ? "RC_cpu_ok() ? &RC_module : NULL" : "&RC_module";
  const char *baseline = native ? "RC_BASELINE " : "";
  sb_printf(o, "%sconst rlyrt_module_info *%s_module(void) { return %s; }\n\n", baseline, name, module_ref);
  sb_puts(o, "#ifdef RLYRT_SHARED_MODULE\n#if defined(__GNUC__) || defined(__clang__)\n"
             "__attribute__((visibility(\"default\")))\n#endif\n"
             "const rlyrt_module_info *rlyrt_module_entry(void);\n"
             "#if defined(__GNUC__) || defined(__clang__)\n__attribute__((visibility(\"default\")))\n#endif\n");
  sb_printf(o, "%sconst rlyrt_module_info *rlyrt_module_entry(void) { return %s; }\n#endif\n\n", baseline, module_ref);
  /* Header and typed entry points. */
  sb_printf(h, "/* %s.h: generated by relayc; the interface of the compiled module %s. */\n", name, name);
  put_summary_comment(h, sb_str(&summary));
  if (cg->o->summary) sb_puts(cg->o->summary, sb_str(&summary));
  sb_free(&summary);
  sb_printf(h, "#ifndef RELAYC_MODULE_%s_H\n#define RELAYC_MODULE_%s_H\n\n#include \"relayc/runtime.h\"\n\n", name, name);
  sb_puts(h, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  sb_printf(h, "/* The module's description: pass it to rlyrt_module_wrap to call any\n** function by name with values. */\n"
               "const rlyrt_module_info *%s_module(void);\n\n", name);
  if (native)
    sb_printf(h, "/* Built with --target native: %s_module() and the entry points below\n"
                 "** check first that this CPU has the extensions the module was built for:\n"
                 "** NULL, or RLYRT_E_UNSUPPORTED, with rlyrt_last_error() naming those it\n"
                 "** lacks. */\n", name);
  if (described)
    sb_printf(h, "/* What the module was built for and, with --profile, the time spent in\n"
                 "** each kernel (relayc/runtime.h: rlyrt_module_build). */\n"
                 "const rlyrt_module_build *%s_module_build(void);\n\n", name);
  char (*used)[160] = rly_xcalloc((size_t)(n ? n : 1), 160);
  for (int i = 0; i < n; i++) {
    CFunc *F = cg_func_of(cg, sorted[i]->func);
    char s[80], entry[160];
    cg_sanitize(sorted[i]->name->text, s, sizeof s);
    snprintf(entry, sizeof entry, "%s_%s", name, s);
    for (int j = 0; j < i; j++)
      if (strcmp(used[j], entry) == 0) snprintf(entry, sizeof entry, "%s_%s_%d", name, s, i);
    if (strcmp(entry + strlen(name), "_module") == 0 || strcmp(entry + strlen(name), "_module_build") == 0)
      snprintf(entry, sizeof entry, "%s_%s_%d", name, s, i);
    snprintf(used[i], 160, "%s", entry);
    emit_typed_entry(cg, h, F, entry);
  }
  free(used);
  sb_puts(h, "#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
  free(sorted);
}
