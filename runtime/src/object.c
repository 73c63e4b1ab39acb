/* object.c: refcounted values (tensors, tuples, ADT values, closures,
** references) and element access for kernels. */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "relayc/runtime.h"

enum { DATA_ALIGN = 64, SMALL_ALIGN = 16 };

static void *new_object(size_t size, rlyrt_kind kind) {
  rlyrt_object *o = rlyrt_alloc(size, SMALL_ALIGN);
  if (!o) return NULL;
  memset(o, 0, size);
  o->refcount = 1;
  o->kind = (uint16_t)kind;
  return o;
}

rlyrt_object *rlyrt_retain(rlyrt_object *o) { return rlyrt_retain_inline(o); }

rlyrt_status rlyrt_unstack(rlyrt_object **v) {
  rlyrt_object *o = *v;
  if (!o) return RLYRT_OK;
  if (o->kind == RLYRT_TENSOR) {
    if (!(o->flags & RLYRT_TENSOR_ON_STACK)) return RLYRT_OK;
    rlyrt_object *k = rlyrt_keep(o);
    if (!k) return RLYRT_E_NOMEM;
    *v = k; /* o is static: nothing to release */
    return RLYRT_OK;
  }
  if (o->kind != RLYRT_TUPLE) return RLYRT_OK;
  /* Only a tuple the kernel built can hold an operand that is on a stack
  ** (a tuple operand never does): its fields may be replaced. */
  rlyrt_tuple *t = RLYRT_AS_TUPLE(o);
  for (int32_t i = 0; i < t->n; i++) {
    rlyrt_status s = rlyrt_unstack(&t->fields[i]);
    if (s != RLYRT_OK) return s;
  }
  return RLYRT_OK;
}

rlyrt_object *rlyrt_keep(rlyrt_object *o) {
  if (!o || !(o->flags & RLYRT_TENSOR_ON_STACK) || o->kind != RLYRT_TENSOR) return rlyrt_retain_inline(o);
  rlyrt_tensor *t = rlyrt_tensor_copy_dl(&RLYRT_AS_TENSOR(o)->dl);
  return t ? &t->obj : NULL;
}

int32_t rlyrt_refcount(const rlyrt_object *o) {
  int32_t rc = __atomic_load_n(&o->refcount, __ATOMIC_RELAXED);
  return rc >= 0 || rc == RLYRT_REFCOUNT_STATIC ? rc : -rc;
}

/* Drops one reference to o; true when it was the last (o must be freed). */
static bool drop(rlyrt_object *o) {
  int32_t rc = __atomic_load_n(&o->refcount, __ATOMIC_RELAXED);
  if (rc > 0) {
    o->refcount = rc - 1;
    return rc == 1;
  }
  if (rc == RLYRT_REFCOUNT_STATIC) return false;
  return __atomic_add_fetch(&o->refcount, 1, __ATOMIC_ACQ_REL) == 0;
}

/* Children of a container, for the iterative release. */
static int32_t children(rlyrt_object *o, rlyrt_object ***kids) {
  switch (o->kind) {
  case RLYRT_TUPLE: *kids = RLYRT_AS_TUPLE(o)->fields; return RLYRT_AS_TUPLE(o)->n;
  case RLYRT_ADT: *kids = RLYRT_AS_ADT(o)->fields; return RLYRT_AS_ADT(o)->n;
  case RLYRT_CLOSURE: *kids = RLYRT_AS_CLOSURE(o)->env; return RLYRT_AS_CLOSURE(o)->nenv;
  case RLYRT_REF: *kids = &RLYRT_AS_REF(o)->value; return 1;
  default: *kids = NULL; return 0;
  }
}

