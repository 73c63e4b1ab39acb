/* import.c: an ONNX graph as a Relay module (onnx.h).
**
** The model is decoded whole by protobuf-c. The graph's values are then
** tracked by name in a table: each has the Relay expression that stands
** for it (a variable `%name` for an input, `%vN` for a node's output, a
** constant), its element type and, when known, its rank and shape (inputs
** and initializers declare theirs; the converters below propagate what
** they can). A converter per operator (the table at the end) writes the
** node's let bindings. Values that are constants (initializers, Constant
** nodes) also keep their data, which the converters read where ONNX passes
** attributes as inputs (Reshape's shape, Clip's bounds, Unsqueeze's axes).
**
** Relay text is written, not the IR: the importer needs nothing from the
** compiler's internals, `relayc import` prints the very text the other
** commands compile, and errors in what it wrote would be caught by the
** same type checker as any user's text. */
#include "onnx/onnx.h"
#include "onnx/import.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "base/file.h"
#include "ir/meta_write.h"
#include "onnx.pb-c.h"

static char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  return memcpy(rly_xmalloc(n), s, n);
}

/* n bytes (at least 1), 64-byte aligned, zeroed; aborts when out of memory
** as the rest of the compiler does. */
static void *aligned_xalloc(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, 64, n ? n : 1) != 0) {
    fprintf(stderr, "relayc: out of memory (%zu bytes)\n", n);
    abort();
  }
  memset(p, 0, n ? n : 1);
  return p;
}

/* Value and Importer: import.h. */

/* {==== Messages ====} */

static const char *node_label(const Onnx__NodeProto *n, char *buf, size_t len) {
  if (n->name && *n->name) snprintf(buf, len, "'%s'", n->name);
  else snprintf(buf, len, "with output '%s'", n->n_output ? n->output[0] : "?");
  return buf;
}

/* An error about the node being converted. */
static bool node_error(Importer *I, const char *fmt, ...) RLY_PRINTF(2, 3);
static bool node_error(Importer *I, const char *fmt, ...) {
  char msg[512], label[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_error(I->d, I->at, "ONNX node %s (%s, opset %d): %s", node_label(I->node, label, sizeof label),
             I->node->op_type ? I->node->op_type : "?", I->opset, msg);
  return false;
}

/* {==== Element types ====} */

static bool elem_dtype(int elem, DType *out) {
  switch (elem) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: *out = (DType){DT_FLOAT, 32, 1}; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: *out = (DType){DT_FLOAT, 64, 1}; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: *out = (DType){DT_FLOAT, 16, 1}; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: *out = (DType){DT_INT, 8, 1}; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: *out = (DType){DT_INT, 16, 1}; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: *out = (DType){DT_INT, 32, 1}; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: *out = (DType){DT_INT, 64, 1}; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: *out = (DType){DT_UINT, 8, 1}; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: *out = (DType){DT_UINT, 16, 1}; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: *out = (DType){DT_UINT, 32, 1}; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64: *out = (DType){DT_UINT, 64, 1}; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: *out = (DType){DT_UINT, 1, 1}; return true;
  default: return false;
  }
}

static const char *elem_name(int elem) {
  static const char *names[] = {"undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64", "string",
                                "bool", "float16", "double", "uint32", "uint64", "complex64", "complex128",
                                "bfloat16"};
  return elem >= 0 && elem < (int)RLY_COUNTOF(names) ? names[elem] : "unknown";
}

static const char *elem_relay(int elem) {
  DType t;
  static char buf[32];
  if (!elem_dtype(elem, &t)) return "float32";
  return dtype_name(t, buf);
}


/* A literal of value v of a float element type ("0.5f", "0.5f64"), clamped
** to the type's finite range (an infinite clip bound); NaN is an error. The
** 17 digits give the double back exactly, so a float32 value prints as
** itself and the clamped maximum never rounds past the range. */
static void put_float_lit(Importer *I, StrBuf *sb, int elem, double v) {
  if (isnan(v)) {
    node_error(I, "a NaN attribute or bound is not supported");
    v = 0;
  }
  bool f64 = elem == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, f16 = elem == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16;
  double max = f64 ? 1.7976931348623157e308 : f16 ? 65504.0 : 3.4028234663852886e38;
  if (v > max) v = max;
  if (v < -max) v = -max;
  if (!f64) v = (float)v;
  sb_printf(sb, "%.17gf%s", v, f64 ? "64" : f16 ? "16" : "");
}

/* {==== Values ====} */

static Value *find_value(Importer *I, const char *name) {
  for (int i = I->values.len - 1; i >= 0; i--)
    if (strcmp(I->values.data[i].name, name) == 0) return &I->values.data[i];
  return NULL;
}

static Value *add_value(Importer *I, const char *name, const char *expr, int elem, int rank, const int64_t *dims) {
  Value v = {0};
  v.name = xstrdup(name);
  v.expr = xstrdup(expr);
  v.elem = elem;
  v.rank = rank;
  for (int i = 0; i < MAX_RANK; i++) v.dims[i] = -1;
  if (rank > 0 && dims) memcpy(v.dims, dims, sizeof(int64_t) * (size_t)rank);
  VEC_PUSH(&I->values, v);
  return &VEC_LAST(&I->values);
}

/* A Relay identifier for an ONNX name: kept when it is one already
** ([A-Za-z_][A-Za-z0-9_.]*), else its other characters become '_' and a
** leading digit gets a 'v' before it. */
static void put_ident(StrBuf *sb, const char *name) {
  if (!*name || !((*name >= 'A' && *name <= 'Z') || (*name >= 'a' && *name <= 'z') || *name == '_')) sb_putc(sb, 'v');
  for (const char *p = name; *p; p++) {
    char c = *p;
    bool word = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    /* A dot only between two word characters ("input.1"), as Relay's
    ** dotted names have it. */
    char n = p[1];
    bool next_word = (n >= 'A' && n <= 'Z') || (n >= 'a' && n <= 'z') || (n >= '0' && n <= '9') || n == '_';
    char prev = sb->len ? sb->data[sb->len - 1] : 0;
    bool prev_word = (prev >= 'A' && prev <= 'Z') || (prev >= 'a' && prev <= 'z') || (prev >= '0' && prev <= '9') ||
                     prev == '_';
    sb_putc(sb, word || (c == '.' && prev_word && next_word) ? c : '_');
  }
}

/* Whether id has the form of the importer's own let variables: v and
** digits (bind_output, let_tmp). */
static bool tmp_like(const char *id) {
  if (id[0] != 'v' || !id[1]) return false;
  for (const char *p = id + 1; *p; p++)
    if (*p < '0' || *p > '9') return false;
  return true;
}

/* Appends "%ident" for a new parameter of @main named after the ONNX name:
** its identifier (put_ident), with "_2", "_3", ... when an earlier
** parameter has it already (names that differ only in characters an
** identifier cannot hold, or a name given twice) or when it looks like one
** of the importer's let variables (an input named "v0" would be shadowed
** by `let %v0`). */
static void param_ident(Importer *I, StrBuf *e, const char *name) {
  StrBuf id = {0};
  put_ident(&id, name);
  StrBuf cand = {0};
  sb_puts(&cand, sb_str(&id));
  for (int k = 2;; k++) {
    bool used = tmp_like(sb_str(&cand));
    for (int i = 0; i < I->idents.len && !used; i++) used = strcmp(I->idents.data[i], sb_str(&cand)) == 0;
    if (!used) break;
    sb_clear(&cand);
    sb_printf(&cand, "%s_%d", sb_str(&id), k);
  }
  VEC_PUSH(&I->idents, xstrdup(sb_str(&cand)));
  sb_printf(e, "%%%s", sb_str(&cand));
  sb_free(&cand);
  sb_free(&id);
}

/* Input i of the node, or NULL (absent: an empty name or past the end). */
static Value *input(Importer *I, size_t i) {
  const Onnx__NodeProto *n = I->node;
  if (i >= n->n_input || !n->input[i] || !*n->input[i]) return NULL;
  Value *v = find_value(I, n->input[i]);
  if (!v) node_error(I, "input '%s' is not defined before the node", n->input[i]);
  if (v && v->seq) {
    /* Only control.c's sequence converters read sequences (onnx_find_value). */
    node_error(I, "input '%s' is a sequence; relayc reads sequences only as a Loop's list that each iteration "
               "appends one tensor to (SequenceEmpty, SequenceInsert, ConcatFromSequence)", n->input[i]);
    return NULL;
  }
  return v;
}

/* The same without a message when it is missing. */
static Value *input_quiet(Importer *I, size_t i) {
  const Onnx__NodeProto *n = I->node;
  if (i >= n->n_input || !n->input[i] || !*n->input[i]) return NULL;
  return find_value(I, n->input[i]);
}

static bool need_inputs(Importer *I, size_t lo) {
  if (I->node->n_input < lo) return node_error(I, "needs at least %zu inputs, has %zu", lo, I->node->n_input);
  for (size_t i = 0; i < lo; i++)
    if (!input(I, i)) return false;
  return true;
}

/* Binds a fresh variable to the expression in e and makes it output k of
** the node, with the element type, rank and dims given. */
static Value *bind_output(Importer *I, size_t k, const char *e, int elem, int rank, const int64_t *dims) {
  char var[32];
  snprintf(var, sizeof var, "%%v%d", I->tmp++);
  sb_printf(&I->body, "  let %s = %s;\n", var, e);
  if (k >= I->node->n_output || !*I->node->output[k]) return NULL;
  return add_value(I, I->node->output[k], var, elem, rank, dims);
}

/* Binds output 0 to the expression in *e (freed) and returns true: the
** last step of most converters. */
static bool finish(Importer *I, StrBuf *e, int elem, int rank, const int64_t *dims) {
  bind_output(I, 0, sb_str(e), elem, rank, dims);
  sb_free(e);
  return true;
}

/* {==== Attributes ====} */

static const Onnx__AttributeProto *attr(Importer *I, const char *name) {
  for (size_t i = 0; i < I->node->n_attribute; i++)
    if (I->node->attribute[i]->name && strcmp(I->node->attribute[i]->name, name) == 0) return I->node->attribute[i];
  return NULL;
}

static int64_t attr_int(Importer *I, const char *name, int64_t def) {
  const Onnx__AttributeProto *a = attr(I, name);
  return a ? a->i : def;
}

static double attr_float(Importer *I, const char *name, double def) {
  const Onnx__AttributeProto *a = attr(I, name);
  return a ? a->f : def;
}

static const char *attr_str(Importer *I, const char *name, const char *def, char *buf, size_t len) {
  const Onnx__AttributeProto *a = attr(I, name);
  if (!a) return def;
  size_t n = a->s.len < len - 1 ? a->s.len : len - 1;
  if (n) memcpy(buf, a->s.data, n);
  buf[n] = '\0';
  return buf;
}

/* Ints of attribute name into out (at most max); returns their count, or
** -1 when absent. */
static int attr_ints(Importer *I, const char *name, int64_t *out, int max) {
  const Onnx__AttributeProto *a = attr(I, name);
  if (!a) return -1;
  int n = (int)a->n_ints < max ? (int)a->n_ints : max;
  for (int i = 0; i < n; i++) out[i] = a->ints[i];
  return n;
}

/* Dim arithmetic on what a model claims: -1 (unknown) when any operand
** is unknown or the result overflows. */
static int64_t dim_mul(int64_t a, int64_t b) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) return -1;
  return r;
}

static int64_t dim_add(int64_t a, int64_t b) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r)) return -1;
  return r;
}

static void put_ints(StrBuf *sb, const int64_t *v, int n) {
  sb_putc(sb, '[');
  for (int i = 0; i < n; i++) sb_printf(sb, "%s%lld", i ? ", " : "", (long long)v[i]);
  sb_putc(sb, ']');
}

/* {==== Constants ====} */

static ConstData *const_new(DType t, int ndim, const int64_t *shape) {
  ConstData *c = rly_xcalloc(1, sizeof *c);
  c->dtype = t;
  c->ndim = ndim;
  c->shape = rly_xcalloc((size_t)(ndim ? ndim : 1), sizeof(int64_t));
  if (ndim) memcpy(c->shape, shape, sizeof(int64_t) * (size_t)ndim);
  size_t elem = t.bits == 1 ? 1 : t.bits / 8u;
  c->nbytes = (size_t)const_numel(c) * elem;
  c->data = aligned_xalloc(c->nbytes);
  return c;
}

static void const_free(ConstData *c) {
  if (!c) return;
  free(c->shape);
  free(c->data);
  free(c);
}

/* The bytes of an external tensor: its location (relative to the model's
** folder), offset and length. */
/* The external data of t (data_location EXTERNAL): its file (location,
** relative to the model's folder), offset and length, checked against the
** nbytes its dims need before anything is allocated. Returns the open file
** positioned at the data, or NULL after an error. */
static FILE *external_open(Importer *I, const Onnx__TensorProto *t, size_t nbytes) {
  const char *loc = NULL;
  int64_t off = 0, len = -1;
  for (size_t i = 0; i < t->n_external_data; i++) {
    const char *k = t->external_data[i]->key, *v = t->external_data[i]->value;
    if (!k || !v) continue;
    if (strcmp(k, "location") == 0) loc = v;
    else if (strcmp(k, "offset") == 0) off = strtoll(v, NULL, 10);
    else if (strcmp(k, "length") == 0) len = strtoll(v, NULL, 10);
  }
  const char *tname = t->name ? t->name : "?";
  if (!loc || !*loc || strstr(loc, "..") || loc[0] == '/') {
    diag_error(I->d, I->at, "ONNX initializer '%s': external data without a valid location", tname);
    return NULL;
  }
  StrBuf path = {0};
  sb_printf(&path, "%s/%s", I->dir, loc);
  FILE *f = fopen(sb_str(&path), "rb");
  if (!f) {
    diag_error(I->d, I->at, "ONNX initializer '%s': its external data: cannot open '%s': %s", tname, sb_str(&path),
               strerror(errno));
    sb_free(&path);
    return NULL;
  }
  int64_t size = fseeko(f, 0, SEEK_END) == 0 ? (int64_t)ftello(f) : -1;
  if (len < 0 && size >= 0 && off >= 0 && off <= size) len = size - off;
  if (size < 0 || off < 0 || off > size || len < 0 || len > size - off || (uint64_t)len != nbytes ||
      fseeko(f, (off_t)off, SEEK_SET) != 0) {
    diag_error(I->d, I->at,
               "ONNX initializer '%s': its external data (offset %lld, length %lld of the %lld-byte file '%s') does "
               "not hold its %zu bytes", tname, (long long)off, (long long)len, (long long)size, sb_str(&path), nbytes);
    fclose(f);
    sb_free(&path);
    return NULL;
  }
  sb_free(&path);
  return f;
}

/* A TensorProto's data as a constant (NULL after an error). */
static ConstData *tensor_const(Importer *I, const Onnx__TensorProto *t) {
  const char *tname = t->name ? t->name : "?";
  DType dt;
  if (!elem_dtype(t->data_type, &dt)) {
    diag_error(I->d, I->at, "ONNX tensor '%s': element type %s is not supported", tname, elem_name(t->data_type));
    return NULL;
  }
  if (t->n_dims > MAX_RANK) {
    diag_error(I->d, I->at, "ONNX tensor '%s': rank %zu is over %d", tname, t->n_dims, MAX_RANK);
    return NULL;
  }
  uint64_t numel = 1;
  for (size_t i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0 || (t->dims[i] && numel > (UINT64_MAX >> 4) / (uint64_t)t->dims[i])) {
      diag_error(I->d, I->at, "ONNX tensor '%s': bad dimension %lld", tname, (long long)t->dims[i]);
      return NULL;
    }
    numel *= (uint64_t)t->dims[i];
  }
  size_t elem = dt.bits == 1 ? 1 : dt.bits / 8u;
  if (numel > (SIZE_MAX >> 5) / elem) {
    diag_error(I->d, I->at, "ONNX tensor '%s' is too large", tname);
    return NULL;
  }
  /* Where the data is, and how many elements that holds. Without raw
  ** data, the typed field ONNX assigns to the element type: float_data
  ** (float), double_data (double), int64_data (int64), uint64_data (uint32,
  ** uint64), int32_data (the narrower ints, bool, float16's bits). */
  enum { F_RAW, F_FLOAT, F_DOUBLE, F_INT64, F_UINT64, F_INT32 } field;
  size_t have;
  int te = t->data_type;
  if (t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
    field = F_RAW;
    have = (size_t)numel;
  } else if (t->has_raw_data) {
    field = F_RAW;
    have = t->raw_data.len % elem ? (size_t)-1 : t->raw_data.len / elem;
  } else if (te == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) {
    field = F_FLOAT;
    have = t->n_float_data;
  } else if (te == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE) {
    field = F_DOUBLE;
    have = t->n_double_data;
  } else if (te == ONNX__TENSOR_PROTO__DATA_TYPE__INT64) {
    field = F_INT64;
    have = t->n_int64_data;
  } else if (te == ONNX__TENSOR_PROTO__DATA_TYPE__UINT32 || te == ONNX__TENSOR_PROTO__DATA_TYPE__UINT64) {
    field = F_UINT64;
    have = t->n_uint64_data;
  } else {
    field = F_INT32;
    have = t->n_int32_data;
  }
  if (have != numel) {
    diag_error(I->d, I->at, "ONNX tensor '%s': %llu elements by its dims, but its data does not hold that many %s values",
               tname, (unsigned long long)numel, elem_name(te));
    return NULL;
  }
  FILE *ext = NULL;
  if (t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL &&
      !(ext = external_open(I, t, (size_t)numel * elem)))
    return NULL;
  int64_t shape[MAX_RANK] = {0};
  for (size_t i = 0; i < t->n_dims; i++) shape[i] = t->dims[i];
  ConstData *c = const_new(dt, (int)t->n_dims, shape);
  unsigned char *p = c->data;
  if (ext) {
    bool ok = c->nbytes == 0 || fread(p, 1, c->nbytes, ext) == c->nbytes;
    fclose(ext);
    if (!ok) {
      diag_error(I->d, I->at, "ONNX initializer '%s': reading its external data failed", tname);
      const_free(c);
      return NULL;
    }
  } else if (field == F_RAW) {
    if (c->nbytes) memcpy(p, t->raw_data.data, c->nbytes);
  } else {
    for (size_t i = 0; i < numel; i++) {
      switch (field) {
      case F_FLOAT: memcpy(p + i * 4, &t->float_data[i], 4); break;
      case F_DOUBLE: memcpy(p + i * 8, &t->double_data[i], 8); break;
      case F_INT64: memcpy(p + i * 8, &t->int64_data[i], 8); break;
      case F_UINT64:
        if (elem == 8) memcpy(p + i * 8, &t->uint64_data[i], 8);
        else {
          uint32_t u = (uint32_t)t->uint64_data[i];
          memcpy(p + i * 4, &u, 4);
        }
        break;
      default: {
        int32_t v = t->int32_data[i];
        if (elem == 1) p[i] = (unsigned char)v;
        else if (elem == 2) {
          uint16_t h = (uint16_t)v;
          memcpy(p + i * 2, &h, 2);
        } else memcpy(p + i * 4, &v, 4);
      }
      }
    }
  }
  if (dt.bits == 1)
    for (size_t i = 0; i < c->nbytes; i++) p[i] = p[i] != 0;
  return c;
}

/* Makes c (owned from now on) the value named name: a metadata constant,
** or with as_params an initializer parameter (when param is true). */
static Value *const_value(Importer *I, const char *name, ConstData *c, int elem, bool param) {
  StrBuf e = {0};
  if (param && I->as_params) {
    param_ident(I, &e, name);
    VEC_PUSH(&I->pnames, xstrdup(sb_str(&e) + 1));
    VEC_PUSH(&I->pvalues, c);
    char buf[32];
    sb_printf(&I->sig, "%s%s: Tensor[(", I->nsig++ ? ", " : "", sb_str(&e));
    for (int i = 0; i < c->ndim; i++) sb_printf(&I->sig, "%s%lld", i ? ", " : "", (long long)c->shape[i]);
    sb_printf(&I->sig, "%s), %s]", c->ndim == 1 ? "," : "", dtype_name(c->dtype, buf));
  } else {
    sb_printf(&e, "meta[relay.Constant][%d]", I->consts.len);
    VEC_PUSH(&I->consts, c);
  }
  Value *v = add_value(I, name, sb_str(&e), elem, c->ndim, c->shape);
  v->cdata = c;
  sb_free(&e);
  return v;
}

/* The ints of a constant value (an int64 or int32 tensor of at most max
** elements) into out; -1 when v is not such a constant. */
static int const_ints(const Value *v, int64_t *out, int max) {
  if (!v || !v->cdata) return -1;
  const ConstData *c = v->cdata;
  int64_t n = const_numel(c);
  if (n > max || c->dtype.code != DT_INT || (c->dtype.bits != 64 && c->dtype.bits != 32)) return -1;
  for (int64_t i = 0; i < n; i++) {
    if (c->dtype.bits == 64) memcpy(&out[i], (char *)c->data + i * 8, 8);
    else {
      int32_t x;
      memcpy(&x, (char *)c->data + i * 4, 4);
      out[i] = x;
    }
  }
  return (int)n;
}

