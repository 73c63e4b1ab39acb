/* ir.h: the Relay IR: data types, types, attributes, expressions, patterns,
** ADT definitions and modules.
**
** Invariants:
** - Every node lives in its Module's arena and is freed with it.
** - Nodes are immutable once the phase that built them returns; passes build
**   new nodes and share the subtrees they did not change. The IR is a DAG: a
**   graph binding `%0 = e;` makes every use of %0 the same Expr pointer.
** - A variable is one EXPR_VAR node (its binder); every use of the variable
**   is that same pointer. Binders: let vars, function params, pattern vars,
**   free vars.
** - Expr ids are dense per module (0 .. module->nexprs-1): side tables are
**   arrays indexed by id.
** - Expr.type is NULL until type inference has run. */
#ifndef RLY_IR_H
#define RLY_IR_H

#include "base/arena.h"
#include "base/common.h"
#include "base/diag.h"
#include "base/strbuf.h"
#include "base/symbol.h"

typedef struct Expr Expr;
typedef struct Type Type;
typedef struct Pattern Pattern;
typedef struct TypeDef TypeDef;
typedef struct Ctor Ctor;
typedef struct GlobalDef GlobalDef;
typedef struct Module Module;
typedef struct OpDef OpDef;         /* ir/schema.h */
typedef struct AttrsClass AttrsClass; /* ir/schema.h */

/* {==== Data types ====} */

/* Same codes as DLPack's DLDataTypeCode. bool is uint1, as in TVM. */
typedef enum { DT_INT = 0, DT_UINT = 1, DT_FLOAT = 2, DT_BFLOAT = 4 } DTypeCode;

typedef struct DType {
  uint8_t code;   /* DTypeCode */
  uint8_t bits;   /* 1, 8, 16, 32, 64 */
  uint16_t lanes; /* 1 for scalars; >1 for vector types like int8x4 */
} DType;

#define DTYPE(c, b) ((DType){(uint8_t)(c), (uint8_t)(b), 1})
bool dtype_eq(DType a, DType b);
bool dtype_is_bool(DType t);
/* Parses "float32", "int8x4", "bool", "uint1x4", "bfloat16" (n bytes of s).
** Returns false for anything else. */
bool dtype_parse(const char *s, size_t n, DType *out);
/* Writes the canonical name ("float32", "bool", "int8x4") to buf (>= 32 bytes). */
const char *dtype_name(DType t, char buf[32]);
/* Bytes per element in memory (bool: 1 byte). */
size_t dtype_bytes(DType t);
/* IEEE binary16 conversions (round to nearest even; overflow gives inf). */
uint16_t half_from_double(double v);
double half_to_double(uint16_t h);

/* {==== Constants ====} */

/* A dense tensor value held by the compiler (weights, literals). */
typedef struct ConstData {
  DType dtype;
  int ndim;
  int64_t *shape;   /* ndim entries, in the arena */
  void *data;       /* row-major, little-endian; nbytes long; 64-byte aligned */
  size_t nbytes;
} ConstData;

int64_t const_numel(const ConstData *c);

/* {==== Types ====} */

typedef enum {
#define TYPEKIND(K, name) TYPE_##K,
#include "ir/types.def"
#undef TYPEKIND
  TYPE_KIND_COUNT
} TypeKind;

#define RLY_DIM_ANY (-1) /* `?` in a shape */

struct Type {
  TypeKind kind;
  Span span;
  union {
    struct { DType dtype; int ndim; int64_t *shape; } tensor;      /* TENSOR; dims >= 0 or RLY_DIM_ANY */
    struct { Type **fields; int n; } tuple;                         /* TUPLE */
    struct { Type **params; int nparams; Type *ret;                 /* FUNC */
             Type **tparams; int ntparams; } func;                  /*   tparams are TYPE_VAR binders */
    struct { Symbol *name; } var;                                   /* VAR: uses share the binder's pointer */
    struct { Symbol *name; TypeDef *adt; Type **args; int nargs; } call; /* CALL: ADT application */
    struct { Type *elem; } ref;                                     /* REF */
    struct { uint32_t id; } incomplete;                             /* INCOMPLETE: `_` */
  } u;
};

extern const char *const type_kind_names[TYPE_KIND_COUNT];

/* {==== Attributes ====} */