/* Visits o and, depth first with an explicit stack (a million-long list
** needs no recursion), every child for which enter(child) is true; then
** leave(x) (if any) once x's children are entered. When no memory is left
** for a longer stack, stuck(child) deals with that child instead. */
static void walk(rlyrt_object *o, bool (*enter)(rlyrt_object *), void (*leave)(rlyrt_object *),
                 void (*stuck)(rlyrt_object *)) {
  rlyrt_object *stack_buf[64];
  rlyrt_object **stack = stack_buf;
  size_t cap = 64, sp = 0;
  stack[sp++] = o;
  while (sp) {
    rlyrt_object *x = stack[--sp];
    rlyrt_object **kids;
    int32_t n = children(x, &kids);
    for (int32_t i = 0; i < n; i++) {
      rlyrt_object *k = kids[i];
      if (!k || !enter(k)) continue;
      if (sp == cap) {
        size_t ncap = cap * 2;
        rlyrt_object **ns = rlyrt_alloc(ncap * sizeof *ns, sizeof(void *));
        if (!ns) {
          stuck(k);
          continue;
        }
        memcpy(ns, stack, sp * sizeof *ns);
        if (stack != stack_buf) rlyrt_free(stack);
        stack = ns;
        cap = ncap;
      }
      stack[sp++] = k;
    }
    if (leave) leave(x);
  }
  if (stack != stack_buf) rlyrt_free(stack);
}

/* No memory to free the rest iteratively: leak it rather than crash (the
** error is set). No other thread holds k any more. */
static void leak(rlyrt_object *k) { k->refcount = 1; }

/* {==== ADT values with their scalar fields inline ====}
** rlyrt_adt_new_boxes allocates an ADT value and nboxes 0-d tensors in one
** block: [rlyrt_adt, fields][live][box 0][box 1]..., each box BOX_SIZE
** bytes: the parent pointer, the tensor header, 16 bytes of data. A box is
** an ordinary refcounted tensor (flag RLYRT_TENSOR_IN_ADT) that the value
** holds in one of its fields, and may outlive it: `live` counts the value
** itself and each box not yet dead, and the block is freed when the last
** of them dies. So a constructor call with scalar fields allocates once. */

enum { BOX_HEAD = 16, BOX_TENSOR = 64, BOX_DATA = 16, BOX_SIZE = BOX_HEAD + BOX_TENSOR + BOX_DATA };

static size_t boxes_offset(int32_t n) {
  size_t off = sizeof(rlyrt_adt) + sizeof(rlyrt_object *) * (size_t)n;
  return (off + 15) & ~(size_t)15;
}

static int32_t *block_live(rlyrt_adt *a) { return (int32_t *)((char *)a + boxes_offset(a->n)); }

static void block_drop(rlyrt_adt *a) {
  if (__atomic_sub_fetch(block_live(a), 1, __ATOMIC_ACQ_REL) == 0) rlyrt_free(a);
}

rlyrt_adt *rlyrt_adt_new_boxes(int32_t tag, const char *ctor, int32_t n, int32_t nboxes) {
  if (nboxes <= 0) return rlyrt_adt_new(tag, ctor, n);
  size_t size = boxes_offset(n) + 16 + (size_t)nboxes * BOX_SIZE;
  rlyrt_adt *a = new_object(size, RLYRT_ADT);
  if (!a) return NULL;
  a->tag = tag;
  a->ctor = ctor;
  a->n = n;
  a->obj.flags = RLYRT_ADT_BOXES;
  *block_live(a) = 1 + nboxes;
  for (int32_t k = 0; k < nboxes; k++) {
    char *b = (char *)block_live(a) + 16 + (size_t)k * BOX_SIZE;
    *(rlyrt_adt **)b = a;
    rlyrt_tensor *t = (rlyrt_tensor *)(b + BOX_HEAD);
    t->obj.refcount = 1;
    t->obj.kind = RLYRT_TENSOR;
    t->obj.flags = RLYRT_TENSOR_IN_ADT;
    t->dl.data = b + BOX_HEAD + BOX_TENSOR;
    t->dl.device.device_type = kDLCPU;
    t->dl.shape = t->shape_buf;
  }
  return a;
}