/* The scalar of a constant float value (one element) in *out. */
static bool const_scalar(const Value *v, double *out) {
  if (!v || !v->cdata || const_numel(v->cdata) != 1) return false;
  const ConstData *c = v->cdata;
  if (c->dtype.code == DT_FLOAT && c->dtype.bits == 32) {
    float f;
    memcpy(&f, c->data, 4);
    *out = f;
  } else if (c->dtype.code == DT_FLOAT && c->dtype.bits == 64) {
    memcpy(out, c->data, 8);
  } else if (c->dtype.code == DT_INT && c->dtype.bits == 64) {
    int64_t i;
    memcpy(&i, c->data, 8);
    *out = (double)i;
  } else if (c->dtype.code == DT_INT && c->dtype.bits == 32) {
    int32_t i;
    memcpy(&i, c->data, 4);
    *out = i;
  } else {
    return false;
  }
  return true;
}

/* {==== Converters ====}
** One function per operator (or family), listed in `converters` below. A
** converter reads the node (I->node) and its inputs, writes its lets and
** defines its outputs; it returns false after reporting an error. */

/* Defined with the other operators at the end ("More operators"). */
static const char *let_tmp(Importer *I, const char *e, char *var);
static void put_lit(Importer *I, StrBuf *sb, int elem, double v);
static void put_wrapped_index(Importer *I, StrBuf *e, const Value *idx, int64_t dim);
static bool layer_norm_general(Importer *I, const Value *x, const Value *g, const Value *b, int64_t axis);
static bool matmul_general(Importer *I, const Value *a, const Value *b);
static bool matmul_values(Importer *I, const Value *a, const Value *b);
static bool conv_values(Importer *I, const Value *x, const Value *w, const Value *b);

/* Output dims of a broadcast of a and b (numpy rules) when both are known. */
static int broadcast_shape(const Value *a, const Value *b, int64_t *out) {
  if (a->rank < 0 || b->rank < 0) return -1;
  int r = a->rank > b->rank ? a->rank : b->rank;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - a->rank), ib = i - (r - b->rank);
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    out[i] = da == 1 ? db : db == 1 ? da : (da == db ? da : -1);
  }
  return r;
}

static bool cv_unary(Importer *I, const char *op) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  StrBuf e = {0};
  sb_printf(&e, "%s(%s)", op, x->expr);
  return finish(I, &e, x->elem, x->rank, x->dims);
}

static bool cv_binary(Importer *I, const char *op, bool to_bool) {
  if (!need_inputs(I, 2)) return false;
  Value *a = input(I, 0), *b = input(I, 1);
  int64_t dims[MAX_RANK];
  int r = broadcast_shape(a, b, dims);
  StrBuf e = {0};
  sb_printf(&e, "%s(%s, %s)", op, a->expr, b->expr);
  return finish(I, &e, to_bool ? ONNX__TENSOR_PROTO__DATA_TYPE__BOOL : a->elem, r, dims);
}

/* Sum, Max, Min, Mean of any number of inputs: a chain of binary ops. */
static bool cv_variadic(Importer *I, const char *op) {
  if (!need_inputs(I, 1)) return false;
  Value *acc = input(I, 0);
  StrBuf e = {0};
  sb_puts(&e, acc->expr);
  Value cur = *acc;
  for (size_t i = 1; i < I->node->n_input; i++) {
    Value *b = input(I, i);
    if (!b) {
      sb_free(&e);
      return false;
    }
    StrBuf n = {0};
    sb_printf(&n, "%s(%s, %s)", op, sb_str(&e), b->expr);
    sb_free(&e);
    e = n;
    cur.rank = broadcast_shape(&cur, b, cur.dims);
  }
  return finish(I, &e, acc->elem, cur.rank, cur.dims);
}

static bool cv_relu(Importer *I) { return cv_unary(I, "nn.relu"); }
static bool cv_sigmoid(Importer *I) { return cv_unary(I, "sigmoid"); }
static bool cv_tanh(Importer *I) { return cv_unary(I, "tanh"); }
static bool cv_exp(Importer *I) { return cv_unary(I, "exp"); }
static bool cv_log(Importer *I) { return cv_unary(I, "log"); }
static bool cv_sqrt(Importer *I) { return cv_unary(I, "sqrt"); }
static bool cv_neg(Importer *I) { return cv_unary(I, "negative"); }
static bool cv_abs(Importer *I) { return cv_unary(I, "abs"); }
static bool cv_erf(Importer *I) { return cv_unary(I, "erf"); }
static bool cv_floor(Importer *I) { return cv_unary(I, "floor"); }
static bool cv_ceil(Importer *I) { return cv_unary(I, "ceil"); }
static bool cv_sin(Importer *I) { return cv_unary(I, "sin"); }
static bool cv_cos(Importer *I) { return cv_unary(I, "cos"); }
static bool cv_not(Importer *I) { return cv_unary(I, "logical_not"); }
static bool cv_add(Importer *I) { return cv_binary(I, "add", false); }
static bool cv_sub(Importer *I) { return cv_binary(I, "subtract", false); }
static bool cv_mul(Importer *I) { return cv_binary(I, "multiply", false); }
static bool cv_div(Importer *I) { return cv_binary(I, "divide", false); }

/* Pow: the exponent may have another element type than the base (cast to
** the base's). */
static bool cv_pow(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *a = input(I, 0), *b = input(I, 1);
  if (a->elem == b->elem) return cv_binary(I, "power", false);
  int64_t dims[MAX_RANK];
  int r = broadcast_shape(a, b, dims);
  StrBuf e = {0};
  sb_printf(&e, "power(%s, cast(%s, dtype=\"%s\"))", a->expr, b->expr, elem_relay(a->elem));
  return finish(I, &e, a->elem, r, dims);
}
static bool cv_equal(Importer *I) { return cv_binary(I, "equal", true); }
static bool cv_less(Importer *I) { return cv_binary(I, "less", true); }
static bool cv_greater(Importer *I) { return cv_binary(I, "greater", true); }
static bool cv_and(Importer *I) { return cv_binary(I, "logical_and", true); }
static bool cv_or(Importer *I) { return cv_binary(I, "logical_or", true); }
static bool cv_sum(Importer *I) { return cv_variadic(I, "add"); }
static bool cv_max(Importer *I) { return cv_variadic(I, "maximum"); }
static bool cv_min(Importer *I) { return cv_variadic(I, "minimum"); }

static bool cv_identity(Importer *I) {
  /* Identity, and Dropout at inference: the input itself (a mask output
  ** is not supported). */
  if (!need_inputs(I, 1)) return false;
  if (I->node->n_output > 1 && *I->node->output[1]) return node_error(I, "the mask output is not supported");
  Value *x = input(I, 0);
  const ConstData *cdata = x->cdata; /* add_value may move x */
  Value *v = add_value(I, I->node->output[0], x->expr, x->elem, x->rank, x->dims);
  v->cdata = cdata;
  return true;
}

/* Dropout at inference: the input, and a mask of ones. training_mode (an
** input from opset 12) must be a constant false: training draws random
** numbers. */
static bool cv_dropout(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0), *tm = input(I, 2);
  if (tm && (!tm->cdata || const_numel(tm->cdata) != 1 || ((const uint8_t *)tm->cdata->data)[0]))
    return node_error(I, "training (random dropping) is not supported: training_mode must be a constant false");
  Value xv = *x;
  Value *v = add_value(I, I->node->output[0], xv.expr, xv.elem, xv.rank, xv.dims);
  v->cdata = xv.cdata;
  if (I->node->n_output > 1 && *I->node->output[1]) {
    StrBuf e = {0};
    sb_printf(&e, "cast(ones_like(%s), dtype=\"bool\")", xv.expr);
    bind_output(I, 1, sb_str(&e), ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, xv.rank, xv.dims);
    sb_free(&e);
  }
  return true;
}

static bool cv_where(Importer *I) {
  if (!need_inputs(I, 3)) return false;
  Value *c = input(I, 0), *a = input(I, 1), *b = input(I, 2);
  int64_t d1[MAX_RANK] = {0}, d2[MAX_RANK] = {0};
  int r = broadcast_shape(a, b, d1);
  Value ab = *a;
  ab.rank = r;
  memcpy(ab.dims, d1, sizeof d1);
  r = broadcast_shape(c, &ab, d2);
  StrBuf e = {0};
  sb_printf(&e, "where(%s, %s, %s)", c->expr, a->expr, b->expr);
  return finish(I, &e, a->elem, r, d2);
}

static bool cv_leaky_relu(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  StrBuf e = {0};
  sb_printf(&e, "nn.leaky_relu(%s, alpha=", x->expr);
  put_float_lit(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, attr_float(I, "alpha", 0.01));
  sb_putc(&e, ')');
  return finish(I, &e, x->elem, x->rank, x->dims);
}

/* HardSigmoid: clip(alpha * x + beta, 0, 1); HardSwish: x * HardSigmoid(x)
** with alpha 1/6, beta 1/2. */
static bool hard_sigmoid(Importer *I, double alpha, double beta, bool swish) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  StrBuf e = {0};
  if (swish) sb_printf(&e, "multiply(%s, ", x->expr);
  sb_printf(&e, "clip(add(multiply(%s, ", x->expr);
  put_float_lit(I, &e, x->elem, alpha);
  sb_puts(&e, "), ");
  put_float_lit(I, &e, x->elem, beta);
  sb_puts(&e, "), a_min=0f, a_max=1f)");
  if (swish) sb_putc(&e, ')');
  return finish(I, &e, x->elem, x->rank, x->dims);
}

static bool cv_hard_sigmoid(Importer *I) {
  return hard_sigmoid(I, attr_float(I, "alpha", 0.2), attr_float(I, "beta", 0.5), false);
}
static bool cv_hard_swish(Importer *I) { return hard_sigmoid(I, 1.0 / 6.0, 0.5, true); }

/* Clip: bounds as attributes (opset < 11) or as constant inputs. */
static bool cv_clip(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  double lo = -INFINITY, hi = INFINITY;
  if (I->opset < 11) {
    lo = attr_float(I, "min", -INFINITY);
    hi = attr_float(I, "max", INFINITY);
  } else {
    Value *a = input(I, 1), *b = input(I, 2);
    if ((a && !const_scalar(a, &lo)) || (b && !const_scalar(b, &hi))) {
      /* Bounds computed at run time: maximum and minimum. */
      StrBuf e = {0};
      if (b) sb_puts(&e, "minimum(");
      if (a) sb_puts(&e, "maximum(");
      sb_puts(&e, x->expr);
      if (a) sb_printf(&e, ", %s)", a->expr);
      if (b) sb_printf(&e, ", %s)", b->expr);
      return finish(I, &e, x->elem, x->rank, x->dims);
    }
  }
  StrBuf e = {0};
  sb_printf(&e, "clip(%s, a_min=", x->expr);
  put_float_lit(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, lo);
  sb_puts(&e, ", a_max=");
  put_float_lit(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, hi);
  sb_putc(&e, ')');
  return finish(I, &e, x->elem, x->rank, x->dims);
}

/* Softmax and LogSoftmax. From opset 13 the axis is the softmax's; before,
** the input is seen as 2-D [prod(d < axis), prod(d >= axis)]: a softmax
** over the last axis when axis is the last, else one over the reshaped
** input (which needs its static shape), reshaped back. */
static bool softmax(Importer *I, const char *op) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  int64_t axis = attr_int(I, "axis", I->opset >= 13 ? -1 : 1);
  StrBuf e = {0};
  if (I->opset < 13) {
    if (x->rank < 0) return node_error(I, "needs the rank of its input");
    int64_t a = axis < 0 ? axis + x->rank : axis;
    if (a < 0 || a >= x->rank) return node_error(I, "axis %lld is out of range", (long long)axis);
    if (a < x->rank - 1) {
      /* Over the 2-D view [prod(d < axis), prod(d >= axis)], then back. */
      int64_t rows = 1, cols = 1;
      for (int i = 0; i < x->rank; i++) {
        if (x->dims[i] < 0)
          return node_error(I, "axis %lld of a rank-%d input flattens it (before opset 13): needs a static shape",
                            (long long)axis, x->rank);
        if (i < a) rows = dim_mul(rows, x->dims[i]);
        else cols = dim_mul(cols, x->dims[i]);
      }
      if (rows < 0 || cols < 0) return node_error(I, "its input is too large");
      sb_printf(&e, "reshape(%s(reshape(%s, newshape=[%lld, %lld]), axis=-1), newshape=", op, x->expr,
                (long long)rows, (long long)cols);
      put_ints(&e, x->dims, x->rank);
      sb_putc(&e, ')');
      return finish(I, &e, x->elem, x->rank, x->dims);
    }
    axis = -1;
  }
  sb_printf(&e, "%s(%s, axis=%lld)", op, x->expr, (long long)axis);
  return finish(I, &e, x->elem, x->rank, x->dims);
}

static bool cv_softmax(Importer *I) { return softmax(I, "nn.softmax"); }
static bool cv_log_softmax(Importer *I) { return softmax(I, "nn.log_softmax"); }

/* Gemm: alpha * A' * B' + beta * C, A' and B' transposed as told. */
static bool cv_gemm(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *a = input(I, 0), *b = input(I, 1), *c = input(I, 2);
  if (I->node->n_input > 2 && *I->node->input[2] && !c) return false;
  double alpha = attr_float(I, "alpha", 1), beta = attr_float(I, "beta", 1);
  bool ta = attr_int(I, "transA", 0) != 0, tb = attr_int(I, "transB", 0) != 0;
  StrBuf e = {0};
  sb_puts(&e, "nn.dense(");
  if (ta) sb_printf(&e, "transpose(%s, axes=[1, 0])", a->expr);
  else sb_puts(&e, a->expr);
  /* dense multiplies by B transposed: B' = B^T needs B itself. */
  if (tb) sb_printf(&e, ", %s)", b->expr);
  else sb_printf(&e, ", transpose(%s, axes=[1, 0]))", b->expr);
  int64_t dims[2] = {a->rank == 2 ? a->dims[ta ? 1 : 0] : -1, b->rank == 2 ? b->dims[tb ? 0 : 1] : -1};
  if (alpha != 1) {
    StrBuf s = {0};
    sb_printf(&s, "multiply(%s, ", sb_str(&e));
    put_float_lit(I, &s, a->elem, alpha);
    sb_putc(&s, ')');
    sb_free(&e);
    e = s;
  }
  if (c && beta != 0) {
    StrBuf s = {0};
    if (beta != 1) {
      sb_printf(&s, "add(%s, multiply(%s, ", sb_str(&e), c->expr);
      put_float_lit(I, &s, a->elem, beta);
      sb_puts(&s, "))");
    } else if (c->rank == 1 && c->dims[0] >= 0 && c->dims[0] == dims[1]) {
      sb_printf(&s, "nn.bias_add(%s, %s, axis=-1)", sb_str(&e), c->expr);
    } else {
      sb_printf(&s, "add(%s, %s)", sb_str(&e), c->expr);
    }
    sb_free(&e);
    e = s;
  }
  return finish(I, &e, a->elem, 2, dims);
}

/* MatMul of 2-D operands as dense; of two rank-3 ones as batch_matmul; an
** N-D left operand times a 2-D right one through a reshape to 2-D. */
static bool matmul_values(Importer *I, const Value *a, const Value *b) {
  StrBuf e = {0};
  if (a->rank == 2 && b->rank == 2) {
    sb_printf(&e, "nn.dense(%s, transpose(%s, axes=[1, 0]))", a->expr, b->expr);
    int64_t dims[2] = {a->dims[0], b->dims[1]};
    bind_output(I, 0, sb_str(&e), a->elem, 2, dims);
  } else if (a->rank == 3 && b->rank == 3 && (a->dims[0] == b->dims[0] || a->dims[0] < 0 || b->dims[0] < 0)) {
    sb_printf(&e, "nn.batch_matmul(%s, transpose(%s, axes=[0, 2, 1]), transpose_b=True)", a->expr, b->expr);
    int64_t dims[3] = {a->dims[0] == 1 ? b->dims[0] : a->dims[0], a->dims[1], b->dims[2]};
    bind_output(I, 0, sb_str(&e), a->elem, 3, dims);
  } else if (a->rank > 2 && b->rank == 2 && b->dims[1] >= 0) {
    /* [..., K] x [K, N]: reshape to [-1, K], dense, reshape back. */
    int64_t dims[MAX_RANK];
    StrBuf ns = {0};
    sb_puts(&ns, "[");
    for (int i = 0; i < a->rank - 1; i++) {
      sb_puts(&ns, "0, ");
      dims[i] = a->dims[i];
    }
    dims[a->rank - 1] = b->dims[1];
    sb_printf(&ns, "%lld]", (long long)b->dims[1]);
    sb_printf(&e, "reshape(nn.dense(reshape(%s, newshape=[-1, %lld]), transpose(%s, axes=[1, 0])), newshape=", a->expr,
              (long long)b->dims[0], b->expr);
    /* The leading dims come back from a: reshape_like would need a's
    ** shape as a value; with them known, the newshape says them. */
    bool known = true;
    for (int i = 0; i < a->rank - 1; i++) known &= a->dims[i] >= 0;
    if (!known || b->dims[0] < 0) {
      sb_free(&ns);
      sb_free(&e);
      return node_error(I, "a rank-%d operand times a 2-D one needs static shapes", a->rank);
    }
    sb_puts(&e, "[");
    for (int i = 0; i < a->rank; i++) sb_printf(&e, "%s%lld", i ? ", " : "", (long long)dims[i]);
    sb_puts(&e, "])");
    sb_free(&ns);
    bind_output(I, 0, sb_str(&e), a->elem, a->rank, dims);
  } else {
    sb_free(&e);
    return matmul_general(I, a, b);
  }
  sb_free(&e);
  return true;
}

static bool cv_matmul(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  return matmul_values(I, input(I, 0), input(I, 1));
}

/* The spatial attributes of Conv and the pools: kernel_shape (or the
** weight's), strides, dilations, pads (begins then ends, as Relay's
** padding). auto_pad other than NOTSET/VALID needs the input's shape. */
typedef struct Spatial {
  int n;                 /* spatial dims */
  int64_t kernel[3], strides[3], dilations[3], pads[6];
} Spatial;

static bool spatial(Importer *I, int n, const int64_t *kernel, Spatial *s, const Value *x) {
  s->n = n;
  if (n < 1 || n > 3) return node_error(I, "%d spatial dimensions are not supported", n);
  for (int i = 0; i < n; i++) {
    s->kernel[i] = kernel ? kernel[i] : 1;
    s->strides[i] = 1;
    s->dilations[i] = 1;
    s->pads[i] = s->pads[n + i] = 0;
  }
  int64_t tmp[6];
  if (attr_ints(I, "kernel_shape", tmp, 3) == n) memcpy(s->kernel, tmp, sizeof(int64_t) * (size_t)n);
  if (attr_ints(I, "strides", tmp, 3) == n) memcpy(s->strides, tmp, sizeof(int64_t) * (size_t)n);
  if (attr_ints(I, "dilations", tmp, 3) == n) memcpy(s->dilations, tmp, sizeof(int64_t) * (size_t)n);
  if (attr_ints(I, "pads", tmp, 6) == 2 * n) memcpy(s->pads, tmp, sizeof(int64_t) * (size_t)(2 * n));
  char buf[32];
  const char *ap = attr_str(I, "auto_pad", "NOTSET", buf, sizeof buf);
  if (strcmp(ap, "NOTSET") == 0 || strcmp(ap, "VALID") == 0) return true;
  bool upper = strcmp(ap, "SAME_UPPER") == 0;
  if (!upper && strcmp(ap, "SAME_LOWER") != 0) return node_error(I, "auto_pad '%s' is not known", ap);
  /* SAME: out = ceil(in / stride); the padding from the input's size. */
  for (int i = 0; i < n; i++) {
    int64_t in = x->rank == n + 2 ? x->dims[2 + i] : -1;
    if (in < 0) return node_error(I, "auto_pad %s needs the input's spatial dims", ap);
    int64_t out = (in + s->strides[i] - 1) / s->strides[i];
    if (s->strides[i] < 1 || s->kernel[i] < 1 || s->dilations[i] < 1)
      return node_error(I, "kernel_shape, strides and dilations must be positive");
    int64_t reach = dim_add(dim_mul(out - 1, s->strides[i]), dim_add(dim_mul(s->kernel[i] - 1, s->dilations[i]), 1));
    if (reach < 0) return node_error(I, "its attributes are out of range");
    int64_t total = reach - in;
    if (total < 0) total = 0;
    s->pads[i] = upper ? total / 2 : total - total / 2;
    s->pads[n + i] = total - s->pads[i];
  }
  return true;
}

