/* print.c: values as text, for `relayc run` and for tests.
**
** Tensors print as NumPy's str() prints arrays with the default options
** (75-column lines, arrays of more than 1000 elements summarised to 3 items
** at each end of every long axis, floats with at most 8 fractional
** digits): [[1. 2.]\n [3. 4.]], [1 2 3], [ True False]; a 0-d tensor prints
** as NumPy prints the scalar (1.5, 1.0, 1e+16, True, 3). Floats use the
** shortest decimal that reads back in the tensor's own precision
** (float16, float32 or float64).
**
** Containers: tuples (a, b) and (a,), ADT values Cons(1, Nil), closures
** <closure>, references ref(v). Nesting is walked with an explicit stack,
** so a 100,000-long list prints without deep recursion; a reference cycle
** prints as ref(...). The only recursion is over the axes of one tensor
** (at most 64). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "relayc/runtime.h"

enum {
  PRINT_THRESHOLD = 1000,  /* more elements than this are summarised */
  EDGE_ITEMS = 3,          /* items kept at each end of a summarised axis */
  LINE_WIDTH = 75,
  MAX_NDIM = 64,
  FLOAT_PRECISION = 8,     /* most fractional digits in an array */
  WORD_CAP = 400,          /* longest element text, with room to spare */
};

/* {==== Text of bounded length ====} */

/* Appends to a NUL-terminated buffer, silently cut at its capacity. */
typedef struct text {
  char *s;
  size_t n, cap;
} text;

static text text_on(char *buf, size_t cap) {
  buf[0] = 0;
  return (text){buf, 0, cap};
}

static void put_n(text *w, const char *s, size_t len) {
  if (len > w->cap - 1 - w->n) len = w->cap - 1 - w->n;
  memcpy(w->s + w->n, s, len);
  w->n += len;
  w->s[w->n] = 0;
}

static void put(text *w, const char *s) { put_n(w, s, strlen(s)); }

static void put_fill(text *w, char c, long count) {
  for (; count > 0 && w->n + 1 < w->cap; count--) w->s[w->n++] = c;
  w->s[w->n] = 0;
}

/* {==== Floats as decimals ====} */

/* A finite float as decimal digits d0.d1d2... * 10^exp. */
typedef struct decimal {
  bool neg;
  int ndigits;             /* >= 1, no trailing zeros (except the one digit of 0) */
  int exp;
  char digits[40];
} decimal;

/* Whether text s reads back as a in the precision of `bits`. */
static bool reads_back(const char *s, double a, int bits) {
  if (bits == 64) return strtod(s, NULL) == a;
  float f = strtof(s, NULL);
  if (bits == 32) return f == (float)a;
  return rlyrt_float_to_half(f) == rlyrt_float_to_half((float)a);
}

/* Parses the output of "%.Ne" (non-negative) into d. */
static void from_e_text(const char *s, decimal *d) {
  d->ndigits = 0;
  for (; *s && *s != 'e'; s++)
    if (*s >= '0' && *s <= '9' && d->ndigits < (int)sizeof d->digits - 1) d->digits[d->ndigits++] = *s;
  d->exp = *s == 'e' ? atoi(s + 1) : 0;
  while (d->ndigits > 1 && d->digits[d->ndigits - 1] == '0') d->ndigits--;
  d->digits[d->ndigits] = 0;
}

/* Whether digits[0..p) * 10^exp (digits[0] the units) reads back as a;
** if so, d is set to it and |value - a| goes to *dist. */
static bool try_digits(const char *digits, int p, int exp, double a, int bits, decimal *d, double *dist) {
  char buf[64];
  snprintf(buf, sizeof buf, "%c.%.*se%d", digits[0], p - 1, digits + 1, exp);
  if (!reads_back(buf, a, bits)) return false;
  *dist = fabs(strtod(buf, NULL) - a);
  from_e_text(buf, d);
  return true;
}

