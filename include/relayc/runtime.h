/* relayc/runtime.h: the relayc runtime, used by the interpreter and (later)
** by generated code.
**
** Values are refcounted objects with one common header: tensors (DLPack
** DLTensor inside), tuples, ADT values (constructor tag + fields), closures
** (code + captured environment) and references. Every allocation goes
** through one hook (rlyrt_set_allocator). Functions that can fail return an
** rlyrt_status; the message of the last failure is thread-local
** (rlyrt_last_error). Bad input never aborts the process.
**
** Ownership (as in QuickJS): a `const` or "borrowed" pointer parameter is
** not kept; a function that keeps or consumes an argument says `_take` in
** its name; a returned object is owned by the caller (refcount 1) unless
** the comment says "borrowed". Threads: an object is either private (used
** by one thread at a time; plain counts), shared (atomic counts; objects
** passed into rlyrt_module_call or rlyrt_closure_call become shared, with
** everything they hold, so one set of weights may serve many concurrent
** calls), or static (RLYRT_REFCOUNT_STATIC: never counted, never freed).
**
** bool tensors use TVM's dtype {kDLUInt, 1, 1} and one byte per element. */
#ifndef RELAYC_RUNTIME_H
#define RELAYC_RUNTIME_H

#include <dlpack/dlpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define RLYRT_MUST_CHECK __attribute__((warn_unused_result))
#define RLYRT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define RLYRT_MUST_CHECK
#define RLYRT_PRINTF(f, a)
#endif

/* {==== Status and errors ====} */

typedef enum rlyrt_status {
  RLYRT_OK = 0,
  RLYRT_E_ARG = -1,          /* a bad argument: count, kind, dtype, shape, name */
  RLYRT_E_NOMEM = -2,        /* an allocation failed */
  RLYRT_E_IO = -3,           /* a file could not be read or written, or is malformed */
  RLYRT_E_MATCH = -4,        /* match? found no clause */
  RLYRT_E_RUNTIME = -5,      /* a run-time failure of the program (index out of range, ...) */
  RLYRT_E_UNSUPPORTED = -6,  /* a dtype, layout or op the runtime does not support */
  RLYRT_E_INTERNAL = -7,     /* a bug in relayc */
} rlyrt_status;

/* "RLYRT_E_ARG", ... */
const char *rlyrt_status_name(rlyrt_status s);
/* The message of the last failure on this thread ("" if none). Borrowed,
** valid until the next failure on this thread. */
const char *rlyrt_last_error(void);
/* Sets this thread's message (printf format) and returns s. */
rlyrt_status rlyrt_error(rlyrt_status s, const char *fmt, ...) RLYRT_PRINTF(2, 3);
void rlyrt_clear_error(void);

/* {==== Allocation ====} */

typedef struct rlyrt_allocator {
  void *(*alloc)(void *ctx, size_t size, size_t align);  /* NULL on failure */
  void (*free)(void *ctx, void *p);
  void *ctx;
} rlyrt_allocator;

/* Replaces the allocator (NULL restores the default, aligned malloc). Call
** before any object exists; not thread-safe. */
void rlyrt_set_allocator(const rlyrt_allocator *a);
/* size bytes aligned to align (a power of two); NULL with RLYRT_E_NOMEM set. */
void *rlyrt_alloc(size_t size, size_t align);
void rlyrt_free(void *p);

/* Scratch: size bytes, 64-aligned, for the length of one call (a kernel's
** or a function's workspace), freed with rlyrt_scratch_free; NULL with
** RLYRT_E_NOMEM set. With the default allocator, freed blocks of 64 KiB
** and more are kept (the RLYRT_SCRATCH_KEPT largest) and handed out again,
** so a model called again works in memory that is already mapped: glibc
** gives a thread's big blocks back to the system on free, and touching
** them again costs a page fault per 4 KiB (on a virtual machine, as much
** as the kernel that writes them). rlyrt_scratch_trim frees the kept
** blocks (unloading a module's copy of the runtime does too). With an
** allocator of one's own, scratch is allocated and freed through it on
** every call, and nothing is kept. Thread-safe. */
enum { RLYRT_SCRATCH_KEPT = 16 };
void *rlyrt_scratch_alloc(size_t size);
void rlyrt_scratch_free(void *p);
void rlyrt_scratch_trim(void);

