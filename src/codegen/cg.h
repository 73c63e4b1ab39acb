/* cg.h: the state of code generation and the helpers shared by the files
** of src/codegen (private to that folder; codegen.h is the interface).
**
** Input of every file: a module after ToANormalForm and WrapPrimitives,
** typed. Every function body is a let chain whose values are atoms,
** tuples, projections, calls of atoms (or of Primitive function literals),
** if, match, function literals and reference operations.
**
** C conventions of the generated code:
** - a value is an rlyrt_object *; every variable of a function is a C
**   local v<ID> (ID: the binder's expression id) holding one reference;
**   all locals are released when the function returns (and before a tail
**   call jumps back to the top); arguments are borrowed and retained into
**   the parameters' locals on entry;
** - captured variables are read from self->env[i] (borrowed); the closure
**   itself (a recursive let) is `self`;
** - `st` holds the status; `goto fail` releases everything and returns it.
**
** The files, in the order codegen_module uses them:
**   lift.c       lambda lifting as an analysis: C functions, free variables
**   tailcalls.c  groups of globals that tail-call each other (SCCs)
**   plan.c       the static memory plan: workspaces and frames
**   function.c   one C function per group; code descriptors; constructors as values
**   expr.c       let chains and values (calls, tuples, closures, refs, if)
**   match.c      match: a switch over the tag, clauses as conditions
**   scalars.c    unboxed scalars (0-d tensors as C scalars)
**   kernels.c    the kernel of each Primitive function (through lower/)
**   consts.c     constants: one aligned blob and static tensor objects
**   checkers.c   argument checkers, one per type
**   interface.c  the module description, the header, typed entry points
**   codegen.c    the entry point; assembling the C file
** Names in generated code come from expression ids, def order and
** counters, never from pointers: the output is deterministic. */
#ifndef RLY_CG_H
#define RLY_CG_H

#include "base/vec.h"
#include "codegen/codegen.h"
#include "ir/walk.h"
#include "lower/lower.h"

typedef ExprVec EVec; /* the traversal library's node vector (ir/walk.h) */

/* One C function: a global, or a function literal (closure code). */
typedef struct CFunc {
  Expr *fn;           /* EXPR_FUNC */
  GlobalDef *g;       /* the global, or NULL */
  int index;          /* in Cg.funcs */
  int group;          /* globals: the index of its group in Cg.groups; closures: -1 */
  int member;         /* its index in its group */
  Expr *self_var;     /* closures: the let variable bound to this closure when used inside it */
  EVec fvs;           /* closures: captured variables, in order of first use */
  EVec locals;        /* parameters and every binder of the body outside nested functions */
  bool closure_used;  /* globals: used as a value (its static closure is needed) */
  int64_t plan_size;  /* bytes of its workspace (0: no static memory plan) */
  int64_t frame_size; /* bytes of the frame of its C function on the thread's frame stack
                      ** (0: none; plan.c): the group's, for every member of a group */
  int nstate;         /* its parameters kept in state slots of the frame (loop state) */
  char cname[96];     /* C name of its rlyrt_fn */
  char where[256];    /* "fn at FILE:L:C" or "@name" */
} CFunc;

typedef struct Group {
  Vec(CFunc *) members;
  char cname[100];
} Group;

/* A constant packed at build time for the kernels that read it so
** (consts.c; lower_loops_prepacked): constant k of the blob. */
typedef struct CgPacked {
  const ConstData *src;
  LowerPrepack p;
  int k;
} CgPacked;

/* Texts by content: open addressing by hash over texts (slot: 1 + index,
** 0 empty; nslots a power of two, at least twice the texts); value[i]: what
** text i stands for. */
typedef struct TextTable {
  Vec(char *) texts;
  Vec(int) value;
  int *slots;
  size_t nslots;
} TextTable;