rlyrt_tensor *rlyrt_adt_box(rlyrt_adt *a, int32_t k, DLDataType dtype) {
  char *b = (char *)block_live(a) + 16 + (size_t)k * BOX_SIZE;
  rlyrt_tensor *t = (rlyrt_tensor *)(b + BOX_HEAD);
  t->dl.dtype = dtype;
  return t;
}

/* A 0-d tensor on a caller's stack that fits a box. */
static bool boxable(const rlyrt_object *o) {
  if (!o || o->kind != RLYRT_TENSOR || !(o->flags & RLYRT_TENSOR_ON_STACK)) return false;
  const rlyrt_tensor *t = (const rlyrt_tensor *)o;
  return t->dl.ndim == 0 && rlyrt_dtype_bytes(t->dl.dtype) > 0 && rlyrt_dtype_bytes(t->dl.dtype) <= BOX_DATA;
}

rlyrt_adt *rlyrt_adt_new_kept(int32_t tag, const char *ctor, int32_t n, rlyrt_object *const *fields) {
  int32_t nboxes = 0;
  for (int32_t i = 0; i < n; i++) nboxes += boxable(fields[i]);
  rlyrt_adt *a = rlyrt_adt_new_boxes(tag, ctor, n, nboxes);
  if (!a) return NULL;
  for (int32_t i = 0, k = 0; i < n; i++) {
    if (boxable(fields[i])) {
      const rlyrt_tensor *src = (const rlyrt_tensor *)fields[i];
      rlyrt_tensor *b = rlyrt_adt_box(a, k++, src->dl.dtype);
      memcpy(b->dl.data, (const char *)src->dl.data + src->dl.byte_offset, rlyrt_dtype_bytes(src->dl.dtype));
      a->fields[i] = &b->obj;
    } else if (!(a->fields[i] = rlyrt_keep_inline(fields[i])) && fields[i]) {
      rlyrt_release(&a->obj);
      return NULL;
    }
  }
  return a;
}

static void free_object(rlyrt_object *x) {
  if (x->kind == RLYRT_TENSOR && (x->flags & RLYRT_TENSOR_IN_ADT)) block_drop(*(rlyrt_adt **)((char *)x - BOX_HEAD));
  else if (x->kind == RLYRT_ADT && (x->flags & RLYRT_ADT_BOXES)) block_drop(RLYRT_AS_ADT(x));
  else rlyrt_free(x);
}

void rlyrt_release(rlyrt_object *o) {
  if (o && drop(o)) walk(o, drop, free_object, leak);
}

/* {==== Sharing between threads ====}
** An object becomes shared once, when it is first passed into a call (or
** given to rlyrt_share): its count goes from n to -n, and with it the
** count of everything it holds. Generated code then changes such counts
** atomically. Sharing takes a lock, and `sharing` is set while it runs: a
** thread that finds its argument already shared returns at once unless a
** sharing is under way (then it waits on the lock), so it never sees a
** shared object that holds a private one still being converted (cycles
** through references included). Objects are shared once in their life,
** so the lock is rare. */

static pthread_mutex_t share_lock = PTHREAD_MUTEX_INITIALIZER;
static int sharing;

