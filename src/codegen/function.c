/* function.c: C functions.
**
** Every Relay function is `rlyrt_status f(const rlyrt_closure *self,
** rlyrt_object *const *args, rlyrt_object **out)`: arguments borrowed,
** result owned, status returned. A group of globals that tail-call each
** other (tailcalls.c) is one C function with a `which` switch at the entry
** and a label per member; each member gets a small wrapper. A global with
** a static memory plan (plan.c) is NAME_ws, taking the workspace, and
** NAME allocates it; a function with a frame pushes it on entry and pops
** it on return (a group: one frame for all its members, pushed before the
** `which` switch). Also here: the code descriptors (rlyrt_code) of every
** function, and the code and closure of constructors used as values. */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg.h"

/* May parameter p receive a 0-d tensor that it keeps (it does not live
** unboxed)? Then it keeps it with rlyrt_keep: the argument may be a box on
** the caller's stack. */
static bool keeps_scalar(const Cg *cg, const Expr *p) {
  const Type *t = p->type;
  if (cg->uvar[p->id] || !t) return false;
  return t->kind == TYPE_VAR || t->kind == TYPE_INCOMPLETE || (t->kind == TYPE_TENSOR && t->u.tensor.ndim == 0);
}

/* "rlyrt_tensor NAME" of type t whose data is at offset off of the
** workspace: a static object on the stack (its shape a static array). */
static void emit_frame_tensor(Cg *cg, StrBuf *o, const char *name, const Type *t, int64_t off) {
  DType dt = t->u.tensor.dtype;
  if (t->u.tensor.ndim) {
    sb_printf(&cg->consts, "static const int64_t RC_sh%s[] = {", name + 1);
    for (int k = 0; k < t->u.tensor.ndim; k++)
      sb_printf(&cg->consts, "%s%lld", k ? ", " : "", (long long)t->u.tensor.shape[k]);
    sb_puts(&cg->consts, "};\n");
  }
  sb_printf(o, "  rlyrt_tensor %s = {{RLYRT_REFCOUNT_STATIC, RLYRT_TENSOR, RLYRT_TENSOR_ON_STACK}, {(char *)ws + %lld, "
               "{kDLCPU, 0}, %d, {%u, %u, %u}, ", name, (long long)off, t->u.tensor.ndim, dt.code, dt.bits, dt.lanes);
  if (t->u.tensor.ndim) sb_printf(o, "(int64_t *)RC_sh%s, NULL, 0}};\n", name + 1);
  else sb_puts(o, "NULL, NULL, 0}};\n");
}

/* A tuple of static tensors kept in the frame (plan.c): the tuple object
** is made in the frame's memory (its type is the tuple's own, set by these
** stores), its fields are static tensors on the stack whose data follows
** it in the frame. */
static void emit_frame_tuple(Cg *cg, StrBuf *o, const Expr *var, int64_t off) {
  const Type *t = var->type;
  int n = t->u.tuple.n;
  for (int k = 0; k < n; k++) {
    char name[48];
    snprintf(name, sizeof name, "w%u_%d", var->id, k);
    emit_frame_tensor(cg, o, name, t->u.tuple.fields[k], off + cg_tuple_field_offset(t, k));
  }
  sb_printf(o, "  _Static_assert(sizeof(rlyrt_tuple) + %d * sizeof(rlyrt_object *) <= %lld, \"a frame tuple's object\");\n",
            n, (long long)CG_TUPLE_HEADER(n));
  sb_printf(o, "  rlyrt_tuple *w%u = (rlyrt_tuple *)((char *)ws + %lld);\n", var->id, (long long)off);
}

/* Parameter p (argument i) on entry: its value, or its reference. */
static void emit_param_entry(Cg *cg, StrBuf *o, int ind, const Expr *p, int i) {
  cg_indent(o, ind);
  if (cg->uvar[p->id])
    sb_printf(o, "s%u = *(const %s *)RLYRT_AS_TENSOR(args[%d])->dl.data;\n", p->id, cg_scalar_ctype(p->type), i);
  else if (keeps_scalar(cg, p))
    sb_printf(o, "if (!(v%u = rlyrt_keep_inline(args[%d]))) {\n%*s  st = RLYRT_E_NOMEM;\n%*s  goto fail;\n%*s}\n", p->id, i,
              2 * ind, "", 2 * ind, "", 2 * ind, "");
  else
    sb_printf(o, "v%u = RC_retain(args[%d]);\n", p->id, i);
}

