/* expr.c: function bodies: let chains and the values they bind.
**
** A body after A-normal form is a let chain; each value is an atom, a
** tuple, a projection, a call (of a kernel, a constructor, a global, the
** closure itself, a function literal or a closure value), if, match
** (match.c), a function literal (a closure built from its free variables)
** or a reference operation. A call in tail position of a member of the
** current tail-call group is a jump (a parameter with a state slot in the
** frame takes a copy of its new value, plan.c). In every chain, a
** variable (and, in a function's top block, a parameter) is released
** right after the statement that uses it last. */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg.h"
#include "ops/ops.h"

/* The C expression (borrowed rlyrt_object *) of atom e in the current function. */
void cg_atom(Cg *cg, StrBuf *out, Expr *e) {
  CFunc *F = cg->cur;
  switch (e->kind) {
  case EXPR_VAR:
    if (F->self_var == e) {
      sb_puts(out, "(rlyrt_object *)self");
      return;
    }
    for (int i = 0; i < F->fvs.len; i++)
      if (F->fvs.data[i] == e) {
        sb_printf(out, "self->env[%d]", i);
        return;
      }
    sb_printf(out, "v%u", e->id);
    return;
  case EXPR_CONST: cg_const_ref(cg, out, e); return;
  case EXPR_GLOBAL: {
    CFunc *G = e->u.global.def ? cg_func_of(cg, e->u.global.def->func) : NULL;
    if (!G) {
      cg_error(cg, e->span, "unknown global @%s", e->u.global.name->text);
      sb_puts(out, "NULL");
      return;
    }
    G->closure_used = true;
    sb_printf(out, "(rlyrt_object *)&%s_closure", G->cname);
    return;
  }
  case EXPR_CTOR: {
    const Ctor *c = e->u.ctor.ctor;
    bool have = false;
    for (int i = 0; i < cg->ctor_values.len && !have; i++) have = cg->ctor_values.data[i] == c;
    if (!have) VEC_PUSH(&cg->ctor_values, c);
    sb_printf(out, "(rlyrt_object *)&CT%d_%d_closure", cg_type_index(cg, c->adt), c->tag);
    return;
  }
  case EXPR_OP:
    cg_error(cg, e->span, "the operator %s is used as a value: the compiler only calls operators", e->u.op.op->name);
    sb_puts(out, "NULL");
    return;
  default:
    cg_error(cg, e->span, "internal error: %s where the A-normal form has an atom", expr_kind_names[e->kind]);
    sb_puts(out, "NULL");
    return;
  }
}

/* Can argument i of a direct call of D (NULL: of a kernel or a closure
** value), the atom a, go in a box on the caller's stack? a must be an
** unboxed local, and D's parameter a scalar (it keeps only the value). A
** kernel borrows its operands and never keeps them; code that keeps an
** argument keeps rlyrt_keep(arg), which copies a box on a stack (the flag
** RLYRT_TENSOR_ON_STACK). */
static bool stack_boxable(const Cg *cg, const CFunc *D, int i, const Expr *a) {
  if (!D) return cg_unboxed(cg, a);
  return i < D->fn->u.func.nparams && cg_scalar_ctype(D->fn->u.func.params[i]->type) && cg_unboxed(cg, a);
}

