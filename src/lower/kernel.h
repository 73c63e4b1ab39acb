/* lower/kernel.h: what the files of src/lower share (private to the folder).
**
** loops.c owns the lowering table (lower.def) and the text helpers; group.c
** reads a Primitive function's body into a list of operator calls;
** elemwise.c emits fused elementwise chains and the epilogues of anchors;
** fastmath.c holds the float32 exp, tanh and sigmoid they call; select.c
** emits take with a scalar index, split, scatter_nd and reshapes as copies;
** gemm.c emits nn.dense and nn.batch_matmul on float32 (GEMV and packed
** GEMM, one version per vector ISA); conv.c emits nn.conv2d on float32
** (depthwise, and GEMMs on gemm.c's micro-kernel), winograd.c its Winograd
** schedule (conv.h: what they share); schedules.def says which schedule
** takes which group. */
#ifndef RLY_LOWER_KERNEL_H
#define RLY_LOWER_KERNEL_H

#include "base/strbuf.h"
#include "ir/ir.h"
#include "ops/ops.h"

enum { LOWER_MAX_NDIM = 64 }; /* the runtime's largest rank */

/* {==== The lowering table (loops.c) ====} */

typedef enum ResultRule { RR_SAME, RR_BOOL, RR_CAST } ResultRule;

/* The dtype classes, in the order of the table's template columns. */
typedef enum DClass { DC_FLOAT, DC_SINT, DC_UINT, DC_BOOL } DClass;

typedef struct LowerRow {
  OpId op;
  int arity;
  int data;            /* the operand whose dtype picks the template */
  ResultRule result;
  const char *tmpl[4]; /* by DClass; NULL: not lowered */
} LowerRow;

/* The table's row of op, or NULL. */
const LowerRow *lower_find_row(OpId op);
/* The class of a dtype loops handle; false for float16, bfloat16, vector
** lanes and odd widths. */
bool lower_dtype_class(DType t, DClass *c);
/* The C type of an element (bool: uint8_t); the C type operands are
** computed in (double for floats). */
const char *lower_elem_ctype(DType t);
const char *lower_compute_ctype(DType t);
/* "kDLFloat", "kDLInt" or "kDLUInt". */
const char *lower_dl_code(DType t);
/* A tensor type whose dims are all known, with at most 2^62 elements. */
bool lower_static_tensor(const Type *t);
/* Whether template t names the placeholder word. */
bool lower_tmpl_uses(const char *t, const char *word);
/* Template t with its operands A, B, C replaced by ops[0..2], U by u, T by
** ct, LO and HI by lo and hi. */
void lower_put_tmpl(StrBuf *sb, const char *t, const char *const *ops, const char *u, const char *ct, const char *lo,
                    const char *hi);
/* The value e (of class from) converted to the dtype to, as the runtime
** stores values. */
void lower_put_convert(StrBuf *sb, const char *e, DClass from, DType to);
/* A float attribute of a call (ints accepted); false when None or absent. */
bool lower_attr_double(const Attrs *a, const char *field, double *v);
/* An integer or bool attribute; def when absent. */
int64_t lower_attr_int(const Attrs *a, const char *field, int64_t def);
/* Declares `const CT name = BOUND;` (indent 2): v as a clip bound in dtype t. */
void lower_put_bound(StrBuf *sb, const char *name, DType t, double v);
/* A double constant, exactly (hex float; NAN, HUGE_VAL). */
void lower_put_double(StrBuf *sb, double v);
/* s as a C string literal. */
void lower_put_cstring(StrBuf *sb, const char *s);