typedef struct Cg {
  Module *m;
  const CodegenOptions *o;
  Diag *d;
  Vec(CFunc *) funcs;
  Vec(Group *) groups;
  int *func_of;       /* expr id -> 1 + index in funcs (FUNC nodes and global defs' funcs) */
  uint32_t nids;
  /* Output sections, assembled in this order. */
  StrBuf kdecls, protos, consts, kernels, checkers, code, info;
  Vec(const ConstData *) constdata;
  Vec(CgPacked) packed;     /* in the module's arena (AVEC_PUSH): nothing to free */
  TextTable kernel_texts; /* kernel i as made with the placeholder name (for dedupe) */
  TextTable kernel_bodies; /* the texts of the shared bodies (kernels.c), value: the kernel that has it */
  Vec(const char *) checker_keys; /* type text of each checker */
  Vec(const Type *) checker_types;
  int nchecked;       /* checkers whose bodies are out */
  Lowering *L;
  Vec(const Ctor *) ctor_values; /* constructors used as values */
  Vec(const Ctor *) nullary;     /* constructors without fields built: their static values */
  bool used_unit;
  bool failed;
  /* Per function being emitted. */
  CFunc *cur;
  Group *curgroup;
  bool used_fail, *used_label;
  int tmp;            /* counter for C temporaries */
  uint32_t *mark;     /* per expr id: generation stamps */
  uint32_t gen;
  /* Liveness within one let chain (cg_emit_block): per variable id, the block
  ** that may release it early (a stamp) and the statement of its last use. */
  uint32_t *cand;
  int *last;
  uint32_t bgen;
  int64_t *plan_off;  /* per variable id: its offset in the workspace, or -1 */
  bool dest_planned;  /* the statement being emitted writes a planned tensor */
  uint8_t *uvar;      /* per variable id: 1 when it also lives unboxed, as a C scalar s<ID> */
  EVec uvars;         /* the unboxed variables of the group being emitted */
} Cg;

/* {==== codegen.c: shared helpers ====} */

/* Reports an error at at (fmt has one %s, arg) and marks the output failed;
** at most 20 errors are reported. */
void cg_error(Cg *cg, Span at, const char *fmt, const char *arg);
/* "FILE:LINE:COL" of s in buf (the module's name when s has no file). */
void cg_where(Cg *cg, Span s, char *buf, size_t n);
/* Grows the per-expression-id tables to the module's current node count. */
void cg_grow_ids(Cg *cg);
/* Appends n levels of indentation (two spaces each). */
void cg_indent(StrBuf *o, int n);
/* The index of td among the module's type definitions, or -1. */
int cg_type_index(const Cg *cg, const TypeDef *td);

/* {==== lift.c: C functions and their free variables ====} */

/* The C function of function literal (or global's function) fn, or NULL. */
CFunc *cg_func_of(Cg *cg, const Expr *fn);
/* s with every character that cannot be in a C identifier replaced by '_'. */
void cg_sanitize(const char *s, char *out, size_t n);
/* Makes a CFunc for every def and every non-primitive function literal
** (in that order), finds self variables, locals and free variables. */
void cg_collect_funcs(Cg *cg);

/* {==== tailcalls.c ====} */

/* Groups the globals into strongly connected components of the graph of
** tail calls between them (cg->groups; CFunc.group and .member). */
void cg_make_groups(Cg *cg);
/* The member of F's group (F itself for a closure's call of its own let
** variable) that call, in tail position of F, calls: the jump's target;
** NULL when it is an ordinary call. */
CFunc *cg_jump_target(Cg *cg, CFunc *F, const Expr *call);

/* {==== plan.c ====} */

/* Lays out the workspace of F: for a straight-line global alone in its
** group F->plan_size, else the frame of its C function (F->frame_size; one
** frame for all the members of a group, planned with its first member);
** cg->plan_off of its planned intermediates (and of its state parameters). */
void cg_plan_function(Cg *cg, CFunc *F);
/* Bytes reserved for the object of a tuple of n fields kept in a frame. */
#define CG_TUPLE_HEADER(n) ((int64_t)(64 + 8 * (n) + 63) & ~(int64_t)63)
/* The offset of field k's data from a frame tuple's start. */
int64_t cg_tuple_field_offset(const Type *t, int k);
/* Is v a parameter of the current function kept in a frame state slot? */
bool cg_state_param(const Cg *cg, const Expr *v);
/* Is v a parameter of F (a member of the current group) kept in a state slot? */
bool cg_state_param_of(const Cg *cg, const CFunc *F, const Expr *v);

/* {==== function.c ====} */

/* Emits the C function of group G (one function with a `which` switch
** when G has several members) into cg->code. */
void cg_emit_group(Cg *cg, Group *G);
/* Prototypes, code descriptors of every C function. */
void cg_emit_descriptors(Cg *cg);
/* The code and closure of every constructor used as a value. */
void cg_emit_ctor_values(Cg *cg);

/* {==== expr.c ====} */