/* A workspace of size bytes (64-aligned) on this thread's stack of frames;
** NULL with RLYRT_E_NOMEM set. Frames are popped in the reverse order of
** their pushes (rlyrt_frame_pop(p) frees p and every frame pushed after
** it). While the stack is in use, once it has grown to a program's depth,
** pushes allocate nothing: generated code keeps the non-escaping
** intermediates of a recursive function or a loop there. Popping the last
** frame gives every chunk back to the allocator. */
void *rlyrt_frame_push(size_t size);
void rlyrt_frame_pop(void *p);

/* {==== Objects ====} */

typedef enum rlyrt_kind {
  RLYRT_TENSOR = 1,
  RLYRT_TUPLE = 2,
  RLYRT_ADT = 3,
  RLYRT_CLOSURE = 4,
  RLYRT_REF = 5,
} rlyrt_kind;

/* The refcount field: n > 0, a private object with n references (plain
** arithmetic: the hot path of generated code); -n < 0, a shared object with
** n references (atomic arithmetic); RLYRT_REFCOUNT_STATIC, a static object.
** Read it with rlyrt_refcount. */
#define RLYRT_REFCOUNT_STATIC INT32_MIN

typedef struct rlyrt_object {
  int32_t refcount;  /* see above; RLYRT_REFCOUNT_STATIC: never freed */
  uint16_t kind;     /* rlyrt_kind */
  uint16_t flags;
} rlyrt_object;

/* Returns o (NULL is fine). */
rlyrt_object *rlyrt_retain(rlyrt_object *o);
/* Drops one reference; frees o and what it holds when the last goes (long
** lists are freed without recursion). NULL is a no-op. */
void rlyrt_release(rlyrt_object *o);
/* Makes o and every object it holds (fields, environments, what references
** hold, transitively) shared: from then on their counts change atomically,
** so any number of threads may use them at once (calls only read tensor
** data). Once shared, always shared. rlyrt_module_call and
** rlyrt_closure_call share their arguments (and the closure) themselves;
** call this before handing an object to other threads by other means.
** Cheap when o is already shared; thread-safe. NULL is a no-op. */
void rlyrt_share(rlyrt_object *o);
/* The number of references to o (RLYRT_REFCOUNT_STATIC for a static object). */
int32_t rlyrt_refcount(const rlyrt_object *o);

/* rlyrt_retain inline: one comparison on the path of private objects. */
static inline rlyrt_object *rlyrt_retain_inline(rlyrt_object *o) {
  if (o) {
    int32_t rc = __atomic_load_n(&o->refcount, __ATOMIC_RELAXED);
    if (rc > 0) o->refcount = rc + 1;
    else if (rc != RLYRT_REFCOUNT_STATIC) __atomic_fetch_sub(&o->refcount, 1, __ATOMIC_RELAXED);
  }
  return o;
}

/* rlyrt_release inline where no object dies: a private object that keeps
** other references loses one here; anything else goes to rlyrt_release. */
static inline void rlyrt_release_inline(rlyrt_object *o) {
  if (o) {
    int32_t rc = __atomic_load_n(&o->refcount, __ATOMIC_RELAXED);
    if (rc > 1) o->refcount = rc - 1;
    else rlyrt_release(o);
  }
}

/* obj.flags of a tensor that lives on a caller's stack or frame for one
** call (refcount RLYRT_REFCOUNT_STATIC): generated code passes unboxed
** scalars to calls this way, and the intermediates of its frames. Code
** that keeps an argument beyond the call keeps rlyrt_keep(arg), which
** copies such a tensor. */
#define RLYRT_TENSOR_ON_STACK 0x100

/* obj.flags of a 0-d tensor allocated inside the block of an ADT value
** (rlyrt_adt_new_boxes), and of that value: an ordinary refcounted tensor
** whose memory goes back when both it and the value are dead. */
#define RLYRT_TENSOR_IN_ADT 0x200
#define RLYRT_ADT_BOXES 0x200

