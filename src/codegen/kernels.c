/* kernels.c: the kernel of each Primitive function.
**
** A Primitive function is one C kernel `static rlyrt_status K<n>(args,
** out)`, written by lower/: plain loops where lower_loops has a lowering,
** else a call of the runtime's reference kernel (lower_reference).
** A GEMM whose weight is a constant argument of its call reads it packed
** at build time (lower_loops_prepacked; the call passes the packed
** constant, consts.c). Identical kernels are emitted once. Each kernel is also described
** (operators, result shape, schedule: CodegenOptions.kernels) and, with
** --profile, timed by a wrapper. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg.h"
#include "ops/ops.h"

/* FNV-1a of a kernel's text. */
static uint64_t text_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* The slot of text s in the table: the one holding it, or the empty one
** where it goes. Texts differ late (they name their source position), so
** comparing with every earlier kernel made long programs quadratic. */
static size_t kernel_slot(const Cg *cg, const char *s, uint64_t h) {
  size_t mask = cg->kernel_nslots - 1, i = (size_t)h & mask;
  while (cg->kernel_slots[i] && strcmp(cg->kernel_texts.data[cg->kernel_slots[i] - 1], s) != 0) i = (i + 1) & mask;
  return i;
}

static void kernel_table_grow(Cg *cg) {
  size_t n = cg->kernel_nslots ? cg->kernel_nslots * 2 : 64;
  free(cg->kernel_slots);
  cg->kernel_slots = rly_xcalloc(n, sizeof(int));
  cg->kernel_nslots = n;
  for (int k = 0; k < cg->kernel_texts.len; k++) {
    const char *t = cg->kernel_texts.data[k];
    cg->kernel_slots[kernel_slot(cg, t, text_hash(t))] = k + 1;
  }
}

/* {==== Descriptions ====}
** Every kernel is described by its operators, its result and its
** schedule, for the build description and for --profile's records. The
** operators and result come from the Primitive function; the schedule from
** the comment lower_loops puts first ("/" "* OPS: SCHEDULE, DETAILS *" "/"),
** so that the lowering stays the one place that knows it. */

static char *dup_text(const char *s, size_t n) {
  char *d = rly_xmalloc(n + 1);
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}

/* The operators prim's body calls, in evaluation order. */
static char *kernel_ops(Expr *prim) {
  ExprVec nodes = {0};
  ir_postorder(prim->u.func.body, 0, &nodes);
  StrBuf o = {0};
  for (int i = 0; i < nodes.len; i++) {
    const Expr *e = nodes.data[i];
    if (e->kind != EXPR_CALL || !e->u.call.callee || e->u.call.callee->kind != EXPR_OP) continue;
    sb_printf(&o, "%s%s", o.len ? ", " : "", e->u.call.callee->u.op.op->name);
  }
  VEC_FREE(&nodes);
  char *r = dup_text(sb_str(&o), o.len);
  sb_free(&o);
  return r;
}

static void put_dims(StrBuf *o, const Type *t) {
  sb_putc(o, '(');
  for (int i = 0; i < t->u.tensor.ndim; i++) {
    int64_t d = t->u.tensor.shape[i];
    if (d < 0) sb_printf(o, "%s?", i ? ", " : "");
    else sb_printf(o, "%s%lld", i ? ", " : "", (long long)d);
  }
  sb_putc(o, ')');
}

/* The result's shape: "(1, 64)"; a tuple "(1, 128) x4" when its fields
** agree, else "(2, 3), (4)". */
static char *kernel_shape(const Expr *prim) {
  const Type *ft = prim->type;
  const Type *t = ft && ft->kind == TYPE_FUNC ? ft->u.func.ret : NULL;
  StrBuf o = {0};
  if (t && t->kind == TYPE_TENSOR) {
    put_dims(&o, t);
  } else if (t && t->kind == TYPE_TUPLE) {
    bool same = t->u.tuple.n > 0;
    for (int i = 0; i < t->u.tuple.n; i++) {
      const Type *f = t->u.tuple.fields[i];
      if (!f || f->kind != TYPE_TENSOR) same = false;
      else if (same && !ir_type_equal(f, t->u.tuple.fields[0])) same = false;
    }
    if (same) {
      put_dims(&o, t->u.tuple.fields[0]);
      sb_printf(&o, " x%d", t->u.tuple.n);
    } else {
      for (int i = 0; i < t->u.tuple.n; i++) {
        const Type *f = t->u.tuple.fields[i];
        if (i) sb_puts(&o, ", ");
        if (f && f->kind == TYPE_TENSOR) put_dims(&o, f);
        else sb_putc(&o, '?');
      }
    }
  } else {
    sb_putc(&o, '?');
  }
  char *r = dup_text(sb_str(&o), o.len);
  sb_free(&o);
  return r;
}

/* The schedule a loop kernel's leading comment names: what follows "OPS: "
** up to the first ", " ("GEMV float32", "elementwise chain"); "elementwise
** loop" when it has no such comment (a single operator of lower.def). */
static char *kernel_schedule(const char *text) {
  for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
    size_t n = strcspn(line, "\n");
    if (n < 6 || strncmp(line, "/* ", 3) != 0 || strncmp(line + n - 3, " */", 3) != 0) continue;
    const char *colon = strstr(line, ": ");
    if (!colon || colon >= line + n - 3) continue;
    const char *s = colon + 2, *end = line + n - 3;
    const char *comma = strstr(s, ", ");
    if (comma && comma < end) end = comma;
    return dup_text(s, (size_t)(end - s));
  }
  return dup_text("elementwise loop", 16);
}