void cg_emit_group(Cg *cg, Group *G) {
  bool multi = G->members.len > 1;
  CFunc *F0 = G->members.data[0];
  cg->curgroup = G;
  cg->used_fail = false;
  cg->used_label = rly_xcalloc((size_t)G->members.len, sizeof(bool));
  cg->tmp = 0;
  for (int i = 0; i < cg->uvars.len; i++) cg->uvar[cg->uvars.data[i]->id] = 0;
  cg->uvars.len = 0;
  /* Scalar parameters live unboxed too (decided before any body: a jump
  ** from one member assigns another member's parameters). */
  for (int m = 0; m < G->members.len; m++) {
    CFunc *F = G->members.data[m];
    for (int i = 0; i < F->fn->u.func.nparams; i++)
      if (cg_scalar_ctype(F->fn->u.func.params[i]->type)) cg_make_unboxed(cg, F->fn->u.func.params[i]);
  }
  StrBuf body = {0};
  for (int m = 0; m < G->members.len; m++) {
    CFunc *F = G->members.data[m];
    cg->cur = F;
    if (multi) {
      sb_printf(&body, "L%d:; /* %s */\n", m, F->where);
    } else {
      sb_puts(&body, "L0:;\n");
    }
    cg_emit_block(cg, &body, 1, F->fn->u.func.body, "ret", true);
    sb_puts(&body, "  goto done;\n");
    for (int i = 0; i < F->fn->u.func.nparams; i++)
      if (keeps_scalar(cg, F->fn->u.func.params[i])) cg->used_fail = true;
  }
  StrBuf *o = &cg->code;
  bool planned = !multi && F0->plan_size > 0;
  bool framed = F0->frame_size > 0; /* one frame for all the members (plan.c) */
  if (multi)
    sb_printf(o, "static rlyrt_status %s(int which, rlyrt_object *const *args, rlyrt_object **out) {\n", G->cname);
  else if (planned)
    sb_printf(o, "static rlyrt_status %s_ws(const rlyrt_closure *self, rlyrt_object *const *args, rlyrt_object **out, "
                 "void *ws) {\n", G->cname);
  else
    sb_printf(o, "static rlyrt_status %s(const rlyrt_closure *self, rlyrt_object *const *args, rlyrt_object **out) {\n",
              G->cname);
  if (!multi) sb_puts(o, "  (void)self;\n");
  sb_puts(o, "  (void)args;\n");
  if (cg->used_fail) sb_puts(o, "  rlyrt_status st = RLYRT_OK;\n");
  sb_puts(o, "  rlyrt_object *ret = NULL;\n");
  for (int m = 0; m < G->members.len; m++) {
    CFunc *F = G->members.data[m];
    for (int i = 0; i < F->locals.len; i++) sb_printf(o, "  rlyrt_object *v%u = NULL;\n", F->locals.data[i]->id);
  }
  /* (void): a scalar parameter is read on entry even when the body never
  ** uses it, and a scalar let may be dead after A-normal form (a pure
  ** operator on the result of a call or a ref_read; dce runs before anf
  ** only, as the re-inference after primitive needs the dead lets'
  ** annotations). */
  for (int i = 0; i < cg->uvars.len; i++)
    sb_printf(o, "  %s s%u = 0;\n  (void)s%u;\n", cg_scalar_ctype(cg->uvars.data[i]->type), cg->uvars.data[i]->id,
              cg->uvars.data[i]->id);
  if (framed) {
    sb_printf(o, "  void *ws = rlyrt_frame_push(%lld);\n", (long long)F0->frame_size);
    sb_puts(o, "  if (!ws) {\n    *out = NULL;\n    return RLYRT_E_NOMEM;\n  }\n");
  }
  if (planned || framed) /* the workspace's tensors: static refcount, data at their planned offsets */
    for (int m = 0; m < G->members.len; m++) {
      CFunc *F = G->members.data[m];
      for (int i = 0; i < F->locals.len; i++) {
        const Expr *var = F->locals.data[i];
        int64_t off = cg->plan_off[var->id];
        if (off < 0) continue;
        const Type *t = var->type;
        if (t->kind == TYPE_TUPLE) {
          emit_frame_tuple(cg, o, var, off);
          continue;
        }
        char name[32];
        snprintf(name, sizeof name, "w%u", var->id);
        emit_frame_tensor(cg, o, name, t, off);
      }
    }
  if (multi) {
    sb_puts(o, "  switch (which) {\n");
    for (int m = 0; m < G->members.len; m++) {
      CFunc *F = G->members.data[m];
      sb_printf(o, "  case %d:\n", m);
      for (int i = 0; i < F->fn->u.func.nparams; i++) emit_param_entry(cg, o, 2, F->fn->u.func.params[i], i);
      sb_printf(o, "    goto L%d;\n", m);
    }
    sb_puts(o, "  default:\n    *out = NULL;\n    return rlyrt_error(RLYRT_E_INTERNAL, \"bad entry\");\n  }\n");
  } else {
    /* A scalar parameter keeps only its value, never the argument object:
    ** callers may pass a box on their stack (direct calls). */
    for (int i = 0; i < F0->fn->u.func.nparams; i++) emit_param_entry(cg, o, 1, F0->fn->u.func.params[i], i);
    if (!cg->used_label[0]) {
      /* No jump back: drop the label. */
      const char *lab = "L0:;\n";
      size_t ll = strlen(lab);
      if (body.len >= ll && memcmp(body.data, lab, ll) == 0) {
        memmove(body.data, body.data + ll, body.len - ll + 1);
        body.len -= ll;
      }
    }
  }
  sb_putn(o, body.data ? body.data : "", body.len);
  sb_free(&body);
  sb_puts(o, "done:\n");
  cg_release_all(cg, o, 1);
  if (framed) sb_puts(o, "  rlyrt_frame_pop(ws);\n");
  sb_puts(o, "  *out = ret;\n  return RLYRT_OK;\n");
  if (cg->used_fail) {
    sb_puts(o, "fail:\n");
    cg_release_all(cg, o, 1);
    if (framed) sb_puts(o, "  rlyrt_frame_pop(ws);\n");
    sb_puts(o, "  rlyrt_release(ret);\n  *out = NULL;\n  return st;\n");
  }
  sb_puts(o, "}\n\n");
  if (multi)
    for (int m = 0; m < G->members.len; m++) {
      CFunc *F = G->members.data[m];
      sb_printf(o, "static rlyrt_status %s(const rlyrt_closure *self, rlyrt_object *const *args, rlyrt_object **out) {\n"
                   "  (void)self;\n  return %s(%d, args, out);\n}\n\n", F->cname, G->cname, m);
    }
  if (planned)
    sb_printf(o, "static rlyrt_status %s(const rlyrt_closure *self, rlyrt_object *const *args, rlyrt_object **out) {\n"
                 "  void *ws = rlyrt_scratch_alloc(%lld);\n"
                 "  if (!ws) {\n    *out = NULL;\n    return RLYRT_E_NOMEM;\n  }\n"
                 "  rlyrt_status st = %s_ws(self, args, out, ws);\n"
                 "  rlyrt_scratch_free(ws);\n  return st;\n}\n\n",
              G->cname, (long long)F0->plan_size, G->cname);
  free(cg->used_label);
  cg->used_label = NULL;
}

