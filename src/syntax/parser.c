/* parser.c: Relay text -> untyped Module (spec sections 1-6).
**
** Recursive descent over the token array of lexer.c. Structure:
**   parse_module_files: each file is lexed and its version header read,
**     then two passes over the top level of all files, in order: pass 1
**     parses every `type`/`extern type` (so constructors are known wherever
**     they are used, in any file), pass 2 every `def` (or the expression of
**     an expression file) and then the file's own metadata section (meta
**     references of a file resolve in its section); then the deferred
**     resolutions of globals and ADT names, across files.
**   Errors: a syntax error longjmps to the definition being parsed, and the
**   parser skips to the next `def`/`type`/`extern`, so independent errors
**   in several definitions are all reported. Name errors do not stop the
**   parse.
** Invariants relied on: the arena owns every node (a longjmp leaks
** nothing); the parser's own stacks (scopes, frames) are reset on recovery.
** Let chains and `;` sequences are parsed by a loop, not by recursion; the
** nesting of everything else is bounded by MAX_DEPTH. */
#include "syntax/parser.h"

#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/ops.h"
#include "syntax/lexer.h"

enum { MAX_DEPTH = 256 }; /* nested expressions, types, patterns, attribute values */

typedef struct Binding {
  Symbol *name;
  Expr *var;
  int prev;  /* scope: index of the binding this one shadows, or -1 */
} Binding;

/* Symbol -> index of its innermost binding in Parser.scope (open
** addressing by pointer; heap, freed with the parser). */
typedef struct ScopeMap {
  Symbol **keys;
  int *vals;
  uint32_t cap, count;
} ScopeMap;

typedef struct TypeBinding {
  Symbol *name;
  Type *var;
} TypeBinding;

typedef struct LetFrame {
  Expr *var;     /* NULL: `e;` sequencing */
  Expr *value;
  Span span;
} LetFrame;

typedef struct PendingAttrs {
  Expr *call;
  const Token *tok;  /* the META token */
} PendingAttrs;

typedef struct TypeRange {
  int start, end;  /* token range of a type definition parsed in pass 1 */
} TypeRange;

/* One input file: its tokens and what the look at its header found. */
typedef struct FileState {
  uint32_t file;
  const Source *src;
  TokenList tl;
  int body_start;          /* the first token after the version header */
  bool expr_mode;          /* an expression file (no def/type) */
  bool parse_expr;         /* expression mode with something to parse */
  int errors;              /* errors while lexing it and reading its header */
  size_t meta_at;          /* where its metadata section's text starts; 0: none */
  Vec(TypeRange) type_ranges;
} FileState;

typedef struct Parser {
  const SourceMap *sm;
  const Source *src;           /* the file being parsed */
  uint32_t file;
  int nfiles;
  Diag *d;
  Module *m;
  Token *toks;
  int ntoks, pos;
  int depth;
  bool expr_mode;
  jmp_buf bail;
  Vec(Binding) scope;          /* local variables, innermost last */
  ScopeMap smap;               /* name -> innermost binding in scope */
  Vec(Binding) free_vars;
  Vec(TypeBinding) tscope;     /* type variables, innermost last */
  Vec(LetFrame) frames;        /* pending lets of the expressions being parsed */
  Vec(Expr *) graph;           /* %N -> node, per definition */
  Vec(Expr *) globals;         /* EXPR_GLOBAL uses to resolve */
  Vec(Type *) tcalls;          /* TYPE_CALL uses to resolve */
  Vec(Expr *) meta_consts;     /* meta[relay.Constant][i] -> node (value set later) */
  Vec(Span) meta_spans;        /* first use of each meta constant */
  Vec(PendingAttrs) meta_attrs;
  double meta_ms;              /* time spent reading metadata sections (parse_module_files_timed) */
  Vec(GlobalDef *) defs;
  Vec(TypeDef *) types;
  GlobalDef *expr_main;        /* @main made of an expression file, if any */
} Parser;

/* {==== Tokens and errors ====} */

static Token *cur(Parser *p) { return &p->toks[p->pos]; }

static Token *peek(Parser *p, int k) {
  int i = p->pos + k;
  return &p->toks[i < p->ntoks ? i : p->ntoks - 1];
}

static Token *advance(Parser *p) {
  Token *t = &p->toks[p->pos];
  if (t->kind != TOK_EOF) p->pos++;
  return t;
}

static bool at(Parser *p, TokKind k) { return cur(p)->kind == k; }

static bool accept(Parser *p, TokKind k) {
  if (!at(p, k)) return false;
  advance(p);
  return true;
}

/* Describes a token for messages: 'text' (truncated) or "end of file". */
static const char *describe(const Token *t, char *buf, size_t n) {
  switch (t->kind) {
  case TOK_EOF: return "end of file";
  case TOK_METADATA: return "'#[metadata]'";
  case TOK_STRING: return "a string";
  default: break;
  }
  size_t len = t->span.len;
  if (len == 0) return tok_kind_desc[t->kind];
  const char *s = t->start;
  /* Only the first line of a token, and no more than 40 bytes. */
  size_t k = 0;
  while (k < len && s[k] != '\n') k++;
  if (k > 40) k = 40;
  snprintf(buf, n, "'%.*s%s'", (int)k, s, k < len ? "..." : "");
  return buf;
}

RLY_NORETURN static void bail(Parser *p) { longjmp(p->bail, 1); }

/* Reports "expected WHAT but found X" at the current token (unless the
** lexer already reported it) and abandons the current definition. */
RLY_NORETURN static void expected(Parser *p, const char *what) {
  Token *t = cur(p);
  if (t->kind != TOK_ERROR) {
    char buf[64];
    diag_error(p->d, t->span, "expected %s but found %s", what, describe(t, buf, sizeof buf));
  }
  bail(p);
}

static Token *expect(Parser *p, TokKind k) {
  if (!at(p, k)) expected(p, tok_kind_desc[k]);
  return advance(p);
}

/* `->`: the two characters may be separated by whitespace (TVM quirk). */
static bool accept_arrow(Parser *p) {
  if (at(p, TOK_MINUS) && peek(p, 1)->kind == TOK_GT) {
    p->pos += 2;
    return true;
  }
  return false;
}

static void enter(Parser *p) {
  if (++p->depth > MAX_DEPTH) {
    diag_error(p->d, cur(p)->span, "nesting too deep (more than %d levels)", MAX_DEPTH);
    bail(p);
  }
}

static void leave(Parser *p) { p->depth--; }

static Symbol *intern(Parser *p, const char *s, size_t n) { return sym_intern(&p->m->syms, s, n); }

static Symbol *tok_name(Parser *p, const Token *t) { return intern(p, t->u.name.s, t->u.name.len); }

static bool ident_is(const Token *t, const char *w) {
  return t->kind == TOK_IDENT && t->u.name.len == strlen(w) && memcmp(t->u.name.s, w, t->u.name.len) == 0;
}

static Span span_from(const Token *first, const Token *last) {
  Span s = first->span;
  if (last->span.line == s.line && last->span.col >= s.col) s.len = last->span.col + last->span.len - s.col;
  return s;
}

/* {==== Scopes ====} */

static uint32_t smap_slot(const ScopeMap *sm, Symbol *name) {
  uint32_t i = name->hash & (sm->cap - 1);
  while (sm->keys[i] && sm->keys[i] != name) i = (i + 1) & (sm->cap - 1);
  return i;
}

static int smap_get(const ScopeMap *sm, Symbol *name) {
  if (!sm->cap) return -1;
  uint32_t i = smap_slot(sm, name);
  return sm->keys[i] ? sm->vals[i] : -1;
}

static void smap_put(ScopeMap *sm, Symbol *name, int v) {
  if ((sm->count + 1) * 2 > sm->cap) {
    ScopeMap bigger = {0};
    bigger.cap = sm->cap ? sm->cap * 2 : 64;
    bigger.keys = rly_xcalloc(bigger.cap, sizeof(Symbol *));
    bigger.vals = rly_xcalloc(bigger.cap, sizeof(int));
    for (uint32_t k = 0; k < sm->cap; k++)
      if (sm->keys[k]) {
        uint32_t j = smap_slot(&bigger, sm->keys[k]);
        bigger.keys[j] = sm->keys[k];
        bigger.vals[j] = sm->vals[k];
        bigger.count++;
      }
    free(sm->keys);
    free(sm->vals);
    *sm = bigger;
  }
  uint32_t i = smap_slot(sm, name);
  if (!sm->keys[i]) {
    sm->keys[i] = name;
    sm->count++;
  }
  sm->vals[i] = v;
}