static void spatial_out(const Spatial *s, const Value *x, int64_t c, bool ceil_mode, int64_t *dims) {
  dims[0] = x->rank == s->n + 2 ? x->dims[0] : -1;
  dims[1] = c;
  for (int i = 0; i < s->n; i++) {
    int64_t in = x->rank == s->n + 2 ? x->dims[2 + i] : -1;
    if (in < 0) {
      dims[2 + i] = -1;
      continue;
    }
    int64_t padded = dim_add(in, dim_add(s->pads[i], s->pads[s->n + i]));
    int64_t reach = dim_add(dim_mul(s->dilations[i], s->kernel[i] - 1), 1);
    if (padded < 0 || reach < 0 || s->strides[i] < 1 || padded < reach) {
      dims[2 + i] = -1; /* the type checker reports what is wrong */
      continue;
    }
    int64_t span = padded - reach;
    dims[2 + i] = (ceil_mode ? span / s->strides[i] + (span % s->strides[i] != 0) : span / s->strides[i]) + 1;
  }
}

/* Conv of x by w plus b (or NULL), with the node's attributes. */
static bool conv_values(Importer *I, const Value *x, const Value *w, const Value *b) {
  if (w->rank < 3) return node_error(I, "needs the rank of its weight");
  int n = w->rank - 2;
  Spatial s;
  if (!spatial(I, n, w->dims + 2, &s, x)) return false;
  int64_t groups = attr_int(I, "group", 1);
  static const char *ops[] = {"nn.conv1d", "nn.conv2d", "nn.conv3d"};
  StrBuf e = {0};
  sb_printf(&e, "%s(%s, %s, strides=", ops[n - 1], x->expr, w->expr);
  put_ints(&e, s.strides, n);
  sb_puts(&e, ", padding=");
  put_ints(&e, s.pads, 2 * n);
  sb_puts(&e, ", dilation=");
  put_ints(&e, s.dilations, n);
  sb_printf(&e, ", groups=%lld", (long long)groups);
  if (w->dims[0] >= 0) sb_printf(&e, ", channels=%lld", (long long)w->dims[0]);
  sb_puts(&e, ", kernel_size=");
  put_ints(&e, s.kernel, n);
  sb_putc(&e, ')');
  if (b) {
    StrBuf t = {0};
    sb_printf(&t, "nn.bias_add(%s, %s)", sb_str(&e), b->expr);
    sb_free(&e);
    e = t;
  }
  int64_t dims[MAX_RANK];
  spatial_out(&s, x, w->dims[0], false, dims);
  return finish(I, &e, x->elem, n + 2, dims);
}

static bool cv_conv(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  return conv_values(I, input(I, 0), input(I, 1), input(I, 2));
}

static bool pool(Importer *I, bool max) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  int64_t k[3];
  int n = attr_ints(I, "kernel_shape", k, 3);
  if (n < 1) return node_error(I, "needs kernel_shape");
  Spatial s;
  if (!spatial(I, n, k, &s, x)) return false;
  bool ceil_mode = attr_int(I, "ceil_mode", 0) != 0;
  if (max && attr_int(I, "storage_order", 0) != 0) return node_error(I, "storage_order 1 is not supported");
  if (I->node->n_output > 1 && *I->node->output[1]) return node_error(I, "the Indices output is not supported");
  static const char *mops[] = {"nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d"};
  static const char *aops[] = {"nn.avg_pool1d", "nn.avg_pool2d", "nn.avg_pool3d"};
  StrBuf e = {0};
  sb_printf(&e, "%s(%s, pool_size=", max ? mops[n - 1] : aops[n - 1], x->expr);
  put_ints(&e, s.kernel, n);
  sb_puts(&e, ", strides=");
  put_ints(&e, s.strides, n);
  sb_puts(&e, ", dilation=");
  put_ints(&e, s.dilations, n);
  sb_puts(&e, ", padding=");
  put_ints(&e, s.pads, 2 * n);
  sb_printf(&e, ", ceil_mode=%s", ceil_mode ? "True" : "False");
  if (!max) sb_printf(&e, ", count_include_pad=%s", attr_int(I, "count_include_pad", 0) ? "True" : "False");
  sb_putc(&e, ')');
  int64_t dims[MAX_RANK];
  spatial_out(&s, x, x->rank == n + 2 ? x->dims[1] : -1, ceil_mode, dims);
  return finish(I, &e, x->elem, n + 2, dims);
}

static bool cv_max_pool(Importer *I) { return pool(I, true); }
static bool cv_avg_pool(Importer *I) { return pool(I, false); }

static bool global_pool(Importer *I, bool max) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  StrBuf e = {0};
  if (x->rank == 4) {
    sb_printf(&e, "%s(%s)", max ? "nn.global_max_pool2d" : "nn.global_avg_pool2d", x->expr);
  } else if (x->rank >= 3) {
    /* Over every spatial axis, kept. */
    sb_printf(&e, "%s(%s, axis=[", max ? "max" : "mean", x->expr);
    for (int i = 2; i < x->rank; i++) sb_printf(&e, "%s%d", i > 2 ? ", " : "", i);
    sb_puts(&e, "], keepdims=True)");
  } else {
    return node_error(I, "needs an input of rank 3 or more, of known rank");
  }
  int64_t dims[MAX_RANK];
  for (int i = 0; i < x->rank; i++) dims[i] = i < 2 ? x->dims[i] : 1;
  return finish(I, &e, x->elem, x->rank, dims);
}

static bool cv_global_avg_pool(Importer *I) { return global_pool(I, false); }
static bool cv_global_max_pool(Importer *I) { return global_pool(I, true); }

static bool cv_batch_norm(Importer *I) {
  if (!need_inputs(I, 5)) return false;
  bool training = attr_int(I, "training_mode", 0) != 0;
  for (size_t k = 1; k < I->node->n_output && !training; k++)
    if (*I->node->output[k]) return node_error(I, "running mean and variance outputs need training_mode 1");
  Value *x = input(I, 0);
  if (training && x->rank < 2) return node_error(I, "needs the input's rank");
  Value xv = *x;
  StrBuf e = {0};
  char var[32], mean[32], dev[32], cvar[32];
  const char *m = input(I, 3)->expr, *v = input(I, 4)->expr;
  if (training) {
    /* The batch's statistics over every axis but 1; the running ones
    ** move towards them by 1 - momentum. */
    StrBuf ax = {0};
    sb_puts(&ax, "[0");
    for (int i = 2; i < xv.rank; i++) sb_printf(&ax, ", %d", i);
    sb_putc(&ax, ']');
    sb_printf(&e, "mean(%s, axis=%s, keepdims=True)", xv.expr, sb_str(&ax));
    let_tmp(I, sb_str(&e), mean);
    sb_clear(&e);
    sb_printf(&e, "subtract(%s, %s)", xv.expr, mean);
    let_tmp(I, sb_str(&e), dev);
    sb_clear(&e);
    sb_printf(&e, "mean(multiply(%s, %s), axis=%s)", dev, dev, sb_str(&ax));
    let_tmp(I, sb_str(&e), cvar);
    sb_clear(&e);
    sb_printf(&e, "squeeze(%s, axis=%s)", mean, sb_str(&ax));
    let_tmp(I, sb_str(&e), mean);
    sb_clear(&e);
    sb_free(&ax);
    double mom = attr_float(I, "momentum", 0.9);
    for (int k = 1; k <= 2; k++) {
      if (k >= (int)I->node->n_output || !*I->node->output[k]) continue;
      sb_printf(&e, "add(multiply(%s, ", k == 1 ? m : v);
      put_lit(I, &e, xv.elem, mom);
      sb_printf(&e, "), multiply(%s, ", k == 1 ? mean : cvar);
      put_lit(I, &e, xv.elem, 1 - mom);
      sb_puts(&e, "))");
      int64_t c = xv.dims[1];
      bind_output(I, (size_t)k, sb_str(&e), xv.elem, 1, &c);
      sb_clear(&e);
    }
    m = mean;
    v = cvar;
  }
  sb_printf(&e, "nn.batch_norm(%s, %s, %s, %s, %s, epsilon=", xv.expr, input(I, 1)->expr, input(I, 2)->expr, m, v);
  put_float_lit(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, attr_float(I, "epsilon", 1e-5));
  sb_putc(&e, ')');
  /* The projection goes on a variable: Relay's text has no `call(...).0`. */
  let_tmp(I, sb_str(&e), var);
  sb_clear(&e);
  sb_printf(&e, "%s.0", var);
  return finish(I, &e, xv.elem, xv.rank, xv.dims);
}

/* Flatten: 2-D [prod(d < axis), prod(d >= axis)]. */
static bool cv_flatten(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  int64_t axis = attr_int(I, "axis", 1);
  if (axis < 0) {
    if (x->rank < 0) return node_error(I, "a negative axis needs the input's rank");
    axis += x->rank;
  }
  int64_t dims[2] = {1, 1};
  bool known = x->rank >= 0;
  for (int i = 0; i < x->rank; i++) {
    known &= x->dims[i] >= 0;
    dims[i < axis ? 0 : 1] = dim_mul(dims[i < axis ? 0 : 1], x->dims[i] >= 0 ? x->dims[i] : 1);
  }
  StrBuf e = {0};
  if (known) sb_printf(&e, "reshape(%s, newshape=[%lld, %lld])", x->expr, (long long)dims[0], (long long)dims[1]);
  else if (axis == 0) sb_printf(&e, "reshape(%s, newshape=[1, -1])", x->expr);
  else if (axis == 1) sb_printf(&e, "reshape(%s, newshape=[0, -1])", x->expr);
  else {
    sb_free(&e);
    return node_error(I, "axis %lld needs the input's static shape", (long long)axis);
  }
  if (!known || dims[0] < 0 || dims[1] < 0) dims[0] = dims[1] = -1;
  return finish(I, &e, x->elem, 2, dims);
}

static bool cv_reshape(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  int64_t shape[MAX_RANK];
  int n;
  if (I->opset < 5) n = attr_ints(I, "shape", shape, MAX_RANK);
  else {
    Value *s = input(I, 1);
    if (!s) return node_error(I, "needs its shape input");
    n = const_ints(s, shape, MAX_RANK);
    if (n < 0) return node_error(I, "a shape that is not a constant is not supported");
  }
  if (n < 0) return node_error(I, "needs a shape");
  bool allowzero = attr_int(I, "allowzero", 0) != 0;
  int64_t dims[MAX_RANK];
  int64_t known = 1, minus = -1;
  bool all = x->rank >= 0;
  int64_t total = 1;
  for (int i = 0; i < x->rank; i++) {
    all &= x->dims[i] >= 0;
    total = dim_mul(total, x->dims[i] >= 0 ? x->dims[i] : 1);
  }
  for (int i = 0; i < n; i++) {
    if (shape[i] == 0 && allowzero) return node_error(I, "allowzero with a 0 in the shape is not supported");
    if (shape[i] < -1) return node_error(I, "shape entry %lld is not valid", (long long)shape[i]);
    dims[i] = shape[i] == 0 ? (i < x->rank ? x->dims[i] : -1) : shape[i];
    if (shape[i] == -1) minus = i;
    else if (dims[i] >= 0) known = dim_mul(known, dims[i]);
    else all = false;
  }
  if (minus >= 0) dims[minus] = all && known > 0 && total >= 0 ? total / known : -1;
  StrBuf e = {0};
  sb_printf(&e, "reshape(%s, newshape=", x->expr);
  put_ints(&e, shape, n);
  sb_putc(&e, ')');
  return finish(I, &e, x->elem, n, dims);
}

static bool cv_transpose(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  int64_t perm[MAX_RANK];
  int n = attr_ints(I, "perm", perm, MAX_RANK);
  if (n < 0) {
    if (x->rank < 0) return node_error(I, "needs perm or the input's rank");
    n = x->rank;
    for (int i = 0; i < n; i++) perm[i] = n - 1 - i;
  }
  int64_t dims[MAX_RANK];
  for (int i = 0; i < n; i++) dims[i] = x->rank == n && perm[i] >= 0 && perm[i] < n ? x->dims[perm[i]] : -1;
  StrBuf e = {0};
  sb_printf(&e, "transpose(%s, axes=", x->expr);
  put_ints(&e, perm, n);
  sb_putc(&e, ')');
  return finish(I, &e, x->elem, n, dims);
}

static bool cv_concat(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  int64_t axis = attr_int(I, "axis", 0);
  if (axis < 0 && x->rank >= 0) axis += x->rank;
  int64_t dims[MAX_RANK];
  for (int i = 0; i < x->rank; i++) dims[i] = x->dims[i];
  StrBuf e = {0};
  sb_puts(&e, "concatenate((");
  for (size_t i = 0; i < I->node->n_input; i++) {
    Value *v = input(I, i);
    if (!v) {
      sb_free(&e);
      return false;
    }
    sb_printf(&e, "%s%s", i ? ", " : "", v->expr);
    if (i && axis >= 0 && axis < x->rank)
      dims[axis] = v->rank == x->rank ? dim_add(dims[axis], v->dims[axis]) : -1;
  }
  sb_printf(&e, "%s), axis=%lld)", I->node->n_input == 1 ? "," : "", (long long)axis);
  return finish(I, &e, x->elem, x->rank, dims);
}

/* Axes as an attribute (before opset 13) or a constant input 1. */
static int axes_of(Importer *I, int64_t *axes, bool *given) {
  int n;
  if (I->opset < 13) n = attr_ints(I, "axes", axes, MAX_RANK);
  else {
    Value *a = input(I, 1);
    n = a ? const_ints(a, axes, MAX_RANK) : -1;
    if (a && n < 0) {
      node_error(I, "axes that are not a constant are not supported");
      return -2;
    }
  }
  *given = n >= 0;
  return n;
}

static bool cv_unsqueeze(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  int64_t axes[MAX_RANK];
  bool given;
  int n = axes_of(I, axes, &given);
  if (n == -2) return false;
  if (!given || x->rank < 0 || x->rank + n > MAX_RANK) return node_error(I, "needs axes and the input's rank");
  int r = x->rank + n;
  for (int i = 0; i < n; i++) {
    axes[i] = axes[i] < 0 ? axes[i] + r : axes[i];
    if (axes[i] < 0 || axes[i] >= r) return node_error(I, "axis %lld is out of range", (long long)axes[i]);
    for (int j = 0; j < i; j++)
      if (axes[j] == axes[i]) return node_error(I, "axis %lld is given twice", (long long)axes[i]);
  }
  /* Inserted in increasing order, each axis is where it ends up. */
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (axes[j] < axes[i]) {
        int64_t t = axes[i];
        axes[i] = axes[j];
        axes[j] = t;
      }
  StrBuf e = {0};
  sb_puts(&e, x->expr);
  int64_t dims[MAX_RANK];
  int src = 0;
  for (int i = 0, k = 0; i < r; i++) {
    if (k < n && axes[k] == i) {
      dims[i] = 1;
      k++;
    } else {
      dims[i] = x->dims[src++];
    }
  }
  for (int i = 0; i < n; i++) {
    StrBuf t = {0};
    sb_printf(&t, "expand_dims(%s, axis=%lld)", sb_str(&e), (long long)axes[i]);
    sb_free(&e);
    e = t;
  }
  return finish(I, &e, x->elem, r, dims);
}

static bool cv_squeeze(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  int64_t axes[MAX_RANK];
  bool given;
  int n = axes_of(I, axes, &given);
  if (n == -2) return false;
  StrBuf e = {0};
  int64_t dims[MAX_RANK];
  int r = 0;
  if (given) {
    for (int i = 0; i < n; i++) axes[i] = axes[i] < 0 && x->rank >= 0 ? axes[i] + x->rank : axes[i];
    sb_printf(&e, "squeeze(%s, axis=", x->expr);
    put_ints(&e, axes, n);
    sb_putc(&e, ')');
    for (int i = 0; i < x->rank; i++) {
      bool drop = false;
      for (int k = 0; k < n; k++) drop |= axes[k] == i;
      if (!drop) dims[r++] = x->dims[i];
    }
  } else {
    sb_printf(&e, "squeeze(%s)", x->expr);
    for (int i = 0; i < x->rank; i++) {
      if (x->dims[i] < 0) {
        sb_free(&e);
        return node_error(I, "without axes needs the input's static shape");
      }
      if (x->dims[i] != 1) dims[r++] = x->dims[i];
    }
  }
  return finish(I, &e, x->elem, x->rank < 0 ? -1 : r, dims);
}

static bool cv_gather(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0), *idx = input(I, 1);
  int64_t axis = attr_int(I, "axis", 0);
  if (axis < 0 && x->rank >= 0) axis += x->rank;
  StrBuf e = {0};
  sb_printf(&e, "take(%s, ", x->expr);
  if (axis >= 0 && axis < x->rank && x->dims[axis] >= 0) put_wrapped_index(I, &e, idx, x->dims[axis]);
  else sb_puts(&e, idx->expr);
  sb_printf(&e, ", axis=%lld)", (long long)axis);
  int64_t dims[MAX_RANK];
  int r = -1;
  if (x->rank >= 0 && idx->rank >= 0 && x->rank + idx->rank - 1 <= MAX_RANK) {
    r = 0;
    if (axis < 0 || axis >= x->rank) {
      sb_free(&e);
      return node_error(I, "axis %lld is out of range", (long long)axis);
    }
    for (int i = 0; i < axis; i++) dims[r++] = x->dims[i];
    for (int i = 0; i < idx->rank; i++) dims[r++] = idx->dims[i];
    for (int i = (int)axis + 1; i < x->rank; i++) dims[r++] = x->dims[i];
  }
  return finish(I, &e, x->elem, r, dims);
}

static bool cv_cast(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  int to = (int)attr_int(I, "to", 0);
  DType t;
  if (!elem_dtype(to, &t)) return node_error(I, "a cast to %s is not supported", elem_name(to));
  StrBuf e = {0};
  sb_printf(&e, "cast(%s, dtype=\"%s\")", x->expr, elem_relay(to));
  return finish(I, &e, to, x->rank, x->dims);
}

/* ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, and with pre
** ("square", "abs", "exp": applied to the input first) and post ("sqrt",
** "log": applied to the result) ReduceSumSquare, ReduceL1, ReduceL2,
** ReduceLogSum, ReduceLogSumExp. The axes are an input from opset 18 (13
** for ReduceSum). */
static bool reduce_fn(Importer *I, const char *op, const char *pre, const char *post) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  int64_t axes[MAX_RANK];
  bool given;
  int n;
  if (I->opset >= 18 || (strcmp(op, "sum") == 0 && !pre && !post && I->opset >= 13)) {
    Value *a = input(I, 1);
    n = a ? const_ints(a, axes, MAX_RANK) : -1;
    if (a && n < 0) return node_error(I, "axes that are not a constant are not supported");
    given = n >= 0;
  } else {
    n = attr_ints(I, "axes", axes, MAX_RANK);
    given = n >= 0;
  }
  bool keep = attr_int(I, "keepdims", 1) != 0;
  /* No axes or an empty list: all of them, or none with
  ** noop_with_empty_axes. */
  if (n <= 0) given = false;
  if (!given && attr_int(I, "noop_with_empty_axes", 0)) return cv_identity(I);
  StrBuf e = {0};
  if (post) sb_printf(&e, "%s(", post);
  if (pre && strcmp(pre, "square") == 0) sb_printf(&e, "%s(multiply(%s, %s)", op, x->expr, x->expr);
  else if (pre) sb_printf(&e, "%s(%s(%s)", op, pre, x->expr);
  else sb_printf(&e, "%s(%s", op, x->expr);
  if (given) {
    for (int i = 0; i < n; i++) axes[i] = axes[i] < 0 && x->rank >= 0 ? axes[i] + x->rank : axes[i];
    sb_puts(&e, ", axis=");
    put_ints(&e, axes, n);
  }
  sb_printf(&e, ", keepdims=%s)", keep ? "True" : "False");
  if (post) sb_putc(&e, ')');
  int64_t dims[MAX_RANK];
  int r = 0;
  for (int i = 0; i < x->rank; i++) {
    bool red = !given;
    for (int k = 0; k < n; k++) red |= axes[k] == i;
    if (!red) dims[r++] = x->dims[i];
    else if (keep) dims[r++] = 1;
  }
  return finish(I, &e, x->elem, x->rank < 0 ? -1 : r, dims);
}