typedef enum {
  AV_NONE,   /* None / nullptr */
  AV_INT,    /* 3, 3i64 */
  AV_FLOAT,  /* 0.5f, 2f64 */
  AV_BOOL,   /* True / False */
  AV_STR,    /* "NCHW" */
  AV_ARRAY,  /* [1, 2], nested */
  AV_META,   /* meta[VirtualDevice][0]: an object from the metadata section */
  AV_EXPR,   /* any other atomic expression (rare) */
} AttrValueKind;

typedef struct AttrValue AttrValue;
struct AttrValue {
  AttrValueKind kind;
  Span span;
  union {
    struct { int64_t v; uint8_t bits; } i;          /* INT: bits 16/32/64 from the suffix */
    struct { double v; uint8_t bits; } f;           /* FLOAT */
    bool b;                                         /* BOOL */
    struct { const char *s; size_t len; } str;      /* STR: may contain NUL bytes */
    struct { AttrValue **items; int n; } arr;       /* ARRAY */
    struct { Symbol *key; int64_t index; } meta;    /* META */
    Expr *expr;                                     /* EXPR */
  } u;
};

/* Attributes of a call or function.
** With a class (an operator's attrs schema), values[i] is the value of the
** class's field i, defaults filled in, and keys is NULL.
** Without a class (function attributes, calls of non-operators), keys[i] and
** values[i] are the pairs as written, in source order. */
typedef struct Attrs {
  const AttrsClass *cls;
  int n;
  Symbol **keys;
  AttrValue **values;
} Attrs;

/* {==== Expressions ====} */

typedef enum {
#define NODE(K, field, name) EXPR_##K,
#include "ir/nodes.def"
#undef NODE
  EXPR_KIND_COUNT
} ExprKind;

extern const char *const expr_kind_names[EXPR_KIND_COUNT];

typedef struct Clause {
  Pattern *pat;
  Expr *body;
} Clause;

struct Expr {
  ExprKind kind;
  uint32_t id;   /* dense per-module id */
  Span span;
  Type *type;    /* NULL until type inference */
  union {
    struct { Symbol *name; Type *annot; } var;                             /* VAR (annot may be NULL) */
    struct { Symbol *name; GlobalDef *def; } global;                       /* GLOBAL */
    struct { ConstData *value; } constant;                                 /* CONST */
    struct { Expr **fields; int n; } tuple;                                /* TUPLE */
    struct { Expr *tuple; int index; } get_item;                           /* GET_ITEM */
    struct { Expr *callee; Expr **args; int nargs; Attrs *attrs; } call;   /* CALL (attrs may be NULL) */
    struct { Expr *var; Expr *value; Expr *body; } let;                    /* LET: var is an EXPR_VAR */
    struct { Expr *cond, *then_, *else_; } if_;                            /* IF */
    struct { Expr **params; int nparams; Type *ret;                        /* FUNC: params are EXPR_VARs */
             Type **tparams; int ntparams; Expr *body; Attrs *attrs; } func; /*   ret, attrs may be NULL */
    struct { const OpDef *op; } op;                                        /* OP */
    struct { Ctor *ctor; } ctor;                                           /* CTOR */
    struct { Expr *scrut; Clause *clauses; int nclauses; bool complete; } match; /* MATCH: complete = not match? */
    struct { Expr *value; } ref_new;                                       /* REF_NEW */
    struct { Expr *ref; } ref_read;                                        /* REF_READ */
    struct { Expr *ref, *value; } ref_write;                               /* REF_WRITE */
  } u;
};

_Static_assert(EXPR_KIND_COUNT == 15, "update the users of nodes.def");

/* {==== Patterns ====} */

typedef enum {
#define PATKIND(K, name) PAT_##K,
#include "ir/patterns.def"
#undef PATKIND
  PAT_KIND_COUNT
} PatternKind;

struct Pattern {
  PatternKind kind;
  Span span;
  union {
    struct { Expr *var; } var;                         /* VAR: binds an EXPR_VAR */
    struct { Ctor *ctor; Pattern **args; int n; } ctor; /* CTOR */
    struct { Pattern **fields; int n; } tuple;         /* TUPLE */
  } u;
};

/* {==== ADTs and modules ====} */

struct Ctor {
  Symbol *name;
  TypeDef *adt;
  Type **fields;  /* may mention adt->tparams */
  int nfields;
  int tag;        /* index in adt->ctors */
  Span span;
};

