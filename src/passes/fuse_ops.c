/* fuse_ops.c: FuseOps, operator fusion as TVM does it (spec section 10).
** Requires: types. Preserves: types (every node it builds is typed),
** spans, sharing outside the groups. Never fails.
**
** Input form: the dataflow graph (graph bindings `%0 = e;`), as TVM runs
** FuseOps before ToANormalForm; let chains are accepted too, but a let is
** a boundary: each let value is fused on its own (no group crosses a let
** variable, as in TVM). Run it before `anf`.
**
** Regions. The dataflow edges (tuple fields, projection, call callee and
** arguments, let value and body, if condition, match scrutinee, ref
** operands) of one scope form a region; the scopes are the root, every
** function body, if branch and match clause. The scopes are visited outer
** first and a node belongs to the first region that reaches it, so a node
** shared by a scope and an inner scope belongs to the outer one. Functions
** already marked Primitive are left alone, insides included.
**
** Graph nodes of a region: operator calls (pattern: the op's column of
** ops.def; kOpaque when a type involved is not fully static or the op is
** opaque; a call on 0-d tensors only is not a node: see scalar_call),
** tuples of tensors (kTuple) and projections of tuples of tensors
** (kInjective). Everything else (variables, constants, globals, calls of
** functions, let, if, match, refs, function literals) is a boundary. An
** edge producer -> consumer takes the consumer's pattern, except a
** kBroadcast consumer whose result has the producer's shape (kElemWise)
** and tuple fields and projections (kInjective). A node is "extern" (its
** value leaves the region: it may end a group, never be fused into a
** consumer) when a boundary node, a node of another region or scope, or
** nothing (the root) uses it.
**
** Grouping, as TVM's GraphPartitioner: the post-dominator tree of each
** region (a node's parent is the least common ancestor of its consumers,
** with the largest edge pattern met on the way), then union-find groups in
** three phases over the nodes in post-order, each node trying to join its
** post-dominator's group:
**   phase 0: kOutEWiseFusable (dense, conv2d, batch_matmul, pooling,
**            softmax) takes its dominator when the edge pattern is
**            kElemWise and every node on the paths is <= kBroadcast;
**   phases 0 and 1: kElemWise/kBroadcast joins when the dominator pattern
**            is <= kInjective or kCommReduce, the paths <= kInjective and
**            the sink <= kBroadcast, kInjective, kCommReduce or an
**            OutEWiseFusable group;
**   phase 1: kInjective and kTuple join when every path is <= kInjective;
**   phase 2: nodes <= kInjective join a tuple already fused into an
**            injective consumer (the inputs of a concatenate).
** A reduction never joins a consumer; opaque nodes stay alone; nothing
** joins a tuple in phases 0 and 1; at most 256 nodes per group (TVM's
** relay.FuseOps.max_depth); a tuple of more than 16 fields is not a node
** (the kernels' limit; TVM has none).
**
** Output: each group whose root is an operator call (or a projection of a
** tuple made in the group) becomes, at the root's place,
**   (fn (%p0: T0, %p1: T1, Primitive=1) -> T { ...the group... })(a0, a1)
** with one parameter per distinct value the group reads from outside (in
** order of first use); 0-d constants of int32, int64, float32, float64 and
** bool stay inside the body. A group that is only a tuple stays a tuple;
** a projection of an outside tuple stays a projection. A group whose op
** calls are all reshape-like (reshape, contrib_reverse_reshape, squeeze,
** expand_dims) also gets `relay.reshape_only=1`, as in TVM.
** `annotation.stop_fusion(x)` ends x's group and is replaced by x. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "ops/ops.h"
#include "passes/pass.h"

enum { MAX_DEPTH = 256 };
/* A tuple of more fields is not fused: a kernel's group holds at most
** lower/kernel.h's GROUP_MAX_ARGS operands per node. It is a boundary, and
** its consumer (a concatenate of a DenseNet block's 17 to 49 tensors)
** reads it as one tuple parameter. */
enum { MAX_TUPLE_FIELDS = 16 };

typedef struct Edge {
  int from, to;
  int pattern;
} Edge;