/* "rlyrt_object *aN[] = {...};" for the arguments of a call (of D, or
** NULL: of a kernel or a closure value), unboxed scalars without their
** tensor in boxes on the stack; returns N or -1 for none. pk (or NULL):
** the constant argument pk->param goes packed at build time (a kernel's). */
static int args_array_direct(Cg *cg, StrBuf *o, int ind, Expr **args, int n, const CFunc *D, const LowerPrepack *pk) {
  if (n == 0) return -1;
  int k = cg->tmp++;
  for (int i = 0; i < n; i++) {
    if (!stack_boxable(cg, D, i, args[i])) continue;
    DType dt = args[i]->type->u.tensor.dtype;
    cg_indent(o, ind);
    sb_printf(o, "rlyrt_tensor b%d_%d = {{RLYRT_REFCOUNT_STATIC, RLYRT_TENSOR, RLYRT_TENSOR_ON_STACK}, {&s%u, {kDLCPU, 0}, "
                 "0, {%u, %u, 1}, "
                 "NULL, NULL, 0}};\n", k, i, args[i]->id, dt.code, dt.bits);
  }
  cg_indent(o, ind);
  sb_printf(o, "rlyrt_object *a%d[] = {", k);
  for (int i = 0; i < n; i++) {
    sb_puts(o, i ? ", " : "");
    if (stack_boxable(cg, D, i, args[i])) sb_printf(o, "v%u ? v%u : &b%d_%d.obj", args[i]->id, args[i]->id, k, i);
    else if (pk && pk->param == i && args[i]->kind == EXPR_CONST) cg_const_ref_packed(cg, o, args[i], pk);
    else cg_atom(cg, o, args[i]);
  }
  /* a second packing of the same constant, after the arguments (LowerPrepack.alt) */
  if (pk && pk->param >= 0 && pk->param < n && pk->alt && args[pk->param]->kind == EXPR_CONST) {
    LowerPrepack q = *pk;
    q.pw = pk->alt_pw, q.pad = 0, q.kc = 0, q.alt = false, q.alt_pw = 0;
    sb_puts(o, ", ");
    cg_const_ref_packed(cg, o, args[pk->param], &q);
  }
  sb_puts(o, "};\n");
  return k;
}

static void args_name(StrBuf *o, int k) {
  if (k < 0) sb_puts(o, "NULL");
  else sb_printf(o, "a%d", k);
}

static void try_call(Cg *cg, StrBuf *o, int ind) {
  cg_indent(o, ind);
  sb_puts(o, "if (st != RLYRT_OK) goto fail;\n");
  cg->used_fail = true;
}

/* Releases every local of the current group and clears it. */
void cg_release_all(Cg *cg, StrBuf *o, int ind) {
  Group *G = cg->curgroup;
  for (int m = 0; m < G->members.len; m++) {
    CFunc *F = G->members.data[m];
    for (int i = 0; i < F->locals.len; i++) {
      cg_indent(o, ind);
      sb_printf(o, "RC_DROP(v%u);\n", F->locals.data[i]->id);
    }
  }
}

/* The tail call of member T of the current group with args: a jump. */
static void emit_jump(Cg *cg, StrBuf *o, int ind, CFunc *T, Expr **args, int n) {
  /* A parameter that lives unboxed takes the scalar (and the tensor if
  ** there is one); the others need their argument's tensor. */
  for (int i = 0; i < n; i++)
    if (!cg->uvar[T->fn->u.func.params[i]->id]) cg_need_boxed(cg, o, ind, args[i]);
  cg_indent(o, ind);
  sb_puts(o, "{\n");
  for (int i = 0; i < n; i++) {
    Expr *p = T->fn->u.func.params[i];
    cg_indent(o, ind + 1);
    if (cg_state_param_of(cg, T, p) && args[i] != p) {
      /* Loop state: the new value is copied into the parameter's slot (the
      ** source is a kernel result, or a parameter of another member: never
      ** one of the slots this jump writes; plan.c). */
      sb_printf(o, "memcpy(w%u.dl.data, RLYRT_AS_TENSOR(", p->id);
      cg_atom(cg, o, args[i]);
      sb_printf(o, ")->dl.data, rlyrt_tensor_nbytes(&w%u));\n", p->id);
      cg_indent(o, ind + 1);
      sb_printf(o, "rlyrt_object *n%d = &w%u.obj;\n", i, p->id);
      continue;
    }
    sb_printf(o, "rlyrt_object *n%d = RC_retain(", i);
    cg_atom(cg, o, args[i]);
    sb_puts(o, ");\n");
    if (cg->uvar[p->id]) {
      cg_indent(o, ind + 1);
      sb_printf(o, "const %s ns%d = ", cg_scalar_ctype(p->type), i);
      cg_scalar_of(cg, o, args[i]);
      sb_puts(o, ";\n");
    }
  }
  cg_release_all(cg, o, ind + 1);
  for (int i = 0; i < n; i++) {
    Expr *p = T->fn->u.func.params[i];
    cg_indent(o, ind + 1);
    sb_printf(o, "v%u = n%d;\n", p->id, i);
    if (cg->uvar[p->id]) {
      cg_indent(o, ind + 1);
      sb_printf(o, "s%u = ns%d;\n", p->id, i);
    }
  }
  cg_indent(o, ind + 1);
  sb_printf(o, "goto L%d;\n", T->member);
  cg->used_label[T->member] = true;
  cg_indent(o, ind);
  sb_puts(o, "}\n");
}

