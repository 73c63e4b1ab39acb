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
** static memory plan's tensors. */
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
  StrBuf sig = {0};
  sb_printf(&sig, "rlyrt_status %s(", entry);
  for (int i = 0; i < np; i++) sb_printf(&sig, "%sconst DLTensor *%s", i ? ", " : "", names[i]);
  for (int i = 0; i < nouts; i++) {
    sb_printf(&sig, "%sDLTensor *out", np || i ? ", " : "");
    if (nouts > 1) sb_printf(&sig, "%d", i);
  }
  sb_puts(&sig, ", void *workspace)");
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
  sb_printf(o, "%s {\n  rlyrt_status rc_s;\n  rlyrt_object *rc_r = NULL;\n", sb_str(&sig));
  sb_free(&sig);
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
    sb_printf(o, "  void *rc_ws = workspace ? workspace : rlyrt_alloc(%lld, 64);\n", (long long)F->plan_size);
    sb_puts(o, "  if (!rc_ws) return RLYRT_E_NOMEM;\n");
    sb_printf(o, "  rc_s = %s_ws(NULL, %s, &rc_r, rc_ws);\n", F->cname, np ? "rc_args" : "NULL");
    sb_puts(o, "  if (!workspace) rlyrt_free(rc_ws);\n  if (rc_s != RLYRT_OK) return rc_s;\n");
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
  sb_puts(o, "static const rlyrt_module_info RC_module = {RLYRT_ABI_VERSION, ");
  lower_cstring(o, name, strlen(name));
  sb_printf(o, ", %d, %s, %d, %s, rlyrt_last_error, rlyrt_set_allocator};\n\n", n, n ? "RC_functions" : "NULL", nctors,
            nctors ? "RC_ctors" : "NULL");
  sb_printf(o, "const rlyrt_module_info *%s_module(void) { return &RC_module; }\n\n", name);
  sb_puts(o, "#ifdef RLYRT_SHARED_MODULE\n#if defined(__GNUC__) || defined(__clang__)\n"
             "__attribute__((visibility(\"default\")))\n#endif\n"
             "const rlyrt_module_info *rlyrt_module_entry(void);\n"
             "#if defined(__GNUC__) || defined(__clang__)\n__attribute__((visibility(\"default\")))\n#endif\n"
             "const rlyrt_module_info *rlyrt_module_entry(void) { return &RC_module; }\n#endif\n\n");
  /* Header and typed entry points. */
  sb_printf(h, "/* %s.h: generated by relayc; the interface of the compiled module %s. */\n", name, name);
  sb_printf(h, "#ifndef RELAYC_MODULE_%s_H\n#define RELAYC_MODULE_%s_H\n\n#include \"relayc/runtime.h\"\n\n", name, name);
  sb_puts(h, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  sb_printf(h, "/* The module's description: pass it to rlyrt_module_wrap to call any\n** function by name with values. */\n"
               "const rlyrt_module_info *%s_module(void);\n\n", name);
  char (*used)[160] = rly_xcalloc((size_t)(n ? n : 1), 160);
  for (int i = 0; i < n; i++) {
    CFunc *F = cg_func_of(cg, sorted[i]->func);
    char s[80], entry[160];
    cg_sanitize(sorted[i]->name->text, s, sizeof s);
    snprintf(entry, sizeof entry, "%s_%s", name, s);
    for (int j = 0; j < i; j++)
      if (strcmp(used[j], entry) == 0) snprintf(entry, sizeof entry, "%s_%s_%d", name, s, i);
    if (strcmp(entry + strlen(name), "_module") == 0) snprintf(entry, sizeof entry, "%s_%s_%d", name, s, i);
    snprintf(used[i], 160, "%s", entry);
    emit_typed_entry(cg, h, F, entry);
  }
  free(used);
  sb_puts(h, "#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
  free(sorted);
}