/* {==== Threads (loops.c) ====}
** A kernel with enough work splits it with rlyrt_parallel_for over
** RLYRT_KERNEL_THREADS threads (the module's count, which the generated
** file defines; 1 where it does not, as in the kernel tests), into parts
** that each compute whole outputs, so the bits do not depend on the count.
** Below these sizes a kernel is emitted as if there were no threads: the
** parts would cost more (waking a thread takes some microseconds) than
** they save. */
enum {
  LOWER_PAR_MIN_ELEMS = 1 << 16,  /* elementwise chains: elements of the result */
  LOWER_PAR_MIN_FLOPS = 1 << 21,  /* GEMM and GEMV: 2 * M * N * K */
  LOWER_PAR_MIN_READ = 1 << 17,   /* reductions and softmax: elements read */
  LOWER_PAR_MIN_POOL = 1 << 14,   /* pools: elements read (pool.c says why) */
};
/* Whether work (in the unit of min) is enough to split: work >= min, or
** always when the environment has RLY_SPLIT_ALL=1 (a test hook: every
** kernel that can split gets the parallel code, so small test programs
** run it at any thread count). */
bool lower_par_worth(double work, double min);
/* The fallback definition of RLYRT_KERNEL_THREADS (harmless when repeated). */
void lower_put_threads_preamble(StrBuf *sb);

/* {==== float32 exp, tanh, sigmoid that vectorize (fastmath.c) ====} */

/* The float32 template of op ("rlyk_tanhf(A)", operands and result float)
** where the chains use a vectorizable function instead of libm in double;
** NULL for other ops. */
const char *fm_tmpl(OpId op);
/* Whether kernel text calls those functions; their guarded definitions. */
bool fm_used(const char *text);
void fm_put_defs(StrBuf *sb);

/* {==== Groups (group.c) ====} */

enum { GROUP_MAX_NODES = 256, GROUP_MAX_ARGS = 16 }; /* TVM fuses at most 256 ops into one function */

typedef enum GNodeKind {
  GN_CALL,  /* an operator call: op, args */
  GN_CONST, /* a constant (call is the EXPR_CONST) */
  GN_TUPLE, /* a tuple of args */
  GN_PROJ,  /* field index of the tuple args[0] */
} GNodeKind;

/* One node of the group. args: >= 0 a node (earlier in the list), < 0 the
** parameter -1 - a. call is the node's expression (of any kind). */
typedef struct GNode {
  GNodeKind kind;
  const Expr *call;
  const OpDef *op;  /* GN_CALL only */
  int nargs;
  int args[GROUP_MAX_ARGS];
  int index;        /* GN_PROJ */
  bool live;        /* the result depends on it */
} GNode;

typedef struct Group {
  const Expr *fn;
  int nparams;
  int nnodes;
  GNode nodes[GROUP_MAX_NODES]; /* in evaluation order; the last is the result */
} Group;

/* Reads fn's body (operator calls on the parameters, constants and each
** other, tuples and projections, through let bindings or shared
** subexpressions) into g. False when the body holds anything else (a
** function, control flow, a global) or more than GROUP_MAX_NODES nodes. */
bool group_build(const Expr *fn, Group *g);

/* {==== Elementwise chains and epilogues (elemwise.c) ====} */

enum { EW_MAX_LEAVES = 16 };

/* A leaf of a chain: a parameter, or a field of a tuple parameter, read at
** its broadcast position (its shape
** as the chain sees it: bias_add's bias is [C, 1, ..., 1]), the anchor's
** value (param -1), or a one-element constant, node -2 - param. */
typedef struct EwLeaf {
  int param;
  int field;   /* >= 0: field `field` of the tuple parameter `param` (a %p.k projection); -1 the parameter */
  DType dtype; /* of its elements */
  int ndim;
  int64_t shape[LOWER_MAX_NDIM];
} EwLeaf;

typedef struct Ewise {
  const Group *g;
  int anchor;                   /* the node whose value is a leaf, or -1 */
  int nleaves;
  EwLeaf leaves[EW_MAX_LEAVES];
  int leaf_of[GROUP_MAX_NODES][GROUP_MAX_ARGS]; /* the leaf of node i's operand j, or -1 (a node) */
  const char *tmpl[GROUP_MAX_NODES];
  double lo[GROUP_MAX_NODES], hi[GROUP_MAX_NODES];
  bool bounded[GROUP_MAX_NODES];
} Ewise;

