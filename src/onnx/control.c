/* control.c: ONNX If and Loop, and the subgraphs they carry (import.h).
**
** If becomes a Relay `if` in the function being written: each branch's
** nodes are converted into the branch's own block, whose values live only
** there (they are dropped from the value table after the branch), and the
** branch ends in its outputs (a tuple when there are several). The
** condition is a one-element bool tensor, read as a scalar.
**
** Loop becomes a tail-recursive global `@loopN`, which relayc compiles to a
** loop:
**
**   def @loopN(%iter: int64, %cond: bool, carried..., scans..., captured...) {
**     if (%iter < M && %cond) {
**       <the body's nodes>
**       @loopN(%iter + 1, cond', carried'..., scan_k with row %iter set..., captured...)
**     } else {
**       (carried..., scans...)
**     }
**   }
**
** and the node a call of it with the initial values; its outputs are the
** call's fields. A scan output (a value of every iteration, stacked) is a
** [M, ...] accumulator updated with scatter_nd, so it needs a constant trip
** count M and a loop that runs all M iterations (no condition that can end
** it early): the shape of its result must be static. A list the body
** appends one tensor to at each iteration (a scripted loop's
** `list.append`) is carried the same way (see the last section).
**
** The values a body reads from the enclosing graphs (outside any constant)
** become extra parameters of the global, passed unchanged at each step:
** before the body is converted, the names it reads and does not define (in
** nested subgraphs too) are looked up and each gets a parameter, whose
** value in the body's scope shadows the outer one. The body's values are
** dropped from the table after the node.
**
** Types: a loop-carried value keeps the type of its initial value through
** the loop (Relay's types are static); a body that changes it is an error
** here when the shapes are known, else the type checker reports it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/import.h"

static char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  return memcpy(rly_xmalloc(n), s, n);
}

void onnx_put_type(StrBuf *sb, int elem, int rank, const int64_t *dims) {
  DType t;
  char buf[32];
  if (!onnx_elem_dtype(elem, &t)) t = (DType){DT_FLOAT, 32, 1};
  sb_puts(sb, "Tensor[(");
  for (int i = 0; i < rank; i++) {
    if (dims[i] >= 0) sb_printf(sb, "%s%lld", i ? ", " : "", (long long)dims[i]);
    else sb_printf(sb, "%s?", i ? ", " : "");
  }
  sb_printf(sb, "%s), %s]", rank == 1 ? "," : "", dtype_name(t, buf));
}

const char *onnx_fresh(Importer *I, char buf[32]) {
  snprintf(buf, 32, "%%v%d", I->tmp++);
  return buf;
}

/* Drops the values added since the table had mark entries. */
static void values_pop(Importer *I, int mark) {
  for (int i = mark; i < I->values.len; i++) {
    free(I->values.data[i].name);
    free(I->values.data[i].expr);
  }
  I->values.len = mark;
}

/* Appends text with each line indented by two more spaces. */
static void put_indented(StrBuf *sb, const char *text) {
  for (const char *p = text; *p;) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
    sb_puts(sb, "  ");
    sb_printf(sb, "%.*s", (int)n, p);
    p += n;
  }
}

/* The graph attribute name of the node, or NULL with an error. */
static const Onnx__GraphProto *graph_attr(Importer *I, const char *name) {
  const Onnx__AttributeProto *a = onnx_attr(I, name);
  if (!a || !a->g) {
    onnx_node_error(I, "needs its graph attribute '%s'", name);
    return NULL;
  }
  return a->g;
}

/* {==== Subgraphs ====} */

typedef Vec(const char *) Names;

static bool names_has(const Names *n, const char *s) {
  for (int i = 0; i < n->len; i++)
    if (strcmp(n->data[i], s) == 0) return true;
  return false;
}

