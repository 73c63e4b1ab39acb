/* checkers.c: argument checkers, one per type.
**
** Calls from C (rlyrt_module_call, rlyrt_closure_call) check their
** arguments; calls inside generated code do not. A checker CHK<k> is made
** per distinct type (by its printed text): tensors by dtype and shape (`?`
** accepts any size), tuples field by field, ADT values by tag and arity
** with their fields checked (a loop along the last field when it has the
** same type, so a long list needs no recursion), closures by arity and by
** their Relay type (no type when it has type variables), references by
** their contents; type variables accept any value. Each C function gets
** NAME_check, which checks its arguments in order. */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg.h"

/* t with the type parameters of adt replaced by args. */
static Type *subst(Cg *cg, Type *t, Type **tparams, Type **args, int n) {
  if (!t) return t;
  switch (t->kind) {
  case TYPE_VAR:
    for (int i = 0; i < n; i++)
      if (tparams[i] == t || (tparams[i]->u.var.name == t->u.var.name)) return args[i];
    return t;
  case TYPE_TUPLE: {
    Type *r = ir_type_new(cg->m, TYPE_TUPLE, t->span);
    r->u.tuple.n = t->u.tuple.n;
    r->u.tuple.fields = ARENA_ARRAY(cg->m->arena, Type *, t->u.tuple.n ? t->u.tuple.n : 1);
    for (int i = 0; i < t->u.tuple.n; i++) r->u.tuple.fields[i] = subst(cg, t->u.tuple.fields[i], tparams, args, n);
    return r;
  }
  case TYPE_CALL: {
    Type *r = ir_type_new(cg->m, TYPE_CALL, t->span);
    r->u.call = t->u.call;
    r->u.call.args = ARENA_ARRAY(cg->m->arena, Type *, t->u.call.nargs ? t->u.call.nargs : 1);
    for (int i = 0; i < t->u.call.nargs; i++) r->u.call.args[i] = subst(cg, t->u.call.args[i], tparams, args, n);
    return r;
  }
  case TYPE_REF: {
    Type *r = ir_type_new(cg->m, TYPE_REF, t->span);
    r->u.ref.elem = subst(cg, t->u.ref.elem, tparams, args, n);
    return r;
  }
  case TYPE_FUNC: {
    Type *r = ir_type_new(cg->m, TYPE_FUNC, t->span);
    r->u.func = t->u.func;
    r->u.func.params = ARENA_ARRAY(cg->m->arena, Type *, t->u.func.nparams ? t->u.func.nparams : 1);
    for (int i = 0; i < t->u.func.nparams; i++)
      r->u.func.params[i] = subst(cg, t->u.func.params[i], tparams, args, n);
    r->u.func.ret = subst(cg, t->u.func.ret, tparams, args, n);
    return r;
  }
  default: return t;
  }
}

char *cg_type_string(const Type *t) {
  StrBuf sb = {0};
  if (t) ir_print_type(&sb, t);
  else sb_puts(&sb, "?");
  char *s = rly_xmalloc(sb.len + 1);
  memcpy(s, sb.data ? sb.data : "", sb.len);
  s[sb.len] = 0;
  sb_free(&sb);
  return s;
}

/* Does t mention a type variable (or a type not known)? */
bool cg_has_type_var(const Type *t) {
  if (!t) return true;
  switch (t->kind) {
  case TYPE_TENSOR: return false;
  case TYPE_TUPLE:
    for (int i = 0; i < t->u.tuple.n; i++)
      if (cg_has_type_var(t->u.tuple.fields[i])) return true;
    return false;
  case TYPE_FUNC:
    if (t->u.func.ntparams) return true;
    for (int i = 0; i < t->u.func.nparams; i++)
      if (cg_has_type_var(t->u.func.params[i])) return true;
    return cg_has_type_var(t->u.func.ret);
  case TYPE_CALL:
    for (int i = 0; i < t->u.call.nargs; i++)
      if (cg_has_type_var(t->u.call.args[i])) return true;
    return false;
  case TYPE_REF: return cg_has_type_var(t->u.ref.elem);
  default: return true;
  }
}

int cg_checker_for(Cg *cg, const Type *t) {
  char *key = cg_type_string(t);
  for (int i = 0; i < cg->checker_keys.len; i++)
    if (strcmp(cg->checker_keys.data[i], key) == 0) {
      free(key);
      return i;
    }
  VEC_PUSH(&cg->checker_keys, key);
  VEC_PUSH(&cg->checker_types, t);
  sb_printf(&cg->protos, "static rlyrt_status CHK%d(const rlyrt_object *v, const char *what);\n",
            cg->checker_keys.len - 1);
  return cg->checker_keys.len - 1;
}