static void describe(Cg *cg, Expr *prim, const char *text, bool loops) {
  KernelDesc k = {kernel_ops(prim), kernel_shape(prim), loops ? kernel_schedule(text) : dup_text("reference", 9)};
  VEC_PUSH(cg->o->kernels, k);
}

/* {==== Profiling ====}
** With --profile, kernel Kn is emitted as Kn_body and Kn becomes a wrapper
** that times it into the record Kn_prof (rlyrt_kernel_record); callers are
** unchanged. Without it, nothing of this is emitted. */

/* The record of kernel name and, when wrap, its timing wrapper (a kernel
** whose definition was not found keeps a record that stays at zero). */
static void put_record(StrBuf *o, const char *name, const KernelDesc *k, bool wrap) {
  sb_printf(o, "static rlyrt_kernel_record %s_prof = {\"%s\", ", name, name);
  lower_cstring(o, k->ops, strlen(k->ops));
  sb_puts(o, ", ");
  lower_cstring(o, k->shape, strlen(k->shape));
  sb_puts(o, ", ");
  lower_cstring(o, k->schedule, strlen(k->schedule));
  sb_puts(o, ", 0, 0};\n");
  if (wrap)
    sb_printf(o,
            "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n"
            "  uint64_t t0 = rlyrt_profile_now();\n"
            "  rlyrt_status s = %s_body(args, out);\n"
            "  rlyrt_profile_add(&%s_prof, t0);\n"
            "  return s;\n"
            "}\n",
            name, name, name);
}

/* Appends text with the placeholder replaced by name. */
static void put_named(StrBuf *o, const char *text, const char *placeholder, const char *name) {
  for (const char *p = text, *q; *p; p = q + strlen(placeholder)) {
    q = strstr(p, placeholder);
    if (!q) {
      sb_puts(o, p);
      break;
    }
    sb_putn(o, p, (size_t)(q - p));
    sb_puts(o, name);
  }
}

/* The kernel of Primitive function prim: its name in name. Identical
** kernels (same operator, attributes and types) are emitted once: the text
** is made with a placeholder name, compared with the kernels so far, and
** the placeholder replaced by the kernel's name. */
static const char placeholder[] = "K__X";

static void kernel_of(Cg *cg, Expr *prim, char *name, size_t n, const bool *is_const, LowerPrepack *pk) {
  char where[256], err[256];
  cg_where(cg, prim->span, where, sizeof where);
  StrBuf text = {0};
  bool loops = is_const && lower_loops_prepacked(&text, placeholder, prim, where, is_const, pk);
  if (!loops) loops = lower_loops(&text, placeholder, prim, where);
  if (!loops && !lower_reference(cg->L, &cg->kdecls, &text, placeholder, prim, where, err, sizeof err)) {
    cg_error(cg, prim->span, "cannot compile this operator call: %s", err);
    sb_free(&text);
    snprintf(name, n, "K_none");
    return;
  }
  const char *s = sb_str(&text);
  if ((size_t)cg->kernel_texts.len * 2 >= cg->kernel_nslots) kernel_table_grow(cg);
  size_t slot = kernel_slot(cg, s, text_hash(s));
  if (cg->kernel_slots[slot]) {
    snprintf(name, n, "K%d", cg->kernel_slots[slot] - 1);
    sb_free(&text);
    return;
  }
  cg->kernel_slots[slot] = cg->kernel_texts.len + 1;
  snprintf(name, n, "K%d", cg->kernel_texts.len);
  describe(cg, prim, s, loops);
  /* The kernel's definition (lower.h's one signature), and its name's end. */
  static const char def[] = "static rlyrt_status K__X(rlyrt_object *const *args, rlyrt_object **out) {";
  static const size_t def_name = sizeof "static rlyrt_status K__X" - 1;
  const char *at = cg->o->profile ? strstr(s, def) : NULL;
  if (at) {
    /* The definition becomes Kn_body; the wrapper Kn follows it. */
    size_t head = (size_t)(at - s) + def_name;
    StrBuf renamed = {0};
    sb_putn(&renamed, s, head);
    sb_puts(&renamed, "_body");
    sb_puts(&renamed, s + head);
    put_named(&cg->kernels, sb_str(&renamed), placeholder, name);
    sb_free(&renamed);
  } else {
    put_named(&cg->kernels, s, placeholder, name);
  }
  if (cg->o->profile) put_record(&cg->kernels, name, &cg->o->kernels->data[cg->o->kernels->len - 1], at != NULL);
  sb_puts(&cg->kernels, "\n");
  VEC_PUSH(&cg->kernel_texts, text.data); /* owned by the table now */
}

void cg_kernel_for(Cg *cg, Expr *prim, char *name, size_t n) { kernel_of(cg, prim, name, n, NULL, NULL); }

/* A call whose arguments include constants may get a kernel that reads
** one of them packed at build time (a GEMM's weight): a kernel of its own
** text, so that a kernel shared by several calls is always called alike. */
void cg_kernel_for_call(Cg *cg, Expr *prim, Expr *const *args, int nargs, char *name, size_t n, LowerPrepack *p) {
  p->param = -1;
  bool is_const[256], any = false;
  int np = prim->u.func.nparams;
  if (np != nargs || np > (int)RLY_COUNTOF(is_const)) {
    kernel_of(cg, prim, name, n, NULL, NULL);
    return;
  }
  for (int i = 0; i < np; i++) {
    is_const[i] = args[i]->kind == EXPR_CONST;
    any |= is_const[i];
  }
  kernel_of(cg, prim, name, n, any ? is_const : NULL, p);
  if (!any) p->param = -1;
}