static bool reduce(Importer *I, const char *op) { return reduce_fn(I, op, NULL, NULL); }
static bool cv_reduce_mean(Importer *I) { return reduce(I, "mean"); }
static bool cv_reduce_sum(Importer *I) { return reduce(I, "sum"); }
static bool cv_reduce_max(Importer *I) { return reduce(I, "max"); }
static bool cv_reduce_min(Importer *I) { return reduce(I, "min"); }
static bool cv_reduce_prod(Importer *I) { return reduce(I, "prod"); }
static bool cv_reduce_sum_square(Importer *I) { return reduce_fn(I, "sum", "square", NULL); }
static bool cv_reduce_l1(Importer *I) { return reduce_fn(I, "sum", "abs", NULL); }
static bool cv_reduce_l2(Importer *I) { return reduce_fn(I, "sum", "square", "sqrt"); }
static bool cv_reduce_log_sum(Importer *I) { return reduce_fn(I, "sum", NULL, "log"); }
static bool cv_reduce_log_sum_exp(Importer *I) { return reduce_fn(I, "sum", "exp", "log"); }

/* Constant: its value attribute as a constant (never a parameter). */
static bool cv_constant(Importer *I) {
  const Onnx__AttributeProto *a = attr(I, "value");
  if (!a || !a->t) {
    double f;
    int64_t i;
    if ((a = attr(I, "value_float"))) {
      f = a->f;
      ConstData *c = const_new((DType){DT_FLOAT, 32, 1}, 0, NULL);
      float v = (float)f;
      memcpy(c->data, &v, 4);
      const_value(I, I->node->output[0], c, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, false);
      return true;
    }
    if ((a = attr(I, "value_int"))) {
      i = a->i;
      ConstData *c = const_new((DType){DT_INT, 64, 1}, 0, NULL);
      memcpy(c->data, &i, 8);
      const_value(I, I->node->output[0], c, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, false);
      return true;
    }
    return node_error(I, "only tensor, float and int values are supported");
  }
  ConstData *c = tensor_const(I, a->t);
  if (!c) return false;
  const_value(I, I->node->output[0], c, a->t->data_type, false);
  return true;
}

/* {==== Shapes and constants ====}
** Exporters compute shapes in the graph (Shape, Gather, Unsqueeze,
** Concat, then Reshape). With static shapes all of that is known here:
** those nodes are evaluated on small integer constants (the `fold`
** helpers) and become constants themselves. */

enum { FOLD_MAX = 64 };

/* The ints of value v when it is a small integer constant. */
static bool fold_ints(const Value *v, int64_t *out, int *n) {
  if (!v || !v->cdata) return false;
  *n = const_ints(v, out, FOLD_MAX);
  return *n >= 0;
}

/* Makes output k a 1-D (or 0-d when scalar) int64 constant of n values. */
static void fold_output(Importer *I, size_t k, const int64_t *v, int n, bool scalar) {
  int64_t shape[1] = {n};
  ConstData *c = const_new((DType){DT_INT, 64, 1}, scalar ? 0 : 1, shape);
  memcpy(c->data, v, sizeof(int64_t) * (size_t)n);
  if (k < I->node->n_output && *I->node->output[k])
    const_value(I, I->node->output[k], c, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, false);
  else
    const_free(c);
}

static bool cv_shape(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  if (x->rank < 0) return node_error(I, "needs the input's rank");
  int64_t lo = attr_int(I, "start", 0), hi = attr_int(I, "end", x->rank);
  if (lo < 0) lo += x->rank;
  if (hi < 0) hi += x->rank;
  if (lo < 0) lo = 0;
  if (hi > x->rank) hi = x->rank;
  int64_t v[MAX_RANK];
  int n = 0;
  for (int64_t i = lo; i < hi; i++) {
    if (x->dims[i] < 0) return node_error(I, "dimension %lld of its input is not static: not supported yet", (long long)i);
    v[n++] = x->dims[i];
  }
  fold_output(I, 0, v, n, false);
  return true;
}

static bool cv_constant_of_shape(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  int64_t shape[FOLD_MAX];
  int n;
  if (!fold_ints(input(I, 0), shape, &n) || n > MAX_RANK) return node_error(I, "needs a constant shape");
  const Onnx__AttributeProto *a = attr(I, "value");
  DType t = {DT_FLOAT, 32, 1};
  int elem = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  ConstData *v = NULL;
  if (a && a->t) {
    v = tensor_const(I, a->t);
    if (!v) return false;
    if (const_numel(v) != 1) {
      const_free(v);
      return node_error(I, "value must hold one element");
    }
    t = v->dtype;
    elem = a->t->data_type;
  }
  for (int i = 0; i < n; i++)
    if (shape[i] < 0 || shape[i] > (1 << 24)) {
      const_free(v);
      return node_error(I, "shape entry %lld is not valid", (long long)shape[i]);
    }
  int64_t numel = 1;
  for (int i = 0; i < n; i++) numel = dim_mul(numel, shape[i]);
  if (numel < 0 || numel > (1 << 28)) {
    const_free(v);
    return node_error(I, "a constant of that shape is too large");
  }
  ConstData *c = const_new(t, n, shape);
  size_t es = t.bits == 1 ? 1 : t.bits / 8u;
  if (v)
    for (size_t i = 0; i < c->nbytes; i += es) memcpy((char *)c->data + i, v->data, es);
  const_free(v);
  const_value(I, I->node->output[0], c, elem, false);
  return true;
}

/* Gather, Unsqueeze, Squeeze, Concat, Cast, Add, Sub, Mul, Div, Slice (and
** Neg of int64) on small integer constants: evaluated here. Returns true when it did. */
static bool fold_node(Importer *I, bool *ok) {
  const char *op = I->node->op_type ? I->node->op_type : "";
  int64_t a[FOLD_MAX], b[FOLD_MAX], r[FOLD_MAX];
  int na, nb;
  Value *x = input_quiet(I, 0);
  if (!x || !fold_ints(x, a, &na)) return false;
  bool scalar = x->rank == 0;
  if (strcmp(op, "Unsqueeze") == 0 || strcmp(op, "Squeeze") == 0) {
    /* Only the shape changes: 0-d to 1-d and back. */
    if (x->rank > 1) return false;
    fold_output(I, 0, a, na, strcmp(op, "Squeeze") == 0 && na == 1);
    return *ok = true;
  }
  if (strcmp(op, "Cast") == 0) {
    int to = (int)attr_int(I, "to", 0);
    if (to != ONNX__TENSOR_PROTO__DATA_TYPE__INT64) return false;
    fold_output(I, 0, a, na, scalar);
    return *ok = true;
  }
  if (strcmp(op, "Concat") == 0) {
    if (x->rank != 1) return false;
    int n = 0;
    for (size_t i = 0; i < I->node->n_input; i++) {
      Value *v = input_quiet(I, i);
      if (!v || v->rank != 1 || !fold_ints(v, b, &nb) || n + nb > FOLD_MAX) return false;
      memcpy(r + n, b, sizeof(int64_t) * (size_t)nb);
      n += nb;
    }
    fold_output(I, 0, r, n, false);
    return *ok = true;
  }
  if (strcmp(op, "Gather") == 0) {
    Value *idx = input_quiet(I, 1);
    if (x->rank != 1 || attr_int(I, "axis", 0) != 0 || !fold_ints(idx, b, &nb)) return false;
    for (int i = 0; i < nb; i++) {
      int64_t k = b[i] < 0 ? b[i] + na : b[i];
      if (k < 0 || k >= na) return (*ok = node_error(I, "index %lld is out of range", (long long)b[i])), true;
      r[i] = a[k];
    }
    fold_output(I, 0, r, nb, idx->rank == 0);
    return *ok = true;
  }
  if (strcmp(op, "Slice") == 0 && x->rank == 1 && I->opset >= 10) {
    int64_t s[FOLD_MAX], e[FOLD_MAX];
    int ns, ne;
    if (!fold_ints(input_quiet(I, 1), s, &ns) || !fold_ints(input_quiet(I, 2), e, &ne) || ns != 1 || ne != 1) return false;
    int64_t step = 1, st[FOLD_MAX];
    int nst;
    if (input_quiet(I, 4) && fold_ints(input_quiet(I, 4), st, &nst) && nst == 1) step = st[0];
    if (step != 1) return false;
    int64_t lo = s[0] < 0 ? s[0] + na : s[0], hi = e[0] < 0 ? e[0] + na : e[0];
    if (lo < 0) lo = 0;
    if (hi > na) hi = na;
    int n = 0;
    for (int64_t i = lo; i < hi; i++) r[n++] = a[i];
    fold_output(I, 0, r, n, false);
    return *ok = true;
  }
  if (strcmp(op, "Neg") == 0 && x->elem == ONNX__TENSOR_PROTO__DATA_TYPE__INT64) {
    for (int i = 0; i < na; i++) {
      if (a[i] == INT64_MIN) return false;
      r[i] = -a[i];
    }
    fold_output(I, 0, r, na, scalar);
    return *ok = true;
  }
  int kind = strcmp(op, "Add") == 0 ? 1 : strcmp(op, "Sub") == 0 ? 2 : strcmp(op, "Mul") == 0 ? 3
           : strcmp(op, "Div") == 0 ? 4 : 0;
  if (kind) {
    Value *y = input_quiet(I, 1);
    if (!y || !fold_ints(y, b, &nb) || (na != nb && na != 1 && nb != 1)) return false;
    int n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
      int64_t p = a[na == 1 ? 0 : i], q = b[nb == 1 ? 0 : i];
      if (kind == 4 && (q == 0 || (q == -1 && p == INT64_MIN))) return false;
      bool over = kind == 1 ? __builtin_add_overflow(p, q, &r[i]) : kind == 2 ? __builtin_sub_overflow(p, q, &r[i])
                : kind == 3 ? __builtin_mul_overflow(p, q, &r[i]) : (r[i] = p / q, false);
      if (over) return false;
    }
    fold_output(I, 0, r, n, x->rank == 0 && y->rank == 0);
    return *ok = true;
  }
  return false;
}

/* Pad: mode constant, reflect or edge; pads as an attribute (before
** opset 11) or a constant input, begins of every axis then ends. */
static bool cv_pad(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  int64_t pads[2 * MAX_RANK];
  int n;
  double value = 0;
  const char *dyn_value = NULL;
  if (I->opset < 11) {
    n = attr_ints(I, "pads", pads, 2 * MAX_RANK);
    value = attr_float(I, "value", 0);
  } else {
    Value *p = input(I, 1), *v = input(I, 2);
    n = p ? const_ints(p, pads, 2 * MAX_RANK) : -1;
    /* A value computed at run time is nn.pad's operand as it is. */
    if (v && !const_scalar(v, &value)) dyn_value = v->expr;
    if (input(I, 3)) return node_error(I, "the axes input is not supported yet");
  }
  if (n < 0 || x->rank < 0 || n != 2 * x->rank) return node_error(I, "needs constant pads, two per axis of the input");
  char buf[32];
  const char *mode = attr_str(I, "mode", "constant", buf, sizeof buf);
  if (strcmp(mode, "constant") != 0 && strcmp(mode, "reflect") != 0 && strcmp(mode, "edge") != 0)
    return node_error(I, "mode '%s' is not supported", mode);
  StrBuf e = {0};
  sb_printf(&e, "nn.pad(%s, ", x->expr);
  DType dt;
  if (dyn_value) sb_puts(&e, dyn_value);
  else if (elem_dtype(x->elem, &dt) && dt.code == DT_FLOAT) put_float_lit(I, &e, x->elem, value);
  else put_lit(I, &e, x->elem, value);
  sb_puts(&e, ", pad_width=[");
  int64_t dims[MAX_RANK];
  for (int i = 0; i < x->rank; i++) {
    if (pads[i] < 0 || pads[x->rank + i] < 0) {
      sb_free(&e);
      return node_error(I, "negative pads (cropping) are not supported");
    }
    sb_printf(&e, "%s[%lld, %lld]", i ? ", " : "", (long long)pads[i], (long long)pads[x->rank + i]);
    dims[i] = dim_add(x->dims[i], dim_add(pads[i], pads[x->rank + i]));
  }
  sb_printf(&e, "], pad_mode=\"%s\")", mode);
  return finish(I, &e, x->elem, x->rank, dims);
}

/* Slice with constant starts, ends, axes and steps: strided_slice. */
static bool cv_slice(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  if (x->rank < 0) return node_error(I, "needs the input's rank");
  int64_t st[MAX_RANK], en[MAX_RANK], ax[MAX_RANK], sp[MAX_RANK];
  int ns, ne, na = -1, nsp = -1;
  if (I->opset < 10) {
    ns = attr_ints(I, "starts", st, MAX_RANK);
    ne = attr_ints(I, "ends", en, MAX_RANK);
    na = attr_ints(I, "axes", ax, MAX_RANK);
  } else {
    ns = input(I, 1) ? const_ints(input(I, 1), st, MAX_RANK) : -1;
    ne = input(I, 2) ? const_ints(input(I, 2), en, MAX_RANK) : -1;
    if (input(I, 3)) na = const_ints(input(I, 3), ax, MAX_RANK);
    if (input(I, 4)) nsp = const_ints(input(I, 4), sp, MAX_RANK);
    if ((input(I, 3) && na < 0) || (input(I, 4) && nsp < 0)) return node_error(I, "needs constant axes and steps");
  }
  if (ns < 0 || ne != ns || (na >= 0 && na != ns) || (nsp >= 0 && nsp != ns))
    return node_error(I, "needs constant starts and ends of one length");
  int64_t b[MAX_RANK], e2[MAX_RANK], s[MAX_RANK], dims[MAX_RANK];
  for (int i = 0; i < x->rank; i++) {
    b[i] = 0;
    e2[i] = x->dims[i];
    s[i] = 1;
    dims[i] = x->dims[i];
  }
  for (int k = 0; k < ns; k++) {
    int64_t a = na >= 0 ? ax[k] : k;
    if (a < 0) a += x->rank;
    if (a < 0 || a >= x->rank) return node_error(I, "axis %lld is out of range", (long long)a);
    int64_t d = x->dims[a], step = nsp >= 0 ? sp[k] : 1;
    if (d < 0) return node_error(I, "needs the static size of axis %lld", (long long)a);
    if (step == 0) return node_error(I, "a step of 0 is not valid");
    int64_t lo = st[k], hi = en[k];
    /* Clamp as ONNX does: to [0, d] going forward, [-1, d - 1] backward. */
    if (lo < 0) lo += d;
    if (hi < 0) hi += d;
    if (step > 0) {
      lo = lo < 0 ? 0 : lo > d ? d : lo;
      hi = hi < 0 ? 0 : hi > d ? d : hi;
      dims[a] = hi > lo ? (hi - lo - 1) / step + 1 : 0;
    } else {
      lo = lo < 0 ? -1 : lo > d - 1 ? d - 1 : lo;
      hi = hi < -1 ? -1 : hi > d - 1 ? d - 1 : hi;
      uint64_t back = (uint64_t)0 - (uint64_t)step;
      dims[a] = lo > hi ? (int64_t)((uint64_t)(lo - hi - 1) / back) + 1 : 0;
      if (hi < 0) hi = -d - 1; /* past the front: Relay reads a negative end from the back */
    }
    b[a] = lo;
    e2[a] = hi;
    s[a] = step;
  }
  StrBuf e = {0};
  sb_printf(&e, "strided_slice(%s, begin=", x->expr);
  put_ints(&e, b, x->rank);
  sb_puts(&e, ", end=");
  put_ints(&e, e2, x->rank);
  sb_puts(&e, ", strides=");
  put_ints(&e, s, x->rank);
  sb_putc(&e, ')');
  return finish(I, &e, x->elem, x->rank, dims);
}

/* Expand to a constant shape: broadcast_to of the numpy broadcast. */
static bool cv_expand(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0);
  int64_t shape[FOLD_MAX];
  int n;
  if (!fold_ints(input(I, 1), shape, &n) || n > MAX_RANK) return node_error(I, "needs a constant shape");
  Value t = {0};
  t.rank = n;
  memcpy(t.dims, shape, sizeof(int64_t) * (size_t)n);
  int64_t dims[MAX_RANK];
  int r = broadcast_shape(x, &t, dims);
  if (r < 0) return node_error(I, "needs the input's rank");
  for (int i = 0; i < r; i++)
    if (dims[i] < 0) return node_error(I, "needs static shapes");
  StrBuf e = {0};
  sb_printf(&e, "broadcast_to(%s, shape=", x->expr);
  put_ints(&e, dims, r);
  sb_putc(&e, ')');
  return finish(I, &e, x->elem, r, dims);
}

/* Split along an axis: one split call, each output a projection. Sizes
** from the `split` attribute (before opset 13) or input, else equal parts
** (num_outputs from opset 18, or the number of outputs). */
static bool cv_split(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  int64_t axis = attr_int(I, "axis", 0);
  if (x->rank < 0) return node_error(I, "needs the input's rank");
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank) return node_error(I, "axis %lld is out of range", (long long)axis);
  int64_t d = x->dims[axis];
  int nout = (int)I->node->n_output;
  int64_t sizes[FOLD_MAX];
  int n = -1;
  if (I->opset < 13) n = attr_ints(I, "split", sizes, FOLD_MAX);
  else if (input(I, 1)) {
    n = const_ints(input(I, 1), sizes, FOLD_MAX);
    if (n < 0) return node_error(I, "split sizes that are not a constant are not supported");
  }
  if (n < 0) {
    if (d < 0) return node_error(I, "equal parts need the static size of the axis");
    if (nout < 1 || nout > FOLD_MAX) return node_error(I, "has %d outputs", nout);
    int64_t part = (d + nout - 1) / nout;
    n = nout;
    for (int i = 0; i < n; i++) sizes[i] = i < n - 1 ? part : d - part * (n - 1);
  }
  if (n != nout) return node_error(I, "%d sizes for %d outputs", n, nout);
  int64_t at = 0;
  for (int i = 0; i < n; i++) {
    if (sizes[i] < 0 || (d >= 0 && at > d - sizes[i])) return node_error(I, "the sizes do not fit the axis");
    at += sizes[i];
  }
  if (d >= 0 && at != d) return node_error(I, "the sizes add up to %lld, the axis has %lld", (long long)at, (long long)d);
  StrBuf e = {0};
  sb_printf(&e, "split(%s, indices_or_sections=[", x->expr);
  for (int i = 1, c = 0; i < n; i++) {
    c += (int)sizes[i - 1];
    sb_printf(&e, "%s%d", i > 1 ? ", " : "", c);
  }
  sb_printf(&e, "], axis=%lld)", (long long)axis);
  char var[32];
  snprintf(var, sizeof var, "%%v%d", I->tmp++);
  sb_printf(&I->body, "  let %s = %s;\n", var, sb_str(&e));
  sb_free(&e);
  for (int i = 0; i < n; i++) {
    if (!*I->node->output[i]) continue;
    char proj[48];
    snprintf(proj, sizeof proj, "%s.%d", var, i);
    int64_t dims[MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    dims[axis] = sizes[i];
    add_value(I, I->node->output[i], proj, x->elem, x->rank, dims);
  }
  return true;
}

/* LayerNormalization (opset 17) over the last axis. */
static bool cv_layer_norm(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0), *g = input(I, 1), *b = input(I, 2);
  int64_t axis = attr_int(I, "axis", -1);
  if (x->rank < 0) return node_error(I, "needs the input's rank");
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank) return node_error(I, "axis %lld is out of range", (long long)attr_int(I, "axis", -1));
  bool stats = false;
  for (size_t k = 1; k < I->node->n_output; k++) stats |= *I->node->output[k] != 0;
  if (axis != x->rank - 1 || stats) return layer_norm_general(I, x, g, b, axis);
  StrBuf e = {0};
  /* nn.layer_norm needs a beta: zeros when absent. */
  if (b) sb_printf(&e, "nn.layer_norm(%s, %s, %s, axis=-1, epsilon=", x->expr, g->expr, b->expr);
  else sb_printf(&e, "nn.layer_norm(%s, %s, zeros_like(%s), axis=-1, center=False, epsilon=", x->expr, g->expr, g->expr);
  put_float_lit(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, attr_float(I, "epsilon", 1e-5));
  sb_putc(&e, ')');
  return finish(I, &e, x->elem, x->rank, x->dims);
}