/* o retained, or for a tensor on a caller's stack a copy (NULL with
** RLYRT_E_NOMEM set when that fails). NULL is NULL. */
rlyrt_object *rlyrt_keep(rlyrt_object *o);
/* Replaces a tensor on a stack that *v is (or that a field of the tuple *v
** is, at any depth) by a copy: for the result of a kernel that may return
** one of its operands. RLYRT_E_NOMEM when a copy fails (*v unchanged). */
rlyrt_status rlyrt_unstack(rlyrt_object **v);
static inline rlyrt_object *rlyrt_keep_inline(rlyrt_object *o) {
  if (o && (o->flags & RLYRT_TENSOR_ON_STACK) && o->kind == RLYRT_TENSOR) return rlyrt_keep(o);
  return rlyrt_retain_inline(o);
}

typedef struct rlyrt_tensor {
  rlyrt_object obj;
  DLTensor dl;           /* dl.data 64-byte aligned (16 when under 64 bytes), dl.shape -> shape_buf,
                            dl.strides NULL */
  int64_t shape_buf[];   /* dl.ndim entries */
} rlyrt_tensor;

typedef struct rlyrt_tuple {
  rlyrt_object obj;
  int32_t n;
  rlyrt_object *fields[];  /* owned */
} rlyrt_tuple;

typedef struct rlyrt_adt {
  rlyrt_object obj;
  int32_t tag;             /* constructor index in its type definition */
  int32_t n;
  const char *ctor;        /* constructor name (static storage), for printing */
  rlyrt_object *fields[];  /* owned */
} rlyrt_adt;

typedef struct rlyrt_closure {
  rlyrt_object obj;
  const void *code;        /* what to run: an IR function (interpreter) or a C function */
  int32_t nenv;
  rlyrt_object *env[];     /* captured values, owned */
} rlyrt_closure;

typedef struct rlyrt_ref {
  rlyrt_object obj;
  rlyrt_object *value;     /* owned */
} rlyrt_ref;

#define RLYRT_AS_TENSOR(o) ((rlyrt_tensor *)(o))
#define RLYRT_AS_TUPLE(o) ((rlyrt_tuple *)(o))
#define RLYRT_AS_ADT(o) ((rlyrt_adt *)(o))
#define RLYRT_AS_CLOSURE(o) ((rlyrt_closure *)(o))
#define RLYRT_AS_REF(o) ((rlyrt_ref *)(o))

/* A tensor of dtype and shape with uninitialised data (zeroed when zero is
** true). NULL with the error set on failure (bad dtype, size overflow, no
** memory). */
rlyrt_tensor *rlyrt_tensor_new(DLDataType dtype, int32_t ndim, const int64_t *shape, bool zero);
/* A copy of a CPU, compact (strides NULL or row-major) DLTensor. */
rlyrt_tensor *rlyrt_tensor_copy_dl(const DLTensor *src);
int64_t rlyrt_tensor_numel(const rlyrt_tensor *t);
size_t rlyrt_tensor_nbytes(const rlyrt_tensor *t);
/* Bytes per element (bool: 1). 0 for a dtype the runtime does not support. */
size_t rlyrt_dtype_bytes(DLDataType t);
bool rlyrt_dtype_eq(DLDataType a, DLDataType b);
/* "float32", "bool", "int8", ...; writes into buf (>= 32 bytes). */
const char *rlyrt_dtype_name(DLDataType t, char *buf);

