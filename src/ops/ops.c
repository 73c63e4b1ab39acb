/* ops.c: the operator table (ops.def) and the attribute schemas
** (attrs.def), operator and attrs-class lookup with spelling suggestions,
** and the construction of call attributes: keyword values are checked
** against the class's fields, normalised, and completed with defaults.
** Defaults (their text, and reading it) are the IR's: ir/schema.c.
**
** Everything here is const data or works on the caller's Module and Diag:
** there is no mutable global state. */
#include "ops/ops.h"

#include <stdlib.h>
#include <string.h>

/* {==== Tables ====} */

/* Each class becomes a one-element array ATTRS_<Name>, so that its name
** decays to a pointer in the op table; ATTRS_NULL covers ops without
** attributes. */
#define F(name, kind, nullable, def) {name, kind, nullable, def},
#define CLASS(N, ...)                                    \
  static const AttrField N##_fields[] = {__VA_ARGS__};   \
  static const AttrsClass ATTRS_##N[1] = {{#N, N##_fields, (int)RLY_COUNTOF(N##_fields)}};
#include "ops/attrs.def"
#undef CLASS
#undef F

#define ATTRS_NULL NULL

static const AttrsClass *const attrs_classes[] = {
#define CLASS(N, ...) ATTRS_##N,
#include "ops/attrs.def"
#undef CLASS
};

static const OpDef op_table[OP_COUNT] = {
#define OP(ID, name, nargs, attrs, pattern) {OP_##ID, name, nargs, ATTRS_##attrs, pattern},
#include "ops/ops.def"
#undef OP
};

/* Byte-order comparison of a NUL-terminated table name with s[0..n). */
static int name_cmp(const char *table_name, const char *s, size_t n) {
  size_t tn = strlen(table_name);
  int c = memcmp(table_name, s, tn < n ? tn : n);
  if (c != 0) return c;
  return (tn > n) - (tn < n);
}

const OpDef *op_get(OpId id) {
  RLY_ASSERT((int)id >= 0 && id < OP_COUNT);
  return &op_table[id];
}