static void declare(Parser *p, Symbol *name, Expr *var) {
  Binding b = {name, var, smap_get(&p->smap, name)};
  VEC_PUSH(&p->scope, b);
  smap_put(&p->smap, name, p->scope.len - 1);
}

/* Leaves scopes: drops the bindings from index len on. */
static void scope_truncate(Parser *p, int len) {
  while (p->scope.len > len) {
    Binding *b = &p->scope.data[--p->scope.len];
    smap_put(&p->smap, b->name, b->prev);
  }
}

static Expr *lookup_var(Parser *p, Symbol *name) {
  int i = smap_get(&p->smap, name);
  if (i >= 0) return p->scope.data[i].var;
  for (int k = p->free_vars.len - 1; k >= 0; k--)
    if (p->free_vars.data[k].name == name) return p->free_vars.data[k].var;
  return NULL;
}

static Type *lookup_tvar(Parser *p, Symbol *name) {
  for (int i = p->tscope.len - 1; i >= 0; i--)
    if (p->tscope.data[i].name == name) return p->tscope.data[i].var;
  return NULL;
}

/* {==== Types ====} */

static Type *parse_type(Parser *p);

/* type_params = '[' ( IDENT (',' IDENT)* ','? )? ']'. Pushes the binders
** on the type scope (the caller pops). */
static Type **parse_type_params(Parser *p, int *n) {
  Vec(Type *) ps = {0};
  expect(p, TOK_LBRACKET);
  while (!at(p, TOK_RBRACKET)) {
    Token *t = expect(p, TOK_IDENT);
    Type *tv = ir_type_new(p->m, TYPE_VAR, t->span);
    tv->u.var.name = tok_name(p, t);
    AVEC_PUSH(p->m->arena, &ps, tv);
    TypeBinding b = {tv->u.var.name, tv};
    VEC_PUSH(&p->tscope, b);
    if (!accept(p, TOK_COMMA)) break;
  }
  if (!at(p, TOK_RBRACKET)) {
    expected(p, "',' or ']'");
  }
  advance(p);
  Type **arr = ps.data;
  *n = ps.len;
  return arr;
}

/* Types separated by commas up to `close` (consumed). */
static Type **parse_type_list(Parser *p, TokKind close, int *n, bool *trailing_comma) {
  Vec(Type *) ts = {0};
  *trailing_comma = false;
  while (!at(p, close)) {
    Type *t = parse_type(p);
    AVEC_PUSH(p->m->arena, &ts, t);
    if (!accept(p, TOK_COMMA)) break;
    if (at(p, close)) *trailing_comma = true;
  }
  if (!at(p, close)) {
    expected(p, close == TOK_RPAREN ? "',' or ')'" : "',' or ']'");
  }
  advance(p);
  Type **arr = ts.data;
  *n = ts.len;
  return arr;
}

/* shape = '(' ( dim ( ',' dim )* ','? )? ')' ; dim = INTEGER | '?' | META */
static Type *parse_tensor_type(Parser *p, Token *kw) {
  expect(p, TOK_LBRACKET);
  expect(p, TOK_LPAREN);
  Vec(int64_t) dims = {0};
  while (!at(p, TOK_RPAREN)) {
    Token *t = cur(p);
    if (t->kind == TOK_INT) {
      if (t->u.i.v < 0) {
        diag_error(p->d, t->span, "negative dimension %lld", (long long)t->u.i.v);
      }
      AVEC_PUSH(p->m->arena, &dims, t->u.i.v < 0 ? 0 : t->u.i.v);
    } else if (t->kind == TOK_QUESTION) {
      AVEC_PUSH(p->m->arena, &dims, (int64_t)RLY_DIM_ANY);
    } else if (t->kind == TOK_META) {
      AVEC_PUSH(p->m->arena, &dims, (int64_t)RLY_DIM_ANY);  /* symbolic dimension: treated as unknown */
    } else {
      expected(p, "a dimension (an integer or '?')");
    }
    advance(p);
    if (!accept(p, TOK_COMMA)) break;
  }
  if (!at(p, TOK_RPAREN)) {
    expected(p, "',' or ')'");
  }
  advance(p);
  if (!at(p, TOK_COMMA)) {
    expected(p, "','");
  }
  advance(p);
  Token *dt = cur(p);
  DType dtype = DTYPE(DT_FLOAT, 32);
  if (dt->kind != TOK_IDENT) {
    expected(p, "a dtype");
  }
  if (!dtype_parse(dt->u.name.s, dt->u.name.len, &dtype))
    diag_error(p->d, dt->span, "unknown dtype '%.*s'", (int)dt->u.name.len, dt->u.name.s);
  advance(p);
  Token *close = cur(p);
  if (!at(p, TOK_RBRACKET)) {
    expected(p, "']'");
  }
  advance(p);
  Type *t = ir_tensor_type(p->m, span_from(kw, close), dtype, dims.len, dims.data);
  return t;
}

/* Is the identifier a scalar dtype spelling (by TVM's prefix rule)? */
static bool looks_like_dtype(const Token *t) {
  static const char *prefixes[] = {"int", "uint", "float", "bfloat", "bool"};
  for (size_t i = 0; i < RLY_COUNTOF(prefixes); i++) {
    size_t n = strlen(prefixes[i]);
    if (t->u.name.len >= n && memcmp(t->u.name.s, prefixes[i], n) == 0) {
      if (t->u.name.len == n) return strcmp(prefixes[i], "bool") == 0;
      char c = t->u.name.s[n];
      return c >= '0' && c <= '9';
    }
  }
  return false;
}

/* type = '(' types ')' | 'fn' tparams? '(' types ')' '->' type
**      | 'Tensor' '[' shape ',' DTYPE ']' | SCALAR_DTYPE | 'ref' '(' type ')'
**      | IDENT ( '[' types ']' )? | '_' */
static Type *parse_type(Parser *p) {
  enter(p);
  Token *t = cur(p);
  Type *ty = NULL;
  if (t->kind == TOK_LPAREN) {
    advance(p);
    ty = ir_type_new(p->m, TYPE_TUPLE, t->span);
    bool trailing;
    ty->u.tuple.fields = parse_type_list(p, TOK_RPAREN, &ty->u.tuple.n, &trailing);
  } else if (t->kind == TOK_FN) {
    advance(p);
    ty = ir_type_new(p->m, TYPE_FUNC, t->span);
    int tmark = p->tscope.len;
    if (at(p, TOK_LBRACKET)) ty->u.func.tparams = parse_type_params(p, &ty->u.func.ntparams);
    expect(p, TOK_LPAREN);
    bool trailing;
    ty->u.func.params = parse_type_list(p, TOK_RPAREN, &ty->u.func.nparams, &trailing);
    if (!accept_arrow(p)) expected(p, "'->'");
    ty->u.func.ret = parse_type(p);
    p->tscope.len = tmark;
  } else if (t->kind == TOK_REF) {
    advance(p);
    expect(p, TOK_LPAREN);
    ty = ir_type_new(p->m, TYPE_REF, t->span);
    ty->u.ref.elem = parse_type(p);
    expect(p, TOK_RPAREN);
  } else if (t->kind == TOK_IDENT) {
    advance(p);
    DType dt;
    if (ident_is(t, "_")) {
      ty = ir_incomplete_type(p->m, t->span);
    } else if (ident_is(t, "Tensor")) {
      ty = parse_tensor_type(p, t);
    } else if (dtype_parse(t->u.name.s, t->u.name.len, &dt)) {
      ty = ir_tensor_type(p->m, t->span, dt, 0, NULL);
    } else if (looks_like_dtype(t)) {
      diag_error(p->d, t->span, "unknown dtype '%.*s'", (int)t->u.name.len, t->u.name.s);
      ty = ir_incomplete_type(p->m, t->span);
    } else {
      Symbol *name = tok_name(p, t);
      Type *tv = lookup_tvar(p, name);
      if (tv && !at(p, TOK_LBRACKET)) {
        ty = tv;
      } else {
        ty = ir_type_new(p->m, TYPE_CALL, t->span);
        ty->u.call.name = name;
        if (accept(p, TOK_LBRACKET)) {
          bool trailing;
          ty->u.call.args = parse_type_list(p, TOK_RBRACKET, &ty->u.call.nargs, &trailing);
        }
        VEC_PUSH(&p->tcalls, ty);
      }
    }
  } else {
    expected(p, "a type");
  }
  leave(p);
  return ty;
}