void cg_emit_checker(Cg *cg, int k) {
  const Type *t = cg->checker_types.data[k];
  StrBuf *o = &cg->checkers;
  const char *key = cg->checker_keys.data[k];
  sb_printf(o, "static rlyrt_status CHK%d(const rlyrt_object *v, const char *what) {\n", k);
  sb_puts(o, "  static const char expected[] = ");
  lower_cstring(o, key, strlen(key));
  sb_puts(o, ";\n");
  switch (t ? t->kind : TYPE_INCOMPLETE) {
  case TYPE_TENSOR: {
    DType dt = t->u.tensor.dtype;
    if (t->u.tensor.ndim) {
      sb_puts(o, "  static const int64_t shape[] = {");
      for (int i = 0; i < t->u.tensor.ndim; i++)
        sb_printf(o, "%s%lld", i ? ", " : "", (long long)t->u.tensor.shape[i]);
      sb_puts(o, "};\n");
    }
    sb_printf(o, "  return rlyrt_check_tensor(v, (DLDataType){%u, %u, %u}, %d, %s, what, expected);\n", dt.code,
              dt.bits, dt.lanes, t->u.tensor.ndim, t->u.tensor.ndim ? "shape" : "NULL");
    break;
  }
  case TYPE_TUPLE: {
    sb_printf(o, "  rlyrt_status s = rlyrt_check_kind(v, RLYRT_TUPLE, %d, what, expected);\n", t->u.tuple.n);
    for (int i = 0; i < t->u.tuple.n; i++) {
      int c = cg_checker_for(cg, t->u.tuple.fields[i]);
      sb_printf(o, "  if (s == RLYRT_OK) s = CHK%d(RLYRT_AS_TUPLE(v)->fields[%d], what);\n", c, i);
    }
    sb_puts(o, "  return s;\n");
    break;
  }
  case TYPE_FUNC:
    if (cg_has_type_var(t)) sb_puts(o, "  (void)expected;\n");
    sb_printf(o, "  return rlyrt_check_closure(v, %d, %s, what);\n", t->u.func.nparams,
              cg_has_type_var(t) ? "NULL" : "expected");
    break;
  case TYPE_REF: {
    int c = cg_checker_for(cg, t->u.ref.elem);
    sb_puts(o, "  rlyrt_status s = rlyrt_check_kind(v, RLYRT_REF, -1, what, expected);\n");
    sb_printf(o, "  return s == RLYRT_OK ? CHK%d(RLYRT_AS_REF(v)->value, what) : s;\n", c);
    break;
  }
  case TYPE_CALL: {
    const TypeDef *adt = t->u.call.adt;
    if (!adt || adt->is_extern || adt->nctors == 0) {
      sb_puts(o, "  return rlyrt_check_kind(v, RLYRT_ADT, -1, what, expected);\n");
      break;
    }
    /* Loop along the last field when it has this very type (lists). */
    sb_puts(o, "  for (;;) {\n    rlyrt_status s = rlyrt_check_kind(v, RLYRT_ADT, -1, what, expected);\n");
    sb_puts(o, "    if (s != RLYRT_OK) return s;\n    const rlyrt_adt *a = RLYRT_AS_ADT(v);\n");
    sb_puts(o, "    switch (a->tag) {\n");
    for (int c = 0; c < adt->nctors; c++) {
      const Ctor *ct = adt->ctors[c];
      sb_printf(o, "    case %d:\n", c);
      sb_printf(o, "      if (a->n != %d) return rlyrt_error(RLYRT_E_ARG, \"%%s expects %%s, got %%s with %%d fields\", "
                   "what, expected, a->ctor, (int)a->n);\n", ct->nfields);
      int loop_field = -1;
      for (int f = 0; f < ct->nfields; f++) {
        Type *ft = subst(cg, ct->fields[f], adt->tparams, t->u.call.args,
                         t->u.call.nargs < adt->ntparams ? t->u.call.nargs : adt->ntparams);
        int ck = cg_checker_for(cg, ft);
        if (f == ct->nfields - 1 && ck == k) {
          loop_field = f;
          break;
        }
        sb_printf(o, "      if ((s = CHK%d(a->fields[%d], what)) != RLYRT_OK) return s;\n", ck, f);
      }
      if (loop_field >= 0) sb_printf(o, "      v = a->fields[%d];\n      continue;\n", loop_field);
      else sb_puts(o, "      return RLYRT_OK;\n");
    }
    sb_puts(o, "    default:\n      return rlyrt_error(RLYRT_E_ARG, \"%s expects %s, got an ADT value of another type\", "
               "what, expected);\n    }\n  }\n");
    break;
  }
  default: /* type variables and anything else: any value */
    sb_puts(o, "  if (!v) return rlyrt_error(RLYRT_E_ARG, \"%s expects %s, got NULL\", what, expected);\n");
    sb_puts(o, "  return RLYRT_OK;\n");
    break;
  }
  sb_puts(o, "}\n\n");
}

/* The argument checker of function F: "static rlyrt_status NAME_check(...)". */
void cg_emit_function_checker(Cg *cg, CFunc *F) {
  StrBuf body = {0};
  for (int i = 0; i < F->fn->u.func.nparams; i++) {
    Expr *p = F->fn->u.func.params[i];
    int c = cg_checker_for(cg, p->type);
    char what[512];
    snprintf(what, sizeof what, "argument %d (%%%s) of %s", i + 1, p->u.var.name ? p->u.var.name->text : "_",
             F->where);
    sb_printf(&body, "  if ((s = CHK%d(args[%d], ", c, i);
    lower_cstring(&body, what, strlen(what));
    sb_puts(&body, ")) != RLYRT_OK) return s;\n");
  }
  sb_printf(&cg->checkers, "static rlyrt_status %s_check(rlyrt_object *const *args, int32_t nargs) {\n", F->cname);
  sb_puts(&cg->checkers, "  (void)args;\n  (void)nargs;\n");
  if (F->fn->u.func.nparams) sb_puts(&cg->checkers, "  rlyrt_status s;\n");
  sb_putn(&cg->checkers, body.data ? body.data : "", body.len);
  sb_puts(&cg->checkers, "  return RLYRT_OK;\n}\n\n");
  sb_free(&body);
}
