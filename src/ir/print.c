/* print.c: the canonical Relay text printer (spec sections 1-8, TVM's style).
**
** Input: a Module, read only. Output: text appended to a StrBuf. The text
** re-parses to a structurally equal module, and printing is idempotent and
** deterministic (nothing here depends on pointer values or hash order).
**
** Shape of the output:
** - `#[version = "0.0.5"]`, type definitions sorted by name, `def`s sorted
**   by name, blank lines between them; an expression module prints its
**   `free_var` lines and then its expression as a body; optional metadata.
** - Bodies are in graph-normal form: every non-atomic sub-expression that
**   is not a let value or a body's tail becomes a line `%N = ...;` before
**   the statement that first needs it; every later use prints `%N`.
**   Binding numbers count up per top-level definition in printing order:
**   children before parents, call arguments before the callee, the inside
**   of a function, branch or clause before the node that holds it.
** - Scopes: function bodies, if branches, match clause bodies and
**   `( let ... )` groups are scopes nested in the body that holds them. A
**   node is bound once, in its home: the innermost scope holding all its
**   uses. So a node used in a branch and after the if is bound before the
**   if, and the printed text keeps the module's sharing exactly (effects
**   such as ref cells are not duplicated, and a re-parse gives the same
**   DAG). Only where that would put a binding above the `let` line of a
**   variable it mentions (recursive lets) does it go to the inner scope
**   instead, printed again where needed later (a re-printed binder gets a
**   fresh name); a let value whose own parts mention its variable is a
**   group `let %g = (%0 = ...; value);` whose bindings follow the `let`.
** - Distinct variables print distinct names within a definition.
** - Tensor constants (and 0-d constants without an exact literal) print as
**   meta[relay.Constant][i], i in order of first printing in the module.
**
** Recursion: let chains and chains of dataflow (a 100,000-long sequence of
** bindings is a 100,000-deep expression) are walked with explicit stacks.
** C recursion happens only per nested scope (function, branch, clause,
** let group), per type and pattern nesting, and in the rare inline form
** used for expressions inside attribute values. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "ir/ir.h"
#include "ir/meta_write.h"
#include "ir/walk.h"
#include "ir/schema.h"

/* {==== Scalars ====} */

static bool same_float(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }
static bool same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Decimal text of a finite float32 that reads back to the same bits,
** whether the reader uses strtof or strtod followed by a cast: %.6g when
** that is exact, else %.9g (always exact). The lexer rejects float32
** literals whose decimal value exceeds FLT_MAX, which %.9g of FLT_MAX does
** (3.40282347e+38): those get the exact value, %.17g. */
static void fmt_float32(char buf[40], float v) {
  snprintf(buf, 40, "%.6g", (double)v);
  if (same_float(strtof(buf, NULL), v) && same_float((float)strtod(buf, NULL), v)) return;
  snprintf(buf, 40, "%.9g", (double)v);
  if (fabs(strtod(buf, NULL)) > (double)FLT_MAX) snprintf(buf, 40, "%.17g", (double)v);
}

/* Decimal text of a finite double that strtod reads back exactly: %.6g when
** exact, else %.17g. Also used for attribute values of every width: the
** parser keeps them as the double strtod reads, compared bitwise. */
static void fmt_float64(char buf[40], double v) {
  snprintf(buf, 40, "%.6g", v);
  if (same_double(strtod(buf, NULL), v)) return;
  snprintf(buf, 40, "%.17g", v);
}

/* Writes the literal of a 0-d constant and returns true, or returns false
** when it has no exact literal (dtype without a literal form, NaN, a
** float16/float64 infinity, the most negative int64, whose magnitude does
** not lex): such constants go to the metadata section. */
static bool put_scalar(StrBuf *sb, const ConstData *c) {
  if (!c || c->ndim != 0 || c->dtype.lanes != 1 || !c->data) return false;
  DType t = c->dtype;
  char buf[48];
  if (dtype_is_bool(t)) {
    uint8_t b;
    memcpy(&b, c->data, 1);
    sb_puts(sb, b ? "True" : "False");
    return true;
  }
  if (t.code == DT_INT) {
    if (t.bits == 16) {
      int16_t v;
      memcpy(&v, c->data, sizeof v);
      sb_printf(sb, "%di16", (int)v);
      return true;
    }
    if (t.bits == 32) {
      int32_t v;
      memcpy(&v, c->data, sizeof v);
      sb_printf(sb, "%" PRId32, v);
      return true;
    }
    if (t.bits == 64) {
      int64_t v;
      memcpy(&v, c->data, sizeof v);
      if (v == INT64_MIN) return false;
      sb_printf(sb, "%" PRId64 "i64", v);
      return true;
    }
    return false;
  }
  if (t.code != DT_FLOAT) return false;
  if (t.bits == 32) {
    float v;
    memcpy(&v, c->data, sizeof v);
    if (isnan(v)) return false;
    if (isinf(v)) {
      sb_puts(sb, v < 0 ? "-inff" : "inff");
      return true;
    }
    fmt_float32(buf, v);
    sb_printf(sb, "%sf", buf);
    return true;
  }
  if (t.bits == 64) {
    double v;
    memcpy(&v, c->data, sizeof v);
    if (isnan(v) || isinf(v)) return false; /* only float32 infinity has a literal */
    fmt_float64(buf, v);
    sb_printf(sb, "%sf64", buf);
    return true;
  }
  if (t.bits == 16) {
    uint16_t h;
    memcpy(&h, c->data, sizeof h);
    double v = half_to_double(h);
    if (isnan(v) || isinf(v)) return false;
    /* A half has 11 significant bits: 6 decimal digits read back to the
    ** same half (checked anyway, as the parser reads it). */
    snprintf(buf, sizeof buf, "%.6g", v);
    if (half_from_double(strtod(buf, NULL)) != h) snprintf(buf, sizeof buf, "%.17g", v);
    sb_printf(sb, "%sf16", buf);
    return true;
  }
  return false;
}

static bool is_scalar_literal(const ConstData *c) {
  StrBuf tmp = {0};
  bool ok = put_scalar(&tmp, c);
  sb_free(&tmp);
  return ok;
}

/* {==== Types ====} */

static void put_type_list(StrBuf *sb, Type *const *ts, int n) {
  for (int i = 0; i < n; i++) {
    if (i) sb_puts(sb, ", ");
    ir_print_type(sb, ts[i]);
  }
}

static void put_tparams(StrBuf *sb, Type *const *ts, int n) {
  if (n == 0) return;
  sb_putc(sb, '[');
  put_type_list(sb, ts, n);
  sb_putc(sb, ']');
}