/* {==== Attributes ====} */

static Expr *parse_atom(Parser *p);

/* attr_value = INTEGER | FLOAT | BOOLEAN | STRING | META | '[' values ']'
**            | '(' attr_value ')' | 'None' | 'nullptr' | atom */
static AttrValue *parse_attr_value(Parser *p) {
  enter(p);
  Token *t = cur(p);
  AttrValue *v;
  switch (t->kind) {
  case TOK_INT:
    v = ir_attr_value_new(p->m, AV_INT, t->span);
    v->u.i.v = t->u.i.v;
    v->u.i.bits = t->u.i.dt.bits;
    advance(p);
    break;
  case TOK_FLOAT:
    v = ir_attr_value_new(p->m, AV_FLOAT, t->span);
    v->u.f.v = t->u.f.v;
    v->u.f.bits = t->u.f.dt.bits;
    advance(p);
    break;
  case TOK_STRING: {
    v = ir_attr_value_new(p->m, AV_STR, t->span);
    size_t len = 0;
    char *s = lex_decode_string(p->m->arena, t, &len, p->d);
    v->u.str.s = s ? s : "";
    v->u.str.len = s ? len : 0;
    advance(p);
    break;
  }
  case TOK_META:
    v = ir_attr_value_new(p->m, AV_META, t->span);
    v->u.meta.key = intern(p, t->u.meta.key, t->u.meta.keylen);
    v->u.meta.index = t->u.meta.index;
    advance(p);
    break;
  case TOK_LBRACKET: {
    advance(p);
    v = ir_attr_value_new(p->m, AV_ARRAY, t->span);
    Vec(AttrValue *) items = {0};
    while (!at(p, TOK_RBRACKET)) {
      AttrValue *item = parse_attr_value(p);
      AVEC_PUSH(p->m->arena, &items, item);
      if (!accept(p, TOK_COMMA)) break;
    }
    if (!at(p, TOK_RBRACKET)) {
      expected(p, "',' or ']'");
    }
    advance(p);
    v->u.arr.items = items.data;
    v->u.arr.n = items.len;
    break;
  }
  case TOK_LPAREN:
    advance(p);
    v = parse_attr_value(p);
    expect(p, TOK_RPAREN);
    break;
  default:
    if (ident_is(t, "True") || ident_is(t, "False")) {
      v = ir_attr_value_new(p->m, AV_BOOL, t->span);
      v->u.b = ident_is(t, "True");
      advance(p);
    } else if (ident_is(t, "None") || ident_is(t, "nullptr")) {
      v = ir_attr_value_new(p->m, AV_NONE, t->span);
      advance(p);
    } else if (t->kind == TOK_QUESTION) {
      expected(p, "an attribute value ('?' is not one)");
    } else {
      v = ir_attr_value_new(p->m, AV_EXPR, t->span);
      v->u.expr = parse_atom(p);
    }
    break;
  }
  leave(p);
  return v;
}

/* Does an attribute (qual_name '=' but not '==') start here? */
static bool at_attr_start(Parser *p) {
  int k = 0;
  if (peek(p, k)->kind != TOK_IDENT) return false;
  k++;
  while (peek(p, k)->kind == TOK_PERIOD && peek(p, k + 1)->kind == TOK_IDENT) k += 2;
  if (peek(p, k)->kind != TOK_EQUAL) return false;
  Token *next = peek(p, k + 1);
  return !(next->kind == TOK_EQUAL && !next->space_before);
}

typedef struct KeyVals {
  Vec(Symbol *) keys;
  Vec(AttrValue *) values;
  Vec(Span) spans;
} KeyVals;


/* attr = qual_name '=' attr_value. Appends to kv. Stops before `close`.
** attr_list = attr ( ','? attr )* ; a trailing ',' is allowed. */
static void parse_attr_list(Parser *p, KeyVals *kv, TokKind close) {
  while (at_attr_start(p)) {
    Token *first = advance(p);
    Token *last = first;
    while (at(p, TOK_PERIOD)) {
      advance(p);
      last = advance(p);
    }
    size_t len = (size_t)(last->start + last->span.len - first->start);
    Symbol *key = intern(p, first->start, len);
    advance(p); /* '=' */
    AttrValue *v = parse_attr_value(p);
    AVEC_PUSH(p->m->arena, &kv->keys, key);
    AVEC_PUSH(p->m->arena, &kv->values, v);
    AVEC_PUSH(p->m->arena, &kv->spans, span_from(first, last));
    if (!accept(p, TOK_COMMA) && !at(p, close) && !at_attr_start(p)) break;
  }
}

/* Attributes as written (no class): function attrs, non-op call attrs. */
static Attrs *generic_attrs(Parser *p, KeyVals *kv) {
  if (!kv->keys.len) return NULL;
  for (int i = 0; i < kv->keys.len; i++)
    for (int j = 0; j < i; j++)
      if (kv->keys.data[i] == kv->keys.data[j])
        diag_error(p->d, kv->spans.data[i], "duplicate attribute '%s'", kv->keys.data[i]->text);
  Attrs *a = ARENA_NEW(p->m->arena, Attrs);
  a->n = kv->keys.len;
  a->keys = kv->keys.data;
  a->values = kv->values.data;
  return a;
}

/* {==== Expressions ====} */

static Expr *parse_expr(Parser *p);
static Expr *parse_infix(Parser *p);
static Expr *parse_call(Parser *p);
static Expr *parse_func(Parser *p, Token *start);

static Expr *scalar_const(Parser *p, Token *t) {
  DType dt;
  if (t->kind == TOK_INT) {
    dt = t->u.i.dt;
    int64_t v = t->u.i.v;
    if (dt.bits == 16) {
      int16_t x = (int16_t)v;
      return ir_const_scalar(p->m, t->span, dt, &x);
    } else if (dt.bits == 32) {
      int32_t x = (int32_t)v;
      return ir_const_scalar(p->m, t->span, dt, &x);
    }
    return ir_const_scalar(p->m, t->span, dt, &v);
  }
  dt = t->u.f.dt;
  double v = t->u.f.v;
  if (dt.bits == 16) {
    uint16_t h = half_from_double(v);
    return ir_const_scalar(p->m, t->span, dt, &h);
  } else if (dt.bits == 32) {
    float f = (float)v;
    return ir_const_scalar(p->m, t->span, dt, &f);
  }
  return ir_const_scalar(p->m, t->span, dt, &v);
}

/* A `%name` use: the longest dotted candidate that is declared wins; the
** rest must be `.INDEX` projections (spec 5.7). */
static Expr *parse_local_use(Parser *p, Token *t) {
  const char *s = t->u.name.s;
  uint32_t len = t->u.name.len;
  for (;;) {
    Expr *var = lookup_var(p, intern(p, s, len));
    bool rest_ok = true;
    for (uint32_t i = len; i < t->u.name.len; i++)
      if (s[i] != '.' && (s[i] < '0' || s[i] > '9')) rest_ok = false;
    if (var && rest_ok) {
      Expr *e = var;
      uint32_t i = len;
      while (i < t->u.name.len) {
        i++; /* '.' */
        int64_t idx = 0;
        while (i < t->u.name.len && s[i] != '.') {
          if (idx < 100000000) idx = idx * 10 + (s[i] - '0');
          i++;
        }
        e = ir_get_item(p->m, t->span, e, (int)idx);
      }
      return e;
    }
    if (len <= t->u.name.base_len) break;
    while (len > t->u.name.base_len && s[len - 1] != '.') len--;
    len--; /* drop the '.' */
  }
  /* Name the variable without its numeric projection tail. */
  uint32_t shown = t->u.name.len;
  for (;;) {
    uint32_t k = shown;
    while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9') k--;
    if (k > t->u.name.base_len && k < shown && s[k - 1] == '.') shown = k - 1;
    else break;
  }
  diag_error(p->d, t->span, "unbound variable '%%%.*s'", (int)shown, s);
  return ir_var(p->m, t->span, intern(p, s, shown), NULL);
}

