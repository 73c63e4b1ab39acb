/* scalars.c: unboxed scalars.
**
** A variable holding a 0-d tensor of a dtype loops handle can also live as
** a C scalar s<ID>: parameters of such types (read once on entry; a tail
** call jumping back assigns the scalar, no tensor), and let variables whose
** value is an elementwise operator on scalars (computed in C, no kernel
** call, no allocation; integer division and modulo with the reference
** kernels' semantics). Its tensor v<ID> is then made only when a use needs
** a value object (a kernel argument, a tuple field, a call, the result),
** once: RC_BOX leaves an existing one alone. */
#include <string.h>

#include "codegen/cg.h"
#include "ops/ops.h"

const char *cg_scalar_ctype(const Type *t) {
  if (!t || t->kind != TYPE_TENSOR || t->u.tensor.ndim != 0) return NULL;
  return lower_scalar_ctype(t->u.tensor.dtype);
}

/* Is var read from the current function's own locals (not its
** environment or self)? */
static bool is_local(const Cg *cg, const Expr *var) {
  const CFunc *F = cg->cur;
  if (var == F->self_var) return false;
  for (int i = 0; i < F->fvs.len; i++)
    if (F->fvs.data[i] == var) return false;
  return true;
}

bool cg_unboxed(const Cg *cg, const Expr *a) {
  return a->kind == EXPR_VAR && cg->uvar[a->id] && is_local(cg, a);
}

void cg_make_unboxed(Cg *cg, Expr *v) {
  if (cg->uvar[v->id]) return;
  cg->uvar[v->id] = 1;
  VEC_PUSH(&cg->uvars, v);
}

/* The value of the 0-d atom a as a C scalar. */
void cg_scalar_of(Cg *cg, StrBuf *o, Expr *a) {
  if (cg_unboxed(cg, a)) {
    sb_printf(o, "s%u", a->id);
    return;
  }
  sb_printf(o, "(*(const %s *)RLYRT_AS_TENSOR(", cg_scalar_ctype(a->type));
  cg_atom(cg, o, a);
  sb_puts(o, ")->dl.data)");
}

/* Makes sure atom a has its tensor when it is an unboxed variable. */
void cg_need_boxed(Cg *cg, StrBuf *o, int ind, Expr *a) {
  if (!cg_unboxed(cg, a)) return;
  DType dt = a->type->u.tensor.dtype;
  cg_indent(o, ind);
  sb_printf(o, "RC_BOX(v%u, s%u, %s, %u, %u);\n", a->id, a->id, cg_scalar_ctype(a->type), dt.code, dt.bits);
  cg->used_fail = true;
}

void cg_need_boxed_all(Cg *cg, StrBuf *o, int ind, Expr **as, int n) {
  for (int i = 0; i < n; i++) cg_need_boxed(cg, o, ind, as[i]);
}