void ir_print_type(StrBuf *sb, const Type *t) {
  char buf[32];
  if (!t) {
    sb_putc(sb, '_');
    return;
  }
  switch (t->kind) {
  case TYPE_TENSOR: {
    DType dt = t->u.tensor.dtype;
    /* A bare dtype is only read back as a scalar type when it begins with
    ** int, uint, float or bool; bfloat16 and others need Tensor[(), ..]. */
    bool bare_ok = dt.code == DT_INT || dt.code == DT_UINT || dt.code == DT_FLOAT;
    if (t->u.tensor.ndim == 0 && bare_ok) {
      sb_puts(sb, dtype_name(dt, buf));
      break;
    }
    sb_puts(sb, "Tensor[(");
    for (int i = 0; i < t->u.tensor.ndim; i++) {
      if (i) sb_puts(sb, ", ");
      int64_t d = t->u.tensor.shape[i];
      if (d == RLY_DIM_ANY) sb_putc(sb, '?');
      else sb_printf(sb, "%" PRId64, d);
    }
    sb_printf(sb, "), %s]", dtype_name(dt, buf));
    break;
  }
  case TYPE_TUPLE:
    sb_putc(sb, '(');
    put_type_list(sb, t->u.tuple.fields, t->u.tuple.n);
    if (t->u.tuple.n == 1) sb_putc(sb, ',');
    sb_putc(sb, ')');
    break;
  case TYPE_FUNC:
    sb_puts(sb, "fn ");
    put_tparams(sb, t->u.func.tparams, t->u.func.ntparams);
    sb_putc(sb, '(');
    put_type_list(sb, t->u.func.params, t->u.func.nparams);
    sb_puts(sb, ") -> ");
    ir_print_type(sb, t->u.func.ret);
    break;
  case TYPE_VAR:
    sb_puts(sb, t->u.var.name ? t->u.var.name->text : "_");
    break;
  case TYPE_CALL: {
    const Symbol *name = t->u.call.name;
    if (!name && t->u.call.adt) name = t->u.call.adt->name;
    sb_puts(sb, name ? name->text : "_");
    if (t->u.call.nargs > 0) {
      sb_putc(sb, '[');
      put_type_list(sb, t->u.call.args, t->u.call.nargs);
      sb_putc(sb, ']');
    }
    break;
  }
  case TYPE_REF:
    sb_puts(sb, "ref(");
    ir_print_type(sb, t->u.ref.elem);
    sb_putc(sb, ')');
    break;
  case TYPE_INCOMPLETE:
    sb_putc(sb, '_');
    break;
  default:
    RLY_UNREACHABLE();
  }
}

/* {==== Printer state ====} */

/* What the printer knows about one expression node (indexed by Expr.id). */
typedef struct NodeInfo {
  int32_t binding;    /* N of its `%N = ...;` while that binding is in scope, else -1 */
  int32_t bound_at;   /* while bound: the index in Printer.open of its scope */
  int32_t meta;       /* its index in meta[relay.Constant], else -1 */
  int32_t home;       /* the scope it is printed in (see "Scopes"), -1 if not reached */
  int32_t scope_base; /* first of the scopes it opens (if, match, fn, let group) */
  uint32_t name_gen;  /* name is valid when equal to Printer.gen */
  uint32_t binder_gen; /* its binder was printed in definition Printer.gen */
  uint32_t clean_of;  /* 1 + id of a variable its subtree does not mention */
  uint32_t dirty_of;  /* 1 + id of a variable its subtree mentions */
  uint8_t uses;       /* references from parent nodes (saturating) */
  bool body_in;       /* reached as a body: let body, fn body, branch, clause */
  bool chain;         /* a LET printed as the continuation of its parent's body */
  const char *name;   /* printed variable name (scratch arena) */
} NodeInfo;

static const NodeInfo node_info_init = {-1, -1, -1, -1, -1, 0, 0, 0, 0, 0, false, false, NULL};

/* An open body while it is being printed. */
typedef struct OpenScope {
  int32_t scope;            /* its index in Printer.scopes */
  StrBuf *out;              /* where its lines go */
  int indent;               /* its nesting level */
  Vec(uint32_t) bound;      /* ids bound here, forgotten when it closes (heap) */
  const Expr *pending;      /* the let var whose line is being built, or NULL */
} OpenScope;

/* One printed variable name. next: the next suffix to try for this base. */
typedef struct NameSlot {
  const char *name;
  int next;
} NameSlot;

typedef struct Printer {
  const PrintOptions *opt;
  NodeInfo *info;           /* heap, grown on demand */
  uint32_t ninfo;
  IrScopes scopes;          /* scope tree (heap): a body (definition, fn,
                            ** branch, clause, let group); scope 0 is the
                            ** top level, above every body */
  Vec(OpenScope) open;      /* bodies being printed, innermost last (heap) */
  int32_t expr_scope;       /* scope of an expression module's body */
  int32_t next_binding;     /* %N counter of the current definition */
  uint32_t gen;             /* current definition, for variable names */
  NameSlot *names;          /* set of names used in the current definition (heap) */
  uint32_t names_cap, names_count;
  Arena *scratch;           /* name strings, created on first use; freed at the end */
  Vec(ConstData *) consts;  /* meta[relay.Constant] table, in index order (heap) */
  const ConstData **cmap_key; /* ConstData pointer -> index (lookups only) */
  int32_t *cmap_val;
  uint32_t cmap_cap, cmap_count;
} Printer;

static void printer_init(Printer *P, const PrintOptions *opt, uint32_t nexprs) {
  static const PrintOptions none = {false, false};
  memset(P, 0, sizeof *P);
  P->opt = opt ? opt : &none;
  P->gen = 1;
  P->expr_scope = -1;
  if (nexprs) {
    P->info = rly_xmalloc(sizeof(NodeInfo) * nexprs);
    for (uint32_t i = 0; i < nexprs; i++) P->info[i] = node_info_init;
    P->ninfo = nexprs;
  }
}

static void printer_free(Printer *P) {
  free(P->info);
  VEC_FREE(&P->scopes);
  for (int i = 0; i < P->open.len; i++) VEC_FREE(&P->open.data[i].bound);
  VEC_FREE(&P->open);
  free(P->names);
  arena_free(P->scratch);
  VEC_FREE(&P->consts);
  free(P->cmap_key);
  free(P->cmap_val);
}

/* The info of e. The pointer is valid until the next node_info call. */
static NodeInfo *node_info(Printer *P, const Expr *e) {
  if (e->id >= P->ninfo) {
    uint32_t n = P->ninfo ? P->ninfo : 64;
    while (n <= e->id) n *= 2;
    P->info = rly_xrealloc(P->info, sizeof(NodeInfo) * n);
    for (uint32_t i = P->ninfo; i < n; i++) P->info[i] = node_info_init;
    P->ninfo = n;
  }
  return &P->info[e->id];
}

static void put_indent(StrBuf *sb, int level) {
  for (int i = 0; i < level; i++) sb_puts(sb, "  ");
}

static void put_ty_comment(Printer *P, StrBuf *sb, const Expr *e) {
  if (!P->opt->show_types || !e->type) return;
  sb_puts(sb, " /* ty=");
  ir_print_type(sb, e->type);
  sb_puts(sb, " */");
}

/* {==== Scopes ====}
** Before printing, every node gets a home: the scope whose body it is
** printed in. A node used from several scopes is printed once, in the
** innermost scope that contains all its uses (their lowest common
** ancestor), just before the statement that first needs it, even when
** that need arises inside a nested body. So the printed text has the
** module's sharing exactly, and effects (ref cells) are not duplicated.
**
** Scopes opened by a node p printed in scope H: fn body, each if branch,
** each match clause (children of H); a LET that is not a chain
** continuation is a `( let ...; x )` group, its own scope under H. A LET is
** a chain continuation when its only use is as a body (let body, fn body,
** branch, clause): then its lines continue the enclosing body. */