/* Every C function: prototypes, code descriptors, closures of globals. */
void cg_emit_descriptors(Cg *cg) {
  for (int i = 0; i < cg->funcs.len; i++) {
    CFunc *F = cg->funcs.data[i];
    sb_printf(&cg->protos, "static rlyrt_status %s(const rlyrt_closure *self, rlyrt_object *const *args, rlyrt_object **out);\n",
              F->cname);
    sb_printf(&cg->protos, "static rlyrt_status %s_check(rlyrt_object *const *args, int32_t nargs);\n", F->cname);
    if (F->plan_size)
      sb_printf(&cg->protos, "static rlyrt_status %s_ws(const rlyrt_closure *self, rlyrt_object *const *args, "
                             "rlyrt_object **out, void *ws);\n", F->cname);
    sb_printf(&cg->info, "static const rlyrt_code %s_code = {%s, %s_check, %d, ", F->cname, F->cname, F->cname,
              F->fn->u.func.nparams);
    lower_cstring(&cg->info, F->where, strlen(F->where));
    sb_puts(&cg->info, ", &RC_module, ");
    if (cg_has_type_var(F->fn->type) || F->fn->u.func.ntparams) {
      sb_puts(&cg->info, "NULL};\n");
    } else {
      char *ty = cg_type_string(F->fn->type);
      lower_cstring(&cg->info, ty, strlen(ty));
      free(ty);
      sb_puts(&cg->info, "};\n");
    }
  }
  for (int i = 0; i < cg->groups.len; i++)
    if (cg->groups.data[i]->members.len > 1)
      sb_printf(&cg->protos, "static rlyrt_status %s(int which, rlyrt_object *const *args, rlyrt_object **out);\n",
                cg->groups.data[i]->cname);
}

/* Constructors used as values: a function building the value, and its
** closure. */
void cg_emit_ctor_values(Cg *cg) {
  for (int k = 0; k < cg->ctor_values.len; k++) {
    const Ctor *ct = cg->ctor_values.data[k];
    char base[64];
    snprintf(base, sizeof base, "CT%d_%d", cg_type_index(cg, ct->adt), ct->tag);
    /* Fields are kept: a scalar argument on the caller's stack is copied
    ** into a box of the value's own block. */
    sb_printf(&cg->code, "static rlyrt_status %s(const rlyrt_closure *self, rlyrt_object *const *args, rlyrt_object **out) {\n"
                         "  (void)self;\n  (void)args;\n  rlyrt_adt *d = rlyrt_adt_new_kept(%d, ", base, ct->tag);
    lower_cstring(&cg->code, ct->name->text, ct->name->len);
    sb_printf(&cg->code, ", %d, args);\n  *out = d ? &d->obj : NULL;\n  return d ? RLYRT_OK : RLYRT_E_NOMEM;\n}\n",
              ct->nfields);
    sb_printf(&cg->code, "static const rlyrt_code %s_code = {%s, NULL, %d, ", base, base, ct->nfields);
    lower_cstring(&cg->code, ct->name->text, ct->name->len);
    sb_puts(&cg->code, ", &RC_module, NULL};\n");
    sb_printf(&cg->code,
              "static const rlyrt_closure %s_closure = {{RLYRT_REFCOUNT_STATIC, RLYRT_CLOSURE, RLYRT_CLOSURE_NATIVE}, "
              "&%s_code, 0};\n\n", base, base);
  }
}