typedef struct Node {
  Expr *e;
  int pattern;      /* OpPattern */
  bool ext;         /* extern: no post-dominator */
  int out, nout;    /* consumers: R->outs[out .. out+nout) */
  int dom, depth;   /* post-dominator tree: parent (-1: none) */
  int dom_pattern;  /* the largest edge pattern on the way to dom */
  /* The union-find group this node started (TVM's Group object). */
  int gparent;      /* -1: a root */
  int gpattern;
  int groot;        /* the node the group's value comes from */
  bool anchor;      /* holds an OutEWiseFusable op */
  int gnum;         /* nodes (valid at roots) */
  int stamp;        /* path walks */
} Node;

typedef struct Region {
  Node *nodes;
  int n;
  Edge *outs;  /* sorted by from */
  int nouts;
  int stamp;   /* the last path walk's mark */
} Region;

typedef Vec(int) IntVec;

typedef struct Fuse {
  Module *m;
  uint32_t n;         /* ids below n: the original nodes */
  int *region;        /* per id: region, -1 none */
  int *lidx;          /* per id: index among its region's graph nodes, -1 */
  uint8_t *ext;       /* per id */
  Expr **groot;       /* per id of a graph node: its group's root */
  Expr **new_of;      /* per id: the replacement */
  Expr **copy_of;     /* per id: the copy of a group member in its function */
  ExprVec order;      /* every region's nodes, region after region, post-order */
  Vec(int) starts;    /* region r: order[starts[r] .. starts[r+1]) */
  ExprVec kids;       /* scratch */
} Fuse;

/* {==== Helpers ====} */


static bool is_op_call(const Expr *e) { return e->kind == EXPR_CALL && e->u.call.callee->kind == EXPR_OP; }

static bool is_stop_fusion(const Expr *e) {
  return is_op_call(e) && e->u.call.callee->u.op.op->id == OP_STOP_FUSION && e->u.call.nargs == 1;
}

/* A tensor type or tuple of them, every dimension known. */
static bool static_type(const Type *t, bool allow_tuple) {
  if (!t) return false;
  if (t->kind == TYPE_TENSOR) {
    for (int i = 0; i < t->u.tensor.ndim; i++)
      if (t->u.tensor.shape[i] == RLY_DIM_ANY) return false;
    return true;
  }
  if (t->kind == TYPE_TUPLE && allow_tuple) {
    for (int i = 0; i < t->u.tuple.n; i++)
      if (!static_type(t->u.tuple.fields[i], false)) return false;
    return true;
  }
  return false;
}

static bool same_shape(const Type *a, const Type *b) {
  if (!a || !b || a->kind != TYPE_TENSOR || b->kind != TYPE_TENSOR) return false;
  if (a->u.tensor.ndim != b->u.tensor.ndim) return false;
  for (int i = 0; i < a->u.tensor.ndim; i++)
    if (a->u.tensor.shape[i] != b->u.tensor.shape[i]) return false;
  return true;
}

/* 0-d constants that stay inside a group's body. */
static bool inline_const(const Expr *e) {
  if (e->kind != EXPR_CONST) return false;
  const ConstData *c = e->u.constant.value;
  if (c->ndim != 0 || c->dtype.lanes != 1) return false;
  DType t = c->dtype;
  return (t.code == DT_INT && (t.bits == 32 || t.bits == 64)) || (t.code == DT_FLOAT && (t.bits == 32 || t.bits == 64)) ||
         dtype_is_bool(t);
}

/* The operands a graph node reads (no callee). */
static void operands(const Expr *e, ExprVec *out) {
  if (e->kind == EXPR_CALL)
    for (int i = 0; i < e->u.call.nargs; i++) VEC_PUSH(out, e->u.call.args[i]);
  else if (e->kind == EXPR_TUPLE)
    for (int i = 0; i < e->u.tuple.n; i++) VEC_PUSH(out, e->u.tuple.fields[i]);
  else if (e->kind == EXPR_GET_ITEM)
    VEC_PUSH(out, e->u.get_item.tuple);
}

static bool is_scalar(const Type *t) { return t && t->kind == TYPE_TENSOR && t->u.tensor.ndim == 0; }

/* A call whose result and operands are all 0-d tensors is not a graph
** node: it stays a plain call, which WrapPrimitives makes one operator on
** its parameters, and code generation computes on C scalars (unboxed, no
** kernel call). A group, even of one call, keeps 0-d constants inside and
** is not that form. */
static bool scalar_call(const Expr *e) {
  if (!is_scalar(e->type)) return false;
  for (int i = 0; i < e->u.call.nargs; i++)
    if (!is_scalar(e->u.call.args[i]->type)) return false;
  return true;
}