/* A node being looked into: its children are kids[start .. end - 1] of
** the traversal's child buffer; next is the one to look at next. */
typedef struct Frame {
  const Expr *e;
  int next;   /* hoist: next scope child; mentions: next index in the buffer */
  int target; /* hoist: the open scope it is bound in; mentions: end */
  int start;  /* mentions: its first child in the buffer */
} Frame;

/* Counts, for every node reachable from the roots (inner scopes
** included), its parent references, and returns the nodes in post-order
** (ir_postorder_roots: dataflow chains may be very deep). */
static void count_uses(Printer *P, Expr *const *roots, int nroots, ExprVec *order) {
  ir_postorder_roots(roots, nroots, IR_KIDS_INNER, order);
  ExprVec kids = {0};
  for (int i = 0; i < order->len; i++) {
    kids.len = 0;
    ir_kids(order->data[i], IR_KIDS_INNER, &kids);
    for (int k = 0; k < kids.len; k++) {
      if (!kids.data[k]) continue;
      NodeInfo *ci = node_info(P, kids.data[k]);
      if (ci->uses < 255) ci->uses++;
    }
  }
  VEC_FREE(&kids);
}

static int32_t new_scope(Printer *P, int32_t parent, Expr *owner) {
  return ir_scope_new(&P->scopes, parent, owner, 0);
}

/* Records a use of c from scope (as a body when body). */
static void use_in(Printer *P, const Expr *c, int32_t scope, bool body) {
  NodeInfo *ci = node_info(P, c);
  int32_t h = ir_scope_lca(&P->scopes, ci->home, scope);
  ci = node_info(P, c);
  ci->home = h;
  if (body) ci->body_in = true;
}

/* Counts uses and assigns homes and scopes for every node of the module:
** parents are visited before children (reverse post-order), so a node's
** home is final when its own children are assigned. */
static void analyze(Printer *P, const Module *m) {
  ir_scope_new(&P->scopes, -1, NULL, 0);
  ExprVec order = {0}, kids = {0};
  Vec(Expr *) roots = {0};
  for (int i = 0; i < m->ndefs; i++) VEC_PUSH(&roots, m->defs[i]->func);
  VEC_PUSH(&roots, m->expr);
  count_uses(P, roots.data, roots.len, &order);
  VEC_FREE(&roots);
  for (int i = 0; i < m->ndefs; i++)
    if (m->defs[i]->func) node_info(P, m->defs[i]->func)->home = 0;
  if (m->expr) {
    P->expr_scope = new_scope(P, 0, NULL);
    use_in(P, m->expr, P->expr_scope, true);
  }
  for (int i = order.len - 1; i >= 0; i--) {
    Expr *e = order.data[i];
    int32_t h = node_info(P, e)->home, base;
    if (h < 0) continue;
    switch (e->kind) {
    case EXPR_IF:
      base = new_scope(P, h, e);
      new_scope(P, h, e);
      node_info(P, e)->scope_base = base;
      use_in(P, e->u.if_.cond, h, false);
      use_in(P, e->u.if_.then_, base, true);
      use_in(P, e->u.if_.else_, base + 1, true);
      break;
    case EXPR_MATCH:
      base = P->scopes.len;
      for (int k = 0; k < e->u.match.nclauses; k++) new_scope(P, h, e);
      node_info(P, e)->scope_base = base;
      use_in(P, e->u.match.scrut, h, false);
      for (int k = 0; k < e->u.match.nclauses; k++) use_in(P, e->u.match.clauses[k].body, base + k, true);
      break;
    case EXPR_FUNC:
      base = new_scope(P, h, e);
      node_info(P, e)->scope_base = base;
      use_in(P, e->u.func.body, base, true);
      break;
    case EXPR_LET: {
      NodeInfo *ei = node_info(P, e);
      bool chain = ei->body_in && ei->uses <= 1;
      ei->chain = chain;
      int32_t lines = chain ? h : new_scope(P, h, e);
      node_info(P, e)->scope_base = lines;
      use_in(P, e->u.let.value, lines, false);
      use_in(P, e->u.let.body, lines, true);
      break;
    }
    default:
      kids.len = 0;
      ir_kids(e, 0, &kids);
      for (int k = 0; k < kids.len; k++)
        if (kids.data[k]) use_in(P, kids.data[k], h, false);
      break;
    }
  }
  VEC_FREE(&order);
  VEC_FREE(&kids);
}

/* {==== Names ====} */

static Arena *scratch(Printer *P) {
  if (!P->scratch) P->scratch = arena_new(0);
  return P->scratch;
}

static uint32_t str_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

/* The slot of name in the used-name set (empty slot if absent). */
static NameSlot *name_slot(Printer *P, const char *name) {
  uint32_t mask = P->names_cap - 1, i = str_hash(name) & mask;
  while (P->names[i].name && strcmp(P->names[i].name, name) != 0) i = (i + 1) & mask;
  return &P->names[i];
}

static bool name_used(Printer *P, const char *name) {
  return P->names_cap && name_slot(P, name)->name != NULL;
}

static void name_add(Printer *P, const char *name) {
  if ((P->names_count + 1) * 2 > P->names_cap) {
    NameSlot *old = P->names;
    uint32_t oldcap = P->names_cap;
    P->names_cap = oldcap ? oldcap * 2 : 64;
    P->names = rly_xcalloc(P->names_cap, sizeof(NameSlot));
    for (uint32_t i = 0; i < oldcap; i++)
      if (old[i].name) *name_slot(P, old[i].name) = old[i];
    free(old);
  }
  NameSlot *s = name_slot(P, name);
  s->name = name;
  s->next = 1;
  P->names_count++;
}

/* Starts a new definition: fresh binding numbers and variable names. */
static void begin_definition(Printer *P) {
  P->gen++;
  P->next_binding = 0;
  if (P->names) memset(P->names, 0, sizeof(NameSlot) * P->names_cap);
  P->names_count = 0;
}

static bool is_ident_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9') || c == '/'; }

/* The stored name made readable as `%name`: empty names and names that do
** not begin with a letter or '_' get a 'v' prefix (`1` -> `v1`); characters
** other than letters, digits, '_', '/' and '.' become '_', and so does a
** '.' that is not followed by a name character. */
static char *sanitize_name(Arena *a, const Symbol *sym) {
  const char *s = sym ? sym->text : "";
  size_t n = sym ? sym->len : 0;
  bool prefix = n == 0 || !is_ident_start(s[0]);
  char *out = arena_alloc(a, n + 2, 1);
  size_t k = 0;
  if (prefix) out[k++] = 'v';
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '.' && (i + 1 >= n || !is_ident_char(s[i + 1]))) c = '_';
    else if (c != '.' && !is_ident_char(c)) c = '_';
    out[k++] = c;
  }
  out[k] = 0;
  return out;
}