/* Emits the evaluation of value into dest (an owned reference). */
static void emit_value(Cg *cg, StrBuf *o, int ind, Expr *v, const char *dest, bool tail) {
  switch (v->kind) {
  case EXPR_VAR:
  case EXPR_CONST:
  case EXPR_GLOBAL:
  case EXPR_CTOR:
  case EXPR_OP:
    cg_need_boxed(cg, o, ind, v);
    cg_indent(o, ind);
    sb_printf(o, "%s = RC_retain(", dest);
    cg_atom(cg, o, v);
    sb_puts(o, ");\n");
    return;
  case EXPR_TUPLE: {
    cg_need_boxed_all(cg, o, ind, v->u.tuple.fields, v->u.tuple.n);
    int k = cg->tmp++;
    cg_indent(o, ind);
    sb_printf(o, "rlyrt_tuple *t%d = rlyrt_tuple_new(%d);\n", k, v->u.tuple.n);
    cg_indent(o, ind);
    sb_printf(o, "if (!t%d) { st = RLYRT_E_NOMEM; goto fail; }\n", k);
    cg->used_fail = true;
    for (int i = 0; i < v->u.tuple.n; i++) {
      cg_indent(o, ind);
      sb_printf(o, "t%d->fields[%d] = RC_retain(", k, i);
      cg_atom(cg, o, v->u.tuple.fields[i]);
      sb_puts(o, ");\n");
    }
    cg_indent(o, ind);
    sb_printf(o, "%s = &t%d->obj;\n", dest, k);
    return;
  }
  case EXPR_GET_ITEM:
    cg_indent(o, ind);
    sb_printf(o, "%s = RC_retain(RLYRT_AS_TUPLE(", dest);
    cg_atom(cg, o, v->u.get_item.tuple);
    sb_printf(o, ")->fields[%d]);\n", v->u.get_item.index);
    return;
  case EXPR_CALL: {
    Expr *callee = v->u.call.callee;
    int n = v->u.call.nargs;
    CFunc *T = tail ? cg_jump_target(cg, cg->cur, v) : NULL;
    if (T) {
      emit_jump(cg, o, ind, T, v->u.call.args, n);
      return;
    }
    /* A direct call (a global, or the closure itself) takes the unboxed
    ** scalars of its scalar parameters in boxes on this stack. */
    CFunc *D = NULL;
    if (callee->kind == EXPR_GLOBAL && callee->u.global.def) D = cg_func_of(cg, callee->u.global.def->func);
    else if (callee->kind == EXPR_VAR && callee == cg->cur->self_var) D = cg->cur;
    bool kernel = callee->kind == EXPR_FUNC && ir_is_primitive(callee);
    /* A constructor keeps its fields: its unboxed scalars go into boxes
    ** allocated with the value (below). */
    bool ctor = callee->kind == EXPR_CTOR;
    cg_need_boxed(cg, o, ind, callee);
    for (int i = 0; i < n && !ctor; i++)
      if (!stack_boxable(cg, D, i, v->u.call.args[i])) cg_need_boxed(cg, o, ind, v->u.call.args[i]);
    if (kernel) {
      char kname[32];
      LowerPrepack pk;
      cg_kernel_for_call(cg, callee, v->u.call.args, n, kname, sizeof kname, &pk);
      cg_indent(o, ind);
      sb_puts(o, "{\n");
      int a = args_array_direct(cg, o, ind + 1, v->u.call.args, n, NULL, &pk);
      cg_indent(o, ind + 1);
      sb_printf(o, "st = %s(", kname);
      args_name(o, a);
      sb_printf(o, ", &%s);\n", dest);
      try_call(cg, o, ind + 1);
      /* A group whose result is (a projection of) its parameter returns
      ** that operand: one on this stack or in this frame is copied out
      ** when the result is not itself planned. */
      bool stacked = false;
      for (int i = 0; i < n; i++) {
        const Expr *x = v->u.call.args[i];
        stacked |= cg_unboxed(cg, x) || (x->kind == EXPR_VAR && (cg->cur->plan_size || cg->cur->frame_size) &&
                                          cg->plan_off[x->id] >= 0);
      }
      if (stacked && !cg->dest_planned) {
        cg_indent(o, ind + 1);
        sb_printf(o, "if ((st = rlyrt_unstack(&%s)) != RLYRT_OK) goto fail;\n", dest);
      }
      cg_indent(o, ind);
      sb_puts(o, "}\n");
      return;
    }
    if (callee->kind == EXPR_CTOR && n == 0) {
      /* A constructor without fields: one immutable static value. */
      const Ctor *c = callee->u.ctor.ctor;
      bool have = false;
      for (int i = 0; i < cg->nullary.len && !have; i++) have = cg->nullary.data[i] == c;
      if (!have) {
        VEC_PUSH(&cg->nullary, c);
        sb_printf(&cg->consts, "static const rlyrt_adt CN%d_%d = {{RLYRT_REFCOUNT_STATIC, RLYRT_ADT, 0}, %d, 0, ",
                  cg_type_index(cg, c->adt), c->tag, c->tag);
        lower_cstring(&cg->consts, c->name->text, c->name->len);
        sb_puts(&cg->consts, "};\n");
      }
      cg_indent(o, ind);
      sb_printf(o, "%s = (rlyrt_object *)&CN%d_%d;\n", dest, cg_type_index(cg, c->adt), c->tag);
      return;
    }
    if (callee->kind == EXPR_CTOR) {
      const Ctor *c = callee->u.ctor.ctor;
      int k = cg->tmp++, nboxes = 0;
      for (int i = 0; i < n; i++) nboxes += cg_unboxed(cg, v->u.call.args[i]);
      cg_indent(o, ind);
      if (nboxes) sb_printf(o, "rlyrt_adt *d%d = rlyrt_adt_new_boxes(%d, ", k, c->tag);
      else sb_printf(o, "rlyrt_adt *d%d = rlyrt_adt_new(%d, ", k, c->tag);
      lower_cstring(o, c->name->text, c->name->len);
      if (nboxes) sb_printf(o, ", %d, %d);\n", n, nboxes);
      else sb_printf(o, ", %d);\n", n);
      cg_indent(o, ind);
      sb_printf(o, "if (!d%d) { st = RLYRT_E_NOMEM; goto fail; }\n", k);
      cg->used_fail = true;
      for (int i = 0, b = 0; i < n; i++) {
        Expr *x = v->u.call.args[i];
        cg_indent(o, ind);
        if (cg_unboxed(cg, x)) {
          DType dt = x->type->u.tensor.dtype;
          sb_printf(o, "{ rlyrt_tensor *bx_ = rlyrt_adt_box(d%d, %d, (DLDataType){%u, %u, 1}); ", k, b++, dt.code,
                    dt.bits);
          sb_printf(o, "*(%s *)bx_->dl.data = s%u; d%d->fields[%d] = &bx_->obj; }\n", cg_scalar_ctype(x->type), x->id,
                    k, i);
          continue;
        }
        sb_printf(o, "d%d->fields[%d] = RC_retain(", k, i);
        cg_atom(cg, o, x);
        sb_puts(o, ");\n");
      }
      cg_indent(o, ind);
      sb_printf(o, "%s = &d%d->obj;\n", dest, k);
      return;
    }
    cg_indent(o, ind);
    sb_puts(o, "{\n");
    int a = args_array_direct(cg, o, ind + 1, v->u.call.args, n, D, NULL);
    cg_indent(o, ind + 1);
    if (callee->kind == EXPR_GLOBAL && callee->u.global.def && cg_func_of(cg, callee->u.global.def->func)) {
      sb_printf(o, "st = %s(NULL, ", cg_func_of(cg, callee->u.global.def->func)->cname);
    } else if (callee->kind == EXPR_VAR && callee == cg->cur->self_var) {
      sb_printf(o, "st = %s(self, ", cg->cur->cname);
    } else if (callee->kind == EXPR_FUNC) {
      /* A function literal called on the spot: build the closure, call it. */
      int k = cg->tmp++;
      char cv[32];
      snprintf(cv, sizeof cv, "c%d", k);
      sb_printf(o, "rlyrt_object *%s = NULL;\n", cv);
      emit_value(cg, o, ind + 1, callee, cv, false);
      cg_indent(o, ind + 1);
      sb_printf(o, "st = RC_CALL(%s, ", cv);
      args_name(o, a);
      sb_printf(o, ", &%s);\n", dest);
      cg_indent(o, ind + 1);
      sb_printf(o, "rlyrt_release(%s);\n", cv);
      try_call(cg, o, ind + 1);
      cg_indent(o, ind);
      sb_puts(o, "}\n");
      return;
    } else {
      /* A closure value: its code may belong to another module, whose
      ** copy of the runtime holds the message of a failure. */
      sb_puts(o, "st = RC_CALL(");
      cg_atom(cg, o, callee);
      sb_puts(o, ", ");
      args_name(o, a);
      sb_printf(o, ", &%s);\n", dest);
      cg_indent(o, ind + 1);
      sb_puts(o, "if (st != RLYRT_OK) {\n");
      cg_indent(o, ind + 2);
      sb_puts(o, "st = rlyrt_closure_failed(");
      cg_atom(cg, o, callee);
      sb_puts(o, ", st);\n");
      cg_indent(o, ind + 2);
      sb_puts(o, "goto fail;\n");
      cg_indent(o, ind + 1);
      sb_puts(o, "}\n");
      cg->used_fail = true;
      cg_indent(o, ind);
      sb_puts(o, "}\n");
      return;
    }
    args_name(o, a);
    sb_printf(o, ", &%s);\n", dest);
    try_call(cg, o, ind + 1);
    cg_indent(o, ind);
    sb_puts(o, "}\n");
    return;
  }
  case EXPR_IF:
    cg_indent(o, ind);
    sb_puts(o, "if (");
    if (cg_scalar_ctype(v->u.if_.cond->type)) {
      cg_scalar_of(cg, o, v->u.if_.cond);
    } else {
      sb_puts(o, "RC_TRUE(");
      cg_atom(cg, o, v->u.if_.cond);
      sb_puts(o, ")");
    }
    sb_puts(o, " != 0) {\n");
    cg_emit_block(cg, o, ind + 1, v->u.if_.then_, dest, tail);
    cg_indent(o, ind);
    sb_puts(o, "} else {\n");
    cg_emit_block(cg, o, ind + 1, v->u.if_.else_, dest, tail);
    cg_indent(o, ind);
    sb_puts(o, "}\n");
    return;
  case EXPR_MATCH: cg_emit_match(cg, o, ind, v, dest, tail); return;
  case EXPR_FUNC: {
    CFunc *F = cg_func_of(cg, v);
    if (!F) {
      cg_error(cg, v->span, "internal error: a function literal was not lifted%s", "");
      return;
    }
    cg_need_boxed_all(cg, o, ind, F->fvs.data, F->fvs.len);
    int k = cg->tmp++;
    cg_indent(o, ind);
    sb_printf(o, "rlyrt_closure *f%d = rlyrt_closure_new(&%s_code, %d);\n", k, F->cname, F->fvs.len);
    cg_indent(o, ind);
    sb_printf(o, "if (!f%d) { st = RLYRT_E_NOMEM; goto fail; }\n", k);
    cg->used_fail = true;
    cg_indent(o, ind);
    sb_printf(o, "f%d->obj.flags = RLYRT_CLOSURE_NATIVE;\n", k);
    for (int i = 0; i < F->fvs.len; i++) {
      cg_indent(o, ind);
      sb_printf(o, "f%d->env[%d] = RC_retain(", k, i);
      cg_atom(cg, o, F->fvs.data[i]);
      sb_puts(o, ");\n");
    }
    cg_indent(o, ind);
    sb_printf(o, "%s = &f%d->obj;\n", dest, k);
    return;
  }
  case EXPR_REF_NEW: {
    cg_need_boxed(cg, o, ind, v->u.ref_new.value);
    int k = cg->tmp++;
    cg_indent(o, ind);
    sb_printf(o, "rlyrt_ref *r%d = rlyrt_ref_new_take(RC_retain(", k);
    cg_atom(cg, o, v->u.ref_new.value);
    sb_puts(o, "));\n");
    cg_indent(o, ind);
    sb_printf(o, "if (!r%d) { st = RLYRT_E_NOMEM; goto fail; }\n", k);
    cg->used_fail = true;
    cg_indent(o, ind);
    sb_printf(o, "%s = &r%d->obj;\n", dest, k);
    return;
  }
  case EXPR_REF_READ:
    cg_indent(o, ind);
    sb_printf(o, "%s = RC_retain(RLYRT_AS_REF(", dest);
    cg_atom(cg, o, v->u.ref_read.ref);
    sb_puts(o, ")->value);\n");
    return;
  case EXPR_REF_WRITE:
    cg_need_boxed(cg, o, ind, v->u.ref_write.value);
    cg_indent(o, ind);
    sb_puts(o, "rlyrt_ref_write_take(RLYRT_AS_REF(");
    cg_atom(cg, o, v->u.ref_write.ref);
    sb_puts(o, "), RC_retain(");
    cg_atom(cg, o, v->u.ref_write.value);
    sb_puts(o, "));\n");
    cg_indent(o, ind);
    sb_printf(o, "%s = (rlyrt_object *)&RC_unit;\n", dest);
    cg->used_unit = true;
    return;
  case EXPR_LET: cg_emit_block(cg, o, ind, v, dest, tail); return;
  case EXPR_KIND_COUNT: RLY_UNREACHABLE();
  }
}