/* The names graph g reads and does not define (its inputs, initializers
** and nodes' outputs), in order of first use, nested subgraphs included,
** appended to out (each once). The strings are g's. */
static void free_names(const Onnx__GraphProto *g, Names *out) {
  Names defined = {0}, used = {0};
  for (size_t i = 0; i < g->n_input; i++)
    if (g->input[i]->name) VEC_PUSH(&defined, g->input[i]->name);
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i]->name) VEC_PUSH(&defined, g->initializer[i]->name);
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    for (size_t k = 0; k < n->n_input; k++)
      if (n->input[k] && *n->input[k]) VEC_PUSH(&used, n->input[k]);
    for (size_t k = 0; k < n->n_attribute; k++) {
      const Onnx__AttributeProto *a = n->attribute[k];
      if (a->g) free_names(a->g, &used);
      for (size_t j = 0; j < a->n_graphs; j++) free_names(a->graphs[j], &used);
    }
    for (size_t k = 0; k < n->n_output; k++)
      if (n->output[k] && *n->output[k]) VEC_PUSH(&defined, n->output[k]);
  }
  for (size_t i = 0; i < g->n_output; i++)
    if (g->output[i]->name && *g->output[i]->name) VEC_PUSH(&used, g->output[i]->name);
  for (int i = 0; i < used.len; i++)
    if (!names_has(&defined, used.data[i]) && !names_has(out, used.data[i])) VEC_PUSH(out, used.data[i]);
  VEC_FREE(&defined);
  VEC_FREE(&used);
}

/* Converts g's initializers and nodes into I->body (the caller's block),
** as import.c does for the main graph; I->node is kept. */
static bool convert_graph(Importer *I, const Onnx__GraphProto *g) {
  const Onnx__NodeProto *node = I->node;
  bool ok = true;
  for (size_t i = 0; i < g->n_initializer && ok; i++) ok = onnx_initializer_value(I, g->initializer[i]);
  for (size_t i = 0; i < g->n_node && ok; i++) {
    I->node = g->node[i];
    if (I->node->domain && *I->node->domain && strcmp(I->node->domain, "ai.onnx") != 0) {
      ok = onnx_node_error(I, "operators of domain '%s' are not supported", I->node->domain);
      break;
    }
    int errors = diag_count(I->d);
    if (!onnx_convert_node(I)) {
      if (diag_count(I->d) == errors) onnx_node_error(I, "cannot be converted");
      ok = false;
      break;
    }
    for (size_t k = 0; k < I->node->n_output; k++)
      if (*I->node->output[k] && !onnx_find_value(I, I->node->output[k])) {
        ok = onnx_node_error(I, "output %zu ('%s') is not supported", k, I->node->output[k]);
        break;
      }
  }
  I->node = node;
  return ok;
}

/* What a subgraph's output is: copied out of the value table, which the
** subgraph's scope leaves. */
typedef struct Out {
  char *expr;
  int elem, rank;
  int64_t dims[MAX_RANK];
  int truth; /* a constant bool: 1 true, 0 false; -1 not a constant */
  int seq;   /* the value's SeqKind */
  bool stacked; /* a loop's accumulator (a scan output or an appended list) */
} Out;

static bool graph_outputs(Importer *I, const Onnx__GraphProto *g, const char *what, Out *outs) {
  for (size_t k = 0; k < g->n_output; k++) {
    const char *name = g->output[k]->name ? g->output[k]->name : "";
    const Value *v = *name ? onnx_find_value(I, name) : NULL;
    if (!v) {
      for (size_t j = 0; j < k; j++) free(outs[j].expr), outs[j].expr = NULL;
      return onnx_node_error(I, "%s output %zu ('%s') is not computed by any node", what, k, name);
    }
    outs[k].expr = xstrdup(v->expr);
    outs[k].elem = v->elem;
    outs[k].rank = v->rank;
    memcpy(outs[k].dims, v->dims, sizeof v->dims);
    outs[k].truth = -1;
    outs[k].seq = v->seq;
    if (v->cdata && v->cdata->dtype.code == DT_UINT && v->cdata->dtype.bits == 1 && const_numel(v->cdata) == 1)
      outs[k].truth = ((const unsigned char *)v->cdata->data)[0] != 0;
  }
  return true;
}

static void outs_free(Out *outs, size_t n) {
  for (size_t k = 0; k < n; k++) free(outs[k].expr);
  free(outs);
}

/* A condition (a one-element bool tensor) as a 0-d expression into sb. */
static bool put_scalar_cond(Importer *I, StrBuf *sb, const char *expr, int elem, int rank, const int64_t *dims,
                            const char *what) {
  if (elem != ONNX__TENSOR_PROTO__DATA_TYPE__BOOL) return onnx_node_error(I, "%s must be a bool tensor", what);
  if (rank == 0) {
    sb_puts(sb, expr);
    return true;
  }
  bool one = rank > 0;
  for (int i = 0; i < rank; i++) one &= dims[i] == 1 || dims[i] < 0;
  if (!one) return onnx_node_error(I, "%s must hold one element", what);
  sb_printf(sb, "reshape(%s, newshape=[])", expr);
  return true;
}