/* The shortest decimal that reads back as x; of those, the closest. The
** correctly rounded p-digit decimal may miss while its neighbour fits (at
** a power of two the gap below is half the gap above), so both neighbours
** are tried too. */
static void shortest(double x, int bits, decimal *d) {
  double a = fabs(x);
  char buf[64];
  d->neg = signbit(x) != 0;
  if (a == 0) {
    strcpy(d->digits, "0");
    d->ndigits = 1;
    d->exp = 0;
    return;
  }
  int maxp = bits == 64 ? 17 : bits == 32 ? 9 : 5;
  for (int p = 1; p <= maxp; p++) {
    snprintf(buf, sizeof buf, "%.*e", p - 1, a);
    char near[24], up[24], down[24];
    int k = 0;
    for (const char *c = buf; *c && *c != 'e'; c++)
      if (*c >= '0' && *c <= '9') near[k++] = *c;
    int exp = atoi(strchr(buf, 'e') + 1);
    double dist, dist2;
    decimal alt;
    if (try_digits(near, p, exp, a, bits, d, &dist) || p == maxp) break;
    /* One unit up in the last digit (9.99 -> 1.00e+1) and one down (1.00 -> 9.99e-1). */
    memcpy(up, near, (size_t)p);
    memcpy(down, near, (size_t)p);
    int i = p - 1, up_exp = exp, down_exp = exp;
    while (i >= 0 && up[i] == '9') up[i--] = '0';
    if (i >= 0) up[i]++;
    else up[0] = '1', up_exp++;
    for (i = p - 1; i >= 0 && down[i] == '0'; i--) down[i] = '9';
    down[i]--; /* i >= 0: a > 0 has a non-zero digit */
    if (down[0] == '0') {
      memset(down, '9', (size_t)p);
      down_exp--;
    }
    bool up_ok = try_digits(up, p, up_exp, a, bits, d, &dist);
    bool down_ok = try_digits(down, p, down_exp, a, bits, &alt, &dist2);
    if (down_ok && (!up_ok || dist2 < dist)) *d = alt;
    if (up_ok || down_ok) {
      d->neg = signbit(x) != 0;
      return;
    }
  }
  from_e_text(buf, d);
  d->neg = signbit(x) != 0;
}

/* x rounded to `frac` fractional digits of scientific notation. */
static void rounded_sci(double x, int frac, decimal *d) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.*e", frac, fabs(x));
  from_e_text(buf, d);
}

/* Positional text of x: integer part (with the sign) and fraction digits
** (possibly none); at most maxfrac fractional digits when maxfrac >= 0. */
static void positional(double x, int bits, int maxfrac, char *ip, char *fp) {
  decimal d;
  shortest(x, bits, &d);
  int nfrac = d.ndigits - 1 - d.exp;
  if (maxfrac >= 0 && nfrac > maxfrac) {
    char buf[WORD_CAP];
    snprintf(buf, sizeof buf, "%s%.*f", d.neg ? "-" : "", maxfrac, fabs(x));
    char *dot = strchr(buf, '.');
    *dot = 0;
    strcpy(ip, buf);
    size_t n = strlen(dot + 1);
    while (n && dot[n] == '0') n--;
    memcpy(fp, dot + 1, n);
    fp[n] = 0;
    return;
  }
  char *q = ip;
  if (d.neg) *q++ = '-';
  if (maxfrac >= 0 && nfrac < 0) {
    /* The shortest digits stop above the units (a large float16 or
    ** float32): arrays show every integer digit of the exact value. */
    snprintf(q, WORD_CAP - 1, "%.0f", fabs(x));
    fp[0] = 0;
    return;
  }
  if (d.exp < 0) {
    *q++ = '0';
    *q = 0;
    int z = -d.exp - 1;
    memset(fp, '0', (size_t)z);
    memcpy(fp + z, d.digits, (size_t)d.ndigits + 1);
    if (d.ndigits == 1 && d.digits[0] == '0') fp[0] = 0;
    return;
  }
  for (int k = 0; k <= d.exp; k++) *q++ = k < d.ndigits ? d.digits[k] : '0';
  *q = 0;
  if (d.ndigits > d.exp + 1) strcpy(fp, d.digits + d.exp + 1);
  else fp[0] = 0;
}