/* Integer division and modulo on scalars, as the reference kernels do them
** (computed in 64 bits, a zero divisor an error). */
static bool int_division(Cg *cg, StrBuf *o, int ind, Expr *call, const char *dest) {
  const Expr *fn = call->u.call.callee;
  const Expr *body = fn->u.func.body;
  if (body->kind != EXPR_CALL || body->u.call.callee->kind != EXPR_OP || call->u.call.nargs != 2) return false;
  /* One call of the operator on the parameters in order: not a fused
  ** group whose division takes other operands. */
  if (fn->u.func.nparams != 2 || body->u.call.nargs != 2 || body->u.call.args[0] != fn->u.func.params[0] ||
      body->u.call.args[1] != fn->u.func.params[1])
    return false;
  const char *op = body->u.call.callee->u.op.op->name;
  bool is_div = strcmp(op, "divide") == 0 || strcmp(op, "trunc_divide") == 0 || strcmp(op, "floor_divide") == 0;
  bool is_mod = strcmp(op, "mod") == 0 || strcmp(op, "trunc_mod") == 0 || strcmp(op, "floor_mod") == 0;
  if (!is_div && !is_mod) return false;
  const Type *ta = call->u.call.args[0]->type, *tb = call->u.call.args[1]->type, *tr = call->type;
  if (!cg_scalar_ctype(ta) || !cg_scalar_ctype(tb) || !cg_scalar_ctype(tr)) return false;
  DType da = ta->u.tensor.dtype;
  if (!dtype_eq(da, tb->u.tensor.dtype) || !dtype_eq(da, tr->u.tensor.dtype) || dtype_is_bool(da)) return false;
  if (da.code != DT_INT && da.code != DT_UINT) return false;
  bool sg = da.code == DT_INT;
  const char *w = sg ? "int64_t" : "uint64_t";
  char where[256];
  cg_where(cg, call->span, where, sizeof where);
  cg_indent(o, ind);
  sb_printf(o, "{\n");
  cg_indent(o, ind + 1);
  sb_printf(o, "const %s x = (%s)", w, w);
  cg_scalar_of(cg, o, call->u.call.args[0]);
  sb_printf(o, ", y = (%s)", w);
  cg_scalar_of(cg, o, call->u.call.args[1]);
  sb_puts(o, ";\n");
  cg_indent(o, ind + 1);
  sb_printf(o, "if (y == 0) { st = rlyrt_error(RLYRT_E_RUNTIME, \"%%s: %s: division by zero\", ", op);
  lower_cstring(o, where, strlen(where));
  sb_puts(o, "); goto fail; }\n");
  cg->used_fail = true;
  cg_indent(o, ind + 1);
  if (!sg) {
    sb_printf(o, "%s = (%s)(x %s y);\n", dest, cg_scalar_ctype(tr), is_div ? "/" : "%");
  } else {
    bool floor = op[0] == 'f';
    sb_puts(o, "int64_t r;\n");
    cg_indent(o, ind + 1);
    sb_printf(o, "if (y == -1) r = %s;\n", is_div ? "(int64_t)(0 - (uint64_t)x)" : "0");
    cg_indent(o, ind + 1);
    if (!floor) {
      sb_printf(o, "else r = x %s y;\n", is_div ? "/" : "%");
    } else if (is_div) {
      sb_puts(o, "else {\n");
      cg_indent(o, ind + 2);
      sb_puts(o, "int64_t q = x / y, m = x % y;\n");
      cg_indent(o, ind + 2);
      sb_puts(o, "r = m != 0 && ((m < 0) != (y < 0)) ? q - 1 : q;\n");
      cg_indent(o, ind + 1);
      sb_puts(o, "}\n");
    } else {
      sb_puts(o, "else {\n");
      cg_indent(o, ind + 2);
      sb_puts(o, "int64_t m = x % y;\n");
      cg_indent(o, ind + 2);
      sb_puts(o, "r = m != 0 && ((m < 0) != (y < 0)) ? m + y : m;\n");
      cg_indent(o, ind + 1);
      sb_puts(o, "}\n");
    }
    cg_indent(o, ind + 1);
    sb_printf(o, "%s = (%s)r;\n", dest, cg_scalar_ctype(tr));
  }
  cg_indent(o, ind);
  sb_puts(o, "}\n");
  return true;
}

/* Emits let var = call (a Primitive call) unboxed when it is elementwise
** on scalars. Returns false (emitting nothing) otherwise. */
bool cg_emit_scalar_let(Cg *cg, StrBuf *o, int ind, Expr *var, Expr *v) {
  if (v->kind != EXPR_CALL || v->u.call.callee->kind != EXPR_FUNC || !ir_is_primitive(v->u.call.callee)) return false;
  if (!cg_scalar_ctype(var->type)) return false;
  int n = v->u.call.nargs;
  if (n > 3) return false;
  for (int i = 0; i < n; i++)
    if (!cg_scalar_ctype(v->u.call.args[i]->type)) return false;
  char dest[32];
  snprintf(dest, sizeof dest, "s%u", var->id);
  StrBuf ops[3] = {{0}, {0}, {0}};
  const char *opv[3] = {NULL, NULL, NULL};
  for (int i = 0; i < n; i++) {
    cg_scalar_of(cg, &ops[i], v->u.call.args[i]);
    opv[i] = sb_str(&ops[i]);
  }
  bool ok = lower_scalar(o, v->u.call.callee, opv, dest, 2 * ind) || int_division(cg, o, ind, v, dest);
  for (int i = 0; i < 3; i++) sb_free(&ops[i]);
  if (ok) cg_make_unboxed(cg, var);
  return ok;
}

