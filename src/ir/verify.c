/* verify.c: checks the invariants of ir.h on a whole module and reports each
** violation as a "verify: ..." error at the offending node's span.
**
** Checked:
** - ids: every reachable node's id is below m->nexprs, and no two distinct
**   reachable nodes share an id;
** - scopes: every use of a variable is in the scope of its binder (a let var
**   in its value, which allows recursive lets, and its body; params in the
**   function body; pattern vars in the clause body; the module's free vars
**   everywhere), and no variable is bound twice;
** - shapes of nodes: binders are EXPR_VARs, no NULL children, GET_ITEM index
**   >= 0, globals point to a definition of the same name, constructors sit
**   at index tag of their ADT, constructor patterns have the constructor's
**   arity, type calls name their ADT, constant data has numel * element
**   size bytes;
** - operator calls: nargs == op->nargs (when op->nargs >= 0) and the attrs'
**   class is op->attrs (an op without attrs class takes NULL or empty
**   attrs); attrs with a class hold one value per field and no keys,
**   attrs without one hold a key per value.
**
** Traversal: an explicit task stack on the heap (a 100,000-long let chain
** does not recurse in C). Variables are checked at every use; every other
** node is checked once, at its first occurrence (a DAG node used in two
** scopes is scope-checked in the first only). Types and patterns recurse
** (their depth is that of the source text). Tables indexed by id are heap
** arrays of m->nexprs entries, freed before returning. */
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "ir/ir.h"
#include "ir/walk.h"
#include "ir/schema.h" /* OpDef.nargs, OpDef.attrs, AttrsClass.nfields */

enum {
  S_VISITED = 1,   /* non-var node: checked */
  S_BOUND = 2,     /* var: met at a binder */
  S_REPORTED = 4,  /* var: a bad use was reported (once per var) */
};

typedef enum {
  V_VISIT,        /* check expression p and push its children */
  V_UNBIND,       /* var p leaves scope */
  V_CLAUSE,       /* match clause p: bind its pattern, check the body */
  V_UNBIND_PAT,   /* the vars of pattern p leave scope */
} VTaskKind;

typedef struct VTask {
  VTaskKind kind;
  const void *p;
} VTask;

typedef struct Verifier {
  const Module *m;
  Diag *d;
  const Expr **owner;  /* owner[id]: the node first seen with that id */
  uint8_t *state;      /* S_* flags per id */
  uint32_t *scope;     /* per var id: how many of its binders are open */
  int before;          /* errors in d when the check started */
  Vec(VTask) stack;
} Verifier;

static void task(Verifier *v, VTaskKind kind, const void *p) {
  VTask t = {kind, p};
  VEC_PUSH(&v->stack, t);
}

static const char *kind_name(const Expr *e) { return expr_kind_names[e->kind]; }

static const char *var_name(const Expr *e) {
  return e->u.var.name ? e->u.var.name->text : "(anonymous)";
}

/* Checks e's id; returns false when the id cannot index the tables. */
static bool check_id(Verifier *v, const Expr *e) {
  if (e->id >= v->m->nexprs) {
    diag_error(v->d, e->span, "verify: %s node has id %u, but the module has only %u ids",
               kind_name(e), (unsigned)e->id, (unsigned)v->m->nexprs);
    return false;
  }
  if (!v->owner[e->id]) {
    v->owner[e->id] = e;
  } else if (v->owner[e->id] != e) {
    diag_error(v->d, e->span, "verify: %s node has id %u, already used by a %s node", kind_name(e),
               (unsigned)e->id, kind_name(v->owner[e->id]));
    return false;
  }
  return true;
}

/* {==== Types ====} */