/* "e+05", "e-100": at least `mindigits` exponent digits. */
static int exp_text(char *buf, int exp, int mindigits) {
  return snprintf(buf, 16, "e%c%0*d", exp < 0 ? '-' : '+', mindigits, exp < 0 ? -exp : exp);
}

/* A float as NumPy prints a scalar: positional with at least one fraction
** digit for 0 and 1e-4 <= |x| < 1e16, else scientific without trailing zeros. */
static void scalar_float_text(double x, int bits, char *buf, size_t cap) {
  text w = text_on(buf, cap);
  if (isnan(x) || isinf(x)) {
    put(&w, isnan(x) ? "nan" : x < 0 ? "-inf" : "inf");
    return;
  }
  double a = fabs(x);
  if (a == 0 || (a >= 1e-4 && a < 1e16)) {
    char ip[WORD_CAP], fp[WORD_CAP];
    positional(x, bits, -1, ip, fp);
    put(&w, ip);
    put(&w, ".");
    put(&w, fp[0] ? fp : "0");
    return;
  }
  decimal d;
  char e[16];
  shortest(x, bits, &d);
  exp_text(e, d.exp, 2);
  if (d.neg) put(&w, "-");
  put_n(&w, d.digits, 1);
  if (d.ndigits > 1) put(&w, ".");
  put(&w, d.digits + 1);
  put(&w, e);
}

/* {==== Tensors ====} */

/* How every element of one printed array is formatted (NumPy's
** FloatingFormat, IntegerFormat, BoolFormat). */
typedef struct tprinter {
  FILE *out;
  const rlyrt_tensor *t;
  int bits;
  bool summarize;
  int64_t stride[MAX_NDIM];
  /* floats */
  bool exp_mode;
  int pad_left, pad_right, precision, exp_size;
  double range_min, range_max;  /* of the finite non-zero magnitudes */
  bool range_any, seen_neginf, seen_nonfinite;
  /* integers */
  int int_width;
} tprinter;

static bool is_bool(DLDataType t) { return t.code == kDLUInt && t.bits == 1; }

static int int_text(const rlyrt_tensor *t, int64_t i, char *buf, size_t cap) {
  if (t->dl.dtype.code == kDLUInt && t->dl.dtype.bits == 64)
    return snprintf(buf, cap, "%llu", (unsigned long long)((const uint64_t *)t->dl.data)[i]);
  return snprintf(buf, cap, "%lld", (long long)rlyrt_get_i64(t, i));
}

/* Calls fn on each element that is shown (all, or the edges of long axes). */
static void each_shown(tprinter *p, void (*fn)(tprinter *, int64_t)) {
  const DLTensor *dl = &p->t->dl;
  int64_t pos[MAX_NDIM], count[MAX_NDIM];
  for (int32_t k = 0; k < dl->ndim; k++) {
    pos[k] = 0;
    count[k] = p->summarize && dl->shape[k] > 2 * EDGE_ITEMS ? 2 * EDGE_ITEMS : dl->shape[k];
  }
  for (;;) {
    int64_t off = 0;
    for (int32_t k = 0; k < dl->ndim; k++) {
      int64_t idx = pos[k];
      if (count[k] != dl->shape[k] && idx >= EDGE_ITEMS) idx = dl->shape[k] - (2 * EDGE_ITEMS - idx);
      off += idx * p->stride[k];
    }
    fn(p, off);
    int32_t k = dl->ndim - 1;
    while (k >= 0 && ++pos[k] == count[k]) pos[k--] = 0;
    if (k < 0) return;
  }
}

/* First pass over floats: the range, to choose the notation. */
static void measure_range(tprinter *p, int64_t i) {
  double a = fabs(rlyrt_get_f64(p->t, i));
  if (!isfinite(a) || a == 0) return;
  if (!p->range_any || a < p->range_min) p->range_min = a;
  if (!p->range_any || a > p->range_max) p->range_max = a;
  p->range_any = true;
}