/* ConvTranspose (1-D, 2-D, 3-D): the weight is (C_in, C_out / group,
** k...), Relay's IOW/IOHW/IODHW. Pads explicit, or from output_shape or
** auto_pad SAME (output = input * stride) as ONNX derives them: total =
** stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - out, the
** odd one at the end for SAME_UPPER and at the start otherwise; a
** negative total is output padding (zeros at the end). */
static bool cv_conv_transpose(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0), *w = input(I, 1), *b = input(I, 2);
  int n = w->rank - 2;
  if (n < 1 || n > 3 || x->rank != n + 2) return node_error(I, "needs a 3-D, 4-D or 5-D input and weight");
  Spatial s;
  char buf[32];
  const char *ap = attr_str(I, "auto_pad", "NOTSET", buf, sizeof buf);
  bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
  if (!same && strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0)
    return node_error(I, "auto_pad '%s' is not known", ap);
  /* spatial() pads SAME as a convolution does: those pads are replaced
  ** below. */
  if (!spatial(I, n, w->dims + 2, &s, x)) return false;
  int64_t op[3] = {0, 0, 0}, oshape[3];
  attr_ints(I, "output_padding", op, 3);
  int nos = attr_ints(I, "output_shape", oshape, 3);
  if (nos > 0 || same) {
    if (nos > 0 && nos != n) return node_error(I, "output_shape needs one size per spatial axis");
    for (int i = 0; i < n; i++) {
      int64_t in = x->dims[2 + i];
      if (in < 0) return node_error(I, "output_shape and auto_pad need the input's spatial dims");
      int64_t out = nos > 0 ? oshape[i] : dim_mul(in, s.strides[i]);
      int64_t total = (in - 1) * s.strides[i] + op[i] + (s.kernel[i] - 1) * s.dilations[i] + 1 - out;
      if (total < 0) {
        /* A larger output than the kernel reaches: zeros at the end. */
        op[i] -= total;
        total = 0;
      }
      bool upper = strcmp(ap, "SAME_UPPER") == 0;
      s.pads[i] = upper ? total / 2 : total - total / 2;
      s.pads[n + i] = total - s.pads[i];
    }
  }
  int64_t groups = attr_int(I, "group", 1);
  StrBuf e = {0};
  sb_printf(&e, "nn.conv%dd_transpose(%s, %s, strides=", n, x->expr, w->expr);
  put_ints(&e, s.strides, n);
  sb_puts(&e, ", output_padding=");
  put_ints(&e, op, n);
  sb_puts(&e, ", padding=");
  put_ints(&e, s.pads, 2 * n);
  sb_puts(&e, ", dilation=");
  put_ints(&e, s.dilations, n);
  int64_t cout = w->dims[1] >= 0 ? dim_mul(w->dims[1], groups) : -1;
  sb_printf(&e, ", groups=%lld", (long long)groups);
  if (cout >= 0) sb_printf(&e, ", channels=%lld", (long long)cout);
  sb_puts(&e, ", kernel_size=");
  put_ints(&e, s.kernel, n);
  sb_putc(&e, ')');
  if (b) {
    StrBuf t = {0};
    sb_printf(&t, "nn.bias_add(%s, %s)", sb_str(&e), b->expr);
    sb_free(&e);
    e = t;
  }
  int64_t dims[5] = {x->dims[0], cout, -1, -1, -1};
  for (int i = 0; i < n; i++) {
    int64_t in = x->dims[2 + i];
    /* (in - 1) * stride - pads + dilation * (k - 1) + output_padding + 1 */
    int64_t grow = dim_add(dim_mul(in - 1, s.strides[i]), dim_add(dim_mul(s.dilations[i], s.kernel[i] - 1), op[i] + 1));
    int64_t pads = dim_add(s.pads[i], s.pads[n + i]);
    dims[2 + i] = in >= 1 && grow >= 0 && pads >= 0 && grow >= pads ? grow - pads : -1;
  }
  return finish(I, &e, x->elem, n + 2, dims);
}

/* Resize (opset 11 on) of a 4-D NCHW input over H and W: image.resize2d.
** The output size from `sizes`, or from `scales` and the input's static
** H and W (floor(in * scale)); batch and channels unscaled. */
/* Upsample (opsets 7 to 9) and Resize before opset 11 (4-D): scales as an
** attribute (before opset 9) or a constant input; each output size is
** floor(input size * scale), the coordinates asymmetric (output x maps to
** x / scale), nearest rounds down (as torch's nearest upsampling), linear
** is bilinear. */
static bool cv_upsample(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  if (x->rank != 4) return node_error(I, "only 4-D (NCHW) inputs are supported");
  float sc[4];
  if (I->opset < 9) {
    const Onnx__AttributeProto *a = attr(I, "scales");
    if (!a || a->n_floats != 4) return node_error(I, "needs 4 scales");
    for (int i = 0; i < 4; i++) sc[i] = a->floats[i];
  } else {
    Value *scales = input(I, 1);
    if (!scales || !scales->cdata || const_numel(scales->cdata) != 4 || scales->cdata->dtype.code != DT_FLOAT ||
        scales->cdata->dtype.bits != 32)
      return node_error(I, "needs constant float32 scales (4)");
    memcpy(sc, scales->cdata->data, sizeof sc);
  }
  if (sc[0] != 1 || sc[1] != 1) return node_error(I, "resizing batch or channels is not supported");
  int64_t out[2];
  for (int i = 0; i < 2; i++) {
    if (x->dims[2 + i] < 0) return node_error(I, "needs the input's static height and width");
    double v = floor((double)x->dims[2 + i] * sc[2 + i]);
    if (!(v >= 1 && v <= (double)(1 << 24))) return node_error(I, "scale %g gives an output size out of range", sc[2 + i]);
    out[i] = (int64_t)v;
  }
  char mb[32];
  const char *mode = attr_str(I, "mode", "nearest", mb, sizeof mb);
  bool nearest = strcmp(mode, "nearest") == 0;
  if (!nearest && strcmp(mode, "linear") != 0 && strcmp(mode, "bilinear") != 0)
    return node_error(I, "mode '%s' is not supported (nearest and linear are)", mode);
  StrBuf e = {0};
  sb_printf(&e, "image.resize2d(%s, size=[%lld, %lld], method=\"%s\", coordinate_transformation_mode=\"asymmetric\", "
            "rounding_method=\"%s\")", x->expr, (long long)out[0], (long long)out[1],
            nearest ? "nearest_neighbor" : "linear", nearest ? "floor" : "");
  int64_t dims[4] = {x->dims[0], x->dims[1], out[0], out[1]};
  return finish(I, &e, x->elem, 4, dims);
}

static bool cv_resize(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  if (I->opset < 11) return cv_upsample(I);
  if (x->rank != 4) return node_error(I, "only 4-D (NCHW) inputs are supported");
  Value *roi = input(I, 1), *scales = input(I, 2), *sizes = input(I, 3);
  int64_t out[2];
  int64_t sz[FOLD_MAX];
  int n;
  if (sizes && !sizes->cdata) return node_error(I, "sizes that are not a constant are not supported");
  if (sizes && const_numel(sizes->cdata) > 0) {
    n = const_ints(sizes, sz, FOLD_MAX);
    if (n != 4) return node_error(I, "needs 4 constant sizes");
    if (sz[0] != x->dims[0] || sz[1] != x->dims[1]) return node_error(I, "resizing batch or channels is not supported");
    out[0] = sz[2];
    out[1] = sz[3];
  } else {
    if (!scales || !scales->cdata || const_numel(scales->cdata) != 4 || scales->cdata->dtype.code != DT_FLOAT ||
        scales->cdata->dtype.bits != 32)
      return node_error(I, "needs constant float32 scales (4) or sizes");
    float sc[4];
    memcpy(sc, scales->cdata->data, sizeof sc);
    if (sc[0] != 1 || sc[1] != 1) return node_error(I, "resizing batch or channels is not supported");
    for (int i = 0; i < 2; i++) {
      if (x->dims[2 + i] < 0) return node_error(I, "scales need the input's static height and width");
      double v = floor((double)x->dims[2 + i] * sc[2 + i]);
      if (!(v >= 1 && v <= (double)(1 << 24))) return node_error(I, "scale %g gives an output size out of range", sc[2 + i]);
      /* image.resize2d maps coordinates by the ratio of the sizes; ONNX
      ** by the scale, the same number only when the size is exact */
      if (v != (double)x->dims[2 + i] * sc[2 + i])
        return node_error(I, "scale %g of a side of %lld gives a fractional size, not supported (relayc resizes by "
                             "the ratio of the sizes)", sc[2 + i], (long long)x->dims[2 + i]);
      out[i] = (int64_t)v;
    }
  }
  if (out[0] < 1 || out[1] < 1 || out[0] > (1 << 24) || out[1] > (1 << 24))
    return node_error(I, "an output size of %lld x %lld is out of range", (long long)out[0], (long long)out[1]);
  char mb[32], cb[32], nb[32];
  const char *mode = attr_str(I, "mode", "nearest", mb, sizeof mb);
  const char *ctm = attr_str(I, "coordinate_transformation_mode", "half_pixel", cb, sizeof cb);
  const char *nm = attr_str(I, "nearest_mode", "round_prefer_floor", nb, sizeof nb);
  const char *method = strcmp(mode, "nearest") == 0 ? "nearest_neighbor" : strcmp(mode, "linear") == 0 ? "linear"
                     : strcmp(mode, "cubic") == 0 ? "cubic" : NULL;
  if (!method) return node_error(I, "mode '%s' is not known", mode);
  static const char *const ctms[] = {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                                     "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  bool known = false;
  for (size_t i = 0; i < RLY_COUNTOF(ctms); i++) known |= strcmp(ctm, ctms[i]) == 0;
  if (!known) return node_error(I, "coordinate_transformation_mode '%s' is not known", ctm);
  static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  known = false;
  for (size_t i = 0; i < RLY_COUNTOF(nms); i++) known |= strcmp(nm, nms[i]) == 0;
  if (!known) return node_error(I, "nearest_mode '%s' is not known", nm);
  /* An integer upscale with asymmetric coordinates: image.resize2d's
  ** nearest divides by the factor (TVM's), which rounds down; ONNX rounds
  ** as nearest_mode says, the same only for floor, and for
  ** round_prefer_floor at a factor of 2. */
  if (strcmp(method, "nearest_neighbor") == 0 && strcmp(ctm, "asymmetric") == 0 && strcmp(nm, "floor") != 0)
    for (int i = 0; i < 2; i++) {
      int64_t in = x->dims[2 + i];
      if (in <= 0 || out[i] % in != 0 || out[i] / in == 1) continue;
      if (strcmp(nm, "round_prefer_floor") == 0 && out[i] / in == 2) continue;
      return node_error(I, "nearest_mode '%s' with asymmetric coordinates and an upscale by %lld is not supported "
                           "(relayc's nearest resize divides by the factor, which is 'floor')", nm,
                        (long long)(out[i] / in));
    }
  StrBuf e = {0};
  sb_printf(&e, "image.resize2d(%s, size=[%lld, %lld], roi=", x->expr, (long long)out[0], (long long)out[1]);
  if (strcmp(ctm, "tf_crop_and_resize") == 0) {
    /* ONNX's roi: starts then ends of every axis; Relay's: H and W's. */
    float r[8];
    if (!roi || !roi->cdata || const_numel(roi->cdata) != 8 || roi->cdata->dtype.code != DT_FLOAT ||
        roi->cdata->dtype.bits != 32) {
      sb_free(&e);
      return node_error(I, "tf_crop_and_resize needs a constant float32 roi of 8 values");
    }
    memcpy(r, roi->cdata->data, sizeof r);
    sb_puts(&e, "[");
    put_float_lit(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, r[2]);
    sb_puts(&e, ", ");
    put_float_lit(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, r[3]);
    sb_puts(&e, ", ");
    put_float_lit(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, r[6]);
    sb_puts(&e, ", ");
    put_float_lit(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, r[7]);
    sb_puts(&e, "]");
  } else {
    sb_puts(&e, "[0f, 0f, 0f, 0f]");
  }
  sb_printf(&e, ", method=\"%s\", coordinate_transformation_mode=\"%s\", rounding_method=\"%s\", cubic_alpha=", method,
            ctm, strcmp(method, "nearest_neighbor") == 0 ? nm : "");
  put_float_lit(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, attr_float(I, "cubic_coeff_a", -0.75));
  sb_printf(&e, ", cubic_exclude=%d, extrapolation_value=", attr_int(I, "exclude_outside", 0) ? 1 : 0);
  put_float_lit(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, attr_float(I, "extrapolation_value", 0));
  sb_putc(&e, ')');
  int64_t dims[4] = {x->dims[0], x->dims[1], out[0], out[1]};
  return finish(I, &e, x->elem, 4, dims);
}

/* {==== More operators ====}
** Elementwise functions, reductions and data movement that the ONNX
** backend node tests exercise (tests/onnx/node_suite.py), written in terms
** of Relay's operators. */

/* Binds e to a fresh let variable and writes its name into var (32 bytes);
** returns var. For results used more than once, or projected with .N. */
static const char *let_tmp(Importer *I, const char *e, char *var) {
  snprintf(var, 32, "%%v%d", I->tmp++);
  sb_printf(&I->body, "  let %s = %s;\n", var, e);
  return var;
}

/* A scalar literal of value v with the element type elem: a float suffix,
** i64/i16 or a plain int32, else a cast of an int32 literal. */
static void put_lit(Importer *I, StrBuf *sb, int elem, double v) {
  DType t;
  if (!elem_dtype(elem, &t) || t.code == DT_FLOAT) {
    put_float_lit(I, sb, elem, v);
  } else if (t.code == DT_INT && t.bits == 64) {
    sb_printf(sb, "%lldi64", (long long)v);
  } else if (t.code == DT_INT && t.bits == 32) {
    sb_printf(sb, "%lld", (long long)v);
  } else if (t.code == DT_INT && t.bits == 16) {
    sb_printf(sb, "%lldi16", (long long)v);
  } else {
    char buf[32];
    sb_printf(sb, "cast(%lld, dtype=\"%s\")", (long long)v, dtype_name(t, buf));
  }
}

/* A unary function written as a template: every "X" in fmt is the input
** expression and every "A", "B", "C" the literal of alpha, beta, gamma in the
** input's element type. */
static bool unary_fmt(Importer *I, const char *fmt, double alpha, double beta, double gamma) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  char var[32];
  const char *xv = x->expr;
  int uses = 0;
  for (const char *p = fmt; *p; p++) uses += *p == 'X';
  if (uses > 1 && !x->cdata && x->expr[0] != '%') xv = let_tmp(I, x->expr, var);
  StrBuf e = {0};
  for (const char *p = fmt; *p; p++) {
    if (*p == 'X') sb_puts(&e, xv);
    else if (*p == 'A') put_lit(I, &e, x->elem, alpha);
    else if (*p == 'B') put_lit(I, &e, x->elem, beta);
    else if (*p == 'C') put_lit(I, &e, x->elem, gamma);
    else sb_putc(&e, *p);
  }
  return finish(I, &e, x->elem, x->rank, x->dims);
}

static bool cv_acos(Importer *I) { return cv_unary(I, "acos"); }
static bool cv_acosh(Importer *I) { return cv_unary(I, "acosh"); }
static bool cv_asin(Importer *I) { return cv_unary(I, "asin"); }
static bool cv_asinh(Importer *I) { return cv_unary(I, "asinh"); }
static bool cv_atan(Importer *I) { return cv_unary(I, "atan"); }
static bool cv_atanh(Importer *I) { return cv_unary(I, "atanh"); }
static bool cv_tan(Importer *I) { return cv_unary(I, "tan"); }
static bool cv_sinh(Importer *I) { return cv_unary(I, "sinh"); }
static bool cv_cosh(Importer *I) { return cv_unary(I, "cosh"); }
static bool cv_sign(Importer *I) { return cv_unary(I, "sign"); }
static bool cv_reciprocal(Importer *I) { return unary_fmt(I, "divide(A, X)", 1, 0, 0); }
static bool cv_softplus(Importer *I) { return unary_fmt(I, "log(add(exp(X), A))", 1, 0, 0); }
static bool cv_softsign(Importer *I) { return unary_fmt(I, "divide(X, add(abs(X), A))", 1, 0, 0); }

static bool cv_elu(Importer *I) {
  return unary_fmt(I, "where(less(X, B), multiply(A, subtract(exp(X), C)), X)", attr_float(I, "alpha", 1), 0, 1);
}

static bool cv_celu(Importer *I) {
  double a = attr_float(I, "alpha", 1);
  return unary_fmt(I, "add(maximum(X, C), minimum(C, multiply(A, subtract(exp(divide(X, A)), B))))", a, 1, 0);
}

static bool cv_selu(Importer *I) {
  double a = attr_float(I, "alpha", 1.67326319217681884765625), g = attr_float(I, "gamma", 1.05070102214813232421875);
  return unary_fmt(I, "multiply(B, where(greater(X, C), X, multiply(A, subtract(exp(X), B))))", a, g, 0);
}

static bool cv_thresholded_relu(Importer *I) {
  return unary_fmt(I, "where(greater(X, A), X, zeros_like(X))", attr_float(I, "alpha", 1), 0, 0);
}

static bool cv_shrink(Importer *I) {
  double l = attr_float(I, "lambd", 0.5), b = attr_float(I, "bias", 0);
  return unary_fmt(I, "where(less(X, negative(A)), add(X, B), where(greater(X, A), subtract(X, B), zeros_like(X)))",
                   l, b, 0);
}

/* IsInf with detect_positive and detect_negative. */
static bool cv_isinf(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  bool pos = attr_int(I, "detect_positive", 1) != 0, neg = attr_int(I, "detect_negative", 1) != 0;
  StrBuf e = {0};
  if (pos && neg) sb_printf(&e, "isinf(%s)", x->expr);
  else if (pos || neg) sb_printf(&e, "logical_and(isinf(%s), %s(%s, zeros_like(%s)))", x->expr,
                                 pos ? "greater" : "less", x->expr, x->expr);
  else sb_printf(&e, "zeros_like(isinf(%s))", x->expr);
  return finish(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, x->rank, x->dims);
}

static bool cv_isnan(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  StrBuf e = {0};
  sb_printf(&e, "isnan(%s)", x->expr);
  return finish(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, x->rank, x->dims);
}

/* PRelu: the slope broadcasts to the input (unidirectionally). */
static bool cv_prelu(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0), *s = input(I, 1);
  char var[32];
  const char *xv = x->expr[0] == '%' ? x->expr : let_tmp(I, x->expr, var);
  StrBuf e = {0};
  sb_printf(&e, "where(less(%s, zeros_like(%s)), multiply(%s, %s), %s)", xv, xv, xv, s->expr, xv);
  return finish(I, &e, x->elem, x->rank, x->dims);
}

static bool cv_xor(Importer *I) { return cv_binary(I, "logical_xor", true); }
static bool cv_greater_equal(Importer *I) { return cv_binary(I, "greater_equal", true); }
static bool cv_less_equal(Importer *I) { return cv_binary(I, "less_equal", true); }

static bool cv_bit_shift(Importer *I) {
  char buf[16];
  const char *dir = attr_str(I, "direction", "", buf, sizeof buf);
  if (strcmp(dir, "LEFT") == 0) return cv_binary(I, "left_shift", false);
  if (strcmp(dir, "RIGHT") == 0) return cv_binary(I, "right_shift", false);
  return node_error(I, "direction '%s' is not LEFT or RIGHT", dir);
}

/* Mod: fmod 0 takes the divisor's sign (floor_mod), fmod 1 the dividend's
** (C's fmod: trunc_mod). */
static bool cv_mod(Importer *I) {
  DType t;
  bool fmod = attr_int(I, "fmod", 0) != 0;
  if (!need_inputs(I, 2)) return false;
  if (elem_dtype(input(I, 0)->elem, &t) && t.code == DT_FLOAT && !fmod)
    return node_error(I, "fmod 0 on floating-point inputs is not valid ONNX");
  return cv_binary(I, fmod ? "trunc_mod" : "floor_mod", false);
}

/* Mean of any number of inputs: their sum over their count. */
static bool cv_mean(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  size_t n = I->node->n_input;
  if (!cv_variadic(I, "add")) return false;
  Value *s = find_value(I, I->node->output[0]);
  if (!s || n == 1) return true;
  StrBuf e = {0};
  sb_printf(&e, "divide(%s, ", s->expr);
  put_lit(I, &e, s->elem, (double)n);
  sb_putc(&e, ')');
  Value sv = *s;
  return finish(I, &e, sv.elem, sv.rank, sv.dims);
}

/* CastLike: a cast to the second input's element type. */
static bool cv_cast_like(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0), *like = input(I, 1);
  StrBuf e = {0};
  sb_printf(&e, "cast(%s, dtype=\"%s\")", x->expr, elem_relay(like->elem));
  return finish(I, &e, like->elem, x->rank, x->dims);
}

/* Size: the element count, a constant when the shape is static. */
static bool cv_size(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  if (x->rank < 0) return node_error(I, "needs the input's rank");
  int64_t n = 1;
  for (int i = 0; i < x->rank; i++) n = dim_mul(n, x->dims[i]);
  if (n < 0) return node_error(I, "needs a static input shape");
  fold_output(I, 0, &n, 1, true);
  return true;
}

/* ArgMax and ArgMin: Relay's give int32 indices, ONNX's int64. */
static bool arg_reduce(Importer *I, const char *op) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  if (x->rank < 0) return node_error(I, "needs the input's rank");
  int64_t axis = attr_int(I, "axis", 0);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank) return node_error(I, "axis %lld is out of range", (long long)attr_int(I, "axis", 0));
  bool keep = attr_int(I, "keepdims", 1) != 0, last = attr_int(I, "select_last_index", 0) != 0;
  StrBuf e = {0};
  sb_printf(&e, "cast(%s(%s, axis=[%lld], keepdims=%s, select_last_index=%s), dtype=\"int64\")", op, x->expr,
            (long long)axis, keep ? "True" : "False", last ? "True" : "False");
  int64_t dims[MAX_RANK];
  int r = 0;
  for (int i = 0; i < x->rank; i++)
    if (i != axis) dims[r++] = x->dims[i];
    else if (keep) dims[r++] = 1;
  return finish(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, r, dims);
}