/* IDENT ('.' IDENT)*: a constructor or an operator. */
static Expr *parse_name(Parser *p) {
  Token *first = advance(p);
  Token *last = first;
  if (ident_is(first, "True") || ident_is(first, "False")) {
    uint8_t b = ident_is(first, "True");
    return ir_const_scalar(p->m, first->span, DTYPE(DT_UINT, 1), &b);
  }
  while (at(p, TOK_PERIOD) && peek(p, 1)->kind == TOK_IDENT) {
    advance(p);
    last = advance(p);
  }
  size_t len = (size_t)(last->start + last->span.len - first->start);
  Span sp = span_from(first, last);
  if (first == last) {
    Ctor *c = module_find_ctor(p->m, tok_name(p, first));
    if (c) {
      Expr *e = ir_expr_new(p->m, EXPR_CTOR, sp);
      e->u.ctor.ctor = c;
      if (c->nfields == 0) {
        /* Nullary constructors are values: `Nil` means `Nil()`. */
        if (at(p, TOK_LPAREN) && peek(p, 1)->kind == TOK_RPAREN) p->pos += 2;
        return ir_call(p->m, sp, e, NULL, 0, NULL);
      }
      return e;
    }
  }
  const OpDef *op = op_lookup(first->start, len);
  if (op) return ir_op(p->m, sp, op);
  if (first == last && first->start[0] >= 'A' && first->start[0] <= 'Z') {
    diag_error(p->d, sp, "unknown constructor '%.*s'", (int)len, first->start);
  } else {
    const OpDef *near = op_suggest(first->start, len);
    if (near)
      diag_error(p->d, sp, "unknown operator '%.*s'; did you mean '%s'?", (int)len, first->start, near->name);
    else
      diag_error(p->d, sp, "unknown operator '%.*s'", (int)len, first->start);
  }
  return ir_tuple(p->m, sp, NULL, 0);
}

/* pattern = '_' | LOCAL (':' type)? | IDENT ('(' patterns ')')? | '(' patterns ')' */
static Pattern *parse_pattern(Parser *p) {
  enter(p);
  Token *t = cur(p);
  Pattern *pat;
  if (ident_is(t, "_")) {
    advance(p);
    pat = ir_pattern_new(p->m, PAT_WILDCARD, t->span);
  } else if (t->kind == TOK_LOCAL) {
    advance(p);
    pat = ir_pattern_new(p->m, PAT_VAR, t->span);
    Symbol *name = tok_name(p, t);
    Type *annot = NULL;
    if (accept(p, TOK_COLON)) annot = parse_type(p);
    pat->u.var.var = ir_var(p->m, t->span, name, annot);
    declare(p, name, pat->u.var.var);
  } else if (t->kind == TOK_IDENT || t->kind == TOK_LPAREN) {
    advance(p);
    Ctor *c = NULL;
    if (t->kind == TOK_IDENT) {
      c = module_find_ctor(p->m, tok_name(p, t));
      if (!c) {
        if (t->start[0] >= 'A' && t->start[0] <= 'Z')
          diag_error(p->d, t->span, "unknown constructor '%.*s'", (int)t->u.name.len, t->u.name.s);
        else
          diag_error(p->d, t->span, "pattern variable needs '%%': '%.*s'", (int)t->u.name.len, t->u.name.s);
      }
    }
    Vec(Pattern *) subs = {0};
    bool has_parens = t->kind == TOK_LPAREN || accept(p, TOK_LPAREN);
    if (has_parens) {
      while (!at(p, TOK_RPAREN)) {
        Pattern *sub = parse_pattern(p);
        AVEC_PUSH(p->m->arena, &subs, sub);
        if (!accept(p, TOK_COMMA)) break;
      }
      if (!at(p, TOK_RPAREN)) {
        expected(p, "',' or ')'");
      }
      advance(p);
    }
    Pattern **arr = subs.data;
    int n = subs.len;
    if (t->kind == TOK_LPAREN) {
      pat = ir_pattern_new(p->m, PAT_TUPLE, t->span);
      pat->u.tuple.fields = arr;
      pat->u.tuple.n = n;
    } else if (!c) {
      pat = ir_pattern_new(p->m, PAT_WILDCARD, t->span);
    } else {
      if (n != c->nfields)
        diag_error(p->d, t->span, "constructor %s has %d field%s, but the pattern gives %d", c->name->text,
                   c->nfields, c->nfields == 1 ? "" : "s", n);
      pat = ir_pattern_new(p->m, PAT_CTOR, t->span);
      pat->u.ctor.ctor = c;
      pat->u.ctor.args = arr;
      pat->u.ctor.n = n;
    }
  } else {
    expected(p, "a pattern");
  }
  leave(p);
  return pat;
}

/* 'match' atom '{' ( pattern '=>' expr ( ',' pattern '=>' expr )* ','? )? '}' */
static Expr *parse_match(Parser *p, Token *kw) {
  Expr *e = ir_expr_new(p->m, EXPR_MATCH, kw->span);
  e->u.match.complete = kw->kind == TOK_MATCH;
  e->u.match.scrut = parse_call(p);
  expect(p, TOK_LBRACE);
  Vec(Clause) clauses = {0};
  while (!at(p, TOK_RBRACE)) {
    int mark = p->scope.len;
    Clause c;
    c.pat = parse_pattern(p);
    if (!(at(p, TOK_EQUAL) && peek(p, 1)->kind == TOK_GT && !peek(p, 1)->space_before)) {
      expected(p, "'=>'");
    }
    p->pos += 2;
    c.body = parse_expr(p);
    scope_truncate(p, mark);
    AVEC_PUSH(p->m->arena, &clauses, c);
    if (!accept(p, TOK_COMMA) && !at(p, TOK_RBRACE)) {
      /* Clauses without commas are accepted when the body was a block. */
      if (p->toks[p->pos - 1].kind != TOK_RBRACE) {
        expected(p, "',' or '}'");
      }
    }
  }
  advance(p);
  e->u.match.clauses = clauses.data;
  e->u.match.nclauses = clauses.len;
  return e;
}

static Expr *parse_block(Parser *p) {
  expect(p, TOK_LBRACE);
  Expr *e = parse_expr(p);
  expect(p, TOK_RBRACE);
  return e;
}

