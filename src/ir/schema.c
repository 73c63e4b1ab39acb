/* schema.c: the defaults of attribute fields (ir/schema.h).
**
** Defaults are stored as their canonical printed text ("[1, 1]", "1e-05f",
** "\"NCHW\"", "None"); a tiny literal reader turns that text into values
** (attr_default_value) or compares it with a value without allocating
** (attr_is_default). A default that does not read back is a bug in
** ops/attrs.def and trips an assertion. */
#include "ir/schema.h"

#include <stdlib.h>
#include <string.h>

/* {==== Default literals ====}
** The grammar of a default's text: None | True | False | number | string |
** "[" (literal ("," literal)*)? "]". Numbers: ints with an optional
** i16/i32/i64 suffix, floats with an f/f16/f32/f64 suffix. Strings use C
** escapes (\" \\ \n \t \r \xHH). */

enum { LIT_MAX_ITEMS = 16, LIT_MAX_STR = 256 };

typedef struct LitNum {
  bool is_float;
  int64_t i;
  double f;
  uint8_t bits;
} LitNum;

static void lit_space(const char **p) {
  while (**p == ' ') (*p)++;
}

/* Consumes word w when the text continues with it. */
static bool lit_word(const char **p, const char *w) {
  size_t n = strlen(w);
  if (strncmp(*p, w, n) != 0) return false;
  *p += n;
  return true;
}

/* Reads an optional width (16, 32, 64) after a suffix letter. */
static uint8_t lit_width(const char **p) {
  if (lit_word(p, "16")) return 16;
  if (lit_word(p, "32")) return 32;
  if (lit_word(p, "64")) return 64;
  return 32;
}