/* {==== If ====} */

/* One branch, converted into its block text (its lets, then its result)
** with its outputs in outs; the values it defines are dropped. */
static bool branch(Importer *I, const Onnx__GraphProto *g, const char *what, StrBuf *text, Out *outs) {
  StrBuf saved = I->body;
  I->body = (StrBuf){0};
  int mark = I->values.len;
  bool ok = convert_graph(I, g) && graph_outputs(I, g, what, outs);
  if (ok) {
    sb_puts(text, sb_str(&I->body));
    sb_puts(text, g->n_output > 1 ? "  (" : "  ");
    for (size_t k = 0; k < g->n_output; k++) sb_printf(text, "%s%s", k ? ", " : "", outs[k].expr);
    sb_puts(text, g->n_output > 1 ? ")\n" : "\n");
  }
  sb_free(&I->body);
  I->body = saved;
  values_pop(I, mark);
  return ok;
}

bool onnx_cv_if(Importer *I) {
  Value *c = onnx_input(I, 0);
  if (!c) return onnx_node_error(I, "needs its condition input");
  const Onnx__GraphProto *gt = graph_attr(I, "then_branch"), *ge = gt ? graph_attr(I, "else_branch") : NULL;
  if (!ge) return false;
  size_t n = I->node->n_output;
  if (gt->n_output != n || ge->n_output != n)
    return onnx_node_error(I, "has %zu outputs, but then_branch has %zu and else_branch %zu", n, gt->n_output,
                           ge->n_output);
  StrBuf cond = {0}, tt = {0}, te = {0};
  if (!put_scalar_cond(I, &cond, c->expr, c->elem, c->rank, c->dims, "the condition")) {
    sb_free(&cond);
    return false;
  }
  Out *ot = rly_xcalloc(n, sizeof *ot), *oe = rly_xcalloc(n, sizeof *oe);
  bool ok = branch(I, gt, "then_branch", &tt, ot);
  if (ok) ok = branch(I, ge, "else_branch", &te, oe);
  /* Relay's if has one type: the branches' outputs must agree. */
  for (size_t k = 0; k < n && ok; k++) {
    Out *a = &ot[k], *b = &oe[k];
    if (a->elem != b->elem) {
      ok = onnx_node_error(I, "output %zu is a %s tensor in one branch and not in the other: not supported", k,
                           a->elem == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL ? "bool" : "numeric");
      break;
    }
    if (a->rank >= 0 && b->rank >= 0 && a->rank != b->rank) {
      ok = onnx_node_error(I, "output %zu has rank %d in then_branch and %d in else_branch: not supported", k,
                           a->rank, b->rank);
      break;
    }
    for (int i = 0; i < a->rank && i < b->rank; i++)
      if (a->dims[i] >= 0 && b->dims[i] >= 0 && a->dims[i] != b->dims[i]) {
        ok = onnx_node_error(I, "output %zu has dimension %d of %lld in then_branch and %lld in else_branch: Relay's "
                             "if needs one type", k, i, (long long)a->dims[i], (long long)b->dims[i]);
        break;
      }
    if (a->rank < 0) a->rank = b->rank, memcpy(a->dims, b->dims, sizeof a->dims);
    else
      for (int i = 0; i < a->rank && i < b->rank; i++)
        if (a->dims[i] != b->dims[i]) a->dims[i] = -1;
  }
  if (ok) {
    char var[32];
    onnx_fresh(I, var);
    sb_printf(&I->body, "  let %s = if (%s) {\n", var, sb_str(&cond));
    put_indented(&I->body, sb_str(&tt));
    sb_puts(&I->body, "  } else {\n");
    put_indented(&I->body, sb_str(&te));
    sb_puts(&I->body, "  };\n");
    for (size_t k = 0; k < n; k++) {
      if (!*I->node->output[k]) continue;
      char proj[64];
      if (n == 1) snprintf(proj, sizeof proj, "%s", var);
      else snprintf(proj, sizeof proj, "%s.%zu", var, k);
      onnx_add_value(I, I->node->output[k], proj, ot[k].elem, ot[k].rank, ot[k].dims);
    }
  }
  outs_free(ot, n);
  outs_free(oe, n);
  sb_free(&cond);
  sb_free(&tt);
  sb_free(&te);
  return ok;
}