/* Containers with NULL fields; fill them with the _take setters. */
rlyrt_tuple *rlyrt_tuple_new(int32_t n);
rlyrt_adt *rlyrt_adt_new(int32_t tag, const char *ctor, int32_t n);
/* An ADT value with n NULL fields, allocated in one block with nboxes
** 0-d tensors (data: 16 bytes, zeroed) that rlyrt_adt_box hands out: how
** generated code builds a constructor's scalar fields without a further
** allocation. Each box starts with one reference, for the field it goes
** into. */
rlyrt_adt *rlyrt_adt_new_boxes(int32_t tag, const char *ctor, int32_t n, int32_t nboxes);
/* Box k (< nboxes) of a, typed dtype (a scalar of at most 16 bytes). */
rlyrt_tensor *rlyrt_adt_box(rlyrt_adt *a, int32_t k, DLDataType dtype);
/* An ADT value holding fields[0..n) (borrowed, kept): 0-d tensors on a
** caller's stack are copied into boxes of the value's block, the rest
** retained (rlyrt_keep). NULL (RLYRT_E_NOMEM set) when out of memory. */
rlyrt_adt *rlyrt_adt_new_kept(int32_t tag, const char *ctor, int32_t n, rlyrt_object *const *fields);
rlyrt_closure *rlyrt_closure_new(const void *code, int32_t nenv);
/* Stores v (consumed) in field i, releasing what was there. */
void rlyrt_tuple_set_take(rlyrt_tuple *t, int32_t i, rlyrt_object *v);
void rlyrt_adt_set_take(rlyrt_adt *a, int32_t i, rlyrt_object *v);
void rlyrt_closure_set_take(rlyrt_closure *c, int32_t i, rlyrt_object *v);
/* A reference holding v (consumed). */
rlyrt_ref *rlyrt_ref_new_take(rlyrt_object *v);
/* Replaces the referenced value with v (consumed). */
void rlyrt_ref_write_take(rlyrt_ref *r, rlyrt_object *v);

/* {==== Scalars of tensors (for kernels written for clarity) ====}
** Element i (row-major) of t, converted; and the inverse. Integers go
** through int64_t, floats (float16 included) through double. */
double rlyrt_get_f64(const rlyrt_tensor *t, int64_t i);
int64_t rlyrt_get_i64(const rlyrt_tensor *t, int64_t i);
void rlyrt_set_f64(rlyrt_tensor *t, int64_t i, double v);
void rlyrt_set_i64(rlyrt_tensor *t, int64_t i, int64_t v);
bool rlyrt_dtype_is_float(DLDataType t);
/* IEEE half <-> float. */
float rlyrt_half_to_float(uint16_t h);
uint16_t rlyrt_float_to_half(float f);

/* {==== Printing and comparing values ====} */

/* Prints v readably: tensors like NumPy (all elements up to 1000, then
** elided), tuples as (a, b), ADT values as Cons(1, Nil), closures as
** <closure>, references as ref(v). */
void rlyrt_value_print(FILE *out, const rlyrt_object *v);

/* The Relay type of t as text ("Tensor[(2, 3), float32]", or "float32"
** for 0-d) into buf (n bytes, truncated if short); returns buf. */
const char *rlyrt_tensor_type_text(const rlyrt_tensor *t, char *buf, size_t n);

/* {==== .npy files ====} */

/* Reads a .npy file (format 1.0, 2.0 or 3.0; C or Fortran order; dtypes
** bool, int8/16/32/64, uint8/16/32/64, float16/32/64, little- or
** big-endian). Truncated or inconsistent files are RLYRT_E_IO with a
** message naming the file and the problem. */
rlyrt_status rlyrt_npy_load(const char *path, rlyrt_tensor **out) RLYRT_MUST_CHECK;
/* The same from a buffer (name is used in messages). */
rlyrt_status rlyrt_npy_parse(const void *buf, size_t n, const char *name, rlyrt_tensor **out) RLYRT_MUST_CHECK;
/* Writes t as a .npy file (format 1.0, C order, little-endian). */
rlyrt_status rlyrt_npy_save(const char *path, const rlyrt_tensor *t) RLYRT_MUST_CHECK;

/* {==== Reference kernels ====} */

typedef enum rlyrt_attr_kind {
  RLYRT_ATTR_NONE = 0,
  RLYRT_ATTR_INT = 1,    /* ints and bools (0/1) */
  RLYRT_ATTR_FLOAT = 2,
  RLYRT_ATTR_STR = 3,
  RLYRT_ATTR_ARRAY = 4,
} rlyrt_attr_kind;