static void check_type(Verifier *v, const Type *t) {
  if (!t) return;
  switch (t->kind) {
  case TYPE_TENSOR:
    if (t->u.tensor.ndim < 0 || (t->u.tensor.ndim > 0 && !t->u.tensor.shape))
      diag_error(v->d, t->span, "verify: tensor type with ndim %d and no shape", t->u.tensor.ndim);
    break;
  case TYPE_TUPLE:
    for (int i = 0; i < t->u.tuple.n; i++) {
      if (!t->u.tuple.fields[i]) diag_error(v->d, t->span, "verify: tuple type field %d is NULL", i);
      check_type(v, t->u.tuple.fields[i]);
    }
    break;
  case TYPE_FUNC:
    for (int i = 0; i < t->u.func.ntparams; i++)
      if (!t->u.func.tparams[i] || t->u.func.tparams[i]->kind != TYPE_VAR)
        diag_error(v->d, t->span, "verify: type parameter %d of a function type is not a type var", i);
    for (int i = 0; i < t->u.func.nparams; i++) check_type(v, t->u.func.params[i]);
    check_type(v, t->u.func.ret);
    break;
  case TYPE_CALL:
    if (!t->u.call.adt)
      diag_error(v->d, t->span, "verify: type call %s has no ADT",
                 t->u.call.name ? t->u.call.name->text : "(unnamed)");
    for (int i = 0; i < t->u.call.nargs; i++) check_type(v, t->u.call.args[i]);
    break;
  case TYPE_REF: check_type(v, t->u.ref.elem); break;
  case TYPE_VAR:
  case TYPE_INCOMPLETE:
    break;
  case TYPE_KIND_COUNT: RLY_UNREACHABLE();
  }
}

/* {==== Scopes ====} */

static void bind(Verifier *v, const Expr *var, const char *what, Span at) {
  if (!var) {
    diag_error(v->d, at, "verify: %s binder is NULL", what);
    return;
  }
  if (var->kind != EXPR_VAR) {
    diag_error(v->d, var->span, "verify: %s binder is a %s node, not a Var", what, kind_name(var));
    return;
  }
  if (!check_id(v, var)) return;
  if (v->state[var->id] & S_BOUND)
    diag_error(v->d, var->span, "verify: variable %%%s is bound twice (%s)", var_name(var), what);
  v->state[var->id] |= S_BOUND;
  v->scope[var->id]++;
  check_type(v, var->u.var.annot);
}

/* Mirrors bind(): does nothing for a binder bind() rejected. */
static void unbind(Verifier *v, const Expr *var) {
  if (!var || var->kind != EXPR_VAR || var->id >= v->m->nexprs || v->owner[var->id] != var) return;
  if (v->scope[var->id]) v->scope[var->id]--;
}

static void use(Verifier *v, const Expr *var) {
  uint32_t id = var->id;
  if (v->scope[id] || (v->state[id] & S_REPORTED)) return;
  v->state[id] |= S_REPORTED;
  if (v->state[id] & S_BOUND)
    diag_error(v->d, var->span, "verify: variable %%%s is used outside the scope of its binder",
               var_name(var));
  else
    diag_error(v->d, var->span, "verify: variable %%%s is used where it is not bound", var_name(var));
}

/* {==== Constructors and patterns ====} */

static void check_ctor(Verifier *v, const Ctor *c, Span at) {
  if (!c) {
    diag_error(v->d, at, "verify: constructor is NULL");
    return;
  }
  const TypeDef *adt = c->adt;
  if (!adt)
    diag_error(v->d, at, "verify: constructor %s has no ADT", c->name->text);
  else if (c->tag < 0 || c->tag >= adt->nctors || adt->ctors[c->tag] != c)
    diag_error(v->d, at, "verify: constructor %s is not constructor %d of type %s", c->name->text,
               c->tag, adt->name->text);
}

static void bind_pattern(Verifier *v, const Pattern *p, Span at) {
  if (!p) {
    diag_error(v->d, at, "verify: match clause has a NULL pattern");
    return;
  }
  switch (p->kind) {
  case PAT_WILDCARD: break;
  case PAT_VAR: bind(v, p->u.var.var, "pattern", p->span); break;
  case PAT_CTOR: {
    const Ctor *c = p->u.ctor.ctor;
    check_ctor(v, c, p->span);
    if (c && p->u.ctor.n != c->nfields)
      diag_error(v->d, p->span, "verify: pattern %s has %d fields, the constructor has %d",
                 c->name->text, p->u.ctor.n, c->nfields);
    for (int i = 0; i < p->u.ctor.n; i++) bind_pattern(v, p->u.ctor.args[i], p->span);
    break;
  }
  case PAT_TUPLE:
    for (int i = 0; i < p->u.tuple.n; i++) bind_pattern(v, p->u.tuple.fields[i], p->span);
    break;
  case PAT_KIND_COUNT: RLY_UNREACHABLE();
  }
}

