/* kernel.h: helpers for writing the reference kernels (private to the
** runtime). Kernels are written for clarity, not speed: they are the
** oracle compiled code is checked against.
**
** A kernel receives an rlyrt_kernel_call: borrowed arguments, the op's
** attributes (every field, defaults included), and the result's static
** tensor types as the type checker inferred them. It sets c->result to a
** new tensor (or a tuple of tensors for ops with a tuple result) and
** returns RLYRT_OK, or returns an error status with a message naming the
** op (rk_fail). Each family lists its kernels in k_<family>.def as
** KERNEL("op.name", function); kernels.c gathers the lists. */
#ifndef RLYRT_KERNEL_H
#define RLYRT_KERNEL_H

#include "relayc/runtime.h"

/* Sets the error "OP: message" and returns s. */
rlyrt_status rk_fail(const rlyrt_kernel_call *c, rlyrt_status s, const char *fmt, ...) RLYRT_PRINTF(3, 4);

/* Argument i as a tensor (RLYRT_E_ARG otherwise). */
rlyrt_status rk_tensor_arg(const rlyrt_kernel_call *c, int i, rlyrt_tensor **t);
/* Argument i as a tuple of tensors (concatenate, stack, einsum). */
rlyrt_status rk_tuple_arg(const rlyrt_kernel_call *c, int i, rlyrt_tuple **t);

/* A new tensor shaped like output i's static type (every dim known). */
rlyrt_status rk_alloc_out(const rlyrt_kernel_call *c, int i, rlyrt_tensor **t);
/* A new tensor of any dtype and shape (for dims known only at run time). */
rlyrt_status rk_alloc(const rlyrt_kernel_call *c, DLDataType dt, int32_t ndim, const int64_t *shape, rlyrt_tensor **t);
/* Sets c->result from n tensors (consumed): the tensor itself when the op
** has a single tensor result, else a tuple of them. */
rlyrt_status rk_set_result(rlyrt_kernel_call *c, rlyrt_tensor **outs, int n);

/* Attributes by field name. */
bool rk_attr_is_none(const rlyrt_kernel_call *c, const char *name);
int64_t rk_attr_int(const rlyrt_kernel_call *c, const char *name, int64_t dflt);
double rk_attr_float(const rlyrt_kernel_call *c, const char *name, double dflt);
/* "" when None or absent. */
const char *rk_attr_str(const rlyrt_kernel_call *c, const char *name);
/* Integer array (a single integer counts as one element): the count (items
** written to out up to max), or -1 when None/absent. */
int rk_attr_ints(const rlyrt_kernel_call *c, const char *name, int64_t *out, int max);
/* A dtype attribute ("" = none): false when empty or unknown. */
bool rk_attr_dtype(const rlyrt_kernel_call *c, const char *name, DLDataType *out);

/* Row-major index <-> coordinates. */
void rk_unravel(int64_t index, const int64_t *shape, int ndim, int64_t *coords);
int64_t rk_ravel(const int64_t *coords, const int64_t *shape, int ndim);
/* The flat index into an input of shape in_shape (rank in_ndim, NumPy
** broadcasting) for the output coordinates out_coords (rank out_ndim). */
int64_t rk_broadcast_index(const int64_t *out_coords, int out_ndim, const int64_t *in_shape, int in_ndim);
/* Parses "float32", "int8", "bool", ... */
bool rk_dtype_parse(const char *s, DLDataType *out);

#endif