/* An attribute value as kernels see it. */
typedef struct rlyrt_attr {
  const char *name;             /* field name (top-level values only) */
  rlyrt_attr_kind kind;
  int64_t i;                    /* INT */
  double f;                     /* FLOAT */
  const char *s;                /* STR, NUL-terminated */
  int32_t n;                    /* ARRAY: number of items */
  const struct rlyrt_attr *items;
} rlyrt_attr;

typedef struct rlyrt_attrs {
  int32_t n;
  const rlyrt_attr *items;      /* every field of the op's attrs class, defaults included */
} rlyrt_attrs;

/* The static type of a tensor result, as the type checker inferred it;
** shape[i] == -1 for a dimension known only at run time. */
typedef struct rlyrt_tensor_type {
  DLDataType dtype;
  int32_t ndim;
  const int64_t *shape;
} rlyrt_tensor_type;

typedef struct rlyrt_kernel_call {
  const char *op;                   /* "nn.conv2d", for messages */
  const rlyrt_attrs *attrs;         /* never NULL (n = 0 for ops without attrs) */
  rlyrt_object *const *args;        /* borrowed */
  int32_t nargs;
  const rlyrt_tensor_type *outs;    /* the result's tensors: one, or the fields of a tuple result */
  int32_t nouts;
  bool tuple_result;                /* the op returns a tuple (split, batch_norm, topk, ...) */
  rlyrt_object *result;             /* out: a new tensor, or a tuple of tensors */
} rlyrt_kernel_call;

typedef rlyrt_status (*rlyrt_kernel_fn)(rlyrt_kernel_call *c);

/* The reference kernel of an operator by its Relay name; NULL if none. */
rlyrt_kernel_fn rlyrt_kernel_lookup(const char *op);

/* Attribute access by field name (NULL if the op has no such field). */
const rlyrt_attr *rlyrt_attr_get(const rlyrt_attrs *a, const char *name);

/* {==== Errors with a place ====} */

/* Prefixes this thread's message with "where: " and returns s (for
** generated code: where is "model.relay:3:10"). */
rlyrt_status rlyrt_error_at(rlyrt_status s, const char *where);

/* {==== Building and inspecting values ====} */

/* A tuple of n fields (each retained, none NULL). NULL with the error set
** on failure. */
rlyrt_tuple *rlyrt_tuple_make(rlyrt_object *const *fields, int32_t n);
/* Field i of a tuple or an ADT value (borrowed); NULL with RLYRT_E_ARG set
** when v is neither or i is out of range. */
rlyrt_object *rlyrt_field(const rlyrt_object *v, int32_t i);
/* The number of fields of a tuple or ADT value; -1 for other values. */
int32_t rlyrt_num_fields(const rlyrt_object *v);
/* The constructor name of an ADT value ("Cons"); NULL for other values. */
const char *rlyrt_adt_ctor(const rlyrt_object *v);
/* The value a reference holds (borrowed); NULL when r is not a reference. */
rlyrt_object *rlyrt_ref_get(const rlyrt_object *r);

/* {==== Compiled code ====}
** A compiled function has one C signature: the arguments are borrowed, the
** result is owned by the caller. self is the closure being called (its
** environment holds the captured values), NULL for a global function. It
** assumes its arguments have the static types of its parameters: calls
** from outside go through rlyrt_module_call or rlyrt_closure_call, which
** check them first. A 0-d argument may be a box on the caller's stack
** (RLYRT_TENSOR_ON_STACK): a function that keeps an argument beyond the
** call keeps rlyrt_keep(arg). */
typedef rlyrt_status (*rlyrt_fn)(const rlyrt_closure *self, rlyrt_object *const *args, rlyrt_object **out);
/* Checks nargs argument values against the parameter types: RLYRT_OK, or
** RLYRT_E_ARG with a message naming the argument and what was expected. */
typedef rlyrt_status (*rlyrt_check_fn)(rlyrt_object *const *args, int32_t nargs);

struct rlyrt_module_info;