static bool graph(const Fuse *F, const Expr *e) { return e->id < F->n && F->lidx[e->id] >= 0; }

/* Is e a node of the fusion graph? Its pattern in *pattern. */
static bool graph_node(const Expr *e, int *pattern) {
  if (is_op_call(e)) {
    if (is_stop_fusion(e) || scalar_call(e)) return false;
    int p = e->u.call.callee->u.op.op->pattern;
    bool fixed = static_type(e->type, true);
    for (int i = 0; fixed && i < e->u.call.nargs; i++) fixed = static_type(e->u.call.args[i]->type, true);
    *pattern = fixed ? p : OPP_OPAQUE;
    return true;
  }
  if (e->kind == EXPR_TUPLE && e->type && e->type->kind == TYPE_TUPLE && static_type(e->type, true) &&
      e->u.tuple.n <= MAX_TUPLE_FIELDS) {
    *pattern = OPP_TUPLE;
    return true;
  }
  if (e->kind == EXPR_GET_ITEM) {
    const Type *t = e->u.get_item.tuple->type;
    if (t && t->kind == TYPE_TUPLE && static_type(t, true)) {
      *pattern = OPP_INJECTIVE;
      return true;
    }
  }
  return false;
}

/* {==== Regions ====} */

/* Assigns the nodes of the scope rooted at s (those not assigned yet) to a
** new region, in post-order, and queues the scopes they open. */
static void discover(Fuse *F, Expr *s, ExprVec *scopes) {
  if (F->region[s->id] >= 0) return;
  int r = F->starts.len;
  VEC_PUSH(&F->starts, F->order.len);
  typedef struct {
    Expr *e;
    bool done;
  } Frame;
  Vec(Frame) stack = {0};
  Frame top = {s, false};
  VEC_PUSH(&stack, top);
  while (stack.len) {
    Frame f = VEC_POP(&stack);
    Expr *e = f.e;
    if (f.done) {
      VEC_PUSH(&F->order, e);
      if (e->kind == EXPR_IF) {
        VEC_PUSH(scopes, e->u.if_.then_);
        VEC_PUSH(scopes, e->u.if_.else_);
      } else if (e->kind == EXPR_MATCH) {
        for (int i = 0; i < e->u.match.nclauses; i++) VEC_PUSH(scopes, e->u.match.clauses[i].body);
      } else if (e->kind == EXPR_FUNC && !ir_is_primitive(e)) {
        VEC_PUSH(scopes, e->u.func.body);
      }
      continue;
    }
    if (F->region[e->id] >= 0) continue;
    F->region[e->id] = r;
    Frame self = {e, true};
    VEC_PUSH(&stack, self);
    F->kids.len = 0;
    ir_kids(e, 0, &F->kids); /* the children in e's own scope */
    for (int i = F->kids.len; i-- > 0;) {
      Expr *k = F->kids.data[i];
      if (F->region[k->id] >= 0) continue;
      Frame kf = {k, false};
      VEC_PUSH(&stack, kf);
    }
  }
  VEC_FREE(&stack);
}

/* {==== The post-dominator tree ====} */

static int maxp(int a, int b) { return a > b ? a : b; }

static int lca(Region *R, int a, int b, int *pattern) {
  Node *N = R->nodes;
  while (a != b) {
    if (a < 0 || b < 0) return -1;
    if (N[a].depth < N[b].depth) {
      *pattern = maxp(*pattern, N[b].dom_pattern);
      b = N[b].dom;
    } else if (N[b].depth < N[a].depth) {
      *pattern = maxp(*pattern, N[a].dom_pattern);
      a = N[a].dom;
    } else {
      *pattern = maxp(*pattern, maxp(N[a].dom_pattern, N[b].dom_pattern));
      a = N[a].dom;
      b = N[b].dom;
    }
  }
  return a;
}

static void dominators(Region *R) {
  for (int i = R->n; i-- > 0;) {
    Node *x = &R->nodes[i];
    if (x->ext || x->nout == 0) {
      x->dom = -1;
      x->depth = 1;
      x->dom_pattern = OPP_OPAQUE;
      continue;
    }
    int pattern = OPP_ELEMWISE;
    const Edge *o = &R->outs[x->out];
    int parent = o[0].to;
    pattern = maxp(pattern, o[0].pattern);
    for (int k = 1; k < x->nout; k++) {
      parent = lca(R, parent, o[k].to, &pattern);
      pattern = maxp(pattern, o[k].pattern);
    }
    x->dom = parent;
    x->depth = parent >= 0 ? R->nodes[parent].depth + 1 : 1;
    x->dom_pattern = pattern;
  }
}