/* {==== Loop ====} */

enum { MAX_SCAN_ROWS = 1 << 24 };

/* A value the body reads from outside: the outer expression (the call's
** argument) and the parameter that stands for it in the body. */
typedef struct Capture {
  char *outer, *param;
  int elem, rank;
  int64_t dims[MAX_RANK];
  const ConstData *cdata;
  const char *name;
} Capture;

static bool is_true_const(const Value *v) {
  return v && v->cdata && v->cdata->dtype.code == DT_UINT && v->cdata->dtype.bits == 1 &&
         const_numel(v->cdata) == 1 && ((const unsigned char *)v->cdata->data)[0] != 0;
}

/* The loop's pieces while its global is written. */
typedef struct Loop {
  const Onnx__GraphProto *body;
  size_t ncarried, nscan;
  int64_t trip;          /* the constant trip count, or -1 */
  bool has_trip, has_cond;
  Vec(Capture) caps;
  Out *outs;             /* the body's outputs: cond, carried, scans */
} Loop;

static void loop_free(Loop *L) {
  for (int i = 0; i < L->caps.len; i++) {
    free(L->caps.data[i].outer);
    free(L->caps.data[i].param);
  }
  VEC_FREE(&L->caps);
  if (L->outs) outs_free(L->outs, L->body->n_output);
}

/* The values the body reads from outside it, each a parameter (constants
** in the metadata are visible everywhere and stay as they are). */
static bool find_captures(Importer *I, Loop *L) {
  Names names = {0};
  free_names(L->body, &names);
  bool ok = true;
  for (int i = 0; i < names.len && ok; i++) {
    const Value *v = onnx_find_value(I, names.data[i]);
    if (!v) {
      ok = onnx_node_error(I, "its body reads '%s', which is not defined before the node", names.data[i]);
      break;
    }
    if (strncmp(v->expr, "meta[", 5) == 0) continue;
    if (v->rank < 0) {
      ok = onnx_node_error(I, "its body reads '%s', whose rank is not known", names.data[i]);
      break;
    }
    Capture c = {0};
    char var[32];
    c.outer = xstrdup(v->expr);
    c.param = xstrdup(onnx_fresh(I, var));
    c.elem = v->elem;
    c.rank = v->rank;
    memcpy(c.dims, v->dims, sizeof c.dims);
    c.cdata = v->cdata;
    c.name = names.data[i];
    VEC_PUSH(&L->caps, c);
  }
  VEC_FREE(&names);
  return ok;
}