/* The printed name of variable v (without '%'): assigned on first use in
** the current definition; the first variable with a given name keeps it,
** later distinct variables get name_1, name_2, ... */
static const char *var_name(Printer *P, const Expr *v) {
  NodeInfo *vi = node_info(P, v);
  if (vi->name_gen == P->gen) return vi->name;
  char *base = sanitize_name(scratch(P), v->u.var.name);
  const char *name = base;
  if (name_used(P, base)) {
    int k = name_slot(P, base)->next;
    size_t cap = strlen(base) + 16;
    char *cand = arena_alloc(scratch(P), cap, 1);
    for (;; k++) {
      snprintf(cand, cap, "%s_%d", base, k);
      if (!name_used(P, cand)) break;
    }
    name_slot(P, base)->next = k + 1;
    name = cand;
  }
  name_add(P, name);
  vi = node_info(P, v);
  vi->name_gen = P->gen;
  vi->name = name;
  return name;
}

/* The name of v where its binder is printed (a let, parameter or pattern
** variable). A binder printed a second time (a node printed twice, see
** "Scopes") binds a new variable for a reader, so it gets a fresh name,
** used by the uses printed after it. */
static const char *binder_name(Printer *P, const Expr *v) {
  NodeInfo *vi = node_info(P, v);
  if (vi->binder_gen == P->gen) vi->name_gen = 0;
  vi->binder_gen = P->gen;
  return var_name(P, v);
}

/* {==== Attribute values ====} */

static void put_expr_inline(Printer *P, StrBuf *sb, const Expr *e);

static void put_string(StrBuf *sb, const char *s, size_t n) {
  static const char hex[] = "0123456789ABCDEF";
  sb_putc(sb, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
    case '"': sb_puts(sb, "\\\""); break;
    case '\\': sb_puts(sb, "\\\\"); break;
    case '\n': sb_puts(sb, "\\n"); break;
    case '\t': sb_puts(sb, "\\t"); break;
    case '\r': sb_puts(sb, "\\r"); break;
    default:
      if (c < 0x20 || c >= 0x7f) {
        char esc[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
        sb_putn(sb, esc, 4);
      } else {
        sb_putc(sb, (char)c);
      }
    }
  }
  sb_putc(sb, '"');
}

static void put_attr_value(Printer *P, StrBuf *sb, const AttrValue *v) {
  char buf[40];
  if (!v) {
    sb_puts(sb, "None");
    return;
  }
  switch (v->kind) {
  case AV_NONE: sb_puts(sb, "None"); break;
  case AV_INT:
    sb_printf(sb, "%" PRId64, v->u.i.v);
    if (v->u.i.bits == 64) sb_puts(sb, "i64");
    else if (v->u.i.bits == 16) sb_puts(sb, "i16");
    break;
  case AV_FLOAT: {
    double d = v->u.f.v;
    if (isinf(d)) {
      /* Only the float32 infinity has a literal. */
      sb_puts(sb, d < 0 ? "-inff" : "inff");
      break;
    }
    if (isnan(d)) {
      sb_puts(sb, "nanf"); /* as TVM prints it; our lexer reads it back, TVM's cannot */
      break;
    }
    uint8_t bits = v->u.f.bits;
    fmt_float64(buf, d);
    sb_puts(sb, buf);
    sb_puts(sb, bits == 64 ? "f64" : bits == 16 ? "f16" : "f");
    break;
  }
  case AV_BOOL: sb_puts(sb, v->u.b ? "True" : "False"); break;
  case AV_STR: put_string(sb, v->u.str.s ? v->u.str.s : "", v->u.str.s ? v->u.str.len : 0); break;
  case AV_ARRAY:
    sb_putc(sb, '[');
    for (int i = 0; i < v->u.arr.n; i++) {
      if (i) sb_puts(sb, ", ");
      put_attr_value(P, sb, v->u.arr.items[i]);
    }
    sb_putc(sb, ']');
    break;
  case AV_META:
    sb_printf(sb, "meta[%s][%" PRId64 "]", v->u.meta.key ? v->u.meta.key->text : "", v->u.meta.index);
    break;
  case AV_EXPR:
    if (v->u.expr) put_expr_inline(P, sb, v->u.expr);
    else sb_puts(sb, "None");
    break;
  default:
    RLY_UNREACHABLE();
  }
}

void ir_print_attr_value(StrBuf *sb, const AttrValue *v) {
  Printer P;
  printer_init(&P, NULL, 0);
  put_attr_value(&P, sb, v);
  printer_free(&P);
}

/* Writes the `key=value` items of attrs, each preceded by ", " unless it
** is the first item of the list (*first). With a class, only the fields
** whose value differs from the default, in class order. */
static void put_attrs(Printer *P, StrBuf *sb, const Attrs *attrs, bool *first) {
  if (!attrs) return;
  for (int i = 0; i < attrs->n; i++) {
    const char *key;
    const AttrValue *v = attrs->values ? attrs->values[i] : NULL;
    if (attrs->cls) {
      if (i >= attrs->cls->nfields) break;
      const AttrField *f = &attrs->cls->fields[i];
      if (!v || attr_is_default(f, v)) continue;
      key = f->name;
    } else {
      key = attrs->keys && attrs->keys[i] ? attrs->keys[i]->text : "_";
    }
    if (!*first) sb_puts(sb, ", ");
    *first = false;
    sb_printf(sb, "%s=", key);
    put_attr_value(P, sb, v);
  }
}

/* {==== Atoms ====} */

static bool is_nullary_ctor_call(const Expr *e) {
  return e->kind == EXPR_CALL && e->u.call.nargs == 0 && e->u.call.callee->kind == EXPR_CTOR &&
         e->u.call.callee->u.ctor.ctor->nfields == 0;
}

/* Atomic expressions are printed in place and never bound. */
static bool is_atomic(const Expr *e) {
  switch (e->kind) {
  case EXPR_VAR:
  case EXPR_GLOBAL:
  case EXPR_OP:
  case EXPR_CTOR:
  case EXPR_CONST:
    return true;
  case EXPR_CALL:
    return is_nullary_ctor_call(e);
  default:
    return false;
  }
}

static bool is_bound(Printer *P, const Expr *e) { return node_info(P, e)->binding >= 0; }

/* Printed as a plain reference (`%x` or `%N`): no type comment after it. */
static bool is_reference(Printer *P, const Expr *e) { return e->kind == EXPR_VAR || is_bound(P, e); }

/* meta[relay.Constant][i] of a constant: the index of its node, or of its
** data when another node with the same data was printed already (a
** re-parsed text shares one ConstData among the uses of one index). */
static int32_t const_index(Printer *P, const Expr *e) {
  int32_t idx = node_info(P, e)->meta;
  if (idx >= 0) return idx;
  const ConstData *c = e->u.constant.value;
  if ((P->cmap_count + 1) * 2 > P->cmap_cap) {
    const ConstData **ok = P->cmap_key;
    int32_t *ov = P->cmap_val;
    uint32_t oc = P->cmap_cap;
    P->cmap_cap = oc ? oc * 2 : 64;
    P->cmap_key = rly_xcalloc(P->cmap_cap, sizeof *P->cmap_key);
    P->cmap_val = rly_xcalloc(P->cmap_cap, sizeof *P->cmap_val);
    for (uint32_t i = 0; i < oc; i++) {
      if (!ok[i]) continue;
      uint32_t j = (uint32_t)(((uintptr_t)ok[i] >> 4) * 2654435761u) & (P->cmap_cap - 1);
      while (P->cmap_key[j]) j = (j + 1) & (P->cmap_cap - 1);
      P->cmap_key[j] = ok[i];
      P->cmap_val[j] = ov[i];
    }
    free(ok);
    free(ov);
  }
  uint32_t j = (uint32_t)(((uintptr_t)c >> 4) * 2654435761u) & (P->cmap_cap - 1);
  while (P->cmap_key[j] && P->cmap_key[j] != c) j = (j + 1) & (P->cmap_cap - 1);
  if (P->cmap_key[j]) {
    idx = P->cmap_val[j];
  } else {
    idx = P->consts.len;
    VEC_PUSH(&P->consts, e->u.constant.value);
    P->cmap_key[j] = c;
    P->cmap_val[j] = idx;
    P->cmap_count++;
  }
  node_info(P, e)->meta = idx;
  return idx;
}

