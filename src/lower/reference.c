/* lower/reference.c: kernels that call the runtime's reference kernels.
**
** The call is the one the interpreter makes (interp/kcall.c), frozen into
** static data: the attributes (every field of the op's class, defaults
** included) and the result's static tensor types become static const
** tables next to the kernel, so a call costs one rlyrt_kernel_call on the
** stack. The functions are found by op name in the runtime's kernel lists
** (runtime/kernels/k_*.def); their prototypes are emitted once per file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "lower/kernel.h"
#include "lower/lower.h"
#include "ops/ops.h"

static const struct {
  const char *op;
  const char *fn;
} kernels[] = {
#define KERNEL(name, fn) {name, #fn},
#include "relayc/kernels/k_elemwise.def"
#include "relayc/kernels/k_nn.def"
#include "relayc/kernels/k_transform.def"
#undef KERNEL
};

struct Lowering {
  Vec(const char *) declared; /* reference kernels whose prototype is out */
};

Lowering *lowering_new(void) { return rly_xcalloc(1, sizeof(Lowering)); }

void lowering_free(Lowering *L) {
  if (!L) return;
  VEC_FREE(&L->declared);
  free(L);
}

void lower_cstring(StrBuf *out, const char *s, size_t n) {
  sb_putc(out, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') sb_printf(out, "\\%c", c);
    else if (c >= 32 && c < 127 && c != '?') sb_putc(out, (char)c);
    else sb_printf(out, "\\%03o", c);
  }
  sb_putc(out, '"');
}

static void put_double(StrBuf *out, double v) {
  if (isnan(v)) sb_puts(out, "NAN");
  else if (isinf(v)) sb_puts(out, v < 0 ? "-INFINITY" : "INFINITY");
  else sb_printf(out, "%a", v);
}

/* Emits the static arrays a value's items need (before), and the value's
** initializer into init. Returns the next free array number. */
static int put_attr(StrBuf *before, StrBuf *init, const char *name, int *counter, const AttrValue *v,
                    const char *field) {
  sb_puts(init, "{");
  if (field) {
    sb_puts(init, ".name = ");
    lower_cstring(init, field, strlen(field));
    sb_puts(init, ", ");
  }
  switch (v->kind) {
  case AV_INT: sb_printf(init, ".kind = RLYRT_ATTR_INT, .i = INT64_C(%lld)", (long long)v->u.i.v); break;
  case AV_BOOL: sb_printf(init, ".kind = RLYRT_ATTR_INT, .i = %d", v->u.b ? 1 : 0); break;
  case AV_FLOAT:
    sb_puts(init, ".kind = RLYRT_ATTR_FLOAT, .f = ");
    put_double(init, v->u.f.v);
    break;
  case AV_STR: {
    size_t n = strnlen(v->u.str.s, v->u.str.len); /* the runtime reads up to the first NUL, as the interpreter */
    sb_puts(init, ".kind = RLYRT_ATTR_STR, .s = ");
    lower_cstring(init, v->u.str.s, n);
    break;
  }
  case AV_ARRAY: {
    int k = (*counter)++;
    StrBuf items = {0};
    for (int i = 0; i < v->u.arr.n; i++) {
      sb_puts(&items, i ? ", " : "");
      put_attr(before, &items, name, counter, v->u.arr.items[i], NULL);
    }
    if (v->u.arr.n) sb_printf(before, "static const rlyrt_attr %s_v%d[] = {%s};\n", name, k, sb_str(&items));
    sb_free(&items);
    if (v->u.arr.n) sb_printf(init, ".kind = RLYRT_ATTR_ARRAY, .n = %d, .items = %s_v%d", v->u.arr.n, name, k);
    else sb_puts(init, ".kind = RLYRT_ATTR_ARRAY, .n = 0");
    break;
  }
  default: sb_puts(init, ".kind = RLYRT_ATTR_NONE"); break;
  }
  sb_puts(init, "}");
  return *counter;
}

static bool put_tensor_type(StrBuf *before, StrBuf *init, const char *name, int i, const Type *t) {
  if (!t || t->kind != TYPE_TENSOR) return false;
  DType d = t->u.tensor.dtype;
  if (t->u.tensor.ndim) {
    sb_printf(before, "static const int64_t %s_s%d[] = {", name, i);
    for (int k = 0; k < t->u.tensor.ndim; k++)
      sb_printf(before, "%s%lld", k ? ", " : "", (long long)t->u.tensor.shape[k]);
    sb_puts(before, "};\n");
    sb_printf(init, "{{%u, %u, %u}, %d, %s_s%d}", d.code, d.bits, d.lanes, t->u.tensor.ndim, name, i);
  } else {
    sb_printf(init, "{{%u, %u, %u}, 0, NULL}", d.code, d.bits, d.lanes);
  }
  return true;
}