/* What a compiled closure's `code` points to (obj.flags has
** RLYRT_CLOSURE_NATIVE); interpreter closures point to IR instead. */
typedef struct rlyrt_code {
  rlyrt_fn fn;
  rlyrt_check_fn check;
  int32_t arity;
  const char *name;                       /* "@main", or "fn at model.relay:3:5" */
  const struct rlyrt_module_info *module; /* the module the code belongs to */
  const char *type;                       /* its Relay type; NULL when polymorphic */
} rlyrt_code;

#define RLYRT_CLOSURE_NATIVE 1

/* A global function of a compiled module. */
typedef struct rlyrt_function_info {
  const char *name;                  /* "main" (the Relay name without '@') */
  const char *type;                  /* its Relay type: "fn (Tensor[(2), float32]) -> float32" */
  int32_t nparams;
  const char *const *param_names;    /* "x" for %x */
  const char *const *param_types;    /* Relay types of the parameters */
  const char *result_type;
  const rlyrt_code *code;
} rlyrt_function_info;

/* A constructor of an ADT of a compiled module. */
typedef struct rlyrt_ctor_info {
  const char *name;   /* "Cons" */
  const char *adt;    /* "List" */
  int32_t tag;        /* index in its type definition */
  int32_t arity;
} rlyrt_ctor_info;

#define RLYRT_ABI_VERSION 3

/* The description a compiled module exports (NAME_module() in its header;
** rlyrt_module_entry() in a shared library built by relayc). A shared
** library carries its own private copy of the runtime: last_error and
** set_allocator reach that copy. */
typedef struct rlyrt_module_info {
  uint32_t abi;                            /* RLYRT_ABI_VERSION */
  const char *name;                        /* the --name given to relayc build */
  int32_t nfunctions;
  const rlyrt_function_info *functions;    /* sorted by name */
  int32_t nctors;
  const rlyrt_ctor_info *ctors;
  const char *(*last_error)(void);
  void (*set_allocator)(const rlyrt_allocator *a);
  /* The module's kernel thread count (rlyrt_module_set_threads): n >= 0
  ** sets it; returns the count now (0: one per CPU). ABI 3 on. */
  int32_t (*threads)(int32_t n);
} rlyrt_module_info;

/* {==== Loading and calling compiled modules ====}
** A module is immutable once loaded (but for its kernel thread count,
** rlyrt_module_set_threads below): any number of threads may call its
** functions at once (each with its own argument values). */

typedef struct rlyrt_module rlyrt_module;

/* Loads a shared library built by `relayc build` (dlopen). The module
** shares this process's allocator. Errors: RLYRT_E_IO (cannot load, not a
** relayc module, another ABI version). */
rlyrt_status rlyrt_module_load(const char *path, rlyrt_module **out) RLYRT_MUST_CHECK;
/* A module for a statically linked description (NAME_module()). */
rlyrt_status rlyrt_module_wrap(const rlyrt_module_info *info, rlyrt_module **out) RLYRT_MUST_CHECK;
/* Unloads (a loaded library) and frees m. Values that came out of it must
** be released before: ADT values and constants point into its code. */
void rlyrt_module_free(rlyrt_module *m);
const rlyrt_module_info *rlyrt_module_get_info(const rlyrt_module *m);
/* The global function called name ("main" or "@main"); NULL if none. */
const rlyrt_function_info *rlyrt_module_find(const rlyrt_module *m, const char *name);
/* Calls the global function name with nargs arguments (borrowed); *out is
** the result (owned). The count, kinds, dtypes and shapes of the arguments
** are checked first (RLYRT_E_ARG); run-time failures return their status.
** The message is in rlyrt_last_error(). */
rlyrt_status rlyrt_module_call(const rlyrt_module *m, const char *name, rlyrt_object *const *args, int32_t nargs,
                               rlyrt_object **out) RLYRT_MUST_CHECK;
/* An ADT value of constructor ctor ("Cons") of m with n fields (borrowed,
** retained). RLYRT_E_ARG for an unknown constructor or a wrong count. */
rlyrt_status rlyrt_module_adt_new(const rlyrt_module *m, const char *ctor, rlyrt_object *const *fields, int32_t n,
                                  rlyrt_object **out) RLYRT_MUST_CHECK;