/* primary = literal | LOCAL | GLOBAL | GRAPH | META | qual_name | 'fn' ...
**         | 'if' ... | 'match' ... | 'ref' ... | '(' ... ')' | '{' expr '}' */
static Expr *parse_primary(Parser *p) {
  enter(p);
  Token *t = cur(p);
  Expr *e = NULL;
  switch (t->kind) {
  case TOK_INT:
  case TOK_FLOAT:
    advance(p);
    e = scalar_const(p, t);
    break;
  case TOK_LOCAL:
    advance(p);
    e = parse_local_use(p, t);
    break;
  case TOK_GLOBAL:
    advance(p);
    e = ir_expr_new(p->m, EXPR_GLOBAL, t->span);
    e->u.global.name = tok_name(p, t);
    VEC_PUSH(&p->globals, e);
    break;
  case TOK_GRAPH: {
    advance(p);
    int64_t n = t->u.i.v;
    if (n < p->graph.len && p->graph.data[n]) {
      e = p->graph.data[n];
    } else {
      diag_error(p->d, t->span, "graph binding %%%lld used before it is defined", (long long)n);
      e = ir_tuple(p->m, t->span, NULL, 0);
    }
    break;
  }
  case TOK_META: {
    advance(p);
    if (t->u.meta.keylen != 14 || memcmp(t->u.meta.key, "relay.Constant", 14) != 0) {
      diag_error(p->d, t->span, "meta[%.*s][%lld] is not an expression (only meta[relay.Constant][i] is)",
                 (int)t->u.meta.keylen, t->u.meta.key, (long long)t->u.meta.index);
      e = ir_tuple(p->m, t->span, NULL, 0);
      break;
    }
    int64_t i = t->u.meta.index;
    if (i > 100000000) {
      diag_error(p->d, t->span, "meta index %lld is too large", (long long)i);
      e = ir_tuple(p->m, t->span, NULL, 0);
      break;
    }
    while (p->meta_consts.len <= i) {
      VEC_PUSH(&p->meta_consts, NULL);
      Span none = {0, 0, 0, 0};
      VEC_PUSH(&p->meta_spans, none);
    }
    if (!p->meta_consts.data[i]) {
      p->meta_consts.data[i] = ir_const(p->m, t->span, NULL);
      p->meta_spans.data[i] = t->span;
    }
    e = p->meta_consts.data[i];
    break;
  }
  case TOK_IDENT:
    e = parse_name(p);
    break;
  case TOK_FN:
    advance(p);
    e = parse_func(p, t);
    break;
  case TOK_IF: {
    advance(p);
    e = ir_expr_new(p->m, EXPR_IF, t->span);
    expect(p, TOK_LPAREN);
    e->u.if_.cond = parse_expr(p);
    expect(p, TOK_RPAREN);
    e->u.if_.then_ = parse_block(p);
    expect(p, TOK_ELSE);
    e->u.if_.else_ = parse_block(p);
    break;
  }
  case TOK_MATCH:
  case TOK_MATCH_PARTIAL:
    advance(p);
    e = parse_match(p, t);
    break;
  case TOK_REF:
    advance(p);
    expect(p, TOK_LPAREN);
    e = ir_expr_new(p->m, EXPR_REF_NEW, t->span);
    e->u.ref_new.value = parse_expr(p);
    expect(p, TOK_RPAREN);
    break;
  case TOK_REF_READ:
    advance(p);
    expect(p, TOK_LPAREN);
    e = ir_expr_new(p->m, EXPR_REF_READ, t->span);
    e->u.ref_read.ref = parse_expr(p);
    expect(p, TOK_RPAREN);
    break;
  case TOK_REF_WRITE:
    advance(p);
    expect(p, TOK_LPAREN);
    e = ir_expr_new(p->m, EXPR_REF_WRITE, t->span);
    e->u.ref_write.ref = parse_expr(p);
    expect(p, TOK_COMMA);
    e->u.ref_write.value = parse_expr(p);
    expect(p, TOK_RPAREN);
    break;
  case TOK_LPAREN: {
    advance(p);
    if (at(p, TOK_RPAREN)) {
      Token *close = advance(p);
      e = ir_tuple(p->m, span_from(t, close), NULL, 0);
      break;
    }
    Expr *first = parse_expr(p);
    if (!at(p, TOK_COMMA)) {
      expect(p, TOK_RPAREN);
      e = first;
      break;
    }
    Vec(Expr *) fields = {0};
    AVEC_PUSH(p->m->arena, &fields, first);
    while (accept(p, TOK_COMMA)) {
      if (at(p, TOK_RPAREN)) break;
      Expr *f = parse_expr(p);
      AVEC_PUSH(p->m->arena, &fields, f);
    }
    if (!at(p, TOK_RPAREN)) {
      expected(p, "',' or ')'");
    }
    Token *close = advance(p);
    e = ir_tuple(p->m, span_from(t, close), fields.data, fields.len);
    break;
  }
  case TOK_LBRACE:
    e = parse_block(p);
    break;
  default:
    expected(p, "an expression");
  }
  leave(p);
  return e;
}

/* atom = primary ( '.' INTEGER )* */
static Expr *parse_atom(Parser *p) {
  Expr *e = parse_primary(p);
  while (at(p, TOK_PERIOD) && peek(p, 1)->kind == TOK_INT) {
    advance(p);
    Token *idx = advance(p);
    if (idx->u.i.v < 0) diag_error(p->d, idx->span, "negative projection index");
    e = ir_get_item(p->m, idx->span, e, (int)(idx->u.i.v < 0 ? 0 : idx->u.i.v));
  }
  return e;
}

/* call_part = ( expr (',' expr)* )? ( ','? ( attr_list | META ) )? ','? */
static Expr *parse_call_args(Parser *p, Expr *callee, Span use) {
  Token *open = advance(p);
  Vec(Expr *) args = {0};
  KeyVals kv;
  memset(&kv, 0, sizeof kv);
  Token *meta_attrs = NULL;
  while (!at(p, TOK_RPAREN)) {
    if (at_attr_start(p)) {
      parse_attr_list(p, &kv, TOK_RPAREN);
      break;
    }
    if (at(p, TOK_META) && callee->kind == EXPR_OP && cur(p)->u.meta.keylen > 12 &&
        memcmp(cur(p)->u.meta.key, "relay.attrs.", 12) == 0) {
      meta_attrs = advance(p);
      accept(p, TOK_COMMA);
      break;
    }
    Expr *a = parse_expr(p);
    AVEC_PUSH(p->m->arena, &args, a);
    if (!accept(p, TOK_COMMA)) break;
  }
  if (!at(p, TOK_RPAREN)) {
    expected(p, "',' or ')'");
  }
  advance(p);
  Attrs *attrs = NULL;
  if (callee->kind == EXPR_OP) {
    const OpDef *op = callee->u.op.op;
    if (op->nargs >= 0 && args.len != op->nargs)
      diag_error(p->d, callee->span, "%s expects %d argument%s, found %d", op->name, op->nargs,
                 op->nargs == 1 ? "" : "s", args.len);
    if (!meta_attrs) {
      attrs = op_make_attrs(p->m, op, kv.keys.data, kv.values.data, kv.spans.data, kv.keys.len, p->d);
    }
  } else if (kv.keys.len && callee->kind == EXPR_CTOR) {
    diag_error(p->d, kv.spans.data[0], "constructor %s takes no attributes", callee->u.ctor.ctor->name->text);
  } else {
    attrs = generic_attrs(p, &kv);
  }
  Expr *call = ir_call(p->m, use, callee, args.data, args.len, attrs);
  (void)open;
  if (meta_attrs) {
    PendingAttrs pa = {call, meta_attrs};
    VEC_PUSH(&p->meta_attrs, pa);
  }
  return call;
}

/* call = atom ( '(' call_part ')' )* */
static Expr *parse_call(Parser *p) {
  Span first = cur(p)->span; /* a variable's node carries its declaration's span */
  Expr *e = parse_atom(p);
  while (at(p, TOK_LPAREN)) e = parse_call_args(p, e, first);
  return e;
}

/* Infix operators of spec 4.4; returns the precedence (0 = none). */
static int binop(Parser *p, const char **name, int *ntok) {
  Token *t = cur(p), *n = peek(p, 1);
  bool eq_next = n->kind == TOK_EQUAL && !n->space_before;
  *ntok = 1;
  switch (t->kind) {
  case TOK_STAR: *name = "multiply"; return 12;
  case TOK_SLASH: *name = "divide"; return 12;
  case TOK_PLUS: *name = "add"; return 10;
  case TOK_MINUS: *name = "subtract"; return 10;
  case TOK_LT: *ntok = eq_next ? 2 : 1; *name = eq_next ? "less_equal" : "less"; return 8;
  case TOK_GT: *ntok = eq_next ? 2 : 1; *name = eq_next ? "greater_equal" : "greater"; return 8;
  case TOK_EQUAL: if (!eq_next) return 0; *ntok = 2; *name = "equal"; return 7;
  case TOK_BANG: if (!eq_next) return 0; *ntok = 2; *name = "not_equal"; return 7;
  default: return 0;
  }
}

static Expr *parse_binary(Parser *p, int min_prec) {
  Expr *lhs = parse_call(p);
  for (;;) {
    const char *name;
    int ntok;
    int prec = binop(p, &name, &ntok);
    if (!prec || prec < min_prec) break;
    Token *optok = cur(p);
    p->pos += ntok;
    Expr *rhs = parse_binary(p, prec + 1);
    const OpDef *op = op_lookup(name, strlen(name));
    RLY_ASSERT(op);
    Expr **args = ARENA_ARRAY(p->m->arena, Expr *, 2);
    args[0] = lhs;
    args[1] = rhs;
    lhs = ir_call(p->m, optok->span, ir_op(p->m, optok->span, op), args, 2, NULL);
  }
  return lhs;
}

static Expr *parse_infix(Parser *p) { return parse_binary(p, 1); }

/* A local name in a declaration position: the whole dotted name. */
static Expr *declare_local(Parser *p, Token *t, Type *annot) {
  Symbol *name = tok_name(p, t);
  Expr *v = ir_var(p->m, t->span, name, annot);
  return v;
}