/* The reference kernel of op, or NULL. */
static const char *kernel_of(const OpDef *op) {
  for (size_t i = 0; i < RLY_COUNTOF(kernels); i++)
    if (strcmp(kernels[i].op, op->name) == 0) return kernels[i].fn;
  return NULL;
}

/* Appends the prototype of kfn to decls, once per Lowering. */
static void declare(Lowering *L, StrBuf *decls, const char *kfn) {
  for (int i = 0; i < L->declared.len; i++)
    if (strcmp(L->declared.data[i], kfn) == 0) return;
  VEC_PUSH(&L->declared, kfn);
  sb_printf(decls, "rlyrt_status %s(rlyrt_kernel_call *c);\n", kfn);
}

/* The static tables of call (NAME_attrs, NAME_outs and their items) to
** before; the number of result tensors and whether it is a tuple. False
** with a message when the result is not a tensor or a tuple of them. */
static bool put_tables(StrBuf *before, const char *name, const Expr *call, int *nouts_out, bool *tuple_out, char *err,
                       size_t errlen) {
  const OpDef *op = call->u.call.callee->u.op.op;
  StrBuf init = {0};
  /* Attributes. */
  const Attrs *attrs = call->u.call.attrs;
  int counter = 0;
  int nattrs = attrs && attrs->cls ? attrs->n : 0;
  if (nattrs) {
    for (int i = 0; i < nattrs; i++) {
      sb_puts(&init, i ? ",\n    " : "    ");
      put_attr(before, &init, name, &counter, attrs->values[i], attrs->cls->fields[i].name);
    }
    sb_printf(before, "static const rlyrt_attr %s_items[] = {\n%s};\n", name, sb_str(&init));
    sb_printf(before, "static const rlyrt_attrs %s_attrs = {%d, %s_items};\n", name, nattrs, name);
  } else {
    sb_printf(before, "static const rlyrt_attrs %s_attrs = {0, NULL};\n", name);
  }
  /* Result types. */
  sb_clear(&init);
  const Type *t = call->type;
  bool tuple = t && t->kind == TYPE_TUPLE;
  int nouts = tuple ? t->u.tuple.n : 1;
  for (int i = 0; i < nouts; i++) {
    sb_puts(&init, i ? ", " : "");
    if (!put_tensor_type(before, &init, name, i, tuple ? t->u.tuple.fields[i] : t)) {
      snprintf(err, errlen, "%s: the result is not a tensor or a tuple of tensors", op->name);
      sb_free(&init);
      return false;
    }
  }
  if (nouts) sb_printf(before, "static const rlyrt_tensor_type %s_outs[] = {%s};\n", name, sb_str(&init));
  sb_free(&init);
  *nouts_out = nouts;
  *tuple_out = tuple;
  return true;
}

static bool lower_group_reference(Lowering *L, StrBuf *decls, StrBuf *out, const char *name, const Expr *fn,
                                  const char *where, char *err, size_t errlen);