static void unbind_pattern(Verifier *v, const Pattern *p) {
  ExprVec vars = {0};
  ir_pattern_vars(p, &vars);
  for (int i = 0; i < vars.len; i++) unbind(v, vars.data[i]);
  VEC_FREE(&vars);
}

/* {==== Attributes ====} */

static void check_value(Verifier *v, const AttrValue *a, Span at) {
  if (!a) {
    diag_error(v->d, at, "verify: attribute value is NULL");
    return;
  }
  if (a->kind == AV_EXPR) {
    if (a->u.expr) task(v, V_VISIT, a->u.expr);
    else diag_error(v->d, a->span, "verify: expression attribute value is NULL");
  } else if (a->kind == AV_ARRAY) {
    for (int i = 0; i < a->u.arr.n; i++) check_value(v, a->u.arr.items[i], a->span);
  }
}

static void check_attrs(Verifier *v, const Attrs *a, Span at) {
  if (!a) return;
  if (a->n < 0 || (a->n > 0 && !a->values)) {
    diag_error(v->d, at, "verify: attrs with %d values and no value array", a->n);
    return;
  }
  if (a->cls) {
    if (a->n != a->cls->nfields)
      diag_error(v->d, at, "verify: %s attrs hold %d values, the class has %d fields", a->cls->name,
                 a->n, a->cls->nfields);
    if (a->keys) diag_error(v->d, at, "verify: %s attrs have keys (a class fixes them)", a->cls->name);
  } else if (a->n > 0 && !a->keys) {
    diag_error(v->d, at, "verify: attrs without class have no keys");
  }
  for (int i = 0; i < a->n; i++) {
    if (!a->cls && a->keys && !a->keys[i]) diag_error(v->d, at, "verify: attribute key %d is NULL", i);
    check_value(v, a->values[i], at);
  }
}

static void check_op_call(Verifier *v, const Expr *e, const OpDef *op) {
  const Attrs *a = e->u.call.attrs;
  if (op->nargs >= 0 && e->u.call.nargs != op->nargs)
    diag_error(v->d, e->span, "verify: call of %s has %d arguments, the operator takes %d", op->name,
               e->u.call.nargs, op->nargs);
  const AttrsClass *cls = a ? a->cls : NULL;
  if (cls == op->attrs) {
    if (!cls && a && a->n > 0)
      diag_error(v->d, e->span, "verify: call of %s has attributes, the operator takes none", op->name);
  } else if (!op->attrs) {
    diag_error(v->d, e->span, "verify: call of %s has %s attrs, the operator takes none", op->name,
               cls->name);
  } else {
    diag_error(v->d, e->span, "verify: call of %s has %s%s attrs, expected %s", op->name,
               cls ? cls->name : "untyped", a ? "" : " (NULL)", op->attrs->name);
  }
}

/* {==== Expressions ====} */

/* Reports a NULL child; returns true when c is present. */
static bool need(Verifier *v, const Expr *parent, const Expr *c, const char *what) {
  if (c) return true;
  diag_error(v->d, parent->span, "verify: %s node has a NULL %s", kind_name(parent), what);
  return false;
}

static void push_child(Verifier *v, const Expr *parent, const Expr *c, const char *what) {
  if (need(v, parent, c, what)) task(v, V_VISIT, c);
}