/* Loop state (plan.c): a parameter kept in a slot of the frame is copied
** out to the heap before a use that may keep it (anything but a kernel's
** operand, or the same parameter of a jump), as the slot is overwritten by
** the next step and freed on return. */
static void unframe(Cg *cg, StrBuf *o, int ind, const Expr *p) {
  int k = cg->tmp++;
  cg_indent(o, ind);
  sb_printf(o, "if (v%u == &w%u.obj) {\n", p->id, p->id);
  cg_indent(o, ind + 1);
  sb_printf(o, "rlyrt_tensor *u%d = rlyrt_tensor_copy_dl(&w%u.dl);\n", k, p->id);
  cg_indent(o, ind + 1);
  sb_printf(o, "if (!u%d) { st = RLYRT_E_NOMEM; goto fail; }\n", k);
  cg_indent(o, ind + 1);
  sb_printf(o, "v%u = &u%d->obj;\n", p->id, k);
  cg_indent(o, ind);
  sb_puts(o, "}\n");
  cg->used_fail = true;
}

static void unframe_uses(Cg *cg, StrBuf *o, int ind, Expr *v, bool tail) {
  if (!cg->cur->nstate) return;
  switch (v->kind) {
  case EXPR_IF:
  case EXPR_MATCH:
  case EXPR_LET: return; /* their blocks see to their own statements */
  case EXPR_VAR:
    if (cg_state_param(cg, v)) unframe(cg, o, ind, v);
    return;
  case EXPR_CALL: {
    if (v->u.call.callee->kind == EXPR_FUNC && ir_is_primitive(v->u.call.callee)) return;
    CFunc *T = tail ? cg_jump_target(cg, cg->cur, v) : NULL;
    if (T) {
      /* A jump keeps the value in place when it passes a state parameter
      ** as itself, or copies it into a slot of another member; anything
      ** else (another parameter of this member, a parameter that is not
      ** state) keeps the object. */
      for (int i = 0; i < v->u.call.nargs; i++) {
        Expr *a = v->u.call.args[i];
        Expr *p = T->fn->u.func.params[i];
        if (!cg_state_param(cg, a) || a == p) continue;
        if (T != cg->cur && cg_state_param_of(cg, T, p)) continue;
        unframe(cg, o, ind, a);
      }
      return;
    }
    break;
  }
  default: break;
  }
  EVec vars = {0};
  ir_free_vars(v, IR_KIDS_OPAQUE_PRIMITIVE, &vars);
  for (int k = 0; k < vars.len; k++)
    if (cg_state_param(cg, vars.data[k])) unframe(cg, o, ind, vars.data[k]);
  VEC_FREE(&vars);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Records statement i as the last use of every candidate variable used
** under e (nested blocks and functions included, kernels not). A candidate
** is bound by the chain or is a parameter, never inside e, so it is among
** e's free variables when e uses it. */
static void note_uses(Cg *cg, EVec *vars, Expr *e, uint32_t stamp, int i) {
  vars->len = 0;
  ir_free_vars(e, IR_KIDS_OPAQUE_PRIMITIVE, vars);
  for (int k = 0; k < vars->len; k++)
    if (cg->cand[vars->data[k]->id] == stamp) cg->last[vars->data[k]->id] = i;
}

/* Emits a let chain. Its statements are in order; a variable the chain
** binds (and, in a function's top block, a parameter) is released right
** after the statement that uses it last, so large intermediates do not
** live until the function returns. */
void cg_emit_block(Cg *cg, StrBuf *o, int ind, Expr *body, const char *dest, bool tail) {
  EVec chain = {0};
  Expr *end = body;
  while (end->kind == EXPR_LET && end->u.let.body != end->u.let.var) {
    VEC_PUSH(&chain, end);
    end = end->u.let.body;
  }
  uint32_t stamp = ++cg->bgen;
  int n = chain.len;
  if (body == cg->cur->fn->u.func.body)
    for (int i = 0; i < cg->cur->fn->u.func.nparams; i++) {
      Expr *p = cg->cur->fn->u.func.params[i];
      cg->cand[p->id] = stamp;
      cg->last[p->id] = -1;
    }
  for (int i = 0; i < n; i++) {
    Expr *v = chain.data[i]->u.let.var;
    cg->cand[v->id] = stamp;
    cg->last[v->id] = i;
  }
  EVec vars = {0};
  for (int i = 0; i < n; i++) note_uses(cg, &vars, chain.data[i]->u.let.value, stamp, i);
  note_uses(cg, &vars, end, stamp, n); /* the result: never released early */
  VEC_FREE(&vars);
  /* Releases in statement order: (statement, id) pairs sorted. */
  Vec(int64_t) rel = {0};
  if (body == cg->cur->fn->u.func.body)
    for (int k = 0; k < cg->cur->fn->u.func.nparams; k++) {
      Expr *p = cg->cur->fn->u.func.params[k];
      if (cg->cand[p->id] == stamp && cg->last[p->id] >= 0 && cg->last[p->id] < n)
        VEC_PUSH(&rel, ((int64_t)cg->last[p->id] << 32) | p->id);
    }
  for (int k = 0; k < n; k++) {
    Expr *v = chain.data[k]->u.let.var;
    if (cg->last[v->id] < n) VEC_PUSH(&rel, ((int64_t)cg->last[v->id] << 32) | v->id);
  }
  if (rel.len) qsort(rel.data, (size_t)rel.len, sizeof(int64_t), cmp_i64);
  int r = 0;
  for (int i = 0; i < n; i++) {
    Expr *var = chain.data[i]->u.let.var;
    char vname[32];
    snprintf(vname, sizeof vname, "v%u", var->id);
    if ((cg->cur->plan_size || cg->cur->frame_size) && cg->plan_off[var->id] >= 0) { /* the kernel writes into the workspace */
      cg_indent(o, ind);
      if (var->type->kind == TYPE_TUPLE) {
        /* The tuple object is made here, in the frame's memory (its type is
        ** the tuple's own, set by these stores): the same bytes may have
        ** held other tensors earlier in the step. */
        unsigned id = var->id;
        sb_printf(o, "w%u->obj.refcount = RLYRT_REFCOUNT_STATIC;\n", id);
        cg_indent(o, ind);
        sb_printf(o, "w%u->obj.kind = RLYRT_TUPLE;\n", id);
        cg_indent(o, ind);
        sb_printf(o, "w%u->obj.flags = 0;\n", id);
        cg_indent(o, ind);
        sb_printf(o, "w%u->n = %d;\n", id, var->type->u.tuple.n);
        for (int k = 0; k < var->type->u.tuple.n; k++) {
          cg_indent(o, ind);
          sb_printf(o, "w%u->fields[%d] = &w%u_%d.obj;\n", id, k, id, k);
        }
        cg_indent(o, ind);
        sb_printf(o, "v%u = &w%u->obj;\n", id, id);
      } else {
        sb_printf(o, "v%u = &w%u.obj;\n", var->id, var->id);
      }
    }
    unframe_uses(cg, o, ind, chain.data[i]->u.let.value, false);
    cg->dest_planned = (cg->cur->plan_size || cg->cur->frame_size) && cg->plan_off[var->id] >= 0;
    /* A planned projection (-O0: %x = %s.k of a tuple in the frame) is
    ** still read from the tuple: a reference kernel may have made a new
    ** one instead of filling the frame's. */
    if (!cg_emit_scalar_let(cg, o, ind, var, chain.data[i]->u.let.value))
      emit_value(cg, o, ind, chain.data[i]->u.let.value, vname, false);
    cg->dest_planned = false;
    for (; r < rel.len && (rel.data[r] >> 32) == i; r++) {
      uint32_t id = (uint32_t)(rel.data[r] & 0xffffffff);
      cg_indent(o, ind);
      sb_printf(o, "RC_DROP(v%u);\n", id);
    }
  }
  VEC_FREE(&rel);
  VEC_FREE(&chain);
  if (end->kind == EXPR_LET) { /* let %x = value; %x: value goes to dest */
    Expr *var = end->u.let.var;
    if (cg_emit_scalar_let(cg, o, ind, var, end->u.let.value)) { /* computed in C, boxed once */
      cg_need_boxed(cg, o, ind, var);
      cg_indent(o, ind);
      sb_printf(o, "%s = RC_retain(v%u);\n", dest, var->id);
      return;
    }
    unframe_uses(cg, o, ind, end->u.let.value, tail);
    emit_value(cg, o, ind, end->u.let.value, dest, tail);
    return;
  }
  unframe_uses(cg, o, ind, end, false);
  emit_value(cg, o, ind, end, dest, false);
}