/* {==== Groups ====} */

static int find(Region *R, int i) {
  int r = i;
  while (R->nodes[r].gparent >= 0) r = R->nodes[r].gparent;
  while (R->nodes[i].gparent >= 0) {
    int next = R->nodes[i].gparent;
    R->nodes[i].gparent = r;
    i = next;
  }
  return r;
}

enum { COND_BROADCAST, COND_ELEMWISE, COND_INJECTIVE };

static bool cond_ok(int cond, int kind, bool is_sink) {
  switch (cond) {
  case COND_BROADCAST: return kind <= OPP_BROADCAST;
  case COND_ELEMWISE:
    if (!is_sink) return kind <= OPP_INJECTIVE;
    return kind <= OPP_BROADCAST || kind == OPP_COMM_REDUCE || kind == OPP_INJECTIVE || kind == OPP_OUT_EWISE_FUSABLE;
  default: return kind <= OPP_INJECTIVE;
  }
}

/* Pushes the consumers of node i on stack. */
static void push_outs(Region *R, int i, IntVec *stack) {
  const Node *x = &R->nodes[i];
  for (int k = 0; k < x->nout; k++) VEC_PUSH(stack, R->outs[x->out + k].to);
}

/* Does every path from src to sink pass only nodes whose group pattern
** satisfies cond? */
static bool check_path(Region *R, int src, int sink, int cond, IntVec *stack) {
  int stamp = ++R->stamp;
  stack->len = 0;
  push_outs(R, src, stack);
  while (stack->len) {
    int v = VEC_POP(stack);
    if (R->nodes[v].stamp == stamp) continue;
    R->nodes[v].stamp = stamp;
    if (!cond_ok(cond, R->nodes[find(R, v)].gpattern, v == sink)) return false;
    if (v != sink) push_outs(R, v, stack);
  }
  return true;
}

/* The nodes of the groups on the paths from child to dom_parent, plus
** dom_parent's group (TVM's CountFusedNodesWithNewChild). */
static int count_fused(Region *R, int child, int dom_parent, IntVec *stack) {
  int stamp = ++R->stamp;
  int sum = R->nodes[find(R, dom_parent)].gnum;
  stack->len = 0;
  VEC_PUSH(stack, child);
  while (stack->len) {
    int v = VEC_POP(stack);
    if (v == dom_parent || R->nodes[v].stamp == stamp) continue;
    R->nodes[v].stamp = stamp;
    sum += R->nodes[v].gnum;
    push_outs(R, v, stack);
  }
  return sum;
}

static void merge(Region *R, int child, int parent) {
  int c = find(R, child), p = find(R, parent);
  if (c == p) return;
  Node *C = &R->nodes[c], *P = &R->nodes[p];
  P->gnum += C->gnum;
  C->gparent = p;
  if (C->anchor) {
    P->anchor = true;
    P->gpattern = maxp(C->gpattern, P->gpattern);
  }
}

/* Merges every group on the paths from src to sink into sink's group. */
static void commit(Region *R, int src, int sink, IntVec *stack) {
  int stamp = ++R->stamp;
  stack->len = 0;
  VEC_PUSH(stack, src);
  while (stack->len) {
    int v = VEC_POP(stack);
    if (v == sink || R->nodes[v].stamp == stamp) continue;
    R->nodes[v].stamp = stamp;
    merge(R, v, sink);
    push_outs(R, v, stack);
  }
}