static void visit(Verifier *v, const Expr *e) {
  if (!check_id(v, e)) return;
  if (e->kind == EXPR_VAR) {
    use(v, e);
    return;
  }
  if (v->state[e->id] & S_VISITED) return;
  v->state[e->id] |= S_VISITED;
  check_type(v, e->type);
  switch (e->kind) {
  case EXPR_VAR: break;
  case EXPR_GLOBAL: {
    const GlobalDef *def = e->u.global.def;
    const char *name = e->u.global.name ? e->u.global.name->text : "(unnamed)";
    if (!def) diag_error(v->d, e->span, "verify: global @%s has no definition", name);
    else if (def->name != e->u.global.name)
      diag_error(v->d, e->span, "verify: global @%s points to the definition of @%s", name,
                 def->name ? def->name->text : "(unnamed)");
    break;
  }
  case EXPR_CONST: {
    const ConstData *c = e->u.constant.value;
    if (!c) {
      diag_error(v->d, e->span, "verify: constant without data");
      break;
    }
    bool dims_ok = c->ndim >= 0 && (c->ndim == 0 || c->shape);
    for (int i = 0; dims_ok && i < c->ndim; i++) dims_ok = c->shape[i] >= 0;
    if (!dims_ok) diag_error(v->d, e->span, "verify: constant with a bad shape (ndim %d)", c->ndim);
    else if (c->nbytes != (size_t)const_numel(c) * dtype_bytes(c->dtype) || (c->nbytes && !c->data))
      diag_error(v->d, e->span, "verify: constant holds %zu bytes, its shape and dtype need %zu",
                 c->nbytes, (size_t)const_numel(c) * dtype_bytes(c->dtype));
    break;
  }
  case EXPR_TUPLE:
    if (e->u.tuple.n > 0 && !e->u.tuple.fields) {
      diag_error(v->d, e->span, "verify: tuple of %d fields without a field array", e->u.tuple.n);
      break;
    }
    for (int i = e->u.tuple.n; i-- > 0;) push_child(v, e, e->u.tuple.fields[i], "field");
    break;
  case EXPR_GET_ITEM:
    if (e->u.get_item.index < 0)
      diag_error(v->d, e->span, "verify: tuple projection with index %d", e->u.get_item.index);
    push_child(v, e, e->u.get_item.tuple, "tuple");
    break;
  case EXPR_CALL: {
    const Expr *callee = e->u.call.callee;
    if (e->u.call.nargs > 0 && !e->u.call.args) {
      diag_error(v->d, e->span, "verify: call of %d arguments without an argument array", e->u.call.nargs);
      break;
    }
    if (callee && callee->kind == EXPR_OP && callee->u.op.op) check_op_call(v, e, callee->u.op.op);
    check_attrs(v, e->u.call.attrs, e->span);
    for (int i = e->u.call.nargs; i-- > 0;) push_child(v, e, e->u.call.args[i], "argument");
    push_child(v, e, callee, "callee");
    break;
  }
  case EXPR_LET:
    bind(v, e->u.let.var, "let", e->span);
    task(v, V_UNBIND, e->u.let.var);
    push_child(v, e, e->u.let.body, "body");
    push_child(v, e, e->u.let.value, "value");  /* in the var's scope: recursive let */
    break;
  case EXPR_IF:
    push_child(v, e, e->u.if_.else_, "else branch");
    push_child(v, e, e->u.if_.then_, "then branch");
    push_child(v, e, e->u.if_.cond, "condition");
    break;
  case EXPR_FUNC:
    if (e->u.func.nparams > 0 && !e->u.func.params) {
      diag_error(v->d, e->span, "verify: function of %d params without a param array", e->u.func.nparams);
      break;
    }
    for (int i = 0; i < e->u.func.ntparams; i++) {
      const Type *tp = e->u.func.tparams ? e->u.func.tparams[i] : NULL;
      if (!tp || tp->kind != TYPE_VAR)
        diag_error(v->d, e->span, "verify: type parameter %d of a function is not a type var", i);
    }
    for (int i = 0; i < e->u.func.nparams; i++) {
      bind(v, e->u.func.params[i], "parameter", e->span);
      task(v, V_UNBIND, e->u.func.params[i]);
    }
    check_type(v, e->u.func.ret);
    push_child(v, e, e->u.func.body, "body");
    check_attrs(v, e->u.func.attrs, e->span);  /* its expressions are checked before the body */
    break;
  case EXPR_OP:
    if (!e->u.op.op) diag_error(v->d, e->span, "verify: operator node without an operator");
    break;
  case EXPR_CTOR: check_ctor(v, e->u.ctor.ctor, e->span); break;
  case EXPR_MATCH:
    if (e->u.match.nclauses > 0 && !e->u.match.clauses) {
      diag_error(v->d, e->span, "verify: match of %d clauses without a clause array", e->u.match.nclauses);
      break;
    }
    for (int i = e->u.match.nclauses; i-- > 0;) task(v, V_CLAUSE, &e->u.match.clauses[i]);
    push_child(v, e, e->u.match.scrut, "scrutinee");
    break;
  case EXPR_REF_NEW: push_child(v, e, e->u.ref_new.value, "value"); break;
  case EXPR_REF_READ: push_child(v, e, e->u.ref_read.ref, "ref"); break;
  case EXPR_REF_WRITE:
    push_child(v, e, e->u.ref_write.value, "value");
    push_child(v, e, e->u.ref_write.ref, "ref");
    break;
  case EXPR_KIND_COUNT: RLY_UNREACHABLE();
  }
}