const OpDef *op_lookup(const char *name, size_t len) {
  size_t lo = 0, hi = OP_COUNT;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = name_cmp(op_table[mid].name, name, len);
    if (c == 0) return &op_table[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

/* {==== Suggestions ====} */

enum { SUGGEST_MAX_LEN = 64 };

/* Levenshtein distance of a[0..na) and b[0..nb); both at most
** SUGGEST_MAX_LEN bytes. */
static int edit_distance(const char *a, size_t na, const char *b, size_t nb) {
  int row[SUGGEST_MAX_LEN + 1];
  RLY_ASSERT(na <= SUGGEST_MAX_LEN && nb <= SUGGEST_MAX_LEN);
  for (size_t j = 0; j <= nb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= na; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= nb; j++) {
      int up = row[j];
      int best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[nb];
}

/* How far a misspelling may be from a name to be worth suggesting. */
static int suggest_limit(size_t len) {
  int l = (int)(len / 3);
  return l > 2 ? l : 2;
}

/* Distance of s from name when it is close enough to suggest, else -1. */
static int suggest_distance(const char *name, const char *s, size_t n) {
  size_t tn = strlen(name);
  int limit = suggest_limit(n);
  if (n > SUGGEST_MAX_LEN || tn > SUGGEST_MAX_LEN) return -1;
  if ((tn > n ? tn - n : n - tn) > (size_t)limit) return -1;
  int dist = edit_distance(name, tn, s, n);
  return dist <= limit ? dist : -1;
}

/* The nearest name wins; ties go to the first in table order, so the
** answer is deterministic. */
const OpDef *op_suggest(const char *name, size_t len) {
  const OpDef *best = NULL;
  int best_dist = 0;
  for (int i = 0; i < OP_COUNT; i++) {
    int dist = suggest_distance(op_table[i].name, name, len);
    if (dist >= 0 && (!best || dist < best_dist)) {
      best = &op_table[i];
      best_dist = dist;
    }
  }
  return best;
}

/* The field of cls nearest to name, or NULL. */
static const AttrField *suggest_field(const AttrsClass *cls, const char *name, size_t len) {
  const AttrField *best = NULL;
  int best_dist = 0;
  for (int i = 0; i < cls->nfields; i++) {
    int dist = suggest_distance(cls->fields[i].name, name, len);
    if (dist >= 0 && (!best || dist < best_dist)) {
      best = &cls->fields[i];
      best_dist = dist;
    }
  }
  return best;
}

/* {==== Attrs classes ====} */

const AttrsClass *attrs_class_lookup(const char *name, size_t len) {
  static const char prefix[] = "relay.attrs.";
  size_t np = sizeof prefix - 1;
  if (len > np && memcmp(name, prefix, np) == 0) {
    name += np;
    len -= np;
  }
  /* TVM's C++ struct name for the class whose type key is TopkAttrs. */
  if (name_cmp("TopKAttrs", name, len) == 0) return ATTRS_TopkAttrs;
  for (size_t i = 0; i < RLY_COUNTOF(attrs_classes); i++) {
    if (name_cmp(attrs_classes[i]->name, name, len) == 0) return attrs_classes[i];
  }
  return NULL;
}

int attrs_class_field(const AttrsClass *cls, const char *name, size_t len) {
  for (int i = 0; i < cls->nfields; i++) {
    if (name_cmp(cls->fields[i].name, name, len) == 0) return i;
  }
  return -1;
}

/* {==== Building call attributes ====} */

static bool is_int_like(const AttrValue *v) {
  return v->kind == AV_INT || v->kind == AV_META;  /* meta: IntImm or tir.Var */
}

/* The first item of array v that is not an integer (None allowed when
** none_ok), or NULL when all are. */
static const AttrValue *bad_int_item(const AttrValue *v, bool none_ok) {
  for (int i = 0; i < v->u.arr.n; i++) {
    const AttrValue *item = v->u.arr.items[i];
    if (!is_int_like(item) && !(none_ok && item->kind == AV_NONE)) return item;
  }
  return NULL;
}

static const AttrValue *bad_double_item(const AttrValue *v) {
  for (int i = 0; i < v->u.arr.n; i++) {
    const AttrValue *item = v->u.arr.items[i];
    if (item->kind != AV_FLOAT && !is_int_like(item)) return item;
  }
  return NULL;
}

/* For an array of integer arrays: the offending top-level item, with
** *inner set to the offending integer inside it when the item is an array. */
static const AttrValue *bad_nested_item(const AttrValue *v, const AttrValue **inner) {
  *inner = NULL;
  for (int i = 0; i < v->u.arr.n; i++) {
    const AttrValue *item = v->u.arr.items[i];
    if (item->kind != AV_ARRAY) return item;
    if ((*inner = bad_int_item(item, false)) != NULL) return item;
  }
  return NULL;
}

static AttrValue *int_to_float(Module *m, const AttrValue *v) {
  AttrValue *f = ir_attr_value_new(m, AV_FLOAT, v->span);
  f->u.f.v = (double)v->u.i.v;
  f->u.f.bits = 32;
  return f;
}

/* v made to fit field f (ints to floats for double fields, 0/1 to bools),
** or NULL when it does not fit. New nodes are built for changed values;
** v itself is never modified. */
static AttrValue *conform(Module *m, const AttrField *f, AttrValue *v) {
  if (v->kind == AV_NONE) return (f->nullable || !f->def || f->kind == AK_ANY) ? v : NULL;
  switch (f->kind) {
  case AK_ANY: return v;
  case AK_INT: return is_int_like(v) ? v : NULL;
  case AK_BOOL:
    if (v->kind == AV_BOOL) return v;
    if (v->kind == AV_INT && (v->u.i.v == 0 || v->u.i.v == 1)) {
      AttrValue *b = ir_attr_value_new(m, AV_BOOL, v->span);
      b->u.b = v->u.i.v == 1;
      return b;
    }
    return NULL;
  case AK_DOUBLE:
    if (v->kind == AV_FLOAT || v->kind == AV_META) return v;
    return v->kind == AV_INT ? int_to_float(m, v) : NULL;
  case AK_STR:
  case AK_DTYPE: return v->kind == AV_STR ? v : NULL;
  case AK_INT_OR_INTS:
    if (is_int_like(v)) return v;
    return v->kind == AV_ARRAY && !bad_int_item(v, false) ? v : NULL;
  case AK_INTS: return v->kind == AV_ARRAY && !bad_int_item(v, f->nullable) ? v : NULL;
  case AK_INTS_NESTED: {
    const AttrValue *inner;
    return v->kind == AV_ARRAY && !bad_nested_item(v, &inner) ? v : NULL;
  }
  case AK_DOUBLES: {
    if (v->kind != AV_ARRAY || bad_double_item(v)) return NULL;
    int n = v->u.arr.n, nints = 0;
    for (int i = 0; i < n; i++) nints += v->u.arr.items[i]->kind == AV_INT;
    if (nints == 0) return v;
    AttrValue *a = ir_attr_value_new(m, AV_ARRAY, v->span);
    a->u.arr.n = n;
    a->u.arr.items = ARENA_ARRAY(m->arena, AttrValue *, n);
    for (int i = 0; i < n; i++) {
      AttrValue *item = v->u.arr.items[i];
      a->u.arr.items[i] = item->kind == AV_INT ? int_to_float(m, item) : item;
    }
    return a;
  }
  }
  RLY_UNREACHABLE();
}

const char *attr_value_desc(const AttrValue *v) {
  switch (v->kind) {
  case AV_NONE: return "None";
  case AV_INT: return "an integer";
  case AV_FLOAT: return "a float";
  case AV_BOOL: return "a boolean";
  case AV_STR: return "a string";
  case AV_ARRAY: return "an array";
  case AV_META: return "a metadata object";
  case AV_EXPR: return "an expression";
  }
  RLY_UNREACHABLE();
}

static const char *kind_desc(AttrKind k) {
  switch (k) {
  case AK_INT: return "an integer";
  case AK_BOOL: return "a boolean";
  case AK_DOUBLE: return "a float";
  case AK_STR: return "a string";
  case AK_DTYPE: return "a data type";
  case AK_INTS: return "an array of integers";
  case AK_DOUBLES: return "an array of floats";
  case AK_INTS_NESTED: return "an array of integer arrays";
  case AK_INT_OR_INTS: return "an integer or an array of integers";
  case AK_ANY: return "any value";
  }
  RLY_UNREACHABLE();
}

/* Reports that v does not fit f: names the offending item of an array
** ("found an array containing a string") rather than the array. */
static void report_kind(Diag *d, Span at, const OpDef *op, const AttrField *f,
                        const AttrValue *v) {
  const AttrValue *bad = NULL, *inner = NULL;
  if (v->kind == AV_ARRAY) {
    switch (f->kind) {
    case AK_INTS: bad = bad_int_item(v, f->nullable); break;
    case AK_INT_OR_INTS: bad = bad_int_item(v, false); break;
    case AK_DOUBLES: bad = bad_double_item(v); break;
    case AK_INTS_NESTED: bad = bad_nested_item(v, &inner); break;
    default: break;
    }
  }
  const char *none = f->nullable ? " or None" : "";
  if (inner) {
    diag_error(d, at, "attribute '%s' of %s expects %s%s, found an array containing an array "
               "containing %s", f->name, op->name, kind_desc(f->kind), none, attr_value_desc(inner));
  } else if (bad) {
    diag_error(d, at, "attribute '%s' of %s expects %s%s, found an array containing %s",
               f->name, op->name, kind_desc(f->kind), none, attr_value_desc(bad));
  } else {
    diag_error(d, at, "attribute '%s' of %s expects %s%s, found %s", f->name, op->name,
               kind_desc(f->kind), none, attr_value_desc(v));
  }
}

static void report_unknown(Diag *d, Span at, const OpDef *op, const Symbol *key) {
  const AttrField *near = suggest_field(op->attrs, key->text, key->len);
  if (near) {
    diag_error(d, at, "%s has no attribute '%s'; did you mean '%s'?", op->name, key->text,
               near->name);
  } else {
    diag_error(d, at, "%s has no attribute '%s'", op->name, key->text);
  }
}

Attrs *op_make_attrs(Module *m, const OpDef *op, Symbol **keys, AttrValue **values,
                     const Span *key_spans, int n, Diag *d) {
  const AttrsClass *cls = op->attrs;
  if (!cls) {
    if (n > 0) diag_error(d, key_spans[0], "%s takes no attributes", op->name);
    return NULL;
  }
  RLY_ASSERT(cls->nfields <= 64);
  AttrValue **out = ARENA_ARRAY(m->arena, AttrValue *, cls->nfields);
  uint64_t seen = 0;
  int nerrors = 0;
  for (int i = 0; i < n; i++) {
    int k = attrs_class_field(cls, keys[i]->text, keys[i]->len);
    if (k < 0) {
      report_unknown(d, key_spans[i], op, keys[i]);
      nerrors++;
      continue;
    }
    const AttrField *f = &cls->fields[k];
    if (seen & ((uint64_t)1 << k)) {
      diag_error(d, key_spans[i], "duplicate attribute '%s'", f->name);
      nerrors++;
      continue;
    }
    seen |= (uint64_t)1 << k;
    /* Kind errors point at the value (when it has a location). */
    Span at = values[i]->span.file ? values[i]->span : key_spans[i];
    AttrValue *v = conform(m, f, values[i]);
    if (!v) {
      report_kind(d, at, op, f, values[i]);
      nerrors++;
      continue;
    }
    if (f->kind == AK_DTYPE && v->kind == AV_STR && v->u.str.len > 0) {
      DType dt;
      if (!dtype_parse(v->u.str.s, v->u.str.len, &dt)) {
        diag_error(d, at, "attribute '%s' of %s expects a data type, found \"%.*s\"", f->name,
                   op->name, (int)v->u.str.len, v->u.str.s);
        nerrors++;
        continue;
      }
    }
    out[k] = v;
  }
  if (nerrors) return NULL;
  for (int k = 0; k < cls->nfields; k++) {
    if (!out[k]) out[k] = attr_default_value(m, &cls->fields[k]);
  }
  Attrs *a = ARENA_NEW(m->arena, Attrs);
  a->cls = cls;
  a->n = cls->nfields;
  a->keys = NULL;
  a->values = out;
  return a;
}