bool onnx_cv_loop(Importer *I) {
  const Onnx__NodeProto *node = I->node;
  const Onnx__GraphProto *body = graph_attr(I, "body");
  if (!body) return false;
  if (node->n_input < 2)
    return onnx_node_error(I, "needs the inputs M and cond (either may be empty), then the loop-carried values");
  Loop L = {0};
  L.body = body;
  L.ncarried = node->n_input - 2;
  if (node->n_output < L.ncarried)
    return onnx_node_error(I, "has %zu loop-carried values but only %zu outputs", L.ncarried, node->n_output);
  L.nscan = node->n_output - L.ncarried;
  if (body->n_input != 2 + L.ncarried)
    return onnx_node_error(I, "its body has %zu inputs; with %zu loop-carried values it needs %zu (iteration, "
                           "condition, the values)", body->n_input, L.ncarried, 2 + L.ncarried);
  if (body->n_output != 1 + node->n_output)
    return onnx_node_error(I, "its body has %zu outputs; the node's %zu outputs need %zu (condition, %zu "
                           "loop-carried, %zu scan)", body->n_output, node->n_output, 1 + node->n_output,
                           L.ncarried, L.nscan);
  if (node->n_output == 0) return onnx_node_error(I, "has no outputs");
  for (size_t k = 0; k < body->n_input; k++)
    if (!body->input[k]->name || !*body->input[k]->name)
      return onnx_node_error(I, "its body's input %zu has no name", k);

  /* M and cond: constants are read here, others passed in. */
  Value *m = onnx_input(I, 0), *cond = onnx_input(I, 1);
  if ((*node->input[0] && !m) || (*node->input[1] && !cond)) return false;
  L.has_trip = m != NULL;
  L.has_cond = cond != NULL;
  L.trip = -1;
  StrBuf mexpr = {0}, cexpr = {0};
  bool ok = true;
  if (m) {
    int64_t v[1];
    if (onnx_const_ints(m, v, 1) == 1) {
      L.trip = v[0] < 0 ? 0 : v[0];
    } else if (m->elem != ONNX__TENSOR_PROTO__DATA_TYPE__INT64) {
      ok = onnx_node_error(I, "M must be an int64 tensor");
    } else {
      /* A one-element tensor either way; reshaped to a scalar. */
      sb_printf(&mexpr, m->rank == 0 ? "%s" : "reshape(%s, newshape=[])", m->expr);
    }
  }
  if (ok && cond) ok = put_scalar_cond(I, &cexpr, cond->expr, cond->elem, cond->rank, cond->dims, "cond");
  else if (ok) sb_puts(&cexpr, "True");
  bool full = !L.has_cond || is_true_const(cond);
  /* The initial values' expressions and types, copied (the table grows). */
  Out *init = rly_xcalloc(L.ncarried + 1, sizeof *init);
  int nseq = 0;
  for (size_t k = 0; k < L.ncarried && ok; k++) {
    /* Read here, not by onnx_input: an empty sequence is allowed. */
    const char *in = node->input[2 + k];
    Value *v = *in ? onnx_find_value(I, in) : NULL;
    if (!v) {
      ok = *in ? onnx_node_error(I, "input '%s' is not defined before the node", in)
               : onnx_node_error(I, "loop-carried value %zu has no initial value", k);
      break;
    }
    init[k].seq = v->seq;
    if (v->seq == SEQ_EMPTY) {
      /* A list each iteration appends to: a scan output in disguise. */
      init[k].elem = v->elem;
      init[k].rank = -1;
      nseq++;
      continue;
    }
    if (v->seq) {
      ok = onnx_node_error(I, "loop-carried value %zu is a sequence that is not empty: not supported", k);
      break;
    }
    if (v->rank < 0) {
      ok = onnx_node_error(I, "needs the rank of loop-carried value %zu ('%s')", k, node->input[2 + k]);
      break;
    }
    init[k].expr = xstrdup(v->expr);
    init[k].elem = v->elem;
    init[k].rank = v->rank;
    memcpy(init[k].dims, v->dims, sizeof v->dims);
  }
  if (ok && (L.nscan || nseq) && (L.trip < 0 || L.trip > MAX_SCAN_ROWS))
    ok = onnx_node_error(I, "%s need a constant trip count M (at most %d), found %s",
                         L.nscan ? "scan outputs" : "sequences appended to", MAX_SCAN_ROWS,
                         m ? (L.trip < 0 ? "one computed by the graph" : "one too large") : "none");
  if (ok) ok = find_captures(I, &L);

  /* The body, in its own scope and block. */
  char name[32], iter[32], cvar[32], mvar[32];
  snprintf(name, sizeof name, "@loop%d", I->nglobals++);
  onnx_fresh(I, iter);
  onnx_fresh(I, cvar);
  if (mexpr.len) onnx_fresh(I, mvar);
  char (*carried)[32] = rly_xcalloc(L.ncarried + L.nscan + 1, 32);
  for (size_t k = 0; k < L.ncarried + L.nscan; k++) onnx_fresh(I, carried[k]);
  StrBuf saved = I->body;
  I->body = (StrBuf){0};
  int mark = I->values.len;
  if (ok) {
    onnx_add_value(I, body->input[0]->name, iter, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 0, NULL);
    onnx_add_value(I, body->input[1]->name, cvar, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, NULL);
    for (size_t k = 0; k < L.ncarried; k++)
      onnx_add_value(I, body->input[2 + k]->name, carried[k], init[k].elem, init[k].rank, init[k].dims)->seq =
          init[k].seq == SEQ_EMPTY ? SEQ_SO_FAR : SEQ_NONE;
    for (int i = 0; i < L.caps.len; i++) {
      Capture *c = &L.caps.data[i];
      onnx_add_value(I, c->name, c->param, c->elem, c->rank, c->dims)->cdata = c->cdata;
    }
    L.outs = rly_xcalloc(body->n_output, sizeof *L.outs);
    ok = convert_graph(I, body) && graph_outputs(I, body, "its body's", L.outs);
    if (!ok) {
      free(L.outs);
      L.outs = NULL;
    }
  }
  StrBuf lets = I->body;
  I->body = saved;
  values_pop(I, mark);

  /* The outputs against the loop's types. */
  Out *ctype = rly_xcalloc(L.ncarried + L.nscan + 1, sizeof *ctype);
  if (ok) {
    Out *o = L.outs;
    if (L.has_cond && o[0].truth != 1) full = false;
    StrBuf tmp = {0};
    ok = put_scalar_cond(I, &tmp, o[0].expr, o[0].elem, o[0].rank, o[0].dims, "the body's condition output");
    sb_free(&tmp);
    for (size_t k = 0; k < L.ncarried && ok; k++) {
      const Out *a = &init[k], *b = &o[1 + k];
      if (a->seq == SEQ_EMPTY) {
        if (b->seq != SEQ_APPENDED)
          ok = onnx_node_error(I, "loop-carried sequence %zu must be the one before with one tensor appended "
                               "(SequenceInsert at its end)", k);
        continue;
      }
      bool same = !b->seq && a->elem == b->elem && (b->rank < 0 || b->rank == a->rank);
      for (int i = 0; same && i < a->rank && b->rank >= 0; i++)
        same = a->dims[i] < 0 || b->dims[i] < 0 || a->dims[i] == b->dims[i];
      if (!same) ok = onnx_node_error(I, "loop-carried value %zu changes its type or shape in the body: not supported", k);
    }
    if (ok && (L.nscan || nseq) && !full)
      ok = onnx_node_error(I, "%s need a loop that runs all M iterations; its condition can end it early: "
                           "not supported", L.nscan ? "scan outputs" : "sequences appended to");
    /* The loop's values: a carried tensor keeps its type; a scan output
    ** or an appended list is an accumulator [M, the value's dims]. */
    for (size_t k = 0; k < L.ncarried + L.nscan && ok; k++) {
      const Out *s = &o[1 + k];
      bool stacked = k >= L.ncarried || init[k].seq == SEQ_EMPTY;
      if (!stacked) {
        ctype[k] = init[k];
        ctype[k].expr = NULL;
        continue;
      }
      bool known = (k >= L.ncarried ? !s->seq : s->seq == SEQ_APPENDED) && s->rank >= 0 && s->rank < MAX_RANK;
      for (int i = 0; known && i < s->rank; i++) known = s->dims[i] >= 0;
      if (!known) {
        ok = onnx_node_error(I, "%s %zu needs a static shape", k < L.ncarried ? "the tensors appended to sequence"
                             : "scan output", k < L.ncarried ? k : k - L.ncarried);
        break;
      }
      ctype[k].elem = s->elem;
      ctype[k].rank = s->rank + 1;
      ctype[k].dims[0] = L.trip;
      memcpy(ctype[k].dims + 1, s->dims, sizeof(int64_t) * (size_t)s->rank);
      ctype[k].seq = k < L.ncarried ? SEQ_STACKED : SEQ_NONE;
      ctype[k].stacked = true;
    }
  }

  if (ok) {
    Out *o = L.outs;
    size_t nvals = L.ncarried + L.nscan;
    StrBuf g = {0}, ret = {0};
    /* Signature. */
    sb_printf(&g, "def %s(%s: Tensor[(), int64], %s: Tensor[(), bool]", name, iter, cvar);
    for (size_t k = 0; k < nvals; k++) {
      sb_printf(&g, ", %s: ", carried[k]);
      onnx_put_type(&g, ctype[k].elem, ctype[k].rank, ctype[k].dims);
    }
    for (int i = 0; i < L.caps.len; i++) {
      const Capture *c = &L.caps.data[i];
      sb_printf(&g, ", %s: ", c->param);
      onnx_put_type(&g, c->elem, c->rank, c->dims);
    }
    if (mexpr.len) sb_printf(&g, ", %s: Tensor[(), int64]", mvar);
    sb_puts(&ret, "(");
    for (size_t k = 0; k < nvals; k++) {
      if (k) sb_puts(&ret, ", ");
      onnx_put_type(&ret, ctype[k].elem, ctype[k].rank, ctype[k].dims);
    }
    sb_puts(&ret, nvals == 1 ? ",)" : ")");
    sb_printf(&g, ") -> %s {\n", sb_str(&ret));
    /* Whether to step: iteration < M, and the condition. */
    sb_puts(&g, "  if (");
    if (L.has_trip && L.has_cond) sb_puts(&g, "logical_and(");
    if (L.has_trip) {
      if (mexpr.len) sb_printf(&g, "less(%s, %s)", iter, mvar);
      else sb_printf(&g, "less(%s, %lldi64)", iter, (long long)L.trip);
    }
    if (L.has_trip && L.has_cond) sb_puts(&g, ", ");
    if (L.has_cond) sb_puts(&g, cvar);
    if (L.has_trip && L.has_cond) sb_puts(&g, ")");
    if (!L.has_trip && !L.has_cond) sb_puts(&g, "True");
    sb_puts(&g, ") {\n");
    put_indented(&g, sb_str(&lets));
    /* The next step: an accumulator gets row %iter. */
    sb_printf(&g, "    %s(add(%s, 1i64), ", name, iter);
    if (L.has_cond) put_scalar_cond(I, &g, o[0].expr, o[0].elem, o[0].rank, o[0].dims, "the body's condition output");
    else sb_puts(&g, "True");
    for (size_t k = 0; k < nvals; k++) {
      if (ctype[k].stacked)
        sb_printf(&g, ", scatter_nd(%s, reshape(%s, newshape=[1]), %s)", carried[k], iter, o[1 + k].expr);
      else sb_printf(&g, ", %s", o[1 + k].expr);
    }
    for (int i = 0; i < L.caps.len; i++) sb_printf(&g, ", %s", L.caps.data[i].param);
    if (mexpr.len) sb_printf(&g, ", %s", mvar);
    sb_puts(&g, ")\n  } else {\n    (");
    for (size_t k = 0; k < nvals; k++) sb_printf(&g, "%s%s", k ? ", " : "", carried[k]);
    sb_puts(&g, nvals == 1 ? ",)\n  }\n}\n\n" : ")\n  }\n}\n\n");
    sb_puts(&I->globals, sb_str(&g));

    /* The call. */
    char var[32];
    onnx_fresh(I, var);
    sb_printf(&I->body, "  let %s = %s(0i64, %s", var, name, sb_str(&cexpr));
    for (size_t k = 0; k < nvals; k++) {
      if (!ctype[k].stacked) {
        sb_printf(&I->body, ", %s", init[k].expr);
        continue;
      }
      char dt[32];
      DType t;
      if (!onnx_elem_dtype(ctype[k].elem, &t)) t = (DType){DT_FLOAT, 32, 1};
      sb_puts(&I->body, ", zeros(shape=[");
      for (int i = 0; i < ctype[k].rank; i++) sb_printf(&I->body, "%s%lld", i ? ", " : "", (long long)ctype[k].dims[i]);
      sb_printf(&I->body, "], dtype=\"%s\")", dtype_name(t, dt));
    }
    for (int i = 0; i < L.caps.len; i++) sb_printf(&I->body, ", %s", L.caps.data[i].outer);
    if (mexpr.len) sb_printf(&I->body, ", %s", sb_str(&mexpr));
    sb_puts(&I->body, ");\n");
    for (size_t k = 0; k < node->n_output; k++) {
      if (!*node->output[k]) continue;
      char proj[64];
      snprintf(proj, sizeof proj, "%s.%zu", var, k);
      onnx_add_value(I, node->output[k], proj, ctype[k].elem, ctype[k].rank, ctype[k].dims)->seq = ctype[k].seq;
    }
    sb_free(&g);
    sb_free(&ret);
  }
  free(ctype);
  sb_free(&lets);
  for (size_t k = 0; k < L.ncarried; k++) free(init[k].expr);
  free(init);
  free(carried);
  sb_free(&mexpr);
  sb_free(&cexpr);
  loop_free(&L);
  return ok;
}