/* Writes an atomic or bound expression. */
static void put_atom(Printer *P, StrBuf *sb, const Expr *e) {
  int32_t b = node_info(P, e)->binding;
  if (b >= 0) {
    sb_printf(sb, "%%%" PRId32, b);
    return;
  }
  switch (e->kind) {
  case EXPR_VAR: sb_printf(sb, "%%%s", var_name(P, e)); break;
  case EXPR_GLOBAL: sb_printf(sb, "@%s", e->u.global.name ? e->u.global.name->text : ""); break;
  case EXPR_OP: sb_puts(sb, e->u.op.op ? e->u.op.op->name : "_"); break;
  case EXPR_CTOR: sb_puts(sb, e->u.ctor.ctor->name->text); break;
  case EXPR_CALL:
    RLY_ASSERT(is_nullary_ctor_call(e));
    sb_puts(sb, e->u.call.callee->u.ctor.ctor->name->text);
    break;
  case EXPR_CONST:
    if (!put_scalar(sb, e->u.constant.value))
      sb_printf(sb, "meta[relay.Constant][%" PRId32 "]", const_index(P, e));
    break;
  default:
    RLY_UNREACHABLE();
  }
}

/* Writes the operand of a projection `X.i` (X atomic or bound). A literal
** would swallow the `.i` into the number, and `%a.0` would read as the
** variable `a.0` when one by that name exists: parenthesise those. */
static void put_proj(Printer *P, StrBuf *sb, const Expr *tuple, int index) {
  bool paren = false;
  if (!is_bound(P, tuple)) {
    if (tuple->kind == EXPR_CONST) {
      paren = is_scalar_literal(tuple->u.constant.value);
    } else if (tuple->kind == EXPR_VAR) {
      const char *name = var_name(P, tuple);
      char *dotted = arena_alloc(scratch(P), strlen(name) + 16, 1);
      sprintf(dotted, "%s.%d", name, index);
      paren = name_used(P, dotted);
    }
  }
  if (paren) sb_putc(sb, '(');
  put_atom(P, sb, tuple);
  if (paren) sb_putc(sb, ')');
  sb_printf(sb, ".%d", index);
}

/* {==== Graph-normal form ====} */

static void print_body(Printer *P, StrBuf *sb, const Expr *e, int32_t scope, int indent, bool group);
static void put_pattern(Printer *P, StrBuf *sb, const Pattern *p);
static void put_func(Printer *P, StrBuf *sb, const Expr *fn, int indent, bool inline_form);

/* The i-th child of e that is printed in e's own statement (so it must be
** an atom or bound before e's line), in printing order: call arguments
** before the callee, as TVM does, so a bound callee sits next to its call. */
static const Expr *scope_child(const Expr *e, int i) {
  switch (e->kind) {
  case EXPR_CALL:
    if (i < e->u.call.nargs) return e->u.call.args[i];
    return i == e->u.call.nargs ? e->u.call.callee : NULL;
  case EXPR_TUPLE: return i < e->u.tuple.n ? e->u.tuple.fields[i] : NULL;
  case EXPR_GET_ITEM: return i == 0 ? e->u.get_item.tuple : NULL;
  case EXPR_IF: return i == 0 ? e->u.if_.cond : NULL;
  case EXPR_MATCH: return i == 0 ? e->u.match.scrut : NULL;
  case EXPR_REF_NEW: return i == 0 ? e->u.ref_new.value : NULL;
  case EXPR_REF_READ: return i == 0 ? e->u.ref_read.ref : NULL;
  case EXPR_REF_WRITE: return i == 0 ? e->u.ref_write.ref : i == 1 ? e->u.ref_write.value : NULL;
  default: return NULL; /* atoms; LET and FUNC print their insides in their own scopes */
  }
}

/* The index in P->open of scope, searching from the innermost; -1 if it is
** not open. */
static int open_index(Printer *P, int32_t scope) {
  if (scope < 0) return -1;
  for (int i = P->open.len - 1; i >= 0; i--)
    if (P->open.data[i].scope == scope) return i;
  return -1;
}

/* Whether e's subtree mentions var, the pending let var of open scope at.
** A node bound in at or an outer open scope is known not to (it was bound
** before that let began, or checked when bound during it); nodes bound in
** newer scopes (a let group inside the value) are looked through. Results
** are remembered per variable (clean_of / dirty_of), so the checks against
** one pending let cost linear time overall. */
static bool mentions(Printer *P, const Expr *e, const Expr *var, int at) {
  uint32_t mark = var->id + 1;
  if (e == var) return true;
  NodeInfo *ei = node_info(P, e);
  if (ei->clean_of == mark || (ei->binding >= 0 && ei->bound_at <= at)) return false;
  if (ei->dirty_of == mark) return true;
  Vec(Frame) st = {0};
  ExprVec kids = {0};
  ir_kids(e, IR_KIDS_INNER, &kids);
  VEC_PUSH(&st, ((Frame){e, 0, kids.len, 0}));
  bool found = false;
  while (st.len) {
    Frame *f = &VEC_LAST(&st);
    if (f->next == f->target) {
      node_info(P, f->e)->clean_of = mark;
      kids.len = f->start;
      st.len--;
      continue;
    }
    const Expr *c = kids.data[f->next++];
    if (!c) continue;
    NodeInfo *ci = node_info(P, c);
    if (c == var || ci->dirty_of == mark) {
      found = true;
      break;
    }
    if (c->kind == EXPR_VAR || ci->clean_of == mark || (ci->binding >= 0 && ci->bound_at <= at)) continue;
    int start = kids.len;
    ir_kids(c, IR_KIDS_INNER, &kids);
    VEC_PUSH(&st, ((Frame){c, start, kids.len, start}));
  }
  /* Every node on the path to the mention mentions var too. */
  for (int i = 0; found && i < st.len; i++) node_info(P, st.data[i].e)->dirty_of = mark;
  VEC_FREE(&st);
  VEC_FREE(&kids);
  return found;
}

/* The open scope in which e, needed by something printed in open scope
** limit, is bound: its home, unless that would put it above the pending
** let line of a variable it mentions (a recursive let), then limit; -1 when
** not even limit can take it (it mentions limit's own pending let var):
** then it is printed in place, nested. */
static int bind_target(Printer *P, const Expr *e, int limit) {
  int h = open_index(P, node_info(P, e)->home);
  if (h < 0 || h > limit) h = limit;
  const Expr *v = P->open.data[h].pending;
  if (v && mentions(P, e, v, h)) {
    if (h == limit) return -1;
    h = limit;
    v = P->open.data[h].pending;
    if (v && mentions(P, e, v, h)) return -1;
  }
  return h;
}