static bool cv_argmax(Importer *I) { return arg_reduce(I, "argmax"); }
static bool cv_argmin(Importer *I) { return arg_reduce(I, "argmin"); }

/* An index tensor with negative entries counted from the end of an axis
** of size dim (ONNX's rule): where(idx < 0, idx + dim, idx). */
static void put_wrapped_index(Importer *I, StrBuf *e, const Value *idx, int64_t dim) {
  if (idx->cdata) {
    int64_t v[FOLD_MAX];
    int n = const_ints(idx, v, FOLD_MAX);
    bool neg = n < 0;
    for (int i = 0; i < n; i++) neg |= v[i] < 0;
    if (!neg) {
      sb_puts(e, idx->expr);
      return;
    }
  }
  sb_printf(e, "where(less(%s, ", idx->expr);
  put_lit(I, e, idx->elem, 0);
  sb_printf(e, "), add(%s, ", idx->expr);
  put_lit(I, e, idx->elem, (double)dim);
  sb_printf(e, "), %s)", idx->expr);
}

/* GatherElements: Relay's gather. */
static bool cv_gather_elements(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0), *idx = input(I, 1);
  if (x->rank < 0) return node_error(I, "needs the input's rank");
  int64_t axis = attr_int(I, "axis", 0);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank || x->dims[axis] < 0) return node_error(I, "needs a static axis in range");
  StrBuf e = {0};
  sb_printf(&e, "gather(%s, ", x->expr);
  put_wrapped_index(I, &e, idx, x->dims[axis]);
  sb_printf(&e, ", axis=%lld)", (long long)axis);
  return finish(I, &e, x->elem, idx->rank, idx->dims);
}

/* GatherND: ONNX indexes with the last axis of the indices, Relay's
** gather_nd with the first: the indices are transposed. */
static bool cv_gather_nd(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0), *idx = input(I, 1);
  int64_t b = attr_int(I, "batch_dims", 0);
  if (x->rank < 0 || idx->rank < 1 || idx->dims[idx->rank - 1] < 0) return node_error(I, "needs static index shapes");
  int64_t m = idx->dims[idx->rank - 1];
  if (b < 0 || b + m > x->rank) return node_error(I, "index depth %lld is out of range", (long long)m);
  StrBuf e = {0};
  sb_printf(&e, "gather_nd(%s, transpose(%s, axes=[%d", x->expr, idx->expr, idx->rank - 1);
  for (int i = 0; i < idx->rank - 1; i++) sb_printf(&e, ", %d", i);
  sb_printf(&e, "]), batch_dims=%lld)", (long long)b);
  int64_t dims[MAX_RANK];
  int r = 0;
  for (int i = 0; i < idx->rank - 1 && r < MAX_RANK; i++) dims[r++] = idx->dims[i];
  for (int64_t i = b + m; i < x->rank && r < MAX_RANK; i++) dims[r++] = x->dims[i];
  if (r > MAX_RANK - 1 && idx->rank - 1 + x->rank - b - m > MAX_RANK) {
    sb_free(&e);
    return node_error(I, "the result's rank is over %d", MAX_RANK);
  }
  return finish(I, &e, x->elem, r, dims);
}

/* Tile: constant repeats. */
static bool cv_tile(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0);
  int64_t reps[MAX_RANK];
  int n = const_ints(input(I, 1), reps, MAX_RANK);
  if (n < 0) return node_error(I, "repeats that are not a constant are not supported");
  if (n != x->rank) return node_error(I, "needs one repeat per axis of the input");
  StrBuf e = {0};
  sb_printf(&e, "tile(%s, reps=", x->expr);
  put_ints(&e, reps, n);
  sb_putc(&e, ')');
  int64_t dims[MAX_RANK];
  for (int i = 0; i < n; i++) dims[i] = dim_mul(x->dims[i], reps[i]);
  return finish(I, &e, x->elem, n, dims);
}

/* DepthToSpace (DCR or CRD) and SpaceToDepth, 4-D NCHW. */
static bool sub_pixel(Importer *I, bool to_space) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  if (x->rank != 4) return node_error(I, "needs a 4-D input");
  int64_t bs = attr_int(I, "blocksize", 0);
  if (bs <= 0) return node_error(I, "needs a positive blocksize");
  char buf[8];
  const char *mode = attr_str(I, "mode", "DCR", buf, sizeof buf);
  if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0) return node_error(I, "mode '%s' is not supported", mode);
  StrBuf e = {0};
  int64_t dims[4] = {x->dims[0], x->dims[1], x->dims[2], x->dims[3]};
  if (to_space) {
    sb_printf(&e, "nn.depth_to_space(%s, block_size=%lld, mode=\"%s\")", x->expr, (long long)bs, mode);
    dims[1] = dims[1] < 0 ? -1 : dims[1] / (bs * bs);
    dims[2] = dim_mul(dims[2], bs);
    dims[3] = dim_mul(dims[3], bs);
  } else {
    sb_printf(&e, "nn.space_to_depth(%s, block_size=%lld)", x->expr, (long long)bs);
    dims[1] = dim_mul(dims[1], bs * bs);
    dims[2] = dims[2] < 0 ? -1 : dims[2] / bs;
    dims[3] = dims[3] < 0 ? -1 : dims[3] / bs;
  }
  return finish(I, &e, x->elem, 4, dims);
}

static bool cv_depth_to_space(Importer *I) { return sub_pixel(I, true); }
static bool cv_space_to_depth(Importer *I) { return sub_pixel(I, false); }

/* Writes v (as a double) into element i of the constant c. */
static void const_set(ConstData *c, int64_t i, double v) {
  void *p = (char *)c->data + i * (c->dtype.bits == 1 ? 1 : c->dtype.bits / 8);
  if (c->dtype.code == DT_FLOAT && c->dtype.bits == 32) *(float *)p = (float)v;
  else if (c->dtype.code == DT_FLOAT && c->dtype.bits == 64) *(double *)p = v;
  else if (c->dtype.bits == 64) *(int64_t *)p = (int64_t)v;
  else if (c->dtype.bits == 32) *(int32_t *)p = (int32_t)v;
  else if (c->dtype.bits == 16) *(int16_t *)p = (int16_t)v;
  else *(int8_t *)p = (int8_t)v;
}

/* EyeLike: a constant with ones on diagonal k of the input's (static)
** 2-D shape. */
static bool cv_eye_like(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  if (x->rank != 2 || x->dims[0] < 0 || x->dims[1] < 0) return node_error(I, "needs a static 2-D input");
  int elem = (int)attr_int(I, "dtype", x->elem);
  DType t;
  if (!elem_dtype(elem, &t) || (t.code == DT_FLOAT && t.bits == 16))
    return node_error(I, "element type %s is not supported", elem_name(elem));
  if (dim_mul(x->dims[0], x->dims[1]) > (1 << 24)) return node_error(I, "the input is too large");
  int64_t k = attr_int(I, "k", 0);
  ConstData *c = const_new(t, 2, x->dims);
  for (int64_t i = 0; i < x->dims[0] && k > -x->dims[0] && k < x->dims[1]; i++)
    if (i + k >= 0 && i + k < x->dims[1]) const_set(c, i * x->dims[1] + i + k, 1);
  const_value(I, I->node->output[0], c, elem, false);
  return true;
}

/* Trilu: the input where a mask of its last two axes keeps it (j - i >= k
** for upper, j - i <= k for lower), else zero. The mask is a constant, or
** with k computed at run time the comparison of a constant j - i with k. */
static bool cv_trilu(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0), *kv = input(I, 1);
  int64_t k = 0;
  bool dyn = kv && const_ints(kv, &k, 1) != 1;
  if (dyn && (kv->rank > 0 || kv->elem != ONNX__TENSOR_PROTO__DATA_TYPE__INT64))
    return node_error(I, "k must be an int64 scalar");
  if (x->rank < 2 || x->dims[x->rank - 2] < 0 || x->dims[x->rank - 1] < 0)
    return node_error(I, "needs static last two axes");
  int64_t n = x->dims[x->rank - 2], m = x->dims[x->rank - 1];
  if (dim_mul(n, m) < 0 || dim_mul(n, m) > (1 << 24)) return node_error(I, "the input is too large");
  bool upper = attr_int(I, "upper", 1) != 0;
  int64_t shape[2] = {n, m};
  StrBuf e = {0};
  if (dyn) {
    ConstData *c = const_new((DType){DT_INT, 64, 1}, 2, shape);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < m; j++) ((int64_t *)c->data)[i * m + j] = j - i;
    Value *diff = const_value(I, "", c, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, false);
    sb_printf(&e, "where(%s(%s, %s), %s, zeros_like(%s))", upper ? "greater_equal" : "less_equal", diff->expr,
              kv->expr, x->expr, x->expr);
    return finish(I, &e, x->elem, x->rank, x->dims);
  }
  ConstData *c = const_new((DType){DT_UINT, 1, 1}, 2, shape);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++) ((uint8_t *)c->data)[i * m + j] = upper ? j - i >= k : j - i <= k;
  Value *mask = const_value(I, "", c, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, false);
  sb_printf(&e, "where(%s, %s, zeros_like(%s))", mask->expr, x->expr, x->expr);
  return finish(I, &e, x->elem, x->rank, x->dims);
}

/* Range of constant scalars: a constant. */
static bool cv_range(Importer *I) {
  if (!need_inputs(I, 3)) return false;
  double s, l, d;
  Value *sv = input(I, 0);
  if (!const_scalar(sv, &s) || !const_scalar(input(I, 1), &l) || !const_scalar(input(I, 2), &d))
    return node_error(I, "start, limit and delta that are not constants are not supported");
  DType t;
  if (!elem_dtype(sv->elem, &t) || (t.code == DT_FLOAT && t.bits == 16) || d == 0)
    return node_error(I, "needs a nonzero delta of a float32, float64 or integer type");
  double count = ceil((l - s) / d);
  if (count < 0) count = 0;
  if (count > (1 << 24)) return node_error(I, "the range is too long");
  int64_t n = (int64_t)count;
  ConstData *c = const_new(t, 1, &n);
  for (int64_t i = 0; i < n; i++) const_set(c, i, s + (double)i * d);
  const_value(I, I->node->output[0], c, sv->elem, false);
  return true;
}

/* OneHot: a constant depth; values [off, on]; negative indices count from
** the end. */
static bool cv_one_hot(Importer *I) {
  if (!need_inputs(I, 3)) return false;
  Value *idx = input(I, 0), *vals = input(I, 2);
  double depth;
  if (!const_scalar(input(I, 1), &depth)) return node_error(I, "a depth that is not a constant is not supported");
  if (depth < 1 || depth > (1 << 24)) return node_error(I, "depth %g is out of range", depth);
  if (idx->rank < 0 || idx->rank >= MAX_RANK) return node_error(I, "needs the indices' rank");
  int64_t axis = attr_int(I, "axis", -1);
  if (axis < 0) axis += idx->rank + 1;
  if (axis < 0 || axis > idx->rank) return node_error(I, "axis is out of range");
  char var[32];
  const char *vv = vals->expr[0] == '%' || vals->cdata ? vals->expr : let_tmp(I, vals->expr, var);
  StrBuf e = {0};
  sb_puts(&e, "one_hot(");
  /* ONNX allows float indices: cast to int64 (towards zero). */
  Value wrapped = *idx;
  DType it;
  char ivar[32];
  if (elem_dtype(idx->elem, &it) && it.code == DT_FLOAT) {
    StrBuf c = {0};
    sb_printf(&c, "cast(%s, dtype=\"int64\")", idx->expr);
    wrapped.expr = (char *)let_tmp(I, sb_str(&c), ivar);
    wrapped.elem = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    wrapped.cdata = NULL;
    sb_free(&c);
  }
  put_wrapped_index(I, &e, &wrapped, (int64_t)depth);
  sb_printf(&e, ", take(%s, 1), take(%s, 0), depth=%lld, axis=%lld, dtype=\"%s\")", vv, vv, (long long)depth,
            (long long)axis, elem_relay(vals->elem));
  int64_t dims[MAX_RANK];
  int r = 0;
  for (int i = 0; i <= idx->rank; i++) dims[r++] = i == axis ? (int64_t)depth : idx->dims[i < axis ? i : i - 1];
  return finish(I, &e, vals->elem, r, dims);
}

/* CumSum: a constant axis; exclusive and reverse. */
static bool cv_cumsum(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0);
  int64_t axis;
  if (const_ints(input(I, 1), &axis, 1) != 1) return node_error(I, "an axis that is not a constant is not supported");
  if (x->rank < 0) return node_error(I, "needs the input's rank");
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank) return node_error(I, "axis is out of range");
  bool excl = attr_int(I, "exclusive", 0) != 0, rev = attr_int(I, "reverse", 0) != 0;
  StrBuf e = {0};
  if (rev) sb_puts(&e, "reverse(");
  sb_puts(&e, "cumsum(");
  if (rev) sb_printf(&e, "reverse(%s, axis=%lld)", x->expr, (long long)axis);
  else sb_puts(&e, x->expr);
  sb_printf(&e, ", axis=%lld, exclusive=%s)", (long long)axis, excl ? "True" : "False");
  if (rev) sb_printf(&e, ", axis=%lld)", (long long)axis);
  return finish(I, &e, x->elem, x->rank, x->dims);
}

/* Hardmax (opset 13 on, or the last axis): one_hot of the first maximum. */
static bool cv_hardmax(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  if (x->rank < 1) return node_error(I, "needs the input's rank");
  int64_t axis = attr_int(I, "axis", I->opset >= 13 ? -1 : 1);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank || x->dims[axis] < 0) return node_error(I, "needs a static axis in range");
  if (I->opset < 13 && axis != x->rank - 1)
    return node_error(I, "axis %lld of a rank-%d input flattens it (before opset 13): not supported yet",
                      (long long)axis, x->rank);
  StrBuf e = {0};
  sb_printf(&e, "one_hot(argmax(%s, axis=[%lld]), ", x->expr, (long long)axis);
  put_lit(I, &e, x->elem, 1);
  sb_puts(&e, ", ");
  put_lit(I, &e, x->elem, 0);
  sb_printf(&e, ", depth=%lld, axis=%lld, dtype=\"%s\")", (long long)x->dims[axis], (long long)axis,
            elem_relay(x->elem));
  return finish(I, &e, x->elem, x->rank, x->dims);
}

/* Einsum: Relay's, over the tuple of the inputs. */
static bool cv_einsum(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  const Onnx__AttributeProto *a = attr(I, "equation");
  if (!a || !a->s.len) return node_error(I, "needs an equation");
  char eq[256];
  attr_str(I, "equation", "", eq, sizeof eq);
  for (const char *p = eq; *p; p++)
    if (*p == '"' || *p == '\\') return node_error(I, "the equation holds a character that is not valid");
  StrBuf e = {0};
  sb_puts(&e, "einsum((");
  for (size_t i = 0; i < I->node->n_input; i++) {
    Value *v = input(I, i);
    if (!v) {
      sb_free(&e);
      return false;
    }
    sb_printf(&e, "%s%s", i ? ", " : "", v->expr);
  }
  sb_printf(&e, "%s), equation=\"%s\")", I->node->n_input == 1 ? "," : "", eq);
  return finish(I, &e, input(I, 0)->elem, -1, NULL);
}

static bool cv_instance_norm(Importer *I) {
  if (!need_inputs(I, 3)) return false;
  Value *x = input(I, 0);
  StrBuf e = {0};
  sb_printf(&e, "nn.instance_norm(%s, %s, %s, axis=1, epsilon=", x->expr, input(I, 1)->expr, input(I, 2)->expr);
  put_float_lit(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, attr_float(I, "epsilon", 1e-5));
  sb_putc(&e, ')');
  return finish(I, &e, x->elem, x->rank, x->dims);
}

static bool cv_lrn(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  int64_t size = attr_int(I, "size", 0);
  if (size <= 0) return node_error(I, "needs a positive size");
  StrBuf e = {0};
  sb_printf(&e, "nn.lrn(%s, size=%lld, axis=1, alpha=", x->expr, (long long)size);
  put_float_lit(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, attr_float(I, "alpha", 1e-4));
  sb_puts(&e, ", beta=");
  put_float_lit(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, attr_float(I, "beta", 0.75));
  sb_puts(&e, ", bias=");
  put_float_lit(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, attr_float(I, "bias", 1));
  sb_putc(&e, ')');
  return finish(I, &e, x->elem, x->rank, x->dims);
}

/* x normalized over axes (mean 0, variance 1 with eps added): binds the
** centred input, its inverse deviation (keepdims) and returns the lets'
** names in d and inv (32 bytes each). The mean goes to mean when asked. */
static void normalize(Importer *I, const Value *x, const int64_t *axes, int n, double eps, char *d, char *inv,
                      char *mean) {
  StrBuf e = {0}, ax = {0};
  put_ints(&ax, axes, n);
  char mv[32];
  sb_printf(&e, "mean(%s, axis=%s, keepdims=True)", x->expr, sb_str(&ax));
  let_tmp(I, sb_str(&e), mean ? mean : mv);
  sb_clear(&e);
  sb_printf(&e, "subtract(%s, %s)", x->expr, mean ? mean : mv);
  let_tmp(I, sb_str(&e), d);
  sb_clear(&e);
  sb_printf(&e, "divide(");
  put_lit(I, &e, x->elem, 1);
  sb_printf(&e, ", sqrt(add(mean(multiply(%s, %s), axis=%s, keepdims=True), ", d, d, sb_str(&ax));
  put_lit(I, &e, x->elem, eps);
  sb_puts(&e, ")))");
  let_tmp(I, sb_str(&e), inv);
  sb_free(&e);
  sb_free(&ax);
}

static bool cv_mvn(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  int64_t axes[MAX_RANK] = {0, 2, 3};
  int n = attr_ints(I, "axes", axes, MAX_RANK);
  if (n < 0) n = 3;
  if (x->rank < 0) return node_error(I, "needs the input's rank");
  for (int i = 0; i < n; i++) {
    if (axes[i] < 0) axes[i] += x->rank;
    if (axes[i] < 0 || axes[i] >= x->rank) return node_error(I, "axis is out of range");
  }
  char d[32], inv[32];
  normalize(I, x, axes, n, 1e-9, d, inv, NULL);
  StrBuf e = {0};
  sb_printf(&e, "multiply(%s, %s)", d, inv);
  return finish(I, &e, x->elem, x->rank, x->dims);
}

/* LayerNormalization over axis onwards, with the mean and inverse
** deviation outputs: written out (nn.layer_norm takes one axis). */
static bool layer_norm_general(Importer *I, const Value *x, const Value *g, const Value *b, int64_t axis) {
  int64_t axes[MAX_RANK];
  int n = 0;
  for (int64_t i = axis; i < x->rank; i++) axes[n++] = i;
  char d[32], inv[32], mean[32];
  normalize(I, x, axes, n, attr_float(I, "epsilon", 1e-5), d, inv, mean);
  StrBuf e = {0};
  sb_printf(&e, "multiply(multiply(%s, %s), %s)", d, inv, g->expr);
  if (b) {
    StrBuf s = {0};
    sb_printf(&s, "add(%s, %s)", sb_str(&e), b->expr);
    sb_free(&e);
    e = s;
  }
  int64_t kd[MAX_RANK];
  for (int i = 0; i < x->rank; i++) kd[i] = i < axis ? x->dims[i] : 1;
  Value xv = *x;
  bind_output(I, 0, sb_str(&e), xv.elem, xv.rank, xv.dims);
  sb_free(&e);
  if (I->node->n_output > 1 && *I->node->output[1]) bind_output(I, 1, mean, xv.elem, xv.rank, kd);
  if (I->node->n_output > 2 && *I->node->output[2]) bind_output(I, 2, inv, xv.elem, xv.rank, kd);
  return true;
}

/* Round: half to even, as ONNX rounds (Relay's round takes halves away from
** zero): 2 * round(x / 2) where x is halfway between two integers. */
static bool cv_round(Importer *I) {
  return unary_fmt(I, "where(equal(abs(subtract(X, trunc(X))), A), multiply(B, round(divide(X, B))), round(X))", 0.5,
                   2, 0);
}