/* {==== Sequences a loop appends to ====}
** torch.onnx.export writes a scripted loop's `list.append(t)` and the
** `torch.stack(list)` after it as SequenceEmpty, a Loop that carries the
** sequence and ends its body in SequenceInsert, and ConcatFromSequence.
** When the loop runs all M iterations (a constant), that list is a scan
** output: the Loop stacks it (SeqKind in import.h), ConcatFromSequence
** reads the stacked tensor. Any other use of a sequence is an error. */

bool onnx_cv_sequence_empty(Importer *I) {
  int elem = (int)onnx_attr_int(I, "dtype", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
  DType t;
  if (!onnx_elem_dtype(elem, &t)) return onnx_node_error(I, "element type %d is not supported", elem);
  /* No Relay value: only a Loop reads it (as its initial list). */
  onnx_add_value(I, I->node->output[0], "()", elem, -1, NULL)->seq = SEQ_EMPTY;
  return true;
}

bool onnx_cv_sequence_insert(Importer *I) {
  const Onnx__NodeProto *n = I->node;
  const Value *s = n->n_input >= 2 && *n->input[0] ? onnx_find_value(I, n->input[0]) : NULL;
  if (!s) return onnx_node_error(I, "needs a sequence and a tensor");
  if (s->seq != SEQ_SO_FAR || (n->n_input > 2 && *n->input[2]))
    return onnx_node_error(I, "a sequence is supported only as a Loop's list that each iteration appends one tensor "
                           "to (at its end, without a position)");
  Value *t = onnx_input(I, 1);
  if (!t) return n->n_input >= 2 && *n->input[1] ? false : onnx_node_error(I, "needs a tensor to insert");
  if (t->elem != s->elem) return onnx_node_error(I, "the tensor's element type is not the sequence's");
  char *expr = rly_xmalloc(strlen(t->expr) + 1);
  strcpy(expr, t->expr);
  int64_t dims[MAX_RANK];
  memcpy(dims, t->dims, sizeof dims);
  int elem = t->elem, rank = t->rank;
  onnx_add_value(I, n->output[0], expr, elem, rank, dims)->seq = SEQ_APPENDED;
  free(expr);
  return true;
}

bool onnx_cv_concat_from_sequence(Importer *I) {
  const Onnx__NodeProto *n = I->node;
  const Value *s = n->n_input >= 1 && *n->input[0] ? onnx_find_value(I, n->input[0]) : NULL;
  if (!s) return onnx_node_error(I, "needs a sequence");
  if (s->seq != SEQ_STACKED || s->rank < 1)
    return onnx_node_error(I, "reads only the list a Loop appended to");
  bool new_axis = onnx_attr_int(I, "new_axis", 0) != 0;
  int r = s->rank - 1; /* the tensors' rank */
  int64_t axis = onnx_attr_int(I, "axis", 0);
  int64_t lim = new_axis ? r + 1 : r;
  if (axis < 0) axis += lim;
  if (axis < 0 || axis >= lim || (!new_axis && r < 1))
    return onnx_node_error(I, "axis %lld is out of range", (long long)onnx_attr_int(I, "axis", 0));
  /* The stack's axis 0 moved to axis (new_axis), or next to the tensors'
  ** axis and merged with it (concatenation). */
  int64_t perm[MAX_RANK], dims[MAX_RANK];
  for (int i = 0, j = 1; i <= r; i++) perm[i] = i == axis ? 0 : j++;
  for (int i = 0; i <= r; i++) dims[i] = s->dims[perm[i]];
  StrBuf e = {0};
  if (axis == 0) sb_puts(&e, s->expr);
  else {
    sb_printf(&e, "transpose(%s, axes=[", s->expr);
    for (int i = 0; i <= r; i++) sb_printf(&e, "%s%lld", i ? ", " : "", (long long)perm[i]);
    sb_puts(&e, "])");
  }
  int rank = r + 1;
  if (!new_axis) {
    dims[axis] *= dims[axis + 1];
    for (int i = (int)axis + 1; i < r; i++) dims[i] = dims[i + 1];
    rank = r;
    StrBuf t = {0};
    sb_printf(&t, "reshape(%s, newshape=[", sb_str(&e));
    for (int i = 0; i < rank; i++) sb_printf(&t, "%s%lld", i ? ", " : "", (long long)dims[i]);
    sb_puts(&t, "])");
    sb_free(&e);
    e = t;
  }
  onnx_bind_output(I, 0, sb_str(&e), s->elem, rank, dims);
  sb_free(&e);
  return true;
}