/* Calls a closure (a function value returned by a compiled function) with
** nargs arguments (borrowed), checked as rlyrt_module_call does. */
rlyrt_status rlyrt_closure_call(const rlyrt_object *closure, rlyrt_object *const *args, int32_t nargs,
                                rlyrt_object **out) RLYRT_MUST_CHECK;

/* {==== Threads ====}
** The kernels of a module may split their work over several threads of a
** pool that the runtime keeps (one per copy of the runtime: a shared
** library built by relayc has its own; a program linking the runtime has
** one). Only kernels with enough work do (a large GEMM, GEMV, elementwise
** loop or reduction), and they split it so that every output is computed
** by one thread in one fixed order: results are the same bits for any
** thread count. The count is the module's: `relayc build --threads N`
** sets its default (1 when not given: no thread is ever started),
** rlyrt_module_set_threads changes it. Threads are started at the first
** call that uses them and sleep between calls. */

/* The most threads one call of a kernel uses. */
#define RLYRT_MAX_THREADS 256

/* Sets m's kernel thread count: n >= 1 threads (the calling thread is one
** of them; 1: no thread is started), 0: one per CPU the process may run
** on (rlyrt_cpu_count). Counts above the CPUs are honoured: ask for them
** only on purpose. Safe while other threads call m: calls that start
** later use the new count. Errors: RLYRT_E_ARG (n < 0 or above
** RLYRT_MAX_THREADS, m NULL). */
rlyrt_status rlyrt_module_set_threads(rlyrt_module *m, int32_t n) RLYRT_MUST_CHECK;
/* m's kernel thread count as set (0: one per CPU); 1 for NULL. */
int32_t rlyrt_module_get_threads(const rlyrt_module *m);
/* The number of CPUs this process may run on (its affinity mask), at
** least 1, at most RLYRT_MAX_THREADS. */
int32_t rlyrt_cpu_count(void);
/* The threads a call asking for n uses: n from 1 to RLYRT_MAX_THREADS, 0
** gives rlyrt_cpu_count(), below 0 gives 1. */
int32_t rlyrt_thread_count(int32_t n);

/* An item of rlyrt_parallel_for: fn(ctx, i, slot) does item i. slot
** (0 <= slot < the call's thread count) names the thread running it:
** items running at the same time in one call have different slots, so an
** item may use per-slot scratch memory. */
typedef void (*rlyrt_task_fn)(void *ctx, int64_t i, int32_t slot);
/* Runs fn(ctx, i, slot) once for every i in [0, n), on up to
** rlyrt_thread_count(nthreads) threads (the caller and the pool's
** workers), and returns when every item is done. Items may run in any
** order, at the same time: each must write only its own outputs. With one
** thread, on a pool's worker, inside an item of another call (nested) or
** when no thread can be started, every item runs on the caller, in order
** (slot 0). Any number of threads may call it at once; workers busy with
** other calls are not waited for (the caller runs the items no one took).
** Never fails. */
void rlyrt_parallel_for(int32_t nthreads, int64_t n, rlyrt_task_fn fn, void *ctx);
/* The workers this copy of the runtime has started (for tests). */
int32_t rlyrt_pool_size(void);

/* {==== For generated code ====}
** Checks used by the argument checkers relayc generates: each returns
** RLYRT_OK or RLYRT_E_ARG with the message "WHAT: expected EXPECTED, got
** ...". shape has ndim entries, -1 for any size. */
rlyrt_status rlyrt_check_tensor(const rlyrt_object *v, DLDataType dtype, int32_t ndim, const int64_t *shape,
                                const char *what, const char *expected);
/* v is a value of kind (a tuple or ADT value with n fields: n >= 0; any
** closure: n = -1, or one of arity n). */
rlyrt_status rlyrt_check_kind(const rlyrt_object *v, rlyrt_kind kind, int32_t n, const char *what,
                              const char *expected);