static void run_phase(Region *R, int phase, IntVec *stack) {
  for (int i = 0; i < R->n; i++) {
    Node *x = &R->nodes[i];
    int gp = x->gpattern, dp = x->dom;
    if (gp == OPP_OPAQUE || dp < 0) continue;
    if (count_fused(R, i, dp, stack) > MAX_DEPTH) continue;
    if (phase == 2) {
      if (gp > OPP_INJECTIVE) continue;
      int droot = find(R, dp);
      if (R->nodes[droot].gpattern == OPP_TUPLE) continue;
      if (R->nodes[dp].gpattern == OPP_TUPLE && R->nodes[droot].gpattern <= OPP_INJECTIVE &&
          check_path(R, i, dp, COND_INJECTIVE, stack))
        commit(R, i, dp, stack);
      continue;
    }
    if (find(R, i) == find(R, dp)) continue;
    if (R->nodes[dp].gpattern == OPP_TUPLE) continue;
    if (gp == OPP_OUT_EWISE_FUSABLE) {
      if (phase == 0 && x->dom_pattern == OPP_ELEMWISE && check_path(R, i, dp, COND_BROADCAST, stack))
        commit(R, i, dp, stack);
    } else if (gp <= OPP_BROADCAST) {
      if ((x->dom_pattern <= OPP_INJECTIVE || x->dom_pattern == OPP_COMM_REDUCE) &&
          check_path(R, i, dp, COND_ELEMWISE, stack))
        commit(R, i, dp, stack);
    } else if (gp == OPP_INJECTIVE || gp == OPP_TUPLE) {
      if (phase == 1 && check_path(R, i, dp, COND_INJECTIVE, stack)) commit(R, i, dp, stack);
    }
    /* OPP_COMM_REDUCE: a reduction ends its group. */
  }
}

static int cmp_edge(const void *a, const void *b) {
  const Edge *x = a, *y = b;
  if (x->from != y->from) return x->from < y->from ? -1 : 1;
  return x->to < y->to ? -1 : x->to > y->to;
}

/* Groups the graph nodes of region r; sets F->groot for each. */
static void partition(Fuse *F, int r) {
  int lo = F->starts.data[r], hi = r + 1 < F->starts.len ? F->starts.data[r + 1] : F->order.len;
  Region R = {0};
  Vec(Edge) edges = {0};
  IntVec stack = {0};
  for (int i = lo; i < hi; i++)
    if (graph(F, F->order.data[i])) R.n++;
  if (!R.n) return;
  R.nodes = rly_xcalloc((size_t)R.n, sizeof(Node));
  for (int i = lo; i < hi; i++) {
    Expr *e = F->order.data[i];
    if (!graph(F, e)) continue;
    int me = F->lidx[e->id];
    Node *x = &R.nodes[me];
    x->e = e;
    graph_node(e, &x->pattern);
    x->ext = F->ext[e->id];
    F->kids.len = 0;
    operands(e, &F->kids);
    for (int k = 0; k < F->kids.len; k++) {
      Expr *a = F->kids.data[k];
      if (!graph(F, a) || F->region[a->id] != r) continue;
      int p = x->pattern;
      if (e->kind != EXPR_CALL) p = OPP_INJECTIVE;
      else if (p == OPP_BROADCAST && same_shape(a->type, e->type)) p = OPP_ELEMWISE;
      Edge ed = {F->lidx[a->id], me, p};
      VEC_PUSH(&edges, ed);
    }
  }
  /* Consumers in post-order of the consumer (stable order for ties). */
  if (edges.len) qsort(edges.data, (size_t)edges.len, sizeof(Edge), cmp_edge);
  R.outs = edges.data;
  R.nouts = edges.len;
  for (int k = 0; k < edges.len; k++) {
    Node *x = &R.nodes[edges.data[k].from];
    if (!x->nout) x->out = k;
    x->nout++;
  }
  dominators(&R);
  for (int i = 0; i < R.n; i++) {
    Node *x = &R.nodes[i];
    x->gparent = -1;
    x->gpattern = x->pattern;
    x->groot = i;
    x->anchor = x->pattern == OPP_OUT_EWISE_FUSABLE;
    x->gnum = 1;
  }
  for (int phase = 0; phase < 3; phase++) run_phase(&R, phase, &stack);
  for (int i = 0; i < R.n; i++) F->groot[R.nodes[i].e->id] = R.nodes[R.nodes[find(&R, i)].groot].e;
  free(R.nodes);
  VEC_FREE(&edges);
  VEC_FREE(&stack);
}

/* {==== Rewriting ====} */

static void put_int_attr(Module *m, Attrs *attrs, const char *key, Span at) {
  int i = attrs->n++;
  attrs->keys[i] = sym_intern_cstr(&m->syms, key);
  attrs->values[i] = ir_attr_value_new(m, AV_INT, at);
  attrs->values[i]->u.i.v = 1;
  attrs->values[i]->u.i.bits = 32;
}