/* Appends the C expression (a borrowed rlyrt_object *) of atom e in the
** current function. */
void cg_atom(Cg *cg, StrBuf *out, Expr *e);
/* Emits the let chain body at indentation ind; its value goes to dest (an
** owned reference). tail: body is in tail position of the function. */
void cg_emit_block(Cg *cg, StrBuf *o, int ind, Expr *body, const char *dest, bool tail);
/* Releases every local of the current group and clears it. */
void cg_release_all(Cg *cg, StrBuf *o, int ind);

/* {==== match.c ====} */

/* Emits match v into dest. */
void cg_emit_match(Cg *cg, StrBuf *o, int ind, Expr *v, const char *dest, bool tail);

/* {==== scalars.c ====} */

/* The C type of a 0-d tensor type the loops handle, or NULL. */
const char *cg_scalar_ctype(const Type *t);
/* Is atom a a local variable of the current function living unboxed? */
bool cg_unboxed(const Cg *cg, const Expr *a);
/* Marks variable v as living unboxed in the group being emitted. */
void cg_make_unboxed(Cg *cg, Expr *v);
/* Appends the value of the 0-d atom a as a C scalar. */
void cg_scalar_of(Cg *cg, StrBuf *o, Expr *a);
/* Makes sure atom a has its tensor when it is an unboxed variable. */
void cg_need_boxed(Cg *cg, StrBuf *o, int ind, Expr *a);
void cg_need_boxed_all(Cg *cg, StrBuf *o, int ind, Expr **as, int n);
/* Emits let var = v (a Primitive call) unboxed when it is elementwise on
** scalars. Returns false (emitting nothing) otherwise. */
bool cg_emit_scalar_let(Cg *cg, StrBuf *o, int ind, Expr *var, Expr *v);

/* {==== kernels.c ====} */

/* The kernel of Primitive function prim, emitted once: its name in name. */
void cg_kernel_for(Cg *cg, Expr *prim, char *name, size_t n);
/* The same for a call of prim with args: when an argument is a constant
** that the kernel reads packed at build time (lower_loops_prepacked), p
** says how (the caller passes cg_const_ref_packed for argument p->param);
** else p->param is -1. */
void cg_kernel_for_call(Cg *cg, Expr *prim, Expr *const *args, int nargs, char *name, size_t n, LowerPrepack *p);
/* Frees a TextTable's texts (owned by it) and arrays. */
void cg_text_table_free(TextTable *t);

/* {==== consts.c ====} */

/* Appends the C expression of constant e (a static tensor object),
** registering its data in the blob. */
void cg_const_ref(Cg *cg, StrBuf *out, const Expr *e);
/* The same for constant e packed as p says (a float32 tensor of the packed
** data, each packing of each constant once in the blob); e's own data goes
** into the blob only when something else refers to it. */
void cg_const_ref_packed(Cg *cg, StrBuf *out, const Expr *e, const LowerPrepack *p);
/* The blob's size in bytes: every constant of cg->constdata at the next
** 64-aligned offset, zeros between. */
size_t cg_blob_size(const Cg *cg);
/* Writes the blob's bytes (that layout) to path; false with a message in
** err (the file removed) when that fails. */
bool cg_write_blob(const Cg *cg, const char *path, char *err, size_t errlen);
/* Appends the blob's definition (a comment giving its size, then the
** aligned array when it is not empty). */
void cg_emit_blob(const Cg *cg, StrBuf *c);
/* RC_CONST, the qualifier of the constant tensors: const, but nothing in a
** shared module whose constants it copies at load (4 MiB and more). */
void cg_emit_consts_const(const Cg *cg, StrBuf *c);
/* For such a module: the table of its constant tensors with data, and the
** constructor that points them at rlyrt_consts_copy's copy (the
** destructor frees it). Nothing for smaller constants. */
void cg_emit_consts_copy(const Cg *cg, StrBuf *c);

/* {==== checkers.c ====} */

/* The printed type t (malloc'ed; "?" for NULL). */
char *cg_type_string(const Type *t);
/* Does t mention a type variable (or a type not known)? */
bool cg_has_type_var(const Type *t);
/* The index of the argument checker of type t (made when new). */
int cg_checker_for(Cg *cg, const Type *t);
/* Emits the body of checker k (it may ask for more checkers). */
void cg_emit_checker(Cg *cg, int k);
/* The argument checker of F: "static rlyrt_status NAME_check(...)". */
void cg_emit_function_checker(Cg *cg, CFunc *F);

/* {==== interface.c ====} */

/* The module description (into cg->info) and the header h with the typed
** entry points. */
void cg_emit_info(Cg *cg, StrBuf *h);

#endif