/* Makes o shared if it is private; true if it was. */
static bool make_shared(rlyrt_object *o) {
  int32_t rc = __atomic_load_n(&o->refcount, __ATOMIC_RELAXED);
  while (rc > 0)
    if (__atomic_compare_exchange_n(&o->refcount, &rc, -rc, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) return true;
  return false;
}

/* Shares what o (already shared) holds, recursively: the fallback when no
** memory is left for walk's stack (the error rlyrt_alloc set is cleared). */
static void share_children_rec(rlyrt_object *o) {
  rlyrt_clear_error();
  rlyrt_object **kids;
  int32_t n = children(o, &kids);
  for (int32_t i = 0; i < n; i++)
    if (kids[i] && make_shared(kids[i])) share_children_rec(kids[i]);
}

void rlyrt_share(rlyrt_object *o) {
  if (!o) return;
  if (__atomic_load_n(&o->refcount, __ATOMIC_SEQ_CST) <= 0 && !__atomic_load_n(&sharing, __ATOMIC_SEQ_CST)) return;
  pthread_mutex_lock(&share_lock);
  __atomic_store_n(&sharing, 1, __ATOMIC_SEQ_CST);
  /* An object is shared when first reached, which also ends cycles. */
  if (make_shared(o)) walk(o, make_shared, NULL, share_children_rec);
  __atomic_store_n(&sharing, 0, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&share_lock);
}

/* {==== Tensors ====} */

bool rlyrt_dtype_eq(DLDataType a, DLDataType b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }

size_t rlyrt_dtype_bytes(DLDataType t) {
  if (t.lanes != 1) return 0;
  switch (t.code) {
  case kDLInt: return (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64) ? t.bits / 8u : 0;
  case kDLUInt:
    if (t.bits == 1) return 1;
    return (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64) ? t.bits / 8u : 0;
  case kDLFloat: return (t.bits == 16 || t.bits == 32 || t.bits == 64) ? t.bits / 8u : 0;
  default: return 0;
  }
}

bool rlyrt_dtype_is_float(DLDataType t) { return t.code == kDLFloat; }

const char *rlyrt_dtype_name(DLDataType t, char *buf) {
  static const char *codes[] = {"int", "uint", "float", "handle", "bfloat", "complex"};
  if (t.code == kDLUInt && t.bits == 1 && t.lanes == 1) snprintf(buf, 32, "bool");
  else if (t.code < 6 && t.lanes == 1) snprintf(buf, 32, "%s%u", codes[t.code], (unsigned)t.bits);
  else if (t.code < 6) snprintf(buf, 32, "%s%ux%u", codes[t.code], (unsigned)t.bits, (unsigned)t.lanes);
  else snprintf(buf, 32, "dtype(%u, %u, %u)", (unsigned)t.code, (unsigned)t.bits, (unsigned)t.lanes);
  return buf;
}

int64_t rlyrt_tensor_numel(const rlyrt_tensor *t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->dl.ndim; i++) n *= t->dl.shape[i];
  return n;
}

size_t rlyrt_tensor_nbytes(const rlyrt_tensor *t) {
  return (size_t)rlyrt_tensor_numel(t) * rlyrt_dtype_bytes(t->dl.dtype);
}

rlyrt_tensor *rlyrt_tensor_new(DLDataType dtype, int32_t ndim, const int64_t *shape, bool zero) {
  char name[32];
  size_t elem = rlyrt_dtype_bytes(dtype);
  if (!elem) {
    rlyrt_error(RLYRT_E_UNSUPPORTED, "unsupported dtype %s", rlyrt_dtype_name(dtype, name));
    return NULL;
  }
  if (ndim < 0 || ndim > 64) {
    rlyrt_error(RLYRT_E_ARG, "unsupported rank %d", (int)ndim);
    return NULL;
  }
  uint64_t numel = 1;
  for (int32_t i = 0; i < ndim; i++) {
    if (shape[i] < 0) {
      rlyrt_error(RLYRT_E_ARG, "negative dimension %lld", (long long)shape[i]);
      return NULL;
    }
    if (shape[i] && numel > (UINT64_MAX / 2) / (uint64_t)shape[i] / elem) {
      rlyrt_error(RLYRT_E_NOMEM, "tensor too large");
      return NULL;
    }
    numel *= (uint64_t)shape[i];
  }
  /* Data of 64 bytes or more is 64-byte aligned (vector loads); smaller
  ** data (scalars above all) only 16, which malloc gives cheaply. */
  size_t bytes = (size_t)numel * elem;
  size_t align = bytes >= DATA_ALIGN ? DATA_ALIGN : SMALL_ALIGN;
  size_t head = sizeof(rlyrt_tensor) + sizeof(int64_t) * (size_t)ndim;
  head = (head + align - 1) & ~(size_t)(align - 1);
  rlyrt_tensor *t = rlyrt_alloc(head + bytes, align);
  if (!t) return NULL;
  memset(t, 0, head);
  t->obj.refcount = 1;
  t->obj.kind = RLYRT_TENSOR;
  t->dl.data = (char *)t + head;
  t->dl.device.device_type = kDLCPU;
  t->dl.device.device_id = 0;
  t->dl.ndim = ndim;
  t->dl.dtype = dtype;
  t->dl.shape = t->shape_buf;
  t->dl.strides = NULL;
  t->dl.byte_offset = 0;
  if (ndim) memcpy(t->shape_buf, shape, sizeof(int64_t) * (size_t)ndim);
  if (zero && bytes) memset(t->dl.data, 0, bytes);
  return t;
}

