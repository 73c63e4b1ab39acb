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

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "base/file.h"
#include "ir/meta_write.h"
#include "onnx.pb-c.h"

enum { MAX_RANK = 8, OPSET_MIN = 7, OPSET_MAX = 18 };

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

typedef struct Value {
  char *name;         /* ONNX name */
  char *expr;         /* Relay expression */
  int elem;           /* ONNX element type */
  int rank;           /* -1: unknown */
  int64_t dims[MAX_RANK]; /* -1: unknown */
  const ConstData *cdata; /* a constant's data, or NULL */
} Value;

typedef struct Importer {
  Diag *d;
  Span at;
  int opset;
  bool as_params;
  StrBuf body;                /* the let bindings */
  Vec(Value) values;
  Vec(ConstData *) consts;    /* metadata constants, in order */
  Vec(char *) pnames;         /* with as_params: initializer parameters */
  Vec(ConstData *) pvalues;
  StrBuf sig;                 /* @main's parameters */
  Vec(char *) idents;         /* their names, to keep them distinct */
  int nsig;
  int tmp;
  const Onnx__NodeProto *node; /* being converted, for messages */
  const char *dir;            /* the model's folder, for external data */
} Importer;

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

/* Appends "%ident" for a new parameter of @main named after the ONNX name:
** its identifier (put_ident), with "_2", "_3", ... when an earlier
** parameter has it already (names that differ only in characters an
** identifier cannot hold, or a name given twice). */
static void param_ident(Importer *I, StrBuf *e, const char *name) {
  StrBuf id = {0};
  put_ident(&id, name);
  StrBuf cand = {0};
  sb_puts(&cand, sb_str(&id));
  for (int k = 2;; k++) {
    bool used = false;
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
static bool cv_pow(Importer *I) { return cv_binary(I, "power", false); }
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
  Value *v = add_value(I, I->node->output[0], x->expr, x->elem, x->rank, x->dims);
  v->cdata = x->cdata;
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
    if ((a && !const_scalar(a, &lo)) || (b && !const_scalar(b, &hi)))
      return node_error(I, "bounds that are not constants are not supported");
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
** the input is seen as 2-D [prod(d < axis), prod(d >= axis)], which equals
** a softmax over the last axis only when axis is the last. */
static bool softmax(Importer *I, const char *op) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  int64_t axis = attr_int(I, "axis", I->opset >= 13 ? -1 : 1);
  if (I->opset < 13) {
    if (x->rank < 0) return node_error(I, "needs the rank of its input");
    int64_t a = axis < 0 ? axis + x->rank : axis;
    if (a != x->rank - 1)
      return node_error(I, "axis %lld of a rank-%d input flattens it (before opset 13): not supported yet",
                        (long long)axis, x->rank);
    axis = -1;
  }
  StrBuf e = {0};
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
    } else if (c->rank == 1) {
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
static bool cv_matmul(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *a = input(I, 0), *b = input(I, 1);
  StrBuf e = {0};
  if (a->rank == 2 && b->rank == 2) {
    sb_printf(&e, "nn.dense(%s, transpose(%s, axes=[1, 0]))", a->expr, b->expr);
    int64_t dims[2] = {a->dims[0], b->dims[1]};
    bind_output(I, 0, sb_str(&e), a->elem, 2, dims);
  } else if (a->rank == 3 && b->rank == 3) {
    sb_printf(&e, "nn.batch_matmul(%s, transpose(%s, axes=[0, 2, 1]))", a->expr, b->expr);
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
    return node_error(I, "operands of ranks %d and %d are not supported yet", a->rank, b->rank);
  }
  sb_free(&e);
  return true;
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

static bool cv_conv(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0), *w = input(I, 1), *b = input(I, 2);
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
  for (size_t k = 1; k < I->node->n_output; k++)
    if (*I->node->output[k]) return node_error(I, "training outputs (running mean and variance) are not supported");
  if (attr_int(I, "training_mode", 0)) return node_error(I, "training_mode 1 is not supported");
  Value *x = input(I, 0);
  StrBuf e = {0};
  sb_printf(&e, "nn.batch_norm(%s, %s, %s, %s, %s, epsilon=", x->expr, input(I, 1)->expr, input(I, 2)->expr,
            input(I, 3)->expr, input(I, 4)->expr);
  put_float_lit(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, attr_float(I, "epsilon", 1e-5));
  sb_puts(&e, ").0");
  return finish(I, &e, x->elem, x->rank, x->dims);
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
  sb_printf(&e, "take(%s, %s, axis=%lld)", x->expr, idx->expr, (long long)axis);
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

/* ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd. */
static bool reduce(Importer *I, const char *op) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  int64_t axes[MAX_RANK];
  bool given;
  int n;
  if (strcmp(op, "sum") == 0 && I->opset >= 13) {
    Value *a = input(I, 1);
    n = a ? const_ints(a, axes, MAX_RANK) : -1;
    if (a && n < 0) return node_error(I, "axes that are not a constant are not supported");
    given = n >= 0;
  } else {
    n = attr_ints(I, "axes", axes, MAX_RANK);
    given = n >= 0;
  }
  bool keep = attr_int(I, "keepdims", 1) != 0;
  if (!given && attr_int(I, "noop_with_empty_axes", 0)) return cv_identity(I);
  StrBuf e = {0};
  sb_printf(&e, "%s(%s", op, x->expr);
  if (given) {
    for (int i = 0; i < n; i++) axes[i] = axes[i] < 0 && x->rank >= 0 ? axes[i] + x->rank : axes[i];
    sb_puts(&e, ", axis=");
    put_ints(&e, axes, n);
  }
  sb_printf(&e, ", keepdims=%s)", keep ? "True" : "False");
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

static bool cv_reduce_mean(Importer *I) { return reduce(I, "mean"); }
static bool cv_reduce_sum(Importer *I) { return reduce(I, "sum"); }
static bool cv_reduce_max(Importer *I) { return reduce(I, "max"); }
static bool cv_reduce_min(Importer *I) { return reduce(I, "min"); }
static bool cv_reduce_prod(Importer *I) { return reduce(I, "prod"); }

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

/* Gather, Unsqueeze, Squeeze, Concat, Cast, Add, Sub, Mul, Div, Slice on
** small integer constants: evaluated here. Returns true when it did. */
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
  if (I->opset < 11) {
    n = attr_ints(I, "pads", pads, 2 * MAX_RANK);
    value = attr_float(I, "value", 0);
  } else {
    Value *p = input(I, 1), *v = input(I, 2);
    n = p ? const_ints(p, pads, 2 * MAX_RANK) : -1;
    if (v && !const_scalar(v, &value)) return node_error(I, "a pad value that is not a constant is not supported");
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
  if (elem_dtype(x->elem, &dt) && dt.code == DT_FLOAT) put_float_lit(I, &e, x->elem, value);
  else sb_printf(&e, "%lld", (long long)value);
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
  if (axis != x->rank - 1) return node_error(I, "normalizing over axis %lld onwards is not supported yet", (long long)axis);
  for (size_t k = 1; k < I->node->n_output; k++)
    if (*I->node->output[k]) return node_error(I, "the mean and inverse deviation outputs are not supported");
  StrBuf e = {0};
  /* nn.layer_norm needs a beta: zeros when absent. */
  if (b) sb_printf(&e, "nn.layer_norm(%s, %s, %s, axis=-1, epsilon=", x->expr, g->expr, b->expr);
  else sb_printf(&e, "nn.layer_norm(%s, %s, zeros_like(%s), axis=-1, center=False, epsilon=", x->expr, g->expr, g->expr);
  put_float_lit(I, &e, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, attr_float(I, "epsilon", 1e-5));
  sb_putc(&e, ')');
  return finish(I, &e, x->elem, x->rank, x->dims);
}

/* ConvTranspose (2-D): the weight is (C_in, C_out / group, kH, kW), Relay's
** IOHW. Explicit pads and output_padding; output_shape is not supported. */
static bool cv_conv_transpose(Importer *I) {
  if (!need_inputs(I, 2)) return false;
  Value *x = input(I, 0), *w = input(I, 1), *b = input(I, 2);
  if (w->rank != 4) return node_error(I, "only 2-D transposed convolutions are supported");
  if (attr(I, "output_shape")) return node_error(I, "output_shape is not supported; give pads");
  Spatial s;
  char buf[32];
  const char *ap = attr_str(I, "auto_pad", "NOTSET", buf, sizeof buf);
  if (strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0) return node_error(I, "auto_pad %s is not supported", ap);
  if (!spatial(I, 2, w->dims + 2, &s, x)) return false;
  int64_t op[2] = {0, 0};
  attr_ints(I, "output_padding", op, 2);
  int64_t groups = attr_int(I, "group", 1);
  StrBuf e = {0};
  sb_printf(&e, "nn.conv2d_transpose(%s, %s, strides=", x->expr, w->expr);
  put_ints(&e, s.strides, 2);
  sb_puts(&e, ", output_padding=");
  put_ints(&e, op, 2);
  sb_puts(&e, ", padding=");
  put_ints(&e, s.pads, 4);
  sb_puts(&e, ", dilation=");
  put_ints(&e, s.dilations, 2);
  int64_t cout = w->dims[1] >= 0 ? dim_mul(w->dims[1], groups) : -1;
  sb_printf(&e, ", groups=%lld", (long long)groups);
  if (cout >= 0) sb_printf(&e, ", channels=%lld", (long long)cout);
  sb_puts(&e, ", kernel_size=");
  put_ints(&e, s.kernel, 2);
  sb_putc(&e, ')');
  if (b) {
    StrBuf t = {0};
    sb_printf(&t, "nn.bias_add(%s, %s)", sb_str(&e), b->expr);
    sb_free(&e);
    e = t;
  }
  int64_t dims[4] = {x->rank == 4 ? x->dims[0] : -1, cout, -1, -1};
  for (int i = 0; i < 2; i++) {
    int64_t in = x->rank == 4 ? x->dims[2 + i] : -1;
    /* (in - 1) * stride - pads + dilation * (k - 1) + output_padding + 1 */
    int64_t grow = dim_add(dim_mul(in - 1, s.strides[i]), dim_add(dim_mul(s.dilations[i], s.kernel[i] - 1), op[i] + 1));
    int64_t pads = dim_add(s.pads[i], s.pads[2 + i]);
    dims[2 + i] = in >= 1 && grow >= 0 && pads >= 0 && grow >= pads ? grow - pads : -1;
  }
  return finish(I, &e, x->elem, 4, dims);
}

/* Resize (opset 11 on) of a 4-D NCHW input over H and W: image.resize2d.
** The output size from `sizes`, or from `scales` and the input's static
** H and W (floor(in * scale)); batch and channels unscaled. */
static bool cv_resize(Importer *I) {
  if (!need_inputs(I, 1)) return false;
  Value *x = input(I, 0);
  if (I->opset < 11) return node_error(I, "Resize before opset 11 is not supported yet");
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
    {"Constant", 1, cv_constant},
    {"ConstantOfShape", 9, cv_constant_of_shape},
    {"Conv", 1, cv_conv},
    {"ConvTranspose", 1, cv_conv_transpose},
    {"Cos", 1, cv_cos},
    {"Div", 1, cv_div},
    {"Dropout", 1, cv_identity},
    {"Equal", 1, cv_equal},
    {"Erf", 1, cv_erf},
    {"Exp", 1, cv_exp},
    {"Expand", 8, cv_expand},
    {"Flatten", 1, cv_flatten},
    {"Floor", 1, cv_floor},
    {"Gather", 1, cv_gather},
    {"Gemm", 1, cv_gemm},
    {"GlobalAveragePool", 1, cv_global_avg_pool},
    {"GlobalMaxPool", 1, cv_global_max_pool},
    {"Greater", 1, cv_greater},
    {"HardSigmoid", 1, cv_hard_sigmoid},
    {"HardSwish", 14, cv_hard_swish},
    {"Identity", 1, cv_identity},
    {"LayerNormalization", 17, cv_layer_norm},
    {"LeakyRelu", 1, cv_leaky_relu},
    {"Less", 1, cv_less},
    {"Log", 1, cv_log},
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
    {"Relu", 1, cv_relu},
    {"Reshape", 1, cv_reshape},
    {"Resize", 1, cv_resize},
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
    {"Where", 9, cv_where},
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