/* Writes a child of a statement: an atom, a binding, or (the rare case of
** bind_target -1) the child printed in place. */
static void put_operand(Printer *P, StrBuf *sb, const Expr *e) {
  if (is_atomic(e) || is_bound(P, e)) put_atom(P, sb, e);
  else put_expr_inline(P, sb, e);
}

/* Writes e in flat form as a statement of open scope at: its scope
** children are atoms or bound already; nested bodies (if, match, fn, let
** group) are printed here, one level deeper than at. */
static void put_flat(Printer *P, StrBuf *sb, const Expr *e, int at) {
  int ind = P->open.data[at].indent;
  int32_t base = node_info(P, e)->scope_base;
  switch (e->kind) {
  case EXPR_CALL: {
    put_operand(P, sb, e->u.call.callee);
    sb_putc(sb, '(');
    bool first = true;
    for (int i = 0; i < e->u.call.nargs; i++) {
      if (!first) sb_puts(sb, ", ");
      first = false;
      put_operand(P, sb, e->u.call.args[i]);
    }
    put_attrs(P, sb, e->u.call.attrs, &first);
    sb_putc(sb, ')');
    break;
  }
  case EXPR_TUPLE:
    sb_putc(sb, '(');
    for (int i = 0; i < e->u.tuple.n; i++) {
      if (i) sb_puts(sb, ", ");
      put_operand(P, sb, e->u.tuple.fields[i]);
    }
    if (e->u.tuple.n == 1) sb_putc(sb, ',');
    sb_putc(sb, ')');
    break;
  case EXPR_GET_ITEM:
    if (is_atomic(e->u.get_item.tuple) || is_bound(P, e->u.get_item.tuple)) {
      put_proj(P, sb, e->u.get_item.tuple, e->u.get_item.index);
    } else {
      sb_putc(sb, '(');
      put_expr_inline(P, sb, e->u.get_item.tuple);
      sb_printf(sb, ").%d", e->u.get_item.index);
    }
    break;
  case EXPR_IF:
    sb_puts(sb, "if (");
    put_operand(P, sb, e->u.if_.cond);
    sb_puts(sb, ") {\n");
    print_body(P, sb, e->u.if_.then_, base, ind + 1, false);
    put_indent(sb, ind);
    sb_puts(sb, "} else {\n");
    print_body(P, sb, e->u.if_.else_, base < 0 ? -1 : base + 1, ind + 1, false);
    put_indent(sb, ind);
    sb_putc(sb, '}');
    break;
  case EXPR_MATCH:
    sb_puts(sb, e->u.match.complete ? "match (" : "match? (");
    put_operand(P, sb, e->u.match.scrut);
    sb_puts(sb, ") {\n");
    for (int i = 0; i < e->u.match.nclauses; i++) {
      const Clause *cl = &e->u.match.clauses[i];
      put_indent(sb, ind + 1);
      put_pattern(P, sb, cl->pat);
      sb_puts(sb, " => {\n");
      print_body(P, sb, cl->body, base < 0 ? -1 : base + i, ind + 2, false);
      put_indent(sb, ind + 1);
      sb_puts(sb, "},\n");
    }
    put_indent(sb, ind);
    sb_putc(sb, '}');
    break;
  case EXPR_FUNC:
    sb_puts(sb, "fn ");
    put_func(P, sb, e, ind, false);
    break;
  case EXPR_LET:
    sb_puts(sb, "(\n");
    print_body(P, sb, e, base, ind + 1, true);
    put_indent(sb, ind);
    sb_putc(sb, ')');
    break;
  case EXPR_REF_NEW:
    sb_puts(sb, "ref(");
    put_operand(P, sb, e->u.ref_new.value);
    sb_putc(sb, ')');
    break;
  case EXPR_REF_READ:
    sb_puts(sb, "ref_read(");
    put_operand(P, sb, e->u.ref_read.ref);
    sb_putc(sb, ')');
    break;
  case EXPR_REF_WRITE:
    sb_puts(sb, "ref_write(");
    put_operand(P, sb, e->u.ref_write.ref);
    sb_puts(sb, ", ");
    put_operand(P, sb, e->u.ref_write.value);
    sb_putc(sb, ')');
    break;
  default:
    put_atom(P, sb, e);
    break;
  }
}

/* Binds e in open scope at: writes `%N = <flat e>;` to that scope's lines
** (before the statement it is building) and remembers %N there. */
static void bind_expr(Printer *P, const Expr *e, int at) {
  StrBuf flat = {0};
  put_flat(P, &flat, e, at);
  int32_t n = P->next_binding++;
  node_info(P, e)->binding = n;
  node_info(P, e)->bound_at = at;
  OpenScope *os = &P->open.data[at];
  VEC_PUSH(&os->bound, e->id);
  put_indent(os->out, os->indent);
  sb_printf(os->out, "%%%" PRId32 " = %s", n, sb_str(&flat));
  put_ty_comment(P, os->out, e);
  sb_puts(os->out, ";\n");
  sb_free(&flat);
}

/* Makes every scope child of root (transitively) an atom or a binding in
** its target scope, emitting the bindings in printing order (children
** first); binds root itself in open scope at when bind_root. Iterative:
** dataflow chains can be very deep. */
static void hoist(Printer *P, const Expr *root, int at, bool bind_root) {
  if (is_atomic(root) || is_bound(P, root)) return;
  Vec(Frame) st = {0};
  VEC_PUSH(&st, ((Frame){root, 0, at, 0}));
  while (st.len) {
    Frame *f = &VEC_LAST(&st);
    const Expr *c = scope_child(f->e, f->next);
    if (c) {
      f->next++;
      if (is_atomic(c) || is_bound(P, c)) continue;
      int target = bind_target(P, c, f->target);
      if (target >= 0) VEC_PUSH(&st, ((Frame){c, 0, target, 0}));
      continue;
    }
    const Expr *e = f->e;
    int target = f->target;
    st.len--;
    if (e != root || bind_root) bind_expr(P, e, target);
  }
  VEC_FREE(&st);
}

/* Writes a let value or a body's tail, a statement of open scope at: an
** atom or `%N`; a node whose home is an outer scope is bound there first,
** and so is a shared let value whose home is this scope; otherwise its
** flat form, children hoisted. (A shared tail at home needs no binding:
** its other uses in this scope came earlier and bound it already. A node
** kept out of its home by a pending let prints in place: its other uses
** print their own copies, as a re-parse of this text would.) */
static void put_value(Printer *P, StrBuf *sb, const Expr *e, int at, bool tail) {
  if (is_atomic(e) || is_bound(P, e)) {
    put_atom(P, sb, e);
    return;
  }
  int home = open_index(P, node_info(P, e)->home);
  if (home < 0 || home > at) home = at;
  bool shared = !tail && node_info(P, e)->uses > 1;
  if (home < at || shared) {
    int target = bind_target(P, e, at);
    if (target >= 0 && (target < at || (shared && target == home))) {
      hoist(P, e, target, true);
      put_atom(P, sb, e);
      return;
    }
  }
  hoist(P, e, at, false);
  put_flat(P, sb, e, at);
}

