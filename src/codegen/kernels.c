/* kernels.c: the kernel of each Primitive function.
**
** A Primitive function is one C kernel `static rlyrt_status K<n>(args,
** out)`, written by lower/: plain loops where lower_loops has a lowering,
** else a call of the runtime's reference kernel (lower_reference).
** A GEMM whose weight is a constant argument of its call reads it packed
** at build time (lower_loops_prepacked; the call passes the packed
** constant, consts.c). Identical kernels are emitted once, and kernels
** that differ only by their source position share one body (body_of), in
** one of the parts the C file can be compiled in (codegen.c, driver.c).
** Each kernel is also described (operators, result shape, schedule:
** CodegenOptions.kernels) and, with --profile, timed by a wrapper. */
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

/* The slot of text s in table t: the one holding it, or the empty one
** where it goes. Texts differ late (they name their source position), so
** comparing with every earlier kernel made long programs quadratic. */
static size_t text_slot(const TextTable *t, const char *s, uint64_t h) {
  size_t mask = t->nslots - 1, i = (size_t)h & mask;
  while (t->slots[i] && strcmp(t->texts.data[t->slots[i] - 1], s) != 0) i = (i + 1) & mask;
  return i;
}

/* The value of text s in t, or -1; absent, s (taken) is added with value
** v when v >= 0, else freed. */
static int text_find_add(TextTable *t, char *s, int v) {
  if ((size_t)t->texts.len * 2 >= t->nslots) {
    size_t n = t->nslots ? t->nslots * 2 : 64;
    free(t->slots);
    t->slots = rly_xcalloc(n, sizeof(int));
    t->nslots = n;
    for (int k = 0; k < t->texts.len; k++) {
      const char *x = t->texts.data[k];
      t->slots[text_slot(t, x, text_hash(x))] = k + 1;
    }
  }
  size_t slot = text_slot(t, s, text_hash(s));
  if (t->slots[slot]) {
    free(s);
    return t->value.data[t->slots[slot] - 1];
  }
  if (v < 0) {
    free(s);
    return -1;
  }
  VEC_PUSH(&t->texts, s);
  VEC_PUSH(&t->value, v);
  t->slots[slot] = t->texts.len;
  return -1;
}

void cg_text_table_free(TextTable *t) {
  for (int i = 0; i < t->texts.len; i++) free(t->texts.data[i]);
  VEC_FREE(&t->texts);
  VEC_FREE(&t->value);
  free(t->slots);
  memset(t, 0, sizeof *t);
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
  sb_puts(o, ", 0, 0, 0};\n");
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

/* The kernel's definition (lower.h's one signature), and its name's end. */
static const char def[] = "static rlyrt_status K__X(rlyrt_object *const *args, rlyrt_object **out) {";
static const size_t def_name = sizeof "static rlyrt_status K__X" - 1;

/* Kernels of one shape at several places differ only by the source
** position their errors name (`where`, a C string in the kernel's one
** definition, at `at`, and in none of its helpers before it). Their
** definitions are emitted once, as NAME_Kn_at(args, out, rly_where)
** (noinline: a copy in every caller would undo it), which each kernel calls
** with its own position; the C compiler's time is then that of the
** distinct kernels (ResNet-50: 57 kernels, 28 bodies).
** Returns the kernel whose body text s shares, k when it is new (the body
** into *body, with the placeholder name), or -1: s names no position. */
static int body_of(Cg *cg, const char *s, const char *at, const char *where, int k, StrBuf *body) {
  if (!where[0] || strstr(at + 1, def)) return -1;
  StrBuf lit = {0};
  lower_cstring(&lit, where, strlen(where));
  const char *l = sb_str(&lit), *first = strstr(s, l);
  if (!first || first < at) {
    sb_free(&lit);
    return -1;
  }
  size_t head = (size_t)(at - s) + def_name;
  sb_putn(body, s, (size_t)(at - s));
  sb_printf(body, "RC_BODY rlyrt_status %s_K__X_at(rlyrt_object *const *args, rlyrt_object **out, const char *rly_where) {",
            cg->o->name);
  for (const char *p = s + head + (sizeof def - 1 - def_name), *q; *p; p = q + strlen(l)) {
    q = strstr(p, l);
    if (!q) {
      sb_puts(body, p);
      break;
    }
    sb_putn(body, p, (size_t)(q - p));
    sb_puts(body, "rly_where");
  }
  sb_free(&lit);
  int had = text_find_add(&cg->kernel_bodies, dup_text(sb_str(body), strlen(sb_str(body))), k);
  if (had >= 0) sb_free(body);
  return had >= 0 ? had : k;
}

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
  int k = cg->kernel_texts.texts.len, had = text_find_add(&cg->kernel_texts, text.data, k);
  if (had >= 0) { /* the same text, the same source position: the same kernel */
    snprintf(name, n, "K%d", had);
    return;
  }
  snprintf(name, n, "K%d", k);
  describe(cg, prim, s, loops);
  const char *at = strstr(s, def);
  StrBuf body = {0};
  int shared = at ? body_of(cg, s, at, where, k, &body) : -1;
  char bname[32];
  snprintf(bname, sizeof bname, "K%d", shared);
  if (shared == k) {
    /* a new body: in its part (codegen.c: RC_PART_OF_b), declared in the others */
    sb_printf(&cg->kernels, "#if !defined(RC_PART) || RC_PART_OF_%d == RC_PART\n", cg->kernel_bodies.texts.len - 1);
    put_named(&cg->kernels, sb_str(&body), placeholder, bname);
    sb_printf(&cg->kernels,
              "#else\n__attribute__((visibility(\"hidden\"))) rlyrt_status %s_%s_at(rlyrt_object *const *args, "
              "rlyrt_object **out, const char *rly_where);\n#endif\n",
              cg->o->name, bname);
  }
  sb_free(&body);
  /* the rest in part 0 */
  sb_puts(&cg->kernels, "#if !defined(RC_PART) || RC_PART == 0\n");
  if (shared >= 0) {
    /* Kn calls the body with its own source position */
    sb_printf(&cg->kernels, "static rlyrt_status %s%s(rlyrt_object *const *args, rlyrt_object **out) {\n  return %s_%s_at(args, out, ",
              name, cg->o->profile ? "_body" : "", cg->o->name, bname);
    lower_cstring(&cg->kernels, where, strlen(where));
    sb_puts(&cg->kernels, ");\n}\n");
  } else if (at && cg->o->profile) {
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
  sb_puts(&cg->kernels, "#endif\n\n");
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