static void lit_number(const char **p, LitNum *out) {
  const char *s = *p;
  char *fend, *iend;
  double f = strtod(s, &fend);
  long long i = strtoll(s, &iend, 10);
  RLY_ASSERT(fend != s);
  if (*fend == 'f') {
    *p = fend + 1;
    *out = (LitNum){.is_float = true, .f = f, .bits = lit_width(p)};
    return;
  }
  RLY_ASSERT(iend == fend);  /* an int: no '.' or exponent without 'f' */
  *p = iend;
  *out = (LitNum){.is_float = false, .i = (int64_t)i, .bits = 32};
  if (**p == 'i') {
    (*p)++;
    out->bits = lit_width(p);
  } else if (i < INT32_MIN || i > INT32_MAX) {
    out->bits = 64;
  }
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Reads a quoted string into buf (at most LIT_MAX_STR bytes); returns its length. */
static size_t lit_string(const char **p, char *buf) {
  const char *s = *p;
  size_t n = 0;
  RLY_ASSERT(*s == '"');
  s++;
  while (*s != '"') {
    char c = *s++;
    RLY_ASSERT(c != '\0' && n < LIT_MAX_STR);
    if (c == '\\') {
      char e = *s++;
      switch (e) {
      case 'n': c = '\n'; break;
      case 't': c = '\t'; break;
      case 'r': c = '\r'; break;
      case '"': c = '"'; break;
      case '\\': c = '\\'; break;
      case 'x': {
        int hi = hex_digit(s[0]), lo = hi < 0 ? -1 : hex_digit(s[1]);
        RLY_ASSERT(hi >= 0 && lo >= 0);
        c = (char)(hi * 16 + lo);
        s += 2;
        break;
      }
      default: RLY_UNREACHABLE();
      }
    }
    buf[n++] = c;
  }
  *p = s + 1;
  return n;
}

static AttrValue *lit_parse(Module *m, const char **p) {
  static const Span nowhere;
  AttrValue *v;
  lit_space(p);
  if (**p == '[') {
    AttrValue *items[LIT_MAX_ITEMS];
    int n = 0;
    (*p)++;
    lit_space(p);
    if (**p != ']') {
      for (;;) {
        RLY_ASSERT(n < LIT_MAX_ITEMS);
        items[n++] = lit_parse(m, p);
        lit_space(p);
        if (**p != ',') break;
        (*p)++;
      }
    }
    RLY_ASSERT(**p == ']');
    (*p)++;
    v = ir_attr_value_new(m, AV_ARRAY, nowhere);
    v->u.arr.n = n;
    if (n > 0) v->u.arr.items = arena_dup(m->arena, items, sizeof(AttrValue *) * (size_t)n);
    return v;
  }
  if (**p == '"') {
    char buf[LIT_MAX_STR];
    size_t n = lit_string(p, buf);
    v = ir_attr_value_new(m, AV_STR, nowhere);
    v->u.str.s = arena_strndup(m->arena, buf, n);
    v->u.str.len = n;
    return v;
  }
  if (lit_word(p, "None")) return ir_attr_value_new(m, AV_NONE, nowhere);
  bool is_true = lit_word(p, "True");
  if (is_true || lit_word(p, "False")) {
    v = ir_attr_value_new(m, AV_BOOL, nowhere);
    v->u.b = is_true;
    return v;
  }
  LitNum num;
  lit_number(p, &num);
  if (num.is_float) {
    v = ir_attr_value_new(m, AV_FLOAT, nowhere);
    v->u.f.v = num.f;
    v->u.f.bits = num.bits;
  } else {
    v = ir_attr_value_new(m, AV_INT, nowhere);
    v->u.i.v = num.i;
    v->u.i.bits = num.bits;
  }
  return v;
}

/* Doubles equal as written or after rounding to float32 (the precision of
** an `f` literal), so 1e-05f read either way matches the default 1e-05f. */
static bool floats_equal(double a, double b) {
  return a == b || (float)a == (float)b;
}

/* Whether the literal at *p equals v; advances *p over the literal when it
** does. Ints compare by value, whatever their bits. */
static bool lit_match(const char **p, const AttrValue *v) {
  lit_space(p);
  if (**p == '[') {
    int i = 0;
    if (v->kind != AV_ARRAY) return false;
    (*p)++;
    lit_space(p);
    if (**p != ']') {
      for (;;) {
        if (i >= v->u.arr.n || !lit_match(p, v->u.arr.items[i])) return false;
        i++;
        lit_space(p);
        if (**p != ',') break;
        (*p)++;
      }
    }
    RLY_ASSERT(**p == ']');
    (*p)++;
    return i == v->u.arr.n;
  }
  if (**p == '"') {
    char buf[LIT_MAX_STR];
    size_t n = lit_string(p, buf);
    return v->kind == AV_STR && v->u.str.len == n && memcmp(v->u.str.s, buf, n) == 0;
  }
  if (lit_word(p, "None")) return v->kind == AV_NONE;
  bool is_true = lit_word(p, "True");
  if (is_true || lit_word(p, "False")) {
    if (v->kind == AV_BOOL) return v->u.b == is_true;
    return v->kind == AV_INT && v->u.i.v == (is_true ? 1 : 0);  /* TVM's bools are 0/1 */
  }
  LitNum num;
  lit_number(p, &num);
  if (num.is_float) {
    if (v->kind == AV_FLOAT) return floats_equal(v->u.f.v, num.f);
    return v->kind == AV_INT && (double)v->u.i.v == num.f;
  }
  return v->kind == AV_INT && v->u.i.v == num.i;
}

AttrValue *attr_default_value(Module *m, const AttrField *f) {
  static const Span nowhere;
  if (!f->def) return ir_attr_value_new(m, AV_NONE, nowhere);
  const char *p = f->def;
  AttrValue *v = lit_parse(m, &p);
  lit_space(&p);
  RLY_ASSERT(*p == '\0');
  return v;
}

bool attr_is_default(const AttrField *f, const AttrValue *v) {
  RLY_ASSERT(v != NULL);
  if (!f->def) return false;
  const char *p = f->def;
  if (!lit_match(&p, v)) return false;
  lit_space(&p);
  return *p == '\0';
}