bool lower_reference(Lowering *L, StrBuf *decls, StrBuf *out, const char *name, const Expr *fn, const char *where,
                     char *err, size_t errlen) {
  const Expr *call = fn->u.func.body;
  /* One call on the parameters in order (what WrapPrimitives makes): one
  ** kernel call; anything else (fused groups): the calls in turn. */
  bool single = call->kind == EXPR_CALL && call->u.call.callee->kind == EXPR_OP &&
                call->u.call.nargs == fn->u.func.nparams;
  for (int i = 0; single && i < call->u.call.nargs; i++) single = call->u.call.args[i] == fn->u.func.params[i];
  if (!single) return lower_group_reference(L, decls, out, name, fn, where, err, errlen);
  const OpDef *op = call->u.call.callee->u.op.op;
  const char *kfn = kernel_of(op);
  if (!kfn) {
    snprintf(err, errlen, "the operator %s has no kernel in the runtime", op->name);
    return false;
  }
  StrBuf before = {0};
  int nouts;
  bool tuple;
  if (!put_tables(&before, name, call, &nouts, &tuple, err, errlen)) {
    sb_free(&before);
    return false;
  }
  declare(L, decls, kfn);
  sb_putn(out, before.data ? before.data : "", before.len);
  sb_free(&before);
  sb_printf(out, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n", name);
  sb_puts(out, "  rlyrt_kernel_call c = {");
  lower_cstring(out, op->name, strlen(op->name));
  sb_printf(out, ", &%s_attrs, args, %d, ", name, call->u.call.nargs);
  if (nouts) sb_printf(out, "%s_outs", name);
  else sb_puts(out, "NULL");
  sb_printf(out, ", %d, %s, NULL};\n", nouts, tuple ? "true" : "false");
  sb_printf(out, "  rlyrt_status s = %s(&c);\n", kfn);
  sb_puts(out, "  if (s != RLYRT_OK) return rlyrt_error_at(s, ");
  lower_cstring(out, where, strlen(where));
  sb_puts(out, ");\n");
  if (!tuple) /* a planned buffer in *out: the result goes there */
    sb_puts(out, "  if (*out && c.result != *out) {\n"
                 "    size_t n = rlyrt_tensor_nbytes(RLYRT_AS_TENSOR(c.result));\n"
                 "    if (n) memcpy(RLYRT_AS_TENSOR(*out)->dl.data, RLYRT_AS_TENSOR(c.result)->dl.data, n);\n"
                 "    rlyrt_release(c.result);\n"
                 "    return RLYRT_OK;\n"
                 "  }\n");
  sb_puts(out, "  *out = c.result;\n  return RLYRT_OK;\n}\n");
  return true;
}

/* {==== Groups: the calls in turn ====}
** A Primitive function with several calls (a fused group), or one call
** whose arguments are not the parameters in order: each live node in
** evaluation order, its result in v[i]; operator calls call their
** reference kernel, constants are copied into a new tensor, tuples and
** projections built and read. A node's value is released right after its
** last use; on failure, everything still held is. */

/* The C expression of operand a (borrowed rlyrt_object *). */
static void put_operand(StrBuf *sb, int a) {
  if (a < 0) sb_printf(sb, "args[%d]", -1 - a);
  else sb_printf(sb, "v[%d]", a);
}

static bool lower_group_reference(Lowering *L, StrBuf *decls, StrBuf *out, const char *name, const Expr *fn,
                                  const char *where, char *err, size_t errlen) {
  Group *g = rly_xcalloc(1, sizeof *g);
  if (!group_build(fn, g)) {
    snprintf(err, errlen, "a primitive function must be operator calls, constants, tuples and projections on its "
                          "parameters (at most %d)",
             GROUP_MAX_NODES);
    free(g);
    return false;
  }
  int last_use[GROUP_MAX_NODES];
  for (int i = 0; i < g->nnodes; i++) {
    last_use[i] = -1;
    for (int j = 0; j < g->nodes[i].nargs; j++)
      if (g->nodes[i].args[j] >= 0 && g->nodes[i].live) last_use[g->nodes[i].args[j]] = i;
  }
  StrBuf before = {0}, body = {0};
  bool ok = true;
  for (int i = 0; ok && i < g->nnodes; i++) {
    const GNode *n = &g->nodes[i];
    if (!n->live) continue;
    char node[300];
    snprintf(node, sizeof node, "%s_n%d", name, i);
    switch (n->kind) {
    case GN_CALL: {
      const char *kfn = kernel_of(n->op);
      int nouts;
      bool tuple;
      if (!kfn) {
        snprintf(err, errlen, "the operator %s has no kernel in the runtime", n->op->name);
        ok = false;
        break;
      }
      if (!put_tables(&before, node, n->call, &nouts, &tuple, err, errlen)) {
        ok = false;
        break;
      }
      declare(L, decls, kfn);
      sb_printf(&body, "  {\n    /* %s */\n", n->op->name);
      if (n->nargs) {
        sb_printf(&body, "    rlyrt_object *const a[%d] = {", n->nargs);
        for (int j = 0; j < n->nargs; j++) {
          sb_puts(&body, j ? ", " : "");
          put_operand(&body, n->args[j]);
        }
        sb_puts(&body, "};\n");
      }
      sb_puts(&body, "    rlyrt_kernel_call c = {");
      lower_cstring(&body, n->op->name, strlen(n->op->name));
      sb_printf(&body, ", &%s_attrs, %s, %d, ", node, n->nargs ? "a" : "NULL", n->nargs);
      if (nouts) sb_printf(&body, "%s_outs", node);
      else sb_puts(&body, "NULL");
      sb_printf(&body, ", %d, %s, NULL};\n", nouts, tuple ? "true" : "false");
      sb_printf(&body, "    if ((s = %s(&c)) != RLYRT_OK) goto fail;\n", kfn);
      sb_printf(&body, "    v[%d] = c.result;\n  }\n", i);
      break;
    }
    case GN_CONST: {
      const ConstData *c = n->call->u.constant.value;
      DType d = c->dtype;
      if (c->ndim) {
        sb_printf(&before, "static const int64_t %s_shape[] = {", node);
        for (int k = 0; k < c->ndim; k++) sb_printf(&before, "%s%lld", k ? ", " : "", (long long)c->shape[k]);
        sb_puts(&before, "};\n");
      }
      sb_printf(&body, "  {\n    rlyrt_tensor *t = rlyrt_tensor_new((DLDataType){%u, %u, %u}, %d, %s%s, false);\n",
                d.code, d.bits, d.lanes, c->ndim, c->ndim ? node : "NULL", c->ndim ? "_shape" : "");
      sb_puts(&body, "    if (!t) {\n      s = RLYRT_E_NOMEM;\n      goto fail;\n    }\n");
      if (c->nbytes) {
        sb_puts(&body, "    memcpy(t->dl.data, ");
        lower_cstring(&body, c->data, c->nbytes);
        sb_printf(&body, ", %zu);\n", c->nbytes);
      }
      sb_printf(&body, "    v[%d] = &t->obj;\n  }\n", i);
      break;
    }
    case GN_TUPLE:
      sb_printf(&body, "  {\n    rlyrt_tuple *tp = rlyrt_tuple_new(%d);\n", n->nargs);
      sb_puts(&body, "    if (!tp) {\n      s = RLYRT_E_NOMEM;\n      goto fail;\n    }\n");
      for (int j = 0; j < n->nargs; j++) {
        sb_printf(&body, "    rlyrt_tuple_set_take(tp, %d, rlyrt_retain(", j);
        put_operand(&body, n->args[j]);
        sb_puts(&body, "));\n");
      }
      sb_printf(&body, "    v[%d] = &tp->obj;\n  }\n", i);
      break;
    case GN_PROJ:
      sb_printf(&body, "  v[%d] = rlyrt_retain(RLYRT_AS_TUPLE(", i);
      put_operand(&body, n->args[0]);
      sb_printf(&body, ")->fields[%d]);\n", n->index);
      break;
    }
    for (int j = 0; j < g->nnodes; j++)
      if (last_use[j] == i && j != g->nnodes - 1) sb_printf(&body, "  rlyrt_release(v[%d]);\n  v[%d] = NULL;\n", j, j);
  }
  if (ok) {
    int r = g->nnodes - 1;
    const Type *rt = g->nodes[r].call->type;
    sb_putn(out, before.data ? before.data : "", before.len);
    sb_printf(out, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n", name);
    sb_printf(out, "  rlyrt_object *v[%d] = {NULL};\n  rlyrt_status s;\n", g->nnodes);
    if (!fn->u.func.nparams) sb_puts(out, "  (void)args;\n");
    sb_putn(out, body.data ? body.data : "", body.len);
    if (rt && rt->kind == TYPE_TENSOR) /* a planned buffer in *out: the result goes there */
      sb_printf(out,
                "  if (*out && v[%d] != *out) {\n"
                "    size_t n = rlyrt_tensor_nbytes(RLYRT_AS_TENSOR(v[%d]));\n"
                "    if (n) memcpy(RLYRT_AS_TENSOR(*out)->dl.data, RLYRT_AS_TENSOR(v[%d])->dl.data, n);\n"
                "    rlyrt_release(v[%d]);\n"
                "    return RLYRT_OK;\n"
                "  }\n",
                r, r, r, r);
    sb_printf(out, "  *out = v[%d];\n  return RLYRT_OK;\nfail:\n", r);
    sb_printf(out, "  for (int i = 0; i < %d; i++) rlyrt_release(v[i]);\n", g->nnodes);
    sb_puts(out, "  return rlyrt_error_at(s, ");
    lower_cstring(out, where, strlen(where));
    sb_puts(out, ");\n}\n");
  }
  sb_free(&before);
  sb_free(&body);
  free(g);
  return ok;
}