/* Second pass over floats: the widths of the parts. */
static void measure_float(tprinter *p, int64_t i) {
  double x = rlyrt_get_f64(p->t, i);
  if (!isfinite(x)) {
    p->seen_nonfinite = true;
    if (isinf(x) && x < 0) p->seen_neginf = true;
    return;
  }
  if (p->exp_mode) {
    decimal d;
    shortest(x, p->bits, &d);
    if (d.ndigits - 1 > FLOAT_PRECISION) rounded_sci(x, FLOAT_PRECISION, &d), d.neg = signbit(x) != 0;
    char e[16];
    int elen = exp_text(e, d.exp, 2) - 2; /* digits only */
    int ilen = d.neg ? 2 : 1;
    if (ilen > p->pad_left) p->pad_left = ilen;
    if (d.ndigits - 1 > p->precision) p->precision = d.ndigits - 1;
    if (elen > p->exp_size) p->exp_size = elen;
  } else {
    char ip[WORD_CAP], fp[WORD_CAP];
    positional(x, p->bits, FLOAT_PRECISION, ip, fp);
    int ilen = (int)strlen(ip), flen = (int)strlen(fp);
    if (ilen > p->pad_left) p->pad_left = ilen;
    if (flen > p->pad_right) p->pad_right = flen;
  }
}

static void measure_int(tprinter *p, int64_t i) {
  char buf[32];
  int n = int_text(p->t, i, buf, sizeof buf);
  if (n > p->int_width) p->int_width = n;
}

static void setup_format(tprinter *p) {
  DLDataType dt = p->t->dl.dtype;
  if (is_bool(dt)) return;
  if (dt.code != kDLFloat) {
    each_shown(p, measure_int);
    return;
  }
  each_shown(p, measure_range);
  p->exp_mode = p->range_any && (p->range_max >= 1e8 || p->range_min < 1e-4 || p->range_max / p->range_min > 1000.0);
  p->pad_left = p->pad_right = p->precision = p->exp_size = 0;
  each_shown(p, measure_float);
  if (p->exp_mode) p->pad_right = p->exp_size + 2 + p->precision;
  if (p->seen_nonfinite) {
    int offset = p->pad_right + 1;
    if (3 - offset > p->pad_left) p->pad_left = 3 - offset;
    if (3 + p->seen_neginf - offset > p->pad_left) p->pad_left = 3 + p->seen_neginf - offset;
  }
}

/* Element i as its array word, padded like its neighbours. */
static void elem_text(const tprinter *p, int64_t i, char *buf, size_t cap) {
  DLDataType dt = p->t->dl.dtype;
  text w = text_on(buf, cap);
  if (is_bool(dt)) {
    put(&w, ((const uint8_t *)p->t->dl.data)[i] ? " True" : "False");
    return;
  }
  if (dt.code != kDLFloat) {
    char num[32];
    int n = int_text(p->t, i, num, sizeof num);
    put_fill(&w, ' ', p->int_width - n);
    put(&w, num);
    return;
  }
  double x = rlyrt_get_f64(p->t, i);
  if (!isfinite(x)) {
    const char *word = isnan(x) ? "nan" : x < 0 ? "-inf" : "inf";
    put_fill(&w, ' ', p->pad_left + p->pad_right + 1 - (long)strlen(word));
    put(&w, word);
    return;
  }
  if (p->exp_mode) {
    /* Every element shows `precision` digits: the exact value's, rounded
    ** (NumPy's min_digits), not the shortest padded with zeros. */
    decimal d;
    char e[16];
    rounded_sci(x, p->precision, &d);
    bool neg = signbit(x) != 0;
    exp_text(e, d.exp, p->exp_size);
    put_fill(&w, ' ', p->pad_left - (neg ? 2 : 1));
    if (neg) put(&w, "-");
    put_n(&w, d.digits, 1);
    put(&w, ".");
    put(&w, d.digits + 1);
    put_fill(&w, '0', p->precision - (d.ndigits - 1));
    put(&w, e);
    return;
  }
  char ip[WORD_CAP], fp[WORD_CAP];
  positional(x, p->bits, FLOAT_PRECISION, ip, fp);
  put_fill(&w, ' ', p->pad_left - (long)strlen(ip));
  put(&w, ip);
  put(&w, ".");
  put(&w, fp);
  put_fill(&w, ' ', p->pad_right - (long)strlen(fp));
}

static void spaces(FILE *out, size_t n) {
  while (n--) fputc(' ', out);
}