/* The negative log-likelihood loss of the log-probabilities lp (the shape
** of x, classes on axis 1) at the classes t, weighted by w (or NULL), as
** output 0: reduction none, sum or mean (over the weights of the targets);
** targets equal to ignore_index weigh 0. */
static bool nll_loss(Importer *I, const char *lp, const Value *x, const Value *t, const Value *w) {
  char buf[16];
  const char *red = attr_str(I, "reduction", "mean", buf, sizeof buf);
  if (strcmp(red, "none") != 0 && strcmp(red, "sum") != 0 && strcmp(red, "mean") != 0)
    return node_error(I, "reduction '%s' is not none, sum or mean", red);
  if (x->rank < 2 || t->rank != x->rank - 1) return node_error(I, "needs input of rank 2 or more and target of one less");
  const Onnx__AttributeProto *ii = attr(I, "ignore_index");
  char mask[32], safe[32], picked[32], wt[32], loss[32];
  const char *ts = t->expr, *wv = NULL;
  StrBuf e = {0};
  if (ii) {
    sb_printf(&e, "not_equal(%s, ", t->expr);
    put_lit(I, &e, t->elem, (double)ii->i);
    sb_putc(&e, ')');
    let_tmp(I, sb_str(&e), mask);
    sb_clear(&e);
    sb_printf(&e, "where(%s, %s, zeros_like(%s))", mask, t->expr, t->expr);
    ts = let_tmp(I, sb_str(&e), safe);
    sb_clear(&e);
  }
  sb_printf(&e, "squeeze(gather(%s, expand_dims(%s, axis=1), axis=1), axis=[1])", lp, ts);
  let_tmp(I, sb_str(&e), picked);
  sb_clear(&e);
  if (w && ii) sb_printf(&e, "where(%s, take(%s, %s), zeros_like(take(%s, %s)))", mask, w->expr, ts, w->expr, ts);
  else if (w) sb_printf(&e, "take(%s, %s)", w->expr, ts);
  else if (ii) sb_printf(&e, "cast(%s, dtype=\"%s\")", mask, elem_relay(x->elem));
  if (e.len) wv = let_tmp(I, sb_str(&e), wt);
  sb_clear(&e);
  if (wv) sb_printf(&e, "negative(multiply(%s, %s))", picked, wv);
  else sb_printf(&e, "negative(%s)", picked);
  let_tmp(I, sb_str(&e), loss);
  sb_clear(&e);
  if (strcmp(red, "none") == 0) {
    sb_puts(&e, loss);
    return finish(I, &e, x->elem, t->rank, t->dims);
  }
  if (strcmp(red, "sum") == 0) sb_printf(&e, "sum(%s)", loss);
  else if (wv) sb_printf(&e, "divide(sum(%s), sum(%s))", loss, wv);
  else sb_printf(&e, "mean(%s)", loss);
  return finish(I, &e, x->elem, 0, NULL);
}

static bool cv_nll_loss(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0), *t = input(I, 1), *w = input(I, 2);
  return nll_loss(I, x->expr, x, t, w);
}

/* SoftmaxCrossEntropyLoss: the loss of log_softmax over axis 1, which is
** output 1 when asked. */
static bool cv_sce_loss(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0), *t = input(I, 1), *w = input(I, 2);
  char lp[32];
  StrBuf e = {0};
  sb_printf(&e, "nn.log_softmax(%s, axis=1)", x->expr);
  let_tmp(I, sb_str(&e), lp);
  sb_free(&e);
  Value xv = *x;
  if (I->node->n_output > 1 && *I->node->output[1]) bind_output(I, 1, lp, xv.elem, xv.rank, xv.dims);
  return nll_loss(I, lp, &xv, t, w);
}

/* ScatterElements (and Scatter before opset 11): Relay's scatter_elements,
** reduction none (update), add or mul; negative indices count from the
** end of the axis. */
static bool cv_scatter_elements(Importer *I) {
  if (!need_inputs(I, 3)) return false;
  Value *x = input(I, 0), *idx = input(I, 1), *upd = input(I, 2);
  if (x->rank < 0) return node_error(I, "needs the input's rank");
  int64_t axis = attr_int(I, "axis", 0);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank || x->dims[axis] < 0) return node_error(I, "needs a static axis in range");
  char buf[16];
  const char *red = attr_str(I, "reduction", "none", buf, sizeof buf);
  if (strcmp(red, "none") != 0 && strcmp(red, "add") != 0 && strcmp(red, "mul") != 0)
    return node_error(I, "reduction '%s' is not supported", red);
  StrBuf e = {0};
  sb_printf(&e, "scatter_elements(%s, ", x->expr);
  put_wrapped_index(I, &e, idx, x->dims[axis]);
  sb_printf(&e, ", %s, axis=%lld, reduction=\"%s\")", upd->expr, (long long)axis,
            strcmp(red, "none") == 0 ? "update" : red);
  return finish(I, &e, x->elem, x->rank, x->dims);
}

/* ScatterND: the index tuples on the last axis of the indices (ONNX) go
** to the first (Relay's scatter_nd). */
static bool cv_scatter_nd(Importer *I) {
  if (!need_inputs(I, 3)) return false;
  Value *x = input(I, 0), *idx = input(I, 1), *upd = input(I, 2);
  if (idx->rank < 1) return node_error(I, "needs the indices' rank");
  char buf[16];
  const char *red = attr_str(I, "reduction", "none", buf, sizeof buf);
  if (strcmp(red, "none") != 0 && strcmp(red, "add") != 0 && strcmp(red, "mul") != 0)
    return node_error(I, "reduction '%s' is not supported", red);
  StrBuf e = {0};
  sb_printf(&e, "scatter_nd(%s, transpose(%s, axes=[%d", x->expr, idx->expr, idx->rank - 1);
  for (int i = 0; i < idx->rank - 1; i++) sb_printf(&e, ", %d", i);
  sb_printf(&e, "]), %s, mode=\"%s\")", upd->expr, strcmp(red, "none") == 0 ? "update" : red);
  return finish(I, &e, x->elem, x->rank, x->dims);
}

static bool cv_reverse_sequence(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0), *lens = input(I, 1);
  StrBuf e = {0};
  sb_printf(&e, "reverse_sequence(%s, %s, seq_axis=%lld, batch_axis=%lld)", x->expr, lens->expr,
            (long long)attr_int(I, "time_axis", 0), (long long)attr_int(I, "batch_axis", 1));
  return finish(I, &e, x->elem, x->rank, x->dims);
}

/* A per-axis scale or zero point (1-D, along axis of an input of rank
** rank) reshaped to broadcast against the input; a scalar as it is. */
static void put_axis_operand(StrBuf *e, const Value *v, int64_t axis, int rank) {
  if (v->rank != 1 || rank < 0) {
    sb_puts(e, v->expr);
    return;
  }
  sb_printf(e, "reshape(%s, newshape=[-1", v->expr);
  for (int64_t i = axis + 1; i < rank; i++) sb_puts(e, ", 1");
  sb_puts(e, "])");
}

/* QuantizeLinear: saturate(round_half_even(x / scale) + zero_point), in
** the zero point's type (uint8 without one). */
static bool cv_quantize_linear(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0), *scale = input(I, 1), *zp = input(I, 2);
  int64_t axis = attr_int(I, "axis", 1);
  if (axis < 0 && x->rank >= 0) axis += x->rank;
  int to = zp ? zp->elem : ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
  double lo, hi;
  if (to == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8) lo = 0, hi = 255;
  else if (to == ONNX__TENSOR_PROTO__DATA_TYPE__INT8) lo = -128, hi = 127;
  else return node_error(I, "a zero point of type %s is not supported", elem_name(to));
  StrBuf e = {0};
  char q[32], r[32];
  sb_printf(&e, "divide(%s, ", x->expr);
  put_axis_operand(&e, scale, axis, x->rank);
  sb_putc(&e, ')');
  let_tmp(I, sb_str(&e), q);
  sb_clear(&e);
  /* Halves to even, as in cv_round. */
  sb_printf(&e, "where(equal(abs(subtract(%s, trunc(%s))), ", q, q);
  put_lit(I, &e, x->elem, 0.5);
  sb_printf(&e, "), multiply(");
  put_lit(I, &e, x->elem, 2);
  sb_printf(&e, ", round(divide(%s, ", q);
  put_lit(I, &e, x->elem, 2);
  sb_printf(&e, "))), round(%s))", q);
  let_tmp(I, sb_str(&e), r);
  sb_clear(&e);
  sb_printf(&e, "cast(clip(");
  if (zp) {
    sb_printf(&e, "add(%s, cast(", r);
    put_axis_operand(&e, zp, axis, x->rank);
    sb_printf(&e, ", dtype=\"%s\"))", elem_relay(x->elem));
  } else {
    sb_puts(&e, r);
  }
  sb_printf(&e, ", a_min=%g, a_max=%g), dtype=\"%s\")", lo, hi, elem_relay(to));
  return finish(I, &e, to, x->rank, x->dims);
}

/* DequantizeLinear: (x - zero_point) * scale, in the scale's type. */
static bool cv_dequantize_linear(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0), *scale = input(I, 1), *zp = input(I, 2);
  int64_t axis = attr_int(I, "axis", 1);
  if (axis < 0 && x->rank >= 0) axis += x->rank;
  const char *ft = elem_relay(scale->elem);
  StrBuf e = {0};
  sb_puts(&e, "multiply(");
  if (zp) {
    sb_printf(&e, "subtract(cast(%s, dtype=\"%s\"), cast(", x->expr, ft);
    put_axis_operand(&e, zp, axis, x->rank);
    sb_printf(&e, ", dtype=\"%s\"))", ft);
  } else {
    sb_printf(&e, "cast(%s, dtype=\"%s\")", x->expr, ft);
  }
  sb_puts(&e, ", ");
  put_axis_operand(&e, scale, axis, x->rank);
  sb_putc(&e, ')');
  return finish(I, &e, scale->elem, x->rank, x->dims);
}

/* Appends round-half-to-even of the let variable v (float32). */
static void put_round_even(StrBuf *e, const char *v) {
  sb_printf(e, "where(equal(abs(subtract(%s, trunc(%s))), 0.5f), multiply(2f, round(divide(%s, 2f))), round(%s))", v,
            v, v, v);
}

/* DynamicQuantizeLinear (float32 to uint8): scale = (max(x, 0) - min(x,
** 0)) / 255, zero point = saturate(round(-min / scale)), y =
** saturate(round(x / scale) + zero point). */
static bool cv_dynamic_quantize_linear(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  if (x->elem != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) return node_error(I, "needs a float32 input");
  Value xv = *x;
  char lo[32], scale[32], zq[32], zp[32], q[32];
  StrBuf e = {0};
  sb_printf(&e, "minimum(min(%s), 0f)", xv.expr);
  let_tmp(I, sb_str(&e), lo);
  sb_clear(&e);
  sb_printf(&e, "divide(subtract(maximum(max(%s), 0f), %s), 255f)", xv.expr, lo);
  let_tmp(I, sb_str(&e), scale);
  sb_clear(&e);
  sb_printf(&e, "divide(negative(%s), %s)", lo, scale);
  let_tmp(I, sb_str(&e), zq);
  sb_clear(&e);
  sb_puts(&e, "clip(");
  put_round_even(&e, zq);
  sb_puts(&e, ", a_min=0f, a_max=255f)");
  let_tmp(I, sb_str(&e), zp);
  sb_clear(&e);
  sb_printf(&e, "divide(%s, %s)", xv.expr, scale);
  let_tmp(I, sb_str(&e), q);
  sb_clear(&e);
  sb_puts(&e, "cast(clip(add(");
  put_round_even(&e, q);
  sb_printf(&e, ", %s), a_min=0f, a_max=255f), dtype=\"uint8\")", zp);
  bind_output(I, 0, sb_str(&e), ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, xv.rank, xv.dims);
  sb_clear(&e);
  if (I->node->n_output > 1 && *I->node->output[1])
    bind_output(I, 1, scale, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL);
  sb_printf(&e, "cast(%s, dtype=\"uint8\")", zp);
  if (I->node->n_output > 2 && *I->node->output[2])
    bind_output(I, 2, sb_str(&e), ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 0, NULL);
  sb_free(&e);
  return true;
}

/* TopK with a constant K: Relay's topk, values and int64 indices. */
static bool cv_topk(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0);
  int64_t k;
  if (const_ints(input(I, 1), &k, 1) != 1) return node_error(I, "a K that is not a constant is not supported");
  if (x->rank < 1) return node_error(I, "needs the input's rank");
  int64_t axis = attr_int(I, "axis", -1);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank) return node_error(I, "axis is out of range");
  if (k < 0 || (x->dims[axis] >= 0 && k > x->dims[axis])) return node_error(I, "K %lld is out of range", (long long)k);
  bool largest = attr_int(I, "largest", 1) != 0;
  Value xv = *x;
  StrBuf e = {0};
  char var[32];
  sb_printf(&e, "topk(%s, k=%lld, axis=%lld, ret_type=\"both\", is_ascend=%s, dtype=\"int64\")", xv.expr,
            (long long)k, (long long)axis, largest ? "False" : "True");
  let_tmp(I, sb_str(&e), var);
  int64_t dims[MAX_RANK];
  memcpy(dims, xv.dims, sizeof dims);
  dims[axis] = k;
  for (int i = 0; i < 2; i++) {
    sb_clear(&e);
    sb_printf(&e, "%s.%d", var, i);
    bind_output(I, (size_t)i, sb_str(&e), i ? ONNX__TENSOR_PROTO__DATA_TYPE__INT64 : xv.elem, xv.rank, dims);
  }
  sb_free(&e);
  return true;
}

/* Operand k of MatMulInteger or ConvInteger as int32, less its zero point
** (input zk, or none): a per-row (axis 0) or per-column 1-D zero point is
** reshaped to broadcast along axis of a rank-rank operand. The value is
** written into out, its expression into var (32 bytes). */
static bool int_operand(Importer *I, int k, int zk, int axis, Value *out, char *var) {
  Value *v = input(I, (size_t)k), *z = input(I, (size_t)zk);
  if (!v) return false;
  DType t;
  if (!elem_dtype(v->elem, &t) || t.code == DT_FLOAT || t.bits > 8)
    return node_error(I, "input %d must be an 8-bit integer tensor", k);
  StrBuf e = {0};
  if (z) sb_puts(&e, "subtract(");
  sb_printf(&e, "cast(%s, dtype=\"int32\")", v->expr);
  if (z) {
    sb_puts(&e, ", cast(");
    put_axis_operand(&e, z, axis, v->rank);
    sb_puts(&e, ", dtype=\"int32\"))");
  }
  let_tmp(I, sb_str(&e), var);
  sb_free(&e);
  *out = *v;
  out->expr = var;
  out->elem = ONNX__TENSOR_PROTO__DATA_TYPE__INT32;
  out->cdata = NULL;
  return true;
}

/* MatMulInteger: (A - a_zero_point) x (B - b_zero_point) in int32. */
static bool cv_matmul_integer(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value a, b;
  char av[32], bv[32];
  int ra = input(I, 0)->rank, rb = input(I, 1)->rank;
  /* A's zero point per row (axis -2), B's per column (the last axis). */
  if (!int_operand(I, 0, 2, ra >= 2 ? ra - 2 : 0, &a, av) || !int_operand(I, 1, 3, rb - 1, &b, bv)) return false;
  return matmul_values(I, &a, &b);
}

/* ConvInteger: Conv of (x - x_zero_point) by (w - w_zero_point, per output
** channel when 1-D) in int32. */
static bool cv_conv_integer(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value x, w;
  char xv[32], wv[32];
  if (!int_operand(I, 0, 2, 0, &x, xv) || !int_operand(I, 1, 3, 0, &w, wv)) return false;
  return conv_values(I, &x, &w, NULL);
}

/* QLinearMatMul and QLinearConv (without bias): the integer product
** (MatMulInteger, ConvInteger) times a_scale * b_scale / y_scale (scalars), rounded half
** to even, plus y_zero_point, saturated to its type. */
static bool qlinear(Importer *I, bool conv) {
  if (!need_inputs(I, 8)) return false;
  Value *ys = input(I, 6), *yz = input(I, 7);
  const Value *sc[3] = {input(I, 1), input(I, 4), ys};
  for (int i = 0; i < 3; i++)
    if (sc[i]->rank > 0 && !(sc[i]->rank == 1 && sc[i]->dims[0] == 1))
      return node_error(I, "only scalar scales are supported");
  /* the operands below add values, which may move the table: keep what
  ** is read of yz afterwards (the expression text itself does not move) */
  int to = yz->elem;
  const char *yz_expr = yz->expr;
  double lo, hi;
  if (to == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8) lo = 0, hi = 255;
  else if (to == ONNX__TENSOR_PROTO__DATA_TYPE__INT8) lo = -128, hi = 127;
  else return node_error(I, "a zero point of type %s is not supported", elem_name(to));
  char scale[32], q[32], av[32], bv[32];
  StrBuf e = {0};
  sb_printf(&e, "divide(multiply(%s, %s), %s)", sc[0]->expr, sc[1]->expr, ys->expr);
  let_tmp(I, sb_str(&e), scale);
  sb_clear(&e);
  Value a, b;
  int ra = input(I, 0)->rank, rb = input(I, 3)->rank;
  bool ok = conv ? int_operand(I, 0, 2, 0, &a, av) && int_operand(I, 3, 5, 0, &b, bv) && conv_values(I, &a, &b, NULL)
                 : int_operand(I, 0, 2, ra >= 2 ? ra - 2 : 0, &a, av) && int_operand(I, 3, 5, rb - 1, &b, bv) &&
                       matmul_values(I, &a, &b);
  if (!ok) {
    sb_free(&e);
    return false;
  }
  Value *pv = *I->node->output[0] ? find_value(I, I->node->output[0]) : NULL;
  if (!pv) {
    sb_free(&e);
    return node_error(I, "needs a named output");
  }
  Value p = *pv;
  sb_printf(&e, "multiply(cast(%s, dtype=\"float32\"), %s)", p.expr, scale);
  let_tmp(I, sb_str(&e), q);
  sb_clear(&e);
  sb_puts(&e, "cast(clip(add(");
  put_round_even(&e, q);
  sb_printf(&e, ", cast(%s, dtype=\"float32\")), a_min=%g, a_max=%g), dtype=\"%s\")", yz_expr, lo, hi, elem_relay(to));
  return finish(I, &e, to, p.rank, p.dims);
}

static bool cv_qlinear_matmul(Importer *I) { return qlinear(I, false); }
static bool cv_qlinear_conv(Importer *I) {
  if (I->node->n_input > 8 && *I->node->input[8]) return node_error(I, "a bias (input 8) is not supported yet");
  return qlinear(I, true);
}

/* MatMul of operands of any ranks (numpy's matmul): a 1-D operand gets an
** axis that the result loses; the batch axes broadcast; the product is a
** batch_matmul over them flattened. Needs static shapes. */
static bool matmul_general(Importer *I, const Value *a, const Value *b) {
  if (a->rank < 1 || b->rank < 1) return node_error(I, "needs operands of known rank 1 or more");
  int64_t ad[MAX_RANK + 1], bd[MAX_RANK + 1];
  int ar = a->rank, br = b->rank;
  if (ar == 1) ad[0] = 1, ad[1] = a->dims[0], ar = 2;
  else memcpy(ad, a->dims, sizeof(int64_t) * (size_t)ar);
  if (br == 1) bd[0] = b->dims[0], bd[1] = 1, br = 2;
  else memcpy(bd, b->dims, sizeof(int64_t) * (size_t)br);
  for (int i = 0; i < ar; i++)
    if (ad[i] < 0) return node_error(I, "needs static shapes");
  for (int i = 0; i < br; i++)
    if (bd[i] < 0) return node_error(I, "needs static shapes");
  int nb = (ar > br ? ar : br) - 2;
  if (nb + 2 > MAX_RANK) return node_error(I, "rank over %d", MAX_RANK);
  int64_t batch[MAX_RANK], nbatch = 1;
  for (int i = 0; i < nb; i++) {
    int ia = i - (nb - (ar - 2)), ib = i - (nb - (br - 2));
    int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
    if (da != db && da != 1 && db != 1) return node_error(I, "batch axes %lld and %lld do not broadcast", (long long)da,
                                                          (long long)db);
    batch[i] = da == 1 ? db : da;
    nbatch = dim_mul(nbatch, batch[i]);
  }
  int64_t m = ad[ar - 2], k = ad[ar - 1], n = bd[br - 1];
  if (bd[br - 2] != k) return node_error(I, "inner dimensions %lld and %lld differ", (long long)k, (long long)bd[br - 2]);
  StrBuf e = {0};
  /* Each operand: reshape to its padded shape, broadcast to the batch,
  ** reshape to [nbatch, rows, cols]. */
  const Value *ops[2] = {a, b};
  const int64_t *od[2] = {ad, bd};
  int orank[2] = {ar, br};
  StrBuf args[2] = {{0}, {0}};
  for (int o = 0; o < 2; o++) {
    StrBuf *s = &args[o];
    int64_t full[MAX_RANK];
    for (int i = 0; i < nb; i++) full[i] = batch[i];
    full[nb] = od[o][orank[o] - 2];
    full[nb + 1] = od[o][orank[o] - 1];
    sb_printf(s, "reshape(broadcast_to(reshape(%s, newshape=", ops[o]->expr);
    int64_t pad[MAX_RANK];
    for (int i = 0; i < nb + 2; i++) {
      int j = i - (nb + 2 - orank[o]);
      pad[i] = j >= 0 ? od[o][j] : 1;
    }
    put_ints(s, pad, nb + 2);
    sb_puts(s, "), shape=");
    put_ints(s, full, nb + 2);
    int64_t flat[3] = {nbatch, full[nb], full[nb + 1]};
    sb_puts(s, "), newshape=");
    put_ints(s, flat, 3);
    sb_putc(s, ')');
  }
  int64_t out[MAX_RANK + 2];
  int r = 0;
  for (int i = 0; i < nb; i++) out[r++] = batch[i];
  if (a->rank > 1) out[r++] = m;
  if (b->rank > 1) out[r++] = n;
  sb_printf(&e, "reshape(nn.batch_matmul(%s, transpose(%s, axes=[0, 2, 1]), transpose_b=True), newshape=",
            sb_str(&args[0]), sb_str(&args[1]));
  put_ints(&e, out, r);
  sb_putc(&e, ')');
  sb_free(&args[0]);
  sb_free(&args[1]);
  return finish(I, &e, a->elem, r, out);
}