/* Node i's template (its row of lower.def, or fastmath.c's float32 one)
** when its operand and result types are ones loops handle, with its clip
** bounds (bounded: the template reads LO and HI); false otherwise. */
bool ew_call_template(const Group *g, int i, const char **tmpl, bool *bounded, double *lo, double *hi);
/* Node i's value computed by tmpl from the C values named operands[j]
** (kept in ew_value_ctype of their dtypes) and the bounds lo, hi, as the
** reference kernel rounds it: an expression of ew_value_ctype(result). */
void ew_put_call(StrBuf *sb, const Group *g, int i, const char *tmpl, const char *const *operands, const char *lo,
                 const char *hi);
/* The C type a chain keeps values of dtype t in (float for float32). */
const char *ew_value_ctype(DType t);
/* A one-element constant's value as a C expression of its compute type. */
void ew_put_const(StrBuf *sb, const ConstData *c);
/* Checks that every live node of g but the anchor is an operator of the
** lowering table (or nn.bias_add) on static shapes and dtypes loops handle,
** and fills ew. anchor < 0: no anchor. */
bool ew_analyse(const Group *g, int anchor, Ewise *ew);
/* The loads of the leaves whose index is given (index[k] NULL: loaded
** before, as `xK`), the nodes as locals, and the store of the result as
** `OUT[out_index] = ...;`. A leaf that is the anchor reads anchor_expr. */
void ew_put_body(StrBuf *sb, const Ewise *ew, int indent, const char *const *index, const char *out,
                 const char *out_index, const char *anchor_expr);
/* Declares the pointers `pI` (parameter I) and `pI_F` (field F of the
** tuple parameter I) of the leaves that read parameters (indent 2). */
void ew_put_pointers(StrBuf *sb, const Ewise *ew, int indent);
/* The same pointers, each once, as a list that continues a parameter or
** argument list: `, const T *restrict pI` parameters, `, (const T
** *)...->dl.data` arguments read from args, or `, pI` (the names). */
typedef enum EwPtrList { EW_PTR_PARAMS, EW_PTR_ARGS, EW_PTR_NAMES } EwPtrList;
void ew_put_pointer_list(StrBuf *sb, const Ewise *ew, EwPtrList how);
/* The `const CT lo<i>`/`hi<i>` declarations of the clip bounds and the
** `const CT xK` of the constant leaves (indent 2). */
void ew_put_bounds(StrBuf *sb, const Ewise *ew);
/* The loop nest over the group's result (declarations of the parameters'
** pointers `pI`, leaves read once before it, one statement per node inside;
** the anchor, if any, read from `o` at the result's index, where the
** result is stored too). False (and nothing appended) when a leaf does not
** broadcast to the result. Needs `o` and the bounds declared. */
bool ew_put_loops(StrBuf *sb, const Ewise *ew, int indent);
/* A fused elementwise chain as one loop kernel (no anchor). */
bool ew_lower(StrBuf *out, const char *name, const Group *g, const char *where);

/* {==== GEMM (gemm.c) ====} */