/* Prints the sub-array of `axis` that starts at element `base`, wrapping
** rows at LINE_WIDTH as NumPy does: continuation lines are indented to
** the column after the brackets, and the padding at the end of a line is
** dropped. */
static void print_axis(const tprinter *p, int32_t axis, int64_t base) {
  FILE *out = p->out;
  int32_t ndim = p->t->dl.ndim;
  int64_t dim = p->t->dl.shape[axis];
  bool sum = p->summarize && dim > 2 * EDGE_ITEMS;
  int64_t shown = sum ? 2 * EDGE_ITEMS + 1 : dim;
  fputc('[', out);
  for (int64_t pos = 0; pos < shown; pos++) {
    int64_t idx = pos;
    bool ellipsis = sum && pos == EDGE_ITEMS;
    if (sum && pos > EDGE_ITEMS) idx = dim - (shown - pos);
    if (axis < ndim - 1) {
      if (pos > 0) {
        for (int32_t k = axis + 1; k < ndim; k++) fputc('\n', out);
        spaces(out, (size_t)axis + 1);
      }
      if (ellipsis) fputs("...", out);
      else print_axis(p, axis + 1, base + idx * p->stride[axis]);
    }
  }
  if (axis == ndim - 1) {
    size_t indent = (size_t)ndim, width = LINE_WIDTH - (size_t)ndim;
    size_t line = indent; /* the line's length, padding included */
    size_t owed = 0;      /* spaces not yet written: a separator and the last word's padding */
    char word[WORD_CAP];
    for (int64_t pos = 0; pos < shown; pos++) {
      if (sum && pos == EDGE_ITEMS) strcpy(word, "...");
      else elem_text(p, base + (sum && pos > EDGE_ITEMS ? dim - (shown - pos) : pos), word, sizeof word);
      size_t wlen = strlen(word), body = wlen;
      while (body && word[body - 1] == ' ') body--;
      if (pos > 0) line++, owed++;
      if (line > indent && line + wlen > width) {
        fputc('\n', out);
        spaces(out, indent);
        line = indent;
      } else {
        spaces(out, owed);
      }
      fwrite(word, 1, body, out);
      owed = wlen - body;
      line += wlen;
    }
    spaces(out, owed);
  }
  fputc(']', out);
}

static void print_tensor(FILE *out, const rlyrt_tensor *t) {
  DLDataType dt = t->dl.dtype;
  char name[32];
  if (!rlyrt_dtype_bytes(dt) || dt.code > kDLFloat || t->dl.ndim < 0 || t->dl.ndim > MAX_NDIM) {
    fprintf(out, "<tensor of dtype %s>", rlyrt_dtype_name(dt, name));
    return;
  }
  if (t->dl.ndim == 0) {
    char buf[WORD_CAP];
    if (is_bool(dt)) strcpy(buf, *(const uint8_t *)t->dl.data ? "True" : "False");
    else if (dt.code == kDLFloat) scalar_float_text(rlyrt_get_f64(t, 0), dt.bits, buf, sizeof buf);
    else int_text(t, 0, buf, sizeof buf);
    fputs(buf, out);
    return;
  }
  int64_t numel = rlyrt_tensor_numel(t);
  if (numel == 0) {
    fputs("[]", out);
    return;
  }
  tprinter p;
  memset(&p, 0, sizeof p);
  p.out = out;
  p.t = t;
  p.bits = dt.bits;
  p.summarize = numel > PRINT_THRESHOLD;
  int64_t s = 1;
  for (int32_t k = t->dl.ndim - 1; k >= 0; k--) {
    p.stride[k] = s;
    s *= t->dl.shape[k];
  }
  setup_format(&p);
  print_axis(&p, 0, 0);
}

/* {==== Values ====} */

typedef struct pframe {
  const rlyrt_object *o;
  int32_t next;      /* the next field to print */
  int32_t prev_ref;  /* a reference's frame: the frame of the enclosing reference, or -1 */
} pframe;

static int32_t field_count(const rlyrt_object *o) {
  switch (o->kind) {
  case RLYRT_TUPLE: return ((const rlyrt_tuple *)o)->n;
  case RLYRT_ADT: return ((const rlyrt_adt *)o)->n;
  case RLYRT_REF: return 1;
  default: return 0;
  }
}