/* expr = item ( ';' item )*, where let and graph bindings swallow the
** rest. Built iteratively: frames collect the lets, then the Let nodes are
** made from the innermost out. */
static Expr *parse_expr(Parser *p) {
  int frame_base = p->frames.len, scope_base = p->scope.len;
  Expr *result = NULL;
  for (;;) {
    Token *t = cur(p);
    if (t->kind == TOK_LET) {
      advance(p);
      Token *name = cur(p);
      if (name->kind != TOK_LOCAL) expected(p, "a local variable ('%name') after 'let'");
      advance(p);
      Type *annot = NULL;
      if (accept(p, TOK_COLON)) annot = parse_type(p);
      Expr *var = declare_local(p, name, annot);
      declare(p, var->u.var.name, var); /* visible in its own value: recursive let */
      expect(p, TOK_EQUAL);
      Expr *value = parse_infix(p);
      expect(p, TOK_SEMI);
      LetFrame f = {var, value, t->span};
      VEC_PUSH(&p->frames, f);
      continue;
    }
    if (t->kind == TOK_GRAPH && peek(p, 1)->kind == TOK_EQUAL &&
        !(peek(p, 2)->kind == TOK_EQUAL && !peek(p, 2)->space_before)) {
      p->pos += 2;
      Expr *value = parse_infix(p);
      expect(p, TOK_SEMI);
      int64_t n = t->u.i.v;
      if (n > (1 << 20)) {
        diag_error(p->d, t->span, "graph binding number %lld is too large", (long long)n);
      } else {
        while (p->graph.len <= n) VEC_PUSH(&p->graph, NULL);
        p->graph.data[n] = value;
      }
      continue;
    }
    if (t->kind == TOK_FREE_VAR) {
      advance(p);
      Token *name = cur(p);
      if (name->kind != TOK_LOCAL) expected(p, "a local variable ('%name') after 'free_var'");
      advance(p);
      Type *annot = NULL;
      if (accept(p, TOK_COLON)) annot = parse_type(p);
      if (!p->expr_mode) diag_error(p->d, t->span, "free_var is only allowed in expression files");
      Expr *var = declare_local(p, name, annot);
      Binding b = {var->u.var.name, var, -1};
      VEC_PUSH(&p->free_vars, b);
      expect(p, TOK_SEMI);
      continue;
    }
    Expr *e = parse_infix(p);
    if (at(p, TOK_SEMI)) {
      advance(p);
      LetFrame f = {NULL, e, t->span};
      VEC_PUSH(&p->frames, f);
      continue;
    }
    result = e;
    break;
  }
  for (int i = p->frames.len - 1; i >= frame_base; i--) {
    LetFrame *f = &p->frames.data[i];
    Expr *var = f->var ? f->var : ir_var(p->m, f->span, NULL, NULL);
    result = ir_let(p->m, f->span, var, f->value, result);
  }
  p->frames.len = frame_base;
  scope_truncate(p, scope_base);
  return result;
}

/* func_sig = type_params? '(' param_part ')' ( '->' type )? '{' expr '}'
** param_part = ( param (',' param)* )? ( ','? attr_list )? ','?
** param = LOCAL ( '{' attr_list '}' )? ( ':' type )? */
static Expr *parse_func(Parser *p, Token *start) {
  Expr *fn = ir_expr_new(p->m, EXPR_FUNC, start->span);
  int tmark = p->tscope.len, smark = p->scope.len;
  if (at(p, TOK_LBRACKET)) fn->u.func.tparams = parse_type_params(p, &fn->u.func.ntparams);
  expect(p, TOK_LPAREN);
  Vec(Expr *) params = {0};
  KeyVals kv;
  memset(&kv, 0, sizeof kv);
  while (!at(p, TOK_RPAREN)) {
    if (at_attr_start(p)) {
      parse_attr_list(p, &kv, TOK_RPAREN);
      break;
    }
    Token *name = cur(p);
    if (name->kind != TOK_LOCAL) {
      expected(p, "a parameter ('%name') or ')'");
    }
    advance(p);
    if (at(p, TOK_LBRACE)) {
      /* {virtual_device=...}: placement is not modelled; parsed and dropped. */
      advance(p);
      KeyVals ignored;
      memset(&ignored, 0, sizeof ignored);
      parse_attr_list(p, &ignored, TOK_RBRACE);
      if (!at(p, TOK_RBRACE)) {
        expected(p, "'}'");
      }
      advance(p);
    }
    Type *annot = NULL;
    if (accept(p, TOK_COLON)) annot = parse_type(p);
    Expr *v = declare_local(p, name, annot);
    for (int i = 0; i < params.len; i++)
      if (params.data[i]->u.var.name == v->u.var.name)
        diag_error(p->d, name->span, "duplicate parameter '%%%s'", v->u.var.name->text);
    AVEC_PUSH(p->m->arena, &params, v);
    if (!accept(p, TOK_COMMA)) break;
  }
  if (!at(p, TOK_RPAREN)) {
    expected(p, "',' or ')'");
  }
  advance(p);
  for (int i = 0; i < params.len; i++) declare(p, params.data[i]->u.var.name, params.data[i]);
  fn->u.func.params = params.data;
  fn->u.func.nparams = params.len;
  fn->u.func.attrs = generic_attrs(p, &kv);
  if (accept_arrow(p)) fn->u.func.ret = parse_type(p);
  fn->u.func.body = parse_block(p);
  scope_truncate(p, smark);
  p->tscope.len = tmark;
  return fn;
}

/* {==== Definitions ====} */

/* Skips to the next top-level definition keyword after an error. */
static void recover(Parser *p) {
  while (!at(p, TOK_EOF) && !at(p, TOK_METADATA) && !at(p, TOK_DEF) && !at(p, TOK_TYPE) && !at(p, TOK_EXTERN))
    advance(p);
}

/* 'type' IDENT type_params? ctor_list? | 'extern' 'type' IDENT type_params? */
static void parse_type_def(Parser *p) {
  Token *kw = cur(p);
  bool is_extern = accept(p, TOK_EXTERN);
  expect(p, TOK_TYPE);
  Token *name = expect(p, TOK_IDENT);
  TypeDef *td = ARENA_NEW(p->m->arena, TypeDef);
  td->name = tok_name(p, name);
  td->span = name->span;
  td->is_extern = is_extern;
  (void)kw;
  for (int i = 0; i < p->types.len; i++)
    if (p->types.data[i]->name == td->name) {
      diag_error(p->d, name->span, "redefinition of type '%s'", td->name->text);
      diag_note(p->d, p->types.data[i]->span, "type '%s' is first defined here", td->name->text);
      break;
    }
  int tmark = p->tscope.len;
  if (at(p, TOK_LBRACKET)) td->tparams = parse_type_params(p, &td->ntparams);
  VEC_PUSH(&p->types, td);
  p->m->types = p->types.data;
  p->m->ntypes = p->types.len;
  if (!is_extern && accept(p, TOK_LBRACE)) {
    Vec(Ctor *) ctors = {0};
    while (!at(p, TOK_RBRACE)) {
      Token *cn = cur(p);
      if (cn->kind != TOK_IDENT) {
        expected(p, "a constructor name");
      }
      advance(p);
      Ctor *c = ARENA_NEW(p->m->arena, Ctor);
      c->name = tok_name(p, cn);
      c->adt = td;
      c->span = cn->span;
      c->tag = ctors.len;
      Ctor *first = module_find_ctor(p->m, c->name);
      for (int i = 0; i < ctors.len && !first; i++)
        if (ctors.data[i]->name == c->name) first = ctors.data[i];
      if (first) {
        diag_error(p->d, cn->span, "redefinition of constructor '%s'", c->name->text);
        diag_note(p->d, first->span, "constructor '%s' is first defined here", c->name->text);
      }
      if (accept(p, TOK_LPAREN)) {
        bool trailing;
        c->fields = parse_type_list(p, TOK_RPAREN, &c->nfields, &trailing);
      }
      AVEC_PUSH(p->m->arena, &ctors, c);
      if (!accept(p, TOK_COMMA)) break;
    }
    if (!at(p, TOK_RBRACE)) {
      expected(p, "',' or '}'");
    }
    advance(p);
    td->ctors = ctors.data;
    td->nctors = ctors.len;
  }
  p->tscope.len = tmark;
}