/* nn.dense or nn.batch_matmul on float32 (node `anchor` of g, whose
** operands are parameters), with the group's other live nodes as an
** elementwise epilogue; false (appending nothing) when it does not apply. */
bool gemm_lower(StrBuf *out, const char *name, const Group *g, int anchor, const char *where);
/* ISA versions (gemm.c): the preamble that defines RLYRT_ISA_X86/MAX/MIN
** (once per kernel, harmless when repeated); the #if guarding version i
** (0: AVX-512F, 1: AVX2+FMA, 2: portable) and its target attribute (NULL
** for the portable one) and name suffix; the dispatch that calls
** fn_SUFFIX(args) for the best version the CPU runs. */
void lower_put_isa_preamble(StrBuf *sb);
int lower_isa_count(void);
const char *lower_isa_suffix(int i);
const char *lower_isa_target(int i);
void lower_put_isa_if(StrBuf *sb, int i);
/* The attributes of ISA version i's functions: its target and
** RLYRT_VEC_STRIDED (GCC's dynamic vectorizer cost model; see the
** preamble); nothing for the portable version. */
void lower_put_isa_attrs(StrBuf *sb, int i);
void lower_put_isa_call(StrBuf *sb, const char *fn, const char *args);
/* The same among the versions in the mask isas (bit i: version i) only,
** calling none where the CPU runs none of them. */
void lower_put_isa_call_in(StrBuf *sb, const char *fn, const char *args, unsigned isas);
/* The test (a C expression) that the dispatch of lower_put_isa_call picks
** version i, for code inside lower_put_isa_if(i)'s #if. */
void lower_put_isa_picked(StrBuf *sb, int i);
/* Pieces of the packed GEMM that conv.c's loop nests share (gemm.c). The
** lanes W and register tile MR x NR of ISA version i. */
void gemm_isa_tile(int i, int *w, int *mr, int *nr);
/* A vector operation of ISA version i as text (the portable version's
** need the kernel's NAME_v4 helpers, gemm_put_v4): the vector type, zero,
** a load from pointer a, a store of b to pointer a, a * b + c, a float
** lvalue a broadcast. */
typedef enum GemmVop { GV_TYPE, GV_ZERO, GV_LOAD, GV_STORE, GV_FMA, GV_BCAST } GemmVop;
void gemm_put_vop(StrBuf *sb, int i, const char *name, GemmVop op, const char *a, const char *b, const char *c);
/* The portable version's vector type NAME_v4 and its load NAME_ld4 (and,
** when store, NAME_st4), under #if RLYRT_ISA_MIN == 0. */
void gemm_put_v4(StrBuf *sb, const char *name, bool store);
/* The mr x NR micro-kernel of ISA version i, at indentation ind: the
** accumulators, the loop over l < kc of a broadcast of pa[l * A_STEP + r]
** per row and loads of pb + l * B_STEP per NR/W vectors, then the tile
** stored to ct (rows ldc floats apart): added to it when pc != 0, the
** part inside mc - ir rows and nc - jr columns only (an edge tile through
** a buffer). Needs in scope: the enums MR, NR; pa, pb, ct; kc, pc, mc, ir,
** nc, jr. Leaves `mr` and `nr` (the tile's valid size) declared. mr is the
** ISA's MR (gemm.c), or conv.c's 7 pixels by NR filters (the enum MR in
** scope is mr), or its last tile of filters where M is not a multiple of
** MR (mr = M mod MR rows, the enum MR being the ISA's: only where mc - ir
** is mr). An A_STEP of the form "TABLE[l]" is the offset of reduction row
** l itself: the broadcasts read pa[TABLE[l] + r] (conv.c's tiles that
** read an im2col row in place). half: a tile of at most NR / 2 columns
** computes NR / 2 (the last of a row of C whose length leaves that over).
** bpw: 0, or B's panels are bpw floats wide, kc rows each, one after the
** other, and a tile wider than bpw reads its vectors from as many panels
** (conv.c's tiles of 7 pixels on AVX-512: 32 filters from panels of 16).
** te (or NULL): an epilogue that runs on a full tile in registers before
** its store, after the last KC block (gemm_epi_vec_ok said it can); rows
** and columns of the tile's first element are the expressions row0, col0;
** the leaves are read at q * l_sq + row * l_si + col * l_sj. The caller
** runs the epilogue in memory on the other tiles only. */
typedef struct TileEpi {
  const Ewise *ew;
  const int64_t *l_sq, *l_si, *l_sj;
  const char *row0, *col0;
  int64_t k; /* the reduction's length */
} TileEpi;
void gemm_put_tile_rows(StrBuf *sb, int i, const char *name, int ind, int mr, const char *a_step, const char *b_step,
                        int bpw, int64_t ldc, const TileEpi *te, bool half, const char *kpre);
/* Whether ISA version i can run the epilogue ew in registers
** (gemm_put_tile_rows's te): float32 throughout, the leaves one per row or
** contiguous along the row, every node an add, subtract, multiply,
** maximum, minimum, relu or clip (intrinsics with the templates' bits). */
bool gemm_epi_vec_ok(int i, const Ewise *ew, const int64_t *l_sj);
/* Vector acc of ISA version i (row `row`, columns from `col`, of batch q)
** through te's epilogue in registers: each leaf broadcast (l_sj 0) or
** loaded (l_sj 1; given mask, an AVX-512 __mmask16 of the lanes to read,
** masked), each node one intrinsic; the result goes back into acc. Needs
** the bounds in scope (gemm_put_epi_bounds, at indentation ind). */
void gemm_put_epi_vec(StrBuf *sb, int i, const TileEpi *te, int ind, const char *acc, const char *row, const char *col,
                      const char *mask);