/* v is a compiled closure of arity n whose Relay type is type (NULL: any
** type of that arity; a polymorphic closure matches any type). */
rlyrt_status rlyrt_check_closure(const rlyrt_object *v, int32_t n, const char *type, const char *what);
/* After the call of closure c failed with s: brings the message of c's
** module into this copy of the runtime (modules have private copies) and
** returns s. */
rlyrt_status rlyrt_closure_failed(const rlyrt_object *c, rlyrt_status s);
/* A shared module's constants (n bytes at blob, its read-only data) copied
** into pages of their own, on a huge-page boundary with huge pages asked
** for (madvise), read-only once written; the module's constructor calls it
** when the constants reach 4 MiB and points its constant tensors at the
** copy. NULL where there is no copy: the environment variable
** RLYRT_CONSTS_COPY=0, no memory, or no mmap; the module then reads blob.
** rlyrt_consts_free(copy, n) unmaps it (NULL: nothing). */
void *rlyrt_consts_copy(const void *blob, size_t n);
void rlyrt_consts_free(void *copy, size_t n);
/* The allocator in use (to share it with a loaded module). */
const rlyrt_allocator *rlyrt_get_allocator(void);
/* Nonzero when it is the default one: a loaded module then keeps its own
** default, whose scratch blocks it may keep (rlyrt_scratch_alloc). */
int rlyrt_allocator_is_default(void);

/* {==== What a module was built for: profiling and CPU checks ====}
** A module built with `relayc build --profile` or `--target native` also
** carries an rlyrt_module_build (NAME_module_build() in its header;
** rlyrt_module_build_entry() in a shared library); ordinary modules do
** not (their kernels pick their ISA at run time and carry no timing code). */

/* One kernel of a module built with --profile. calls and ns grow with
** every call of the kernel, min_ns falls to its fastest call (relaxed
** atomics: any number of threads). */
typedef struct rlyrt_kernel_record {
  const char *name;      /* "K3" */
  const char *ops;       /* the operators it runs: "nn.dense, add, nn.bias_add" */
  const char *shape;     /* its result: "(1, 64) float32", a tuple as "(1, 8) float32 x 4" */
  const char *schedule;  /* "GEMV float32", "elementwise chain", "reference", ... */
  uint64_t calls;
  uint64_t ns;           /* nanoseconds, CLOCK_MONOTONIC */
  uint64_t min_ns;       /* the fastest call's; 0 before the first */
} rlyrt_kernel_record;

typedef struct rlyrt_module_build {
  uint32_t size;                 /* sizeof(rlyrt_module_build) when built: fields are only added at the end */
  const char *relayc_version;    /* "0.1.0" */
  const char *target;            /* "native", a triple, or "" for the default (run-time dispatch) */
  const char *isa;               /* ISA extensions the code needs, space-separated ("" none) */
  const char *summary;           /* what was built, as NAME.h's first comment says it */
  int32_t profile;               /* 1: kernels are timed */
  int32_t nkernels;
  rlyrt_kernel_record *const *kernels; /* profile: nkernels records, else NULL */
} rlyrt_module_build;

/* The build description of m: NULL for a module built without --profile
** and --target native, or wrapped with rlyrt_module_wrap. */
const rlyrt_module_build *rlyrt_module_get_build(const rlyrt_module *m);
/* Sets every record's calls and ns of b to 0 (b NULL: nothing). */
void rlyrt_profile_reset(const rlyrt_module_build *b);

/* Checks that this CPU (and OS) supports every extension of isa ("avx2
** fma avx512f", names as GCC's -m options spell them). RLYRT_OK, or
** RLYRT_E_UNSUPPORTED with a message naming what (needed by what) is
** missing. Compiled for baseline x86-64, so it runs on any x86-64 CPU.
** The environment variable RLYRT_CPU_DISABLE (a space- or
** comma-separated list) makes it treat those extensions as missing (for
** tests). Unknown names are missing; on other architectures every name
** is. */
rlyrt_status rlyrt_cpu_check(const char *isa, const char *what);

/* For generated code: a CLOCK_MONOTONIC time in nanoseconds, and adding
** one call that started at t0 to r. */
uint64_t rlyrt_profile_now(void);
void rlyrt_profile_add(rlyrt_kernel_record *r, uint64_t t0);

#ifdef __cplusplus
}
#endif

#endif