/* True once this check reported errors and d keeps no more. */
static bool give_up(const Verifier *v) { return diag_count(v->d) > v->before && diag_full(v->d); }

/* Runs the pending tasks (stops early once the error limit is reached). */
static void run(Verifier *v) {
  while (v->stack.len && !give_up(v)) {
    VTask t = VEC_POP(&v->stack);
    switch (t.kind) {
    case V_VISIT: visit(v, t.p); break;
    case V_UNBIND: unbind(v, t.p); break;
    case V_CLAUSE: {
      const Clause *c = t.p;
      Span at = c->pat ? c->pat->span : (c->body ? c->body->span : (Span){0});
      bind_pattern(v, c->pat, at);
      task(v, V_UNBIND_PAT, c->pat);
      if (c->body) task(v, V_VISIT, c->body);
      else diag_error(v->d, at, "verify: match clause has a NULL body");
      break;
    }
    case V_UNBIND_PAT: unbind_pattern(v, t.p); break;
    }
  }
  v->stack.len = 0;
}

/* {==== Module ====} */

static void check_typedef(Verifier *v, const TypeDef *td) {
  for (int i = 0; i < td->ntparams; i++)
    if (!td->tparams[i] || td->tparams[i]->kind != TYPE_VAR)
      diag_error(v->d, td->span, "verify: type parameter %d of %s is not a type var", i, td->name->text);
  for (int j = 0; j < td->nctors; j++) {
    const Ctor *c = td->ctors[j];
    if (!c) {
      diag_error(v->d, td->span, "verify: constructor %d of %s is NULL", j, td->name->text);
      continue;
    }
    if (c->adt != td || c->tag != j)
      diag_error(v->d, c->span, "verify: constructor %s of %s has tag %d and ADT %s (expected %d, %s)",
                 c->name->text, td->name->text, c->tag, c->adt ? c->adt->name->text : "NULL", j,
                 td->name->text);
    for (int i = 0; i < c->nfields; i++) check_type(v, c->fields[i]);
  }
}

bool ir_verify(const Module *m, Diag *d) {
  int before = diag_count(d);
  size_t n = m->nexprs ? m->nexprs : 1;
  Verifier v = {m, d, NULL, NULL, NULL, before, {0}};
  v.owner = rly_xcalloc(n, sizeof(Expr *));
  v.state = rly_xcalloc(n, 1);
  v.scope = rly_xcalloc(n, sizeof(uint32_t));
  for (int i = 0; i < m->ntypes; i++) check_typedef(&v, m->types[i]);
  for (int i = 0; i < m->nfree_vars; i++)  /* in scope everywhere: never unbound */
    bind(&v, m->free_vars[i], "free var", m->free_vars[i] ? m->free_vars[i]->span : (Span){0});
  for (int i = 0; i < m->ndefs && !give_up(&v); i++) {
    const GlobalDef *def = m->defs[i];
    if (!def->func || def->func->kind != EXPR_FUNC) {
      diag_error(d, def->span, "verify: definition @%s is not a function", def->name->text);
      if (!def->func) continue;
    }
    task(&v, V_VISIT, def->func);
    run(&v);
  }
  if (m->expr) {
    task(&v, V_VISIT, m->expr);
    run(&v);
  }
  VEC_FREE(&v.stack);
  free(v.owner);
  free(v.state);
  free(v.scope);
  return diag_count(d) == before;
}