void gemm_put_epi_bounds(StrBuf *sb, const Ewise *ew, int ind);
/* The epilogue ew on a tile as the function NAME_epi(c, leaf pointers, q,
** i0, i1, j0, j1): rows [i0, i1) and columns [j0, j1) of C (rows ldc apart,
** c at batch q); leaf k is read at q * l_sq[k] + ei * l_si[k] + ej * l_sj[k]. */
void gemm_put_epilogue_fn(StrBuf *sb, const char *name, const Ewise *ew, const int64_t *l_sq, const int64_t *l_si,
                          const int64_t *l_sj, int64_t ldc);
/* Its call (needs c, q and the leaf pointers in scope). */
void gemm_put_epilogue_call(StrBuf *sb, const char *name, const Ewise *ew, int indent, const char *i0, const char *i1,
                            const char *j0, const char *j1);

/* {==== Convolutions (conv.c) ====} */

/* nn.conv2d on float32 (node `anchor` of g, data and weight parameters;
** NCHW, OIHW, static shapes), with the group's other live nodes as an
** elementwise epilogue; false (appending nothing) when it does not apply. */
bool conv_lower(StrBuf *out, const char *name, const Group *g, int anchor, const char *where);
/* lower_loops_prepacked for a group whose anchor is nn.conv2d with a
** constant filter read by nothing else (lower.h); false otherwise. */
typedef struct LowerPrepack LowerPrepack;
bool conv_lower_prepacked(StrBuf *out, const char *name, const Expr *fn, const char *where, const bool *is_const,
                          LowerPrepack *p);

/* 2-D max and average pooling, global and to 1x1 (pool.c): the group's
** result node when it is the group's only call, float32 NCHW; false
** (appending nothing) otherwise. */
bool pool_lower(StrBuf *out, const char *name, const Group *g, const char *where);

/* {==== Softmax and reductions (reduce.c) ====} */

/* nn.softmax, nn.fast_softmax or nn.log_softmax (node anchor, on a
** parameter, or on float32 an elementwise chain of the group) on
** float32/float64, with the group's other live nodes as an elementwise
** epilogue; false (appending nothing) when it does not apply. */
bool softmax_lower(StrBuf *out, const char *name, const Group *g, int anchor, const char *where);
/* sum, mean, max or min (node anchor, on a parameter or an elementwise
** chain of the group) on float32/float64, with an elementwise epilogue;
** false (appending nothing) otherwise. */
bool reduce_lower(StrBuf *out, const char *name, const Group *g, int anchor, const char *where);

/* {==== Injective chains (inject.c) ====} */

/* A group without an anchor that has layout operators (reshape,
** expand_dims, squeeze, nn.batch_flatten, transpose, strided_slice,
** concatenate) among elementwise calls, as one loop nest over the result;
** false (appending nothing) otherwise. */
bool inj_lower(StrBuf *out, const char *name, const Group *g, const char *where);

/* {==== Slices (select.c) ====} */

/* take(data, i, axis=a) with a 0-d integer index (modes clip and wrap),
** as one slice copy; false (appending nothing) otherwise. */
bool take_lower(StrBuf *out, const char *name, const Expr *fn, const char *where);
/* split(data, ...) as the copies of its parts into a new tuple. */
bool split_lower(StrBuf *out, const char *name, const Expr *fn, const char *where);
/* A chain of reshape, expand_dims, squeeze and batch_flatten on one
** parameter: a copy of its bytes. */
bool reshape_lower(StrBuf *out, const char *name, const Expr *fn, const char *where);
/* scatter_nd(data, indices, updates) in mode "update": a copy of data,
** then one copy of a run of updates per index tuple. */
bool scatter_nd_lower(StrBuf *out, const char *name, const Expr *fn, const char *where);

#endif