struct TypeDef {
  Symbol *name;
  Type **tparams;  /* TYPE_VAR binders */
  int ntparams;
  Ctor **ctors;
  int nctors;
  bool is_extern;  /* `extern type`: no constructors */
  Span span;
};

struct GlobalDef {
  Symbol *name;
  Expr *func;      /* an EXPR_FUNC */
  Span span;
};

struct Module {
  Arena *arena;          /* owns every node */
  SymTab syms;
  GlobalDef **defs;      /* in source order */
  int ndefs;
  TypeDef **types;       /* in source order */
  int ntypes;
  /* An expression file (no `def`s): its expression and free variables. */
  Expr *expr;
  Expr **free_vars;
  int nfree_vars;
  uint32_t nexprs;       /* next expression id */
  uint32_t ntypevars;    /* next incomplete-type id */
};

/* Creates an empty module with its own arena. */
Module *module_new(void);
/* Frees the module and everything in its arena. NULL is a no-op. */
void module_free(Module *m);
GlobalDef *module_find_def(const Module *m, Symbol *name);
TypeDef *module_find_type(const Module *m, Symbol *name);
Ctor *module_find_ctor(const Module *m, Symbol *name);

/* {==== Constructors ====}
** All return arena nodes with a fresh id; arrays passed in must already live
** in the module's arena (or be copied there by the caller). */
Expr *ir_expr_new(Module *m, ExprKind kind, Span span);
Expr *ir_var(Module *m, Span span, Symbol *name, Type *annot);
Expr *ir_call(Module *m, Span span, Expr *callee, Expr **args, int nargs, Attrs *attrs);
Expr *ir_let(Module *m, Span span, Expr *var, Expr *value, Expr *body);
Expr *ir_tuple(Module *m, Span span, Expr **fields, int n);
Expr *ir_get_item(Module *m, Span span, Expr *tuple, int index);
Expr *ir_op(Module *m, Span span, const OpDef *op);
Expr *ir_const(Module *m, Span span, ConstData *value);
/* A scalar constant; data copied from v (dtype_bytes(dt) bytes). */
Expr *ir_const_scalar(Module *m, Span span, DType dt, const void *v);

Type *ir_type_new(Module *m, TypeKind kind, Span span);
Type *ir_tensor_type(Module *m, Span span, DType dt, int ndim, const int64_t *shape);
Type *ir_incomplete_type(Module *m, Span span);

Pattern *ir_pattern_new(Module *m, PatternKind kind, Span span);
AttrValue *ir_attr_value_new(Module *m, AttrValueKind kind, Span span);

/* {==== Analysis helpers (ir/equal.c, ir/walk.c, ir/verify.c) ====} */

/* Structural equality modulo renaming of bound variables (and type
** variables); globals, constructors and ADTs compare by name, constants by
** dtype, shape and bytes. Spans and checked types are ignored. */
bool ir_expr_equal(const Expr *a, const Expr *b);
bool ir_type_equal(const Type *a, const Type *b);
bool ir_attrs_equal(const Attrs *a, const Attrs *b);
bool ir_attr_value_equal(const AttrValue *a, const AttrValue *b);
/* Two modules are equal when they have the same defs and types by name,
** each structurally equal (source order ignored). */
bool ir_module_equal(const Module *a, const Module *b);

/* Checks the IR's invariants (ids in range and unique, vars bound before
** use, operators' attrs match their class, arities, tags); reports
** violations to d as errors. Returns true if none. */
bool ir_verify(const Module *m, Diag *d);

/* {==== Printing (ir/print.c) ====} */

typedef struct PrintOptions {
  bool show_types;     /* "ty=..." comment annotations where Expr.type is set */
  bool show_metadata;  /* tensor constants into a #[metadata] section (else meta refs only) */
} PrintOptions;

/* Canonical text of a module (TVM's style, definitions sorted by name). */
void ir_print_module(StrBuf *out, const Module *m, const PrintOptions *opt);
/* Text of one type, as it appears in annotations: Tensor[(1, 3), float32]. */
void ir_print_type(StrBuf *out, const Type *t);
/* Text of one attribute value, as written in a call: [1, 1], "NCHW", 1e-05f. */
void ir_print_attr_value(StrBuf *out, const AttrValue *v);

#endif