/* Closes the innermost open scope: its bindings are forgotten. */
static void close_scope(Printer *P) {
  OpenScope *top = &VEC_LAST(&P->open);
  for (int i = 0; i < top->bound.len; i++) P->info[top->bound.data[i]].binding = -1;
  VEC_FREE(&top->bound);
  P->open.len--;
}

/* Whether the let value e of open scope at, printed in place, would need
** a child that mentions var (its own let var) bound above the let line. */
static bool needs_group(Printer *P, const Expr *e, const Expr *var, int at) {
  if (is_atomic(e) || is_bound(P, e)) return false;
  for (int i = 0;; i++) {
    const Expr *c = scope_child(e, i);
    if (!c) return false;
    if (!is_atomic(c) && !is_bound(P, c) && mentions(P, c, var, at)) return true;
  }
}

/* Writes a let value of open scope at as a group `(` bindings value `)`
** whose bindings come after the let var is declared, so they may mention
** it (`let %g = (%0 = fn () { %g }; (%0, 1));` reads back as the tuple). */
static void put_group_value(Printer *P, StrBuf *sb, const Expr *e, int at) {
  int indent = P->open.data[at].indent;
  sb_puts(sb, "(\n");
  OpenScope os = {-1, sb, indent + 1, {0}, NULL};
  VEC_PUSH(&P->open, os);
  int gi = P->open.len - 1;
  hoist(P, e, gi, false);
  put_indent(sb, indent + 1);
  put_flat(P, sb, e, gi);
  sb_putc(sb, '\n');
  close_scope(P);
  put_indent(sb, indent);
  sb_putc(sb, ')');
}

/* Prints the body e as lines at nesting level indent into sb: its let
** chain (iteratively), the hoisted bindings, and its tail on the last
** line. The body is an open scope while printed; its bindings are
** forgotten at the end. group: e is a LET printed as a `( ... )` group. */
static void print_body(Printer *P, StrBuf *sb, const Expr *e, int32_t scope, int indent, bool group) {
  OpenScope os = {scope, sb, indent, {0}, NULL};
  VEC_PUSH(&P->open, os);
  int at = P->open.len - 1;
  StrBuf line = {0};
  bool first = true;
  while (e->kind == EXPR_LET && ((group && first) || (node_info(P, e)->chain && !is_bound(P, e)))) {
    first = false;
    const Expr *var = e->u.let.var, *value = e->u.let.value;
    bool anonymous = !var->u.var.name && node_info(P, var)->uses == 0;
    if (!anonymous) {
      binder_name(P, var); /* the binder is named before its value */
      P->open.data[at].pending = var;
    }
    sb_clear(&line);
    if (!anonymous && needs_group(P, value, var, at)) put_group_value(P, &line, value, at);
    else put_value(P, &line, value, at, false);
    P->open.data[at].pending = NULL;
    if (!is_reference(P, value)) put_ty_comment(P, &line, value);
    put_indent(sb, indent);
    if (!anonymous) {
      sb_printf(sb, "let %%%s", var_name(P, var));
      if (var->u.var.annot) {
        sb_puts(sb, ": ");
        ir_print_type(sb, var->u.var.annot);
      }
      sb_puts(sb, " = ");
    }
    sb_printf(sb, "%s;\n", sb_str(&line));
    e = e->u.let.body;
  }
  sb_clear(&line);
  put_value(P, &line, e, at, true);
  if (!is_reference(P, e)) put_ty_comment(P, &line, e);
  put_indent(sb, indent);
  sb_printf(sb, "%s\n", sb_str(&line));
  sb_free(&line);
  close_scope(P);
}

/* {==== Patterns and functions ====} */

static void put_pattern(Printer *P, StrBuf *sb, const Pattern *p) {
  switch (p->kind) {
  case PAT_WILDCARD: sb_putc(sb, '_'); break;
  case PAT_VAR: {
    const Expr *v = p->u.var.var;
    sb_printf(sb, "%%%s", binder_name(P, v));
    if (v->u.var.annot) {
      sb_puts(sb, ": ");
      ir_print_type(sb, v->u.var.annot);
    }
    break;
  }
  case PAT_CTOR:
    sb_puts(sb, p->u.ctor.ctor->name->text);
    if (p->u.ctor.n > 0) {
      sb_putc(sb, '(');
      for (int i = 0; i < p->u.ctor.n; i++) {
        if (i) sb_puts(sb, ", ");
        put_pattern(P, sb, p->u.ctor.args[i]);
      }
      sb_putc(sb, ')');
    }
    break;
  case PAT_TUPLE:
    sb_putc(sb, '(');
    for (int i = 0; i < p->u.tuple.n; i++) {
      if (i) sb_puts(sb, ", ");
      put_pattern(P, sb, p->u.tuple.fields[i]);
    }
    if (p->u.tuple.n == 1) sb_putc(sb, ',');
    sb_putc(sb, ')');
    break;
  default:
    RLY_UNREACHABLE();
  }
}

/* Writes a function's signature and body after `fn ` or `def @name`:
** `[A](%x: A, key=value) -> A {` + body + `}`, the closing brace at level
** indent. inline_form puts the body on the same line, without graph
** bindings (attribute values only). */
static void put_func(Printer *P, StrBuf *sb, const Expr *fn, int indent, bool inline_form) {
  put_tparams(sb, fn->u.func.tparams, fn->u.func.ntparams);
  sb_putc(sb, '(');
  bool first = true;
  for (int i = 0; i < fn->u.func.nparams; i++) {
    const Expr *v = fn->u.func.params[i];
    if (!first) sb_puts(sb, ", ");
    first = false;
    sb_printf(sb, "%%%s", binder_name(P, v));
    if (v->u.var.annot) {
      sb_puts(sb, ": ");
      ir_print_type(sb, v->u.var.annot);
    }
  }
  put_attrs(P, sb, fn->u.func.attrs, &first);
  sb_putc(sb, ')');
  if (fn->u.func.ret) {
    sb_puts(sb, " -> ");
    ir_print_type(sb, fn->u.func.ret);
  }
  if (inline_form) {
    sb_puts(sb, " { ");
    put_expr_inline(P, sb, fn->u.func.body);
    sb_puts(sb, " }");
    return;
  }
  sb_puts(sb, " {\n");
  print_body(P, sb, fn->u.func.body, node_info(P, fn)->scope_base, indent + 1, false);
  put_indent(sb, indent);
  sb_putc(sb, '}');
}

/* {==== Inline form ====}
** Expressions inside attribute values are printed nested, without graph
** bindings (they are rare and small): `f(g(%x), 1)`, `(%t).0`,
** `if (%c) { 1 } else { 2 }`, `(let %y = 1; %y)`. */