/* Primitive=1, and relay.reshape_only=1 when reshape_only. */
static Attrs *primitive_attrs(Module *m, Span at, bool reshape_only) {
  Attrs *attrs = ARENA_NEW(m->arena, Attrs);
  attrs->keys = ARENA_ARRAY(m->arena, Symbol *, 2);
  attrs->values = ARENA_ARRAY(m->arena, AttrValue *, 2);
  put_int_attr(m, attrs, "Primitive", at);
  if (reshape_only) put_int_attr(m, attrs, "relay.reshape_only", at);
  return attrs;
}

/* Ops that only reinterpret the shape (TVM's TReshapeOp). */
static bool reshape_op(const Expr *e) {
  if (!is_op_call(e)) return false;
  switch (e->u.call.callee->u.op.op->id) {
  case OP_RESHAPE:
  case OP_CONTRIB_REVERSE_RESHAPE:
  case OP_SQUEEZE:
  case OP_EXPAND_DIMS: return true;
  default: return false;
  }
}

static bool member(const Fuse *F, const Expr *k, const Expr *root) {
  return graph(F, k) && F->groot[k->id] == root;
}

/* The parameter standing for the outside value a in the group being
** built (a new one, with its argument, at a's first use). */
static Expr *param_for(Fuse *F, Expr *a, ExprVec *outside, ExprVec *params, ExprVec *args) {
  for (int j = 0; j < outside->len; j++)
    if (outside->data[j] == a) return params->data[j];
  char name[32];
  snprintf(name, sizeof name, "p%d", outside->len);
  Expr *p = ir_var(F->m, a->span, sym_intern_cstr(&F->m->syms, name), a->type);
  p->type = a->type;
  Expr *arg = F->new_of[a->id];
  RLY_ASSERT(arg != NULL);
  VEC_PUSH(outside, a);
  VEC_PUSH(params, p);
  VEC_PUSH(args, arg);
  return p;
}

/* The call of a new Primitive function holding root's group. The members
** are copied depth first, operands left to right, so parameters come in
** order of first use (as TVM numbers them). */
static Expr *make_group(Fuse *F, Expr *root) {
  Module *m = F->m;
  ExprVec params = {0}, args = {0}, outside = {0}, kids = {0};
  typedef struct {
    Expr *e;
    int next; /* the next operand (pass_kids index) to look at */
  } Frame;
  Vec(Frame) stack = {0};
  Frame top = {root, 0};
  bool reshape_only = true; /* every member call is a reshape-like op */
  VEC_PUSH(&stack, top);
  while (stack.len) {
    Frame *f = &VEC_LAST(&stack);
    Expr *x = f->e;
    kids.len = 0;
    pass_kids(x, &kids);
    bool descended = false;
    while (f->next < kids.len) {
      Expr *a = kids.data[f->next];
      if (member(F, a, root)) {
        if (!F->copy_of[a->id]) {
          Frame kf = {a, 0};
          VEC_PUSH(&stack, kf); /* f is invalid from here */
          descended = true;
          break;
        }
      } else if (a->kind != EXPR_OP && !inline_const(a)) {
        param_for(F, a, &outside, &params, &args);
      }
      f->next++;
    }
    if (descended) continue;
    for (int k = 0; k < kids.len; k++) {
      Expr *a = kids.data[k];
      if (member(F, a, root)) kids.data[k] = F->copy_of[a->id];
      else if (a->kind != EXPR_OP && !inline_const(a)) kids.data[k] = param_for(F, a, &outside, &params, &args);
    }
    F->copy_of[x->id] = pass_rebuild(m, x, kids.data, true);
    if (x->kind == EXPR_CALL && !reshape_op(x)) reshape_only = false;
    stack.len--;
  }
  VEC_FREE(&stack);
  Expr *body = F->copy_of[root->id];
  int n = params.len;
  Expr *fn = ir_expr_new(m, EXPR_FUNC, root->span);
  fn->u.func.params = n ? VEC_TO_ARENA(m->arena, &params) : NULL;
  fn->u.func.nparams = n;
  fn->u.func.body = body;
  fn->u.func.ret = root->type;
  fn->u.func.attrs = primitive_attrs(m, root->span, reshape_only);
  Type *ft = ir_type_new(m, TYPE_FUNC, root->span);
  ft->u.func.nparams = n;
  ft->u.func.params = ARENA_ARRAY(m->arena, Type *, n ? n : 1);
  for (int i = 0; i < n; i++) ft->u.func.params[i] = fn->u.func.params[i]->type;
  ft->u.func.ret = root->type;
  fn->type = ft;
  Expr *c = ir_call(m, root->span, fn, n ? VEC_TO_ARENA(m->arena, &args) : NULL, n, NULL);
  c->type = root->type;
  VEC_FREE(&params);
  VEC_FREE(&args);
  VEC_FREE(&outside);
  VEC_FREE(&kids);
  return c;
}