typedef struct Converter {
  const char *op;
  int since;                /* the first opset it applies to */
  bool (*fn)(Importer *I);
} Converter;

static const Converter converters[] = {
    {"Abs", 1, cv_abs},
    {"Add", 1, cv_add},
    {"And", 1, cv_and},
    {"AveragePool", 1, cv_avg_pool},
    {"BatchNormalization", 1, cv_batch_norm},
    {"Cast", 1, cv_cast},
    {"Ceil", 1, cv_ceil},
    {"Clip", 1, cv_clip},
    {"Concat", 1, cv_concat},
    {"ConcatFromSequence", 11, onnx_cv_concat_from_sequence},
    {"Constant", 1, cv_constant},
    {"ConstantOfShape", 9, cv_constant_of_shape},
    {"Conv", 1, cv_conv},
    {"ConvTranspose", 1, cv_conv_transpose},
    {"Cos", 1, cv_cos},
    {"Div", 1, cv_div},
    {"Dropout", 1, cv_dropout},
    {"Equal", 1, cv_equal},
    {"Erf", 1, cv_erf},
    {"Exp", 1, cv_exp},
    {"Expand", 8, cv_expand},
    {"Flatten", 1, cv_flatten},
    {"Floor", 1, cv_floor},
    {"Gather", 1, cv_gather},
    {"GRU", 7, onnx_cv_gru},
    {"Gemm", 1, cv_gemm},
    {"GlobalAveragePool", 1, cv_global_avg_pool},
    {"GlobalMaxPool", 1, cv_global_max_pool},
    {"Greater", 1, cv_greater},
    {"HardSigmoid", 1, cv_hard_sigmoid},
    {"HardSwish", 14, cv_hard_swish},
    {"Identity", 1, cv_identity},
    {"If", 1, onnx_cv_if},
    {"LayerNormalization", 17, cv_layer_norm},
    {"LeakyRelu", 1, cv_leaky_relu},
    {"Less", 1, cv_less},
    {"LSTM", 7, onnx_cv_lstm},
    {"Log", 1, cv_log},
    {"Loop", 1, onnx_cv_loop},
    {"LogSoftmax", 1, cv_log_softmax},
    {"MatMul", 1, cv_matmul},
    {"Max", 1, cv_max},
    {"MaxPool", 1, cv_max_pool},
    {"Min", 1, cv_min},
    {"Mul", 1, cv_mul},
    {"Neg", 1, cv_neg},
    {"Not", 1, cv_not},
    {"Or", 1, cv_or},
    {"Pad", 1, cv_pad},
    {"Pow", 1, cv_pow},
    {"ReduceMax", 1, cv_reduce_max},
    {"ReduceMean", 1, cv_reduce_mean},
    {"ReduceMin", 1, cv_reduce_min},
    {"ReduceProd", 1, cv_reduce_prod},
    {"ReduceSum", 1, cv_reduce_sum},
    {"RNN", 7, onnx_cv_rnn},
    {"Relu", 1, cv_relu},
    {"Reshape", 1, cv_reshape},
    {"Resize", 1, cv_resize},
    {"SequenceEmpty", 11, onnx_cv_sequence_empty},
    {"SequenceInsert", 11, onnx_cv_sequence_insert},
    {"Shape", 1, cv_shape},
    {"Sigmoid", 1, cv_sigmoid},
    {"Sin", 1, cv_sin},
    {"Slice", 1, cv_slice},
    {"Softmax", 1, cv_softmax},
    {"Split", 1, cv_split},
    {"Sqrt", 1, cv_sqrt},
    {"Squeeze", 1, cv_squeeze},
    {"Sub", 1, cv_sub},
    {"Sum", 1, cv_sum},
    {"Tanh", 1, cv_tanh},
    {"Transpose", 1, cv_transpose},
    {"Unsqueeze", 1, cv_unsqueeze},
    {"Upsample", 7, cv_upsample},
    {"Where", 9, cv_where},
    /* More operators */
    {"Acos", 7, cv_acos},
    {"Acosh", 9, cv_acosh},
    {"ArgMax", 1, cv_argmax},
    {"ArgMin", 1, cv_argmin},
    {"Asin", 7, cv_asin},
    {"Asinh", 9, cv_asinh},
    {"Atan", 7, cv_atan},
    {"Atanh", 9, cv_atanh},
    {"BitShift", 11, cv_bit_shift},
    {"CastLike", 15, cv_cast_like},
    {"Celu", 12, cv_celu},
    {"Cosh", 9, cv_cosh},
    {"CumSum", 11, cv_cumsum},
    {"DepthToSpace", 1, cv_depth_to_space},
    {"Einsum", 12, cv_einsum},
    {"Elu", 1, cv_elu},
    {"EyeLike", 9, cv_eye_like},
    {"GatherElements", 11, cv_gather_elements},
    {"GatherND", 11, cv_gather_nd},
    {"GreaterOrEqual", 12, cv_greater_equal},
    {"Hardmax", 1, cv_hardmax},
    {"InstanceNormalization", 1, cv_instance_norm},
    {"IsInf", 10, cv_isinf},
    {"IsNaN", 9, cv_isnan},
    {"LessOrEqual", 12, cv_less_equal},
    {"LRN", 1, cv_lrn},
    {"Mean", 1, cv_mean},
    {"MeanVarianceNormalization", 9, cv_mvn},
    {"NegativeLogLikelihoodLoss", 12, cv_nll_loss},
    {"DequantizeLinear", 10, cv_dequantize_linear},
    {"ConvInteger", 10, cv_conv_integer},
    {"MatMulInteger", 10, cv_matmul_integer},
    {"QLinearConv", 10, cv_qlinear_conv},
    {"QLinearMatMul", 10, cv_qlinear_matmul},
    {"TopK", 10, cv_topk},
    {"DynamicQuantizeLinear", 11, cv_dynamic_quantize_linear},
    {"QuantizeLinear", 10, cv_quantize_linear},
    {"ReverseSequence", 10, cv_reverse_sequence},
    {"Scatter", 9, cv_scatter_elements},
    {"ScatterElements", 11, cv_scatter_elements},
    {"ScatterND", 11, cv_scatter_nd},
    {"SoftmaxCrossEntropyLoss", 12, cv_sce_loss},
    {"Mod", 10, cv_mod},
    {"OneHot", 9, cv_one_hot},
    {"PRelu", 1, cv_prelu},
    {"Range", 11, cv_range},
    {"Reciprocal", 1, cv_reciprocal},
    {"ReduceL1", 1, cv_reduce_l1},
    {"ReduceL2", 1, cv_reduce_l2},
    {"ReduceLogSum", 1, cv_reduce_log_sum},
    {"ReduceLogSumExp", 1, cv_reduce_log_sum_exp},
    {"ReduceSumSquare", 1, cv_reduce_sum_square},
    {"Round", 11, cv_round},
    {"Selu", 1, cv_selu},
    {"Shrink", 9, cv_shrink},
    {"Sign", 9, cv_sign},
    {"Sinh", 9, cv_sinh},
    {"Size", 1, cv_size},
    {"Softplus", 1, cv_softplus},
    {"Softsign", 1, cv_softsign},
    {"SpaceToDepth", 1, cv_space_to_depth},
    {"Tan", 7, cv_tan},
    {"ThresholdedRelu", 10, cv_thresholded_relu},
    {"Tile", 6, cv_tile},
    {"Trilu", 14, cv_trilu},
    {"Xor", 1, cv_xor},
};

static bool convert_node(Importer *I) {
  const char *op = I->node->op_type ? I->node->op_type : "";
  if (!I->node->n_output) return node_error(I, "has no outputs");
  /* An input that is not defined is reported by input() and may look
  ** like an absent optional one to the converter: any error fails. */
  int errors = diag_count(I->d);
  bool ok = false;
  if (fold_node(I, &ok)) return ok && diag_count(I->d) == errors;
  for (size_t i = 0; i < RLY_COUNTOF(converters); i++)
    if (strcmp(converters[i].op, op) == 0 && I->opset >= converters[i].since)
      return converters[i].fn(I) && diag_count(I->d) == errors;
  return node_error(I, "operator %s is not supported", *op ? op : "(empty)");
}

/* {==== The graph ====} */

static bool value_info_type(Importer *I, const Onnx__ValueInfoProto *vi, int *elem, int *rank, int64_t *dims,
                            StrBuf *ty) {
  const char *name = vi->name ? vi->name : "?";
  if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
    diag_error(I->d, I->at, "ONNX graph input '%s': only tensor inputs are supported", name);
    return false;
  }
  const Onnx__TypeProto__Tensor *tt = vi->type->tensor_type;
  DType dt;
  if (!elem_dtype(tt->elem_type, &dt)) {
    diag_error(I->d, I->at, "ONNX graph input '%s': element type %s is not supported", name, elem_name(tt->elem_type));
    return false;
  }
  *elem = tt->elem_type;
  if (!tt->shape) {
    diag_error(I->d, I->at, "ONNX graph input '%s' has no shape: relayc needs at least its rank", name);
    return false;
  }
  if (tt->shape->n_dim > MAX_RANK) {
    diag_error(I->d, I->at, "ONNX graph input '%s': rank %zu is over %d", name, tt->shape->n_dim, MAX_RANK);
    return false;
  }
  *rank = (int)tt->shape->n_dim;
  sb_puts(ty, "Tensor[(");
  for (int i = 0; i < *rank; i++) {
    const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[i];
    bool known = dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dm->dim_value >= 0;
    dims[i] = known ? dm->dim_value : -1;
    if (known) sb_printf(ty, "%s%lld", i ? ", " : "", (long long)dm->dim_value);
    else sb_printf(ty, "%s?", i ? ", " : "");
  }
  char buf[32];
  sb_printf(ty, "%s), %s]", *rank == 1 ? "," : "", dtype_name(dt, buf));
  return true;
}

static bool is_initializer(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i]->name && strcmp(g->initializer[i]->name, name) == 0) return true;
  return false;
}

static bool import_graph(Importer *I, const Onnx__GraphProto *g, OnnxImport *out) {
  /* Inputs that are not initializers: @main's parameters. */
  for (size_t i = 0; i < g->n_input; i++) {
    const Onnx__ValueInfoProto *vi = g->input[i];
    if (!vi->name || is_initializer(g, vi->name)) continue;
    int elem = 0, rank = 0;
    int64_t dims[MAX_RANK];
    StrBuf ty = {0}, e = {0};
    if (!value_info_type(I, vi, &elem, &rank, dims, &ty)) {
      sb_free(&ty);
      return false;
    }
    param_ident(I, &e, vi->name);
    sb_printf(&I->sig, "%s%s: %s", I->nsig++ ? ", " : "", sb_str(&e), sb_str(&ty));
    add_value(I, vi->name, sb_str(&e), elem, rank, dims);
    sb_free(&ty);
    sb_free(&e);
  }
  for (size_t i = 0; i < g->n_initializer; i++) {
    const Onnx__TensorProto *t = g->initializer[i];
    ConstData *c = tensor_const(I, t);
    if (!c) return false;
    const_value(I, t->name ? t->name : "", c, t->data_type, true);
  }
  for (size_t i = 0; i < g->n_node; i++) {
    I->node = g->node[i];
    if (I->node->domain && *I->node->domain && strcmp(I->node->domain, "ai.onnx") != 0)
      return node_error(I, "operators of domain '%s' are not supported", I->node->domain);
    if (!convert_node(I)) {
      if (!diag_count(I->d)) node_error(I, "cannot be converted");
      return false;
    }
    for (size_t k = 0; k < I->node->n_output; k++)
      if (*I->node->output[k] && !find_value(I, I->node->output[k]))
        return node_error(I, "output %zu ('%s') is not supported", k, I->node->output[k]);
  }
  if (!g->n_output) {
    diag_error(I->d, I->at, "the ONNX graph has no outputs");
    return false;
  }
  StrBuf *t = &out->text;
  sb_puts(t, "#[version = \"0.0.5\"]\n");
  sb_printf(t, "// Imported by relayc from an ONNX model (opset %d).\n", I->opset);
  sb_puts(t, sb_str(&I->globals)); /* loops (control.c, rnn.c), each ending in a blank line */
  sb_printf(t, "def @main(%s) {\n", sb_str(&I->sig));
  sb_puts(t, sb_str(&I->body));
  sb_puts(t, g->n_output > 1 ? "  (" : "  ");
  for (size_t i = 0; i < g->n_output; i++) {
    Value *v = g->output[i]->name ? find_value(I, g->output[i]->name) : NULL;
    if (!v) {
      diag_error(I->d, I->at, "ONNX graph output '%s' is not computed by any node",
                 g->output[i]->name ? g->output[i]->name : "?");
      return false;
    }
    sb_printf(t, "%s%s", i ? ", " : "", v->expr);
  }
  sb_puts(t, g->n_output > 1 ? ")\n}\n" : "\n}\n");
  if (I->consts.len) {
    sb_putc(t, '\n');
    meta_write_constants(t, I->consts.data, I->consts.len);
  }
  return true;
}

bool onnx_is_model_path(const char *path) {
  size_t n = strlen(path);
  return n > 5 && strcmp(path + n - 5, ".onnx") == 0;
}

bool onnx_import(const char *path, const unsigned char *data, size_t len, uint32_t file, const OnnxOptions *opt,
                 OnnxImport *out, Diag *d) {
  memset(out, 0, sizeof *out);
  Importer I = {0};
  I.d = d;
  I.at = (Span){file, 0, 0, 0};
  I.as_params = opt && opt->params;
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, data);
  if (!m) {
    diag_error(d, I.at, "not an ONNX model: the file does not decode as an ONNX ModelProto (truncated or corrupt?)");
    return false;
  }
  bool ok = false;
  char *dir = xstrdup(path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  else strcpy(dir, ".");
  I.dir = dir;
  I.opset = -1;
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const char *dom = m->opset_import[i]->domain;
    if (!dom || !*dom || strcmp(dom, "ai.onnx") == 0) I.opset = (int)m->opset_import[i]->version;
  }
  if (!m->graph) {
    diag_error(d, I.at, "the ONNX model has no graph");
  } else if (I.opset < 0) {
    diag_error(d, I.at, "the ONNX model imports no opset of the default domain");
  } else if (I.opset < OPSET_MIN || I.opset > OPSET_MAX) {
    diag_error(d, I.at, "ONNX opset %d is not supported (relayc reads opsets %d to %d)", I.opset, OPSET_MIN,
               OPSET_MAX);
  } else {
    ok = import_graph(&I, m->graph, out);
  }
  out->opset = I.opset;
  if (ok && I.as_params) {
    out->nparams = I.pnames.len;
    out->param_names = rly_xcalloc((size_t)(I.pnames.len ? I.pnames.len : 1), sizeof(char *));
    out->params = rly_xcalloc((size_t)(I.pnames.len ? I.pnames.len : 1), sizeof(ConstData));
    for (int i = 0; i < I.pnames.len; i++) {
      out->param_names[i] = I.pnames.data[i];
      out->params[i] = *I.pvalues.data[i];
      free(I.pvalues.data[i]); /* the struct; its shape and data move */
    }
  } else {
    for (int i = 0; i < I.pnames.len; i++) {
      free(I.pnames.data[i]);
      const_free(I.pvalues.data[i]);
    }
  }
  for (int i = 0; i < I.consts.len; i++) const_free(I.consts.data[i]);
  for (int i = 0; i < I.values.len; i++) {
    free(I.values.data[i].name);
    free(I.values.data[i].expr);
  }
  VEC_FREE(&I.values);
  for (int i = 0; i < I.idents.len; i++) free(I.idents.data[i]);
  VEC_FREE(&I.idents);
  VEC_FREE(&I.consts);
  VEC_FREE(&I.pnames);
  VEC_FREE(&I.pvalues);
  sb_free(&I.body);
  sb_free(&I.globals);
  sb_free(&I.sig);
  free(dir);
  onnx__model_proto__free_unpacked(m, NULL);
  if (!ok) sb_free(&out->text);
  return ok;
}

uint32_t onnx_add_source(SourceMap *sm, const char *path, char *data, size_t len, Diag *d) {
  OnnxImport imp;
  uint32_t file = srcmap_add(sm, path, rly_xcalloc(1, 1), 0);
  bool ok = onnx_import(path, (const unsigned char *)data, len, file, NULL, &imp, d);
  free(data);
  if (!ok) return 0;
  StrBuf name = {0};
  sb_printf(&name, "%s.relay", path);
  size_t n = imp.text.len;
  char *text = imp.text.data; /* moves into sm */
  imp.text = (StrBuf){0};
  if (!text) text = rly_xcalloc(1, 1);
  uint32_t id = srcmap_add(sm, sb_str(&name), text, n);
  sb_free(&name);
  onnx_import_free(&imp);
  return id;
}

int onnx_output_names(const unsigned char *data, size_t len, char ***out) {
  *out = NULL;
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, data);
  if (!m) return -1;
  int n = m->graph ? (int)m->graph->n_output : 0;
  *out = rly_xcalloc((size_t)(n ? n : 1), sizeof(char *));
  for (int i = 0; i < n; i++) (*out)[i] = xstrdup(m->graph->output[i]->name ? m->graph->output[i]->name : "");
  onnx__model_proto__free_unpacked(m, NULL);
  return n;
}

void onnx_free_names(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}

void onnx_import_free(OnnxImport *imp) {
  sb_free(&imp->text);
  for (int i = 0; i < imp->nparams; i++) {
    free(imp->param_names[i]);
    free(imp->params[i].shape);
    free(imp->params[i].data);
  }
  free(imp->param_names);
  free(imp->params);
  memset(imp, 0, sizeof *imp);
}

/* {==== For the converters of rnn.c and control.c (import.h) ====} */

bool onnx_node_error(Importer *I, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return node_error(I, "%s", msg);
}

Value *onnx_input(Importer *I, size_t i) { return input(I, i); }
Value *onnx_find_value(Importer *I, const char *name) { return find_value(I, name); }

Value *onnx_add_value(Importer *I, const char *name, const char *expr, int elem, int rank, const int64_t *dims) {
  return add_value(I, name, expr, elem, rank, dims);
}

Value *onnx_bind_output(Importer *I, size_t k, const char *e, int elem, int rank, const int64_t *dims) {
  return bind_output(I, k, e, elem, rank, dims);
}

const Onnx__AttributeProto *onnx_attr(Importer *I, const char *name) { return attr(I, name); }
int64_t onnx_attr_int(Importer *I, const char *name, int64_t def) { return attr_int(I, name, def); }
double onnx_attr_float(Importer *I, const char *name, double def) { return attr_float(I, name, def); }

const char *onnx_attr_str(Importer *I, const char *name, const char *def, char *buf, size_t len) {
  return attr_str(I, name, def, buf, len);
}

int onnx_attr_ints(Importer *I, const char *name, int64_t *out, int max) { return attr_ints(I, name, out, max); }
bool onnx_elem_dtype(int elem, DType *out) { return elem_dtype(elem, out); }
void onnx_put_float_lit(Importer *I, StrBuf *sb, int elem, double v) { put_float_lit(I, sb, elem, v); }
int onnx_const_ints(const Value *v, int64_t *out, int max) { return const_ints(v, out, max); }
bool onnx_convert_node(Importer *I) { return convert_node(I); }

bool onnx_initializer_value(Importer *I, const Onnx__TensorProto *t) {
  ConstData *c = tensor_const(I, t);
  if (!c) return false;
  const_value(I, t->name ? t->name : "", c, t->data_type, false);
  return true;
}