static void put_expr_inline(Printer *P, StrBuf *sb, const Expr *e) {
  if (is_atomic(e) || is_bound(P, e)) {
    put_atom(P, sb, e);
    return;
  }
  switch (e->kind) {
  case EXPR_CALL: {
    const Expr *callee = e->u.call.callee;
    bool paren = !is_atomic(callee) && !is_bound(P, callee) && callee->kind != EXPR_CALL;
    if (paren) sb_putc(sb, '(');
    put_expr_inline(P, sb, callee);
    if (paren) sb_putc(sb, ')');
    sb_putc(sb, '(');
    bool first = true;
    for (int i = 0; i < e->u.call.nargs; i++) {
      if (!first) sb_puts(sb, ", ");
      first = false;
      put_expr_inline(P, sb, e->u.call.args[i]);
    }
    put_attrs(P, sb, e->u.call.attrs, &first);
    sb_putc(sb, ')');
    break;
  }
  case EXPR_TUPLE:
    sb_putc(sb, '(');
    for (int i = 0; i < e->u.tuple.n; i++) {
      if (i) sb_puts(sb, ", ");
      put_expr_inline(P, sb, e->u.tuple.fields[i]);
    }
    if (e->u.tuple.n == 1) sb_putc(sb, ',');
    sb_putc(sb, ')');
    break;
  case EXPR_GET_ITEM: {
    const Expr *t = e->u.get_item.tuple;
    if (is_atomic(t) || is_bound(P, t)) {
      put_proj(P, sb, t, e->u.get_item.index);
    } else {
      sb_putc(sb, '(');
      put_expr_inline(P, sb, t);
      sb_printf(sb, ").%d", e->u.get_item.index);
    }
    break;
  }
  case EXPR_LET:
    sb_putc(sb, '(');
    while (e->kind == EXPR_LET) {
      const Expr *var = e->u.let.var;
      if (var->u.var.name || node_info(P, var)->uses > 0) {
        sb_printf(sb, "let %%%s", binder_name(P, var));
        if (var->u.var.annot) {
          sb_puts(sb, ": ");
          ir_print_type(sb, var->u.var.annot);
        }
        sb_puts(sb, " = ");
      }
      put_expr_inline(P, sb, e->u.let.value);
      sb_puts(sb, "; ");
      e = e->u.let.body;
    }
    put_expr_inline(P, sb, e);
    sb_putc(sb, ')');
    break;
  case EXPR_IF:
    sb_puts(sb, "if (");
    put_expr_inline(P, sb, e->u.if_.cond);
    sb_puts(sb, ") { ");
    put_expr_inline(P, sb, e->u.if_.then_);
    sb_puts(sb, " } else { ");
    put_expr_inline(P, sb, e->u.if_.else_);
    sb_puts(sb, " }");
    break;
  case EXPR_MATCH:
    sb_puts(sb, e->u.match.complete ? "match (" : "match? (");
    put_expr_inline(P, sb, e->u.match.scrut);
    sb_puts(sb, ") {");
    for (int i = 0; i < e->u.match.nclauses; i++) {
      sb_putc(sb, ' ');
      put_pattern(P, sb, e->u.match.clauses[i].pat);
      sb_puts(sb, " => { ");
      put_expr_inline(P, sb, e->u.match.clauses[i].body);
      sb_puts(sb, " },");
    }
    sb_puts(sb, " }");
    break;
  case EXPR_FUNC:
    sb_puts(sb, "fn ");
    put_func(P, sb, e, 0, true);
    break;
  case EXPR_REF_NEW:
    sb_puts(sb, "ref(");
    put_expr_inline(P, sb, e->u.ref_new.value);
    sb_putc(sb, ')');
    break;
  case EXPR_REF_READ:
    sb_puts(sb, "ref_read(");
    put_expr_inline(P, sb, e->u.ref_read.ref);
    sb_putc(sb, ')');
    break;
  case EXPR_REF_WRITE:
    sb_puts(sb, "ref_write(");
    put_expr_inline(P, sb, e->u.ref_write.ref);
    sb_puts(sb, ", ");
    put_expr_inline(P, sb, e->u.ref_write.value);
    sb_putc(sb, ')');
    break;
  default:
    RLY_UNREACHABLE();
  }
}

/* {==== Definitions and modules ====} */

static void put_typedef(StrBuf *sb, const TypeDef *td) {
  if (td->is_extern) {
    sb_printf(sb, "extern type %s", td->name->text);
    put_tparams(sb, td->tparams, td->ntparams);
    sb_putc(sb, '\n');
    return;
  }
  sb_printf(sb, "type %s", td->name->text);
  put_tparams(sb, td->tparams, td->ntparams);
  sb_puts(sb, " {\n");
  for (int i = 0; i < td->nctors; i++) {
    const Ctor *c = td->ctors[i];
    sb_printf(sb, "  %s", c->name->text);
    if (c->nfields > 0) {
      sb_putc(sb, '(');
      put_type_list(sb, c->fields, c->nfields);
      sb_putc(sb, ')');
    }
    sb_puts(sb, ",\n");
  }
  sb_puts(sb, "}\n");
}

/* A definition to sort: its name, and its source index to break ties
** (duplicate names only occur in invalid modules) deterministically. */
typedef struct SortItem {
  const char *name;
  int index;
} SortItem;

static int cmp_item(const void *a, const void *b) {
  const SortItem *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* Indices 0..n-1 ordered by name; heap, caller frees. */
static SortItem *sorted_by_name(Symbol *(*name_of)(const Module *, int), const Module *m, int n) {
  SortItem *items = rly_xmalloc(sizeof(SortItem) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) items[i] = (SortItem){name_of(m, i)->text, i};
  qsort(items, (size_t)n, sizeof(SortItem), cmp_item);
  return items;
}

static Symbol *type_name_at(const Module *m, int i) { return m->types[i]->name; }
static Symbol *def_name_at(const Module *m, int i) { return m->defs[i]->name; }

void ir_print_module(StrBuf *out, const Module *m, const PrintOptions *opt) {
  Printer P;
  printer_init(&P, opt, m->nexprs);
  analyze(&P, m);

  sb_puts(out, "#[version = \"0.0.5\"]\n");
  bool first = true;

  int nt = m->ntypes, nd = m->ndefs;
  SortItem *types = sorted_by_name(type_name_at, m, nt);
  SortItem *defs = sorted_by_name(def_name_at, m, nd);
  for (int i = 0; i < nt; i++) {
    if (!first) sb_putc(out, '\n');
    first = false;
    put_typedef(out, m->types[types[i].index]);
  }
  for (int i = 0; i < nd; i++) {
    const GlobalDef *d = m->defs[defs[i].index];
    RLY_ASSERT(d->func && d->func->kind == EXPR_FUNC);
    if (!first) sb_putc(out, '\n');
    first = false;
    begin_definition(&P);
    sb_printf(out, "def @%s", d->name->text);
    put_func(&P, out, d->func, 0, false);
    sb_putc(out, '\n');
  }
  if (m->expr) {
    if (!first) sb_putc(out, '\n');
    first = false;
    begin_definition(&P);
    for (int i = 0; i < m->nfree_vars; i++) {
      const Expr *v = m->free_vars[i];
      sb_printf(out, "free_var %%%s", binder_name(&P, v));
      if (v->u.var.annot) {
        sb_puts(out, ": ");
        ir_print_type(out, v->u.var.annot);
      }
      sb_puts(out, ";\n");
    }
    print_body(&P, out, m->expr, P.expr_scope, 0, false);
  }
  free(types);
  free(defs);

  if (P.opt->show_metadata && P.consts.len > 0) {
    sb_putc(out, '\n');
    meta_write_constants(out, (ConstData *const *)P.consts.data, P.consts.len);
    if (out->len == 0 || out->data[out->len - 1] != '\n') sb_putc(out, '\n');
  }
  printer_free(&P);
}