static Expr *rebuild(Fuse *F, Expr *e) {
  F->kids.len = 0;
  pass_kids(e, &F->kids);
  for (int k = 0; k < F->kids.len; k++) {
    Expr *r = F->new_of[F->kids.data[k]->id];
    RLY_ASSERT(r != NULL);
    F->kids.data[k] = r;
  }
  return pass_rebuild(F->m, e, F->kids.data, false);
}

Expr *pass_fuse_ops(PassCtx *ctx, Expr *root) {
  if (root->kind == EXPR_FUNC && ir_is_primitive(root)) return root;
  Fuse F = {.m = ctx->m, .n = ctx->m->nexprs};
  size_t n = F.n ? F.n : 1;
  F.region = rly_xmalloc(n * sizeof(int));
  F.lidx = rly_xmalloc(n * sizeof(int));
  for (size_t i = 0; i < n; i++) F.region[i] = F.lidx[i] = -1;
  F.ext = rly_xcalloc(n, 1);
  F.groot = rly_xcalloc(n, sizeof(Expr *));
  F.new_of = rly_xcalloc(n, sizeof(Expr *));
  F.copy_of = rly_xcalloc(n, sizeof(Expr *));

  /* Regions, outer scopes first. */
  ExprVec scopes = {0};
  VEC_PUSH(&scopes, root);
  for (int i = 0; i < scopes.len; i++) discover(&F, scopes.data[i], &scopes);
  VEC_FREE(&scopes);

  /* Graph nodes, numbered per region. */
  int nregions = F.starts.len;
  int *count = rly_xcalloc((size_t)(nregions ? nregions : 1), sizeof(int));
  for (int i = 0; i < F.order.len; i++) {
    Expr *e = F.order.data[i];
    int p;
    if (graph_node(e, &p)) F.lidx[e->id] = count[F.region[e->id]]++;
  }
  free(count);

  /* Extern nodes: used by a boundary node, from another region or scope,
  ** or the root. */
  ExprVec all = {0};
  pass_postorder(root, &all);
  if (graph(&F, root)) F.ext[root->id] = 1;
  for (int i = 0; i < all.len; i++) {
    Expr *e = all.data[i];
    F.kids.len = 0;
    pass_kids(e, &F.kids);
    for (int k = 0; k < F.kids.len; k++) {
      Expr *a = F.kids.data[k];
      if (!graph(&F, a)) continue;
      if (!graph(&F, e) || F.region[e->id] != F.region[a->id]) F.ext[a->id] = 1;
    }
  }

  for (int r = 0; r < nregions; r++) partition(&F, r);

  /* Rewrite, children first. */
  for (int i = 0; i < all.len; i++) {
    Expr *e = all.data[i];
    Expr *r;
    if (pass_is_atom(e)) {
      r = e;
    } else if (graph(&F, e)) {
      Expr *g = F.groot[e->id];
      if (g != e) {
        r = NULL; /* a member: only its group's function uses it */
      } else if (e->kind == EXPR_CALL ||
                 (e->kind == EXPR_GET_ITEM && member(&F, e->u.get_item.tuple, e))) {
        r = make_group(&F, e);
      } else {
        r = rebuild(&F, e);
      }
    } else if (is_stop_fusion(e)) {
      r = F.new_of[e->u.call.args[0]->id];
    } else {
      r = rebuild(&F, e);
    }
    F.new_of[e->id] = r;
  }
  Expr *out = F.new_of[root->id];
  RLY_ASSERT(out != NULL);

  VEC_FREE(&all);
  VEC_FREE(&F.order);
  VEC_FREE(&F.starts);
  VEC_FREE(&F.kids);
  free(F.region);
  free(F.lidx);
  free(F.ext);
  free(F.groot);
  free(F.new_of);
  free(F.copy_of);
  return out;
}