rlyrt_tensor *rlyrt_tensor_copy_dl(const DLTensor *src) {
  if (src->device.device_type != kDLCPU) {
    rlyrt_error(RLYRT_E_UNSUPPORTED, "only CPU tensors are supported (device type %d)", (int)src->device.device_type);
    return NULL;
  }
  if (src->strides) {
    int64_t expect = 1;
    for (int32_t i = src->ndim - 1; i >= 0; i--) {
      if (src->shape[i] != 1 && src->strides[i] != expect) {
        rlyrt_error(RLYRT_E_UNSUPPORTED, "only compact row-major tensors are supported");
        return NULL;
      }
      expect *= src->shape[i];
    }
  }
  rlyrt_tensor *t = rlyrt_tensor_new(src->dtype, src->ndim, src->shape, false);
  if (!t) return NULL;
  size_t n = rlyrt_tensor_nbytes(t);
  if (n) memcpy(t->dl.data, (const char *)src->data + src->byte_offset, n);
  return t;
}

/* {==== Containers ====} */

rlyrt_tuple *rlyrt_tuple_new(int32_t n) {
  rlyrt_tuple *t = new_object(sizeof(rlyrt_tuple) + sizeof(rlyrt_object *) * (size_t)n, RLYRT_TUPLE);
  if (t) t->n = n;
  return t;
}

rlyrt_adt *rlyrt_adt_new(int32_t tag, const char *ctor, int32_t n) {
  rlyrt_adt *a = new_object(sizeof(rlyrt_adt) + sizeof(rlyrt_object *) * (size_t)n, RLYRT_ADT);
  if (a) {
    a->tag = tag;
    a->ctor = ctor;
    a->n = n;
  }
  return a;
}

rlyrt_closure *rlyrt_closure_new(const void *code, int32_t nenv) {
  rlyrt_closure *c = new_object(sizeof(rlyrt_closure) + sizeof(rlyrt_object *) * (size_t)nenv, RLYRT_CLOSURE);
  if (c) {
    c->code = code;
    c->nenv = nenv;
  }
  return c;
}

static void set_take(rlyrt_object **slot, rlyrt_object *v) {
  rlyrt_object *old = *slot;
  *slot = v;
  rlyrt_release(old);
}

void rlyrt_tuple_set_take(rlyrt_tuple *t, int32_t i, rlyrt_object *v) { set_take(&t->fields[i], v); }
void rlyrt_adt_set_take(rlyrt_adt *a, int32_t i, rlyrt_object *v) { set_take(&a->fields[i], v); }
void rlyrt_closure_set_take(rlyrt_closure *c, int32_t i, rlyrt_object *v) { set_take(&c->env[i], v); }

rlyrt_ref *rlyrt_ref_new_take(rlyrt_object *v) {
  rlyrt_ref *r = new_object(sizeof(rlyrt_ref), RLYRT_REF);
  if (!r) {
    rlyrt_release(v);
    return NULL;
  }
  r->value = v;
  return r;
}

void rlyrt_ref_write_take(rlyrt_ref *r, rlyrt_object *v) {
  /* What a shared reference holds is shared too. */
  if (__atomic_load_n(&r->obj.refcount, __ATOMIC_RELAXED) <= 0) rlyrt_share(v);
  set_take(&r->value, v);
}

/* {==== Scalars ====} */

float rlyrt_half_to_float(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  float v;
  if (exp == 0) v = ldexpf((float)frac, -24);
  else if (exp == 31) v = frac ? NAN : INFINITY;
  else v = ldexpf((float)(1024 + frac), exp - 25);
  return sign ? -v : v;
}