/* Reports a second definition of g's name, pointing back at the first.
** from_expr: g is the @main an expression file makes. */
static void check_redefinition(Parser *p, const GlobalDef *g, bool from_expr) {
  for (int i = 0; i < p->defs.len; i++) {
    const GlobalDef *first = p->defs.data[i];
    if (first->name != g->name) continue;
    if (from_expr)
      diag_error(p->d, g->span, "redefinition of '@main': an expression file given with other files is @main");
    else
      diag_error(p->d, g->span, "redefinition of '@%s'", g->name->text);
    if (first == p->expr_main)
      diag_note(p->d, first->span, "the expression of this file is '@main'");
    else
      diag_note(p->d, first->span, "'@%s' is first defined here", g->name->text);
    return;
  }
}

/* 'def' GLOBAL func_sig */
static void parse_def(Parser *p) {
  Token *kw = expect(p, TOK_DEF);
  Token *name = cur(p);
  if (name->kind != TOK_GLOBAL) expected(p, "a global name ('@name') after 'def'");
  advance(p);
  GlobalDef *g = ARENA_NEW(p->m->arena, GlobalDef);
  g->name = tok_name(p, name);
  g->span = name->span;
  check_redefinition(p, g, false);
  p->graph.len = 0;
  g->func = parse_func(p, kw);
  VEC_PUSH(&p->defs, g);
}

/* Pass 1 skips a `def`: to its body's opening brace, then to the matching
** closing one. */
static void skip_def(Parser *p) {
  advance(p);
  while (!at(p, TOK_LBRACE) && !at(p, TOK_EOF) && !at(p, TOK_METADATA) && !at(p, TOK_DEF) &&
         !at(p, TOK_TYPE) && !at(p, TOK_EXTERN)) {
    if (at(p, TOK_LPAREN)) {
      /* Skip the parameter list (it may hold `{virtual_device=..}`). */
      int depth = 0;
      do {
        if (at(p, TOK_LPAREN)) depth++;
        if (at(p, TOK_RPAREN)) depth--;
        advance(p);
      } while (depth > 0 && !at(p, TOK_EOF) && !at(p, TOK_METADATA));
      continue;
    }
    advance(p);
  }
  if (!at(p, TOK_LBRACE)) return;
  int depth = 0;
  do {
    if (at(p, TOK_LBRACE)) depth++;
    if (at(p, TOK_RBRACE)) depth--;
    advance(p);
  } while (depth > 0 && !at(p, TOK_EOF) && !at(p, TOK_METADATA));
}

typedef enum { STEP_TYPE, STEP_DEF, STEP_EXPR } Step;

/* Runs one parsing step with error recovery. Returns false if it failed. */
static bool guarded(Parser *p, Step step) {
  int scope = p->scope.len, tscope = p->tscope.len, frames = p->frames.len, depth = p->depth;
  if (setjmp(p->bail)) {
    scope_truncate(p, scope);
    p->tscope.len = tscope;
    p->frames.len = frames;
    p->depth = depth;
    if (step == STEP_EXPR) {
      while (!at(p, TOK_EOF) && !at(p, TOK_METADATA)) advance(p);
    } else {
      if (!at(p, TOK_EOF) && !at(p, TOK_METADATA)) advance(p);
      recover(p);
    }
    return false;
  }
  switch (step) {
  case STEP_TYPE: parse_type_def(p); break;
  case STEP_DEF: parse_def(p); break;
  case STEP_EXPR: p->m->expr = parse_expr(p); break;
  }
  return true;
}

/* {==== Resolution after the whole file is read ====} */

static void resolve_names(Parser *p) {
  for (int i = 0; i < p->globals.len; i++) {
    Expr *e = p->globals.data[i];
    e->u.global.def = module_find_def(p->m, e->u.global.name);
    if (!e->u.global.def) diag_error(p->d, e->span, "unbound global '@%s'", e->u.global.name->text);
  }
  for (int i = 0; i < p->tcalls.len; i++) {
    Type *t = p->tcalls.data[i];
    t->u.call.adt = module_find_type(p->m, t->u.call.name);
    if (!t->u.call.adt) {
      diag_error(p->d, t->span, "unknown type '%s'", t->u.call.name->text);
    } else if (t->u.call.nargs && t->u.call.nargs != t->u.call.adt->ntparams) {
      diag_error(p->d, t->span, "type %s takes %d type argument%s, found %d", t->u.call.name->text,
                 t->u.call.adt->ntparams, t->u.call.adt->ntparams == 1 ? "" : "s", t->u.call.nargs);
    }
  }
}

static void resolve_metadata(Parser *p, Metadata *md) {
  for (int i = 0; i < p->meta_consts.len; i++) {
    Expr *e = p->meta_consts.data[i];
    if (!e) continue;
    if (!md) {
      diag_error(p->d, p->meta_spans.data[i], "meta[relay.Constant][%d] used but the file has no metadata section", i);
      continue;
    }
    ConstData *c = ARENA_NEW(p->m->arena, ConstData);
    if (meta_constant(md, i, p->m, c, p->d, p->meta_spans.data[i])) e->u.constant.value = c;
  }
  for (int i = 0; i < p->meta_attrs.len; i++) {
    PendingAttrs *pa = &p->meta_attrs.data[i];
    const OpDef *op = pa->call->u.call.callee->u.op.op;
    const Token *t = pa->tok;
    if (!md) {
      diag_error(p->d, t->span, "meta[%.*s][%lld] used but the file has no metadata section", (int)t->u.meta.keylen,
                 t->u.meta.key, (long long)t->u.meta.index);
      continue;
    }
    if (!op->attrs) {
      diag_error(p->d, t->span, "%s takes no attributes", op->name);
      continue;
    }
    char key[300];
    snprintf(key, sizeof key, "%.*s", (int)t->u.meta.keylen, t->u.meta.key);
    pa->call->u.call.attrs = meta_attrs(md, key, t->u.meta.index, op->attrs, p->m, p->d, t->span);
  }
}

/* {==== Files ====} */

/* Lexes a file and reads its version header. */
static void open_file(Parser *p, FileState *f, uint32_t file) {
  int errors = diag_count(p->d);
  f->file = file;
  f->src = srcmap_get(p->sm, file);
  f->tl = lex_file(p->sm, file, p->d);
  Token *first = &f->tl.toks[0];
  bool have_version = false;
  int pos = 0;
  if (first->kind == TOK_VERSION) {
    pos++;
    have_version = true;
    if (first->u.str.len != 5 || memcmp(first->u.str.s, "0.0.5", 5) != 0)
      diag_error(p->d, first->span, "unsupported version \"%.*s\" (relayc reads version \"0.0.5\")",
                 (int)first->u.str.len, first->u.str.s);
  }
  TokKind k = f->tl.toks[pos].kind;
  f->expr_mode = !(k == TOK_DEF || k == TOK_TYPE || k == TOK_EXTERN || k == TOK_METADATA || k == TOK_EOF);
  f->parse_expr = f->expr_mode && (first->kind != TOK_ERROR || have_version);
  if (!have_version && !f->expr_mode && first->kind != TOK_ERROR)
    diag_error(p->d, first->span, "missing version header: a module starts with #[version = \"0.0.5\"]");
  f->body_start = pos;
  f->errors = diag_count(p->d) - errors;
}

/* Makes f the file the token functions read, at its first definition. */
static void select_file(Parser *p, FileState *f) {
  p->src = f->src;
  p->file = f->file;
  p->toks = f->tl.toks;
  p->ntoks = f->tl.n;
  p->pos = f->body_start;
  p->expr_mode = f->expr_mode;
}

/* Pass 1 over a module file: its type definitions. */
static void parse_types(Parser *p, FileState *f) {
  select_file(p, f);
  while (!at(p, TOK_EOF) && !at(p, TOK_METADATA) && !diag_full(p->d)) {
    if (at(p, TOK_TYPE) || at(p, TOK_EXTERN)) {
      TypeRange r = {p->pos, 0};
      guarded(p, STEP_TYPE);
      r.end = p->pos;
      VEC_PUSH(&f->type_ranges, r);
    } else if (at(p, TOK_DEF)) {
      skip_def(p);
    } else {
      advance(p);
    }
  }
}