static const rlyrt_object *field_at(const rlyrt_object *o, int32_t i) {
  switch (o->kind) {
  case RLYRT_TUPLE: return ((const rlyrt_tuple *)o)->fields[i];
  case RLYRT_ADT: return ((const rlyrt_adt *)o)->fields[i];
  default: return ((const rlyrt_ref *)o)->value;
  }
}

static void close_value(FILE *out, const rlyrt_object *o) {
  fputs(o->kind == RLYRT_TUPLE && field_count(o) == 1 ? ",)" : ")", out);
}

void rlyrt_value_print(FILE *out, const rlyrt_object *v) {
  pframe local[32];
  pframe *stack = local;
  size_t cap = sizeof local / sizeof local[0], sp = 0;
  int32_t top_ref = -1; /* the innermost open reference (only references can close a cycle) */
  const rlyrt_object *cur = v;
  for (;;) {
    /* Print the start of cur; a container with fields becomes a frame. */
    bool open = false;
    if (!cur) {
      fputs("<null>", out);
    } else {
      switch (cur->kind) {
      case RLYRT_TENSOR: print_tensor(out, (const rlyrt_tensor *)cur); break;
      case RLYRT_TUPLE:
        fputs(field_count(cur) > 0 ? "(" : "()", out);
        open = field_count(cur) > 0;
        break;
      case RLYRT_ADT: {
        const rlyrt_adt *a = (const rlyrt_adt *)cur;
        if (a->ctor) fputs(a->ctor, out);
        else fprintf(out, "<ctor %d>", (int)a->tag);
        if (a->n > 0) fputc('(', out);
        open = a->n > 0;
        break;
      }
      case RLYRT_CLOSURE: fputs("<closure>", out); break;
      case RLYRT_REF: {
        bool cycle = false;
        for (int32_t k = top_ref; k >= 0 && !cycle; k = stack[k].prev_ref) cycle = stack[k].o == cur;
        fputs(cycle ? "ref(...)" : "ref(", out);
        open = !cycle;
        break;
      }
      default: fprintf(out, "<object of kind %d>", (int)cur->kind); break;
      }
    }
    if (open) {
      if (sp == cap) {
        pframe *ns = rlyrt_alloc(cap * 2 * sizeof *ns, _Alignof(pframe));
        if (ns) {
          memcpy(ns, stack, sp * sizeof *ns);
          if (stack != local) rlyrt_free(stack);
          stack = ns;
          cap *= 2;
        }
      }
      if (sp < cap && sp < INT32_MAX) {
        bool ref = cur->kind == RLYRT_REF;
        stack[sp] = (pframe){cur, 0, ref ? top_ref : -1};
        if (ref) top_ref = (int32_t)sp;
        sp++;
      } else {
        fputs("...", out); /* no memory to go deeper */
        close_value(out, cur);
      }
    }
    /* Move to the next field to print, closing finished containers. */
    cur = NULL;
    bool more = false;
    while (sp && !more) {
      pframe *f = &stack[sp - 1];
      if (f->next < field_count(f->o)) {
        if (f->next > 0) fputs(", ", out);
        cur = field_at(f->o, f->next++);
        more = true;
      } else {
        close_value(out, f->o);
        if (f->o->kind == RLYRT_REF) top_ref = f->prev_ref;
        sp--;
      }
    }
    if (!more) break;
  }
  if (stack != local) rlyrt_free(stack);
}

const char *rlyrt_tensor_type_text(const rlyrt_tensor *t, char *buf, size_t n) {
  char dt[32];
  rlyrt_dtype_name(t->dl.dtype, dt);
  if (t->dl.ndim == 0) {
    snprintf(buf, n, "%s", dt);
    return buf;
  }
  size_t len = (size_t)snprintf(buf, n, "Tensor[(");
  for (int32_t i = 0; i < t->dl.ndim && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? ", " : "", (long long)t->dl.shape[i]);
  if (len < n) snprintf(buf + len, n - len, "), %s]", dt);
  return buf;
}