uint16_t rlyrt_float_to_half(float f) {
  uint16_t sign = signbit(f) ? 0x8000 : 0;
  float a = fabsf(f);
  if (isnan(f)) return 0x7e00;
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < 0x1p-25f) return sign;
  int e;
  float m = frexpf(a, &e);
  int exp = e - 1;
  if (exp < -14) return sign | (uint16_t)nearbyintf(a * 0x1p24f);
  uint32_t bits = ((uint32_t)(exp + 15) << 10) + (uint32_t)nearbyintf((2 * m - 1) * 1024.0f);
  return sign | (uint16_t)bits;
}

double rlyrt_get_f64(const rlyrt_tensor *t, int64_t i) {
  const void *d = t->dl.data;
  DLDataType dt = t->dl.dtype;
  switch (dt.code) {
  case kDLFloat:
    if (dt.bits == 32) return ((const float *)d)[i];
    if (dt.bits == 64) return ((const double *)d)[i];
    return rlyrt_half_to_float(((const uint16_t *)d)[i]);
  default: return (double)rlyrt_get_i64(t, i);
  }
}

int64_t rlyrt_get_i64(const rlyrt_tensor *t, int64_t i) {
  const void *d = t->dl.data;
  DLDataType dt = t->dl.dtype;
  if (dt.code == kDLFloat) return (int64_t)rlyrt_get_f64(t, i);
  if (dt.code == kDLInt) {
    switch (dt.bits) {
    case 8: return ((const int8_t *)d)[i];
    case 16: return ((const int16_t *)d)[i];
    case 32: return ((const int32_t *)d)[i];
    default: return ((const int64_t *)d)[i];
    }
  }
  switch (dt.bits) {
  case 1:
  case 8: return ((const uint8_t *)d)[i];
  case 16: return ((const uint16_t *)d)[i];
  case 32: return ((const uint32_t *)d)[i];
  default: return (int64_t)((const uint64_t *)d)[i];
  }
}

void rlyrt_set_f64(rlyrt_tensor *t, int64_t i, double v) {
  void *d = t->dl.data;
  DLDataType dt = t->dl.dtype;
  if (dt.code == kDLFloat) {
    if (dt.bits == 32) ((float *)d)[i] = (float)v;
    else if (dt.bits == 64) ((double *)d)[i] = v;
    else ((uint16_t *)d)[i] = rlyrt_float_to_half((float)v);
    return;
  }
  if (dt.code == kDLUInt && dt.bits == 1) {
    ((uint8_t *)d)[i] = v != 0;
    return;
  }
  /* Float to integer truncates toward zero (C semantics, as TVM's cast). */
  rlyrt_set_i64(t, i, isnan(v) ? 0 : v >= 9.2233720368547758e18 ? INT64_MAX : v <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)v);
}

void rlyrt_set_i64(rlyrt_tensor *t, int64_t i, int64_t v) {
  void *d = t->dl.data;
  DLDataType dt = t->dl.dtype;
  if (dt.code == kDLFloat) {
    rlyrt_set_f64(t, i, (double)v);
    return;
  }
  if (dt.code == kDLInt) {
    switch (dt.bits) {
    case 8: ((int8_t *)d)[i] = (int8_t)v; return;
    case 16: ((int16_t *)d)[i] = (int16_t)v; return;
    case 32: ((int32_t *)d)[i] = (int32_t)v; return;
    default: ((int64_t *)d)[i] = v; return;
    }
  }
  switch (dt.bits) {
  case 1: ((uint8_t *)d)[i] = v != 0; return;
  case 8: ((uint8_t *)d)[i] = (uint8_t)v; return;
  case 16: ((uint16_t *)d)[i] = (uint16_t)v; return;
  case 32: ((uint32_t *)d)[i] = (uint32_t)v; return;
  default: ((uint64_t *)d)[i] = (uint64_t)v; return;
  }
}