/* Several files make one module: the expression of an expression file
** becomes `def @main(free variables) { expression }` (as TVM's
** IRModule.from_expr does), so the other files' definitions stand beside
** it. */
static void expr_to_main(Parser *p, Span at) {
  Module *m = p->m;
  GlobalDef *g = ARENA_NEW(m->arena, GlobalDef);
  g->name = sym_intern_cstr(&m->syms, "main");
  g->span = at;
  Expr *fn = ir_expr_new(m, EXPR_FUNC, at);
  fn->u.func.nparams = p->free_vars.len;
  fn->u.func.params = ARENA_ARRAY(m->arena, Expr *, fn->u.func.nparams);
  for (int i = 0; i < p->free_vars.len; i++) fn->u.func.params[i] = p->free_vars.data[i].var;
  fn->u.func.body = m->expr;
  g->func = fn;
  check_redefinition(p, g, true);
  if (!p->expr_main) p->expr_main = g;
  VEC_PUSH(&p->defs, g);
  m->expr = NULL;
  p->free_vars.len = 0;
}

/* Pass 2 over a file: its definitions (or its expression), then its
** metadata section, which its meta references resolve in. */
static void parse_body(Parser *p, FileState *f) {
  Diag *d = p->d;
  int errors = diag_count(d);
  select_file(p, f);
  p->graph.len = 0;
  p->free_vars.len = 0;
  p->meta_consts.len = 0;
  p->meta_spans.len = 0;
  p->meta_attrs.len = 0;
  if (f->expr_mode) {
    Span start = cur(p)->span;
    if (f->parse_expr && guarded(p, STEP_EXPR) && p->nfiles > 1 && p->m->expr) expr_to_main(p, start);
    if (!at(p, TOK_EOF) && !at(p, TOK_METADATA) && f->errors == 0 && diag_count(d) == errors) {
      char buf[64];
      diag_error(d, cur(p)->span, "expected end of file but found %s", describe(cur(p), buf, sizeof buf));
    }
  } else {
    int next_range = 0;
    while (!at(p, TOK_EOF) && !at(p, TOK_METADATA) && !diag_full(d)) {
      if (next_range < f->type_ranges.len && p->pos == f->type_ranges.data[next_range].start) {
        p->pos = f->type_ranges.data[next_range++].end;
      } else if (at(p, TOK_DEF)) {
        guarded(p, STEP_DEF);
      } else {
        char buf[64];
        if (!at(p, TOK_ERROR))
          diag_error(d, cur(p)->span, "expected a definition ('def', 'type' or 'extern type') but found %s",
                     describe(cur(p), buf, sizeof buf));
        advance(p);
        recover(p);
      }
    }
  }
  if (diag_full(d)) return;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  Metadata *md = NULL;
  if (at(p, TOK_METADATA)) {
    Token *mt = cur(p);
    size_t off = mt->u.metadata.offset;
    f->meta_at = off;
    md = meta_parse_borrowed(p->src->text + off, p->src->len - off, d, mt->span);
  }
  resolve_metadata(p, md);
  meta_free(md);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  p->meta_ms += (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
}

Module *parse_module_files(const SourceMap *sm, const uint32_t *files, int nfiles, Diag *d) {
  return parse_module_files_timed(sm, files, nfiles, d, NULL, NULL);
}

Module *parse_module_files_timed(const SourceMap *sm, const uint32_t *files, int nfiles, Diag *d, double *metadata_ms,
                                 size_t *meta_at) {
  Parser ps;
  Parser *p = &ps;
  memset(p, 0, sizeof *p);
  p->sm = sm;
  p->d = d;
  p->nfiles = nfiles;
  p->m = module_new();
  int errors_before = diag_count(d);
  FileState *fs = rly_xcalloc((size_t)(nfiles > 0 ? nfiles : 1), sizeof *fs);
  for (int i = 0; i < nfiles; i++) open_file(p, &fs[i], files[i]);
  /* Pass 1: the type definitions of every file, so that each file's
  ** definitions see the constructors of all. */
  for (int i = 0; i < nfiles && !diag_full(d); i++)
    if (!fs[i].expr_mode) parse_types(p, &fs[i]);
  /* Pass 2: definitions and expressions, file by file. */
  for (int i = 0; i < nfiles && !diag_full(d); i++) parse_body(p, &fs[i]);

  Module *m = p->m;
  m->defs = VEC_TO_ARENA(m->arena, &p->defs);
  m->ndefs = p->defs.len;
  m->types = VEC_TO_ARENA(m->arena, &p->types);
  m->ntypes = p->types.len;
  if (p->free_vars.len) {
    m->nfree_vars = p->free_vars.len;
    m->free_vars = ARENA_ARRAY(m->arena, Expr *, m->nfree_vars);
    for (int i = 0; i < m->nfree_vars; i++) m->free_vars[i] = p->free_vars.data[i].var;
  }
  if (!diag_full(d)) resolve_names(p);

  VEC_FREE(&p->scope);
  free(p->smap.keys);
  free(p->smap.vals);
  VEC_FREE(&p->free_vars);
  VEC_FREE(&p->tscope);
  VEC_FREE(&p->frames);
  VEC_FREE(&p->graph);
  VEC_FREE(&p->globals);
  VEC_FREE(&p->tcalls);
  VEC_FREE(&p->meta_consts);
  VEC_FREE(&p->meta_spans);
  VEC_FREE(&p->meta_attrs);
  VEC_FREE(&p->defs);
  VEC_FREE(&p->types);
  for (int i = 0; i < nfiles; i++) {
    if (meta_at) meta_at[i] = fs[i].meta_at;
    tokens_free(&fs[i].tl);
    VEC_FREE(&fs[i].type_ranges);
  }
  free(fs);
  if (metadata_ms) *metadata_ms += p->meta_ms;
  if (diag_count(d) > errors_before) {
    module_free(m);
    return NULL;
  }
  return m;
}

Module *parse_module(const SourceMap *sm, uint32_t file, Diag *d) { return parse_module_files(sm, &file, 1, d); }

/* {==== Binding parameters to constants ====} */

static bool type_matches(const Type *t, const ConstData *c) {
  if (!t || t->kind != TYPE_TENSOR) return t == NULL || t->kind == TYPE_INCOMPLETE;
  if (!dtype_eq(t->u.tensor.dtype, c->dtype) || t->u.tensor.ndim != c->ndim) return false;
  for (int i = 0; i < c->ndim; i++)
    if (t->u.tensor.shape[i] != RLY_DIM_ANY && t->u.tensor.shape[i] != c->shape[i]) return false;
  return true;
}

static void describe_const(StrBuf *sb, const ConstData *c) {
  char buf[32];
  sb_puts(sb, "Tensor[(");
  for (int i = 0; i < c->ndim; i++) sb_printf(sb, "%s%lld", i ? ", " : "", (long long)c->shape[i]);
  sb_printf(sb, "), %s]", dtype_name(c->dtype, buf));
}

bool bind_params(Module *m, const ParamEntry *entries, int n, Diag *d, Span at) {
  Symbol *main_name = sym_intern_cstr(&m->syms, "main");
  GlobalDef *g = module_find_def(m, main_name);
  int errors = diag_count(d);
  if (!g) {
    diag_error(d, at, "parameters given, but the module has no @main to bind them to");
    return false;
  }
  Expr *fn = g->func;
  bool *bound = rly_xcalloc((size_t)fn->u.func.nparams + 1, 1);
  for (int i = 0; i < n; i++) {
    const ParamEntry *pe = &entries[i];
    int k = -1;
    for (int j = 0; j < fn->u.func.nparams; j++)
      if (fn->u.func.params[j]->u.var.name == pe->name) k = j;
    if (k < 0) {
      diag_error(d, at, "parameter '%s' of the params file is not a parameter of @main", pe->name->text);
      continue;
    }
    Expr *var = fn->u.func.params[k];
    if (!type_matches(var->u.var.annot, &pe->value)) {
      StrBuf want = {0}, got = {0};
      ir_print_type(&want, var->u.var.annot);
      describe_const(&got, &pe->value);
      diag_error(d, var->span, "parameter '%%%s' is %s, but the params file gives %s", pe->name->text, sb_str(&want),
                 sb_str(&got));
      sb_free(&want);
      sb_free(&got);
      continue;
    }
    /* The module is still being built by the front end: the variable node
    ** itself becomes the constant, so every use sees it. */
    ConstData *c = ARENA_NEW(m->arena, ConstData);
    *c = pe->value;
    var->kind = EXPR_CONST;
    var->u.constant.value = c;
    bound[k] = true;
  }
  int kept = 0;
  for (int j = 0; j < fn->u.func.nparams; j++)
    if (!bound[j]) fn->u.func.params[kept++] = fn->u.func.params[j];
  fn->u.func.nparams = kept;
  free(bound);
  return diag_count(d) == errors;
}
