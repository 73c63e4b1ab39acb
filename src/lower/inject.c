/* lower/inject.c: injective chains, the groups FuseOps makes of layout
** operators (reshape, expand_dims, squeeze, nn.batch_flatten, transpose,
** strided_slice, concatenate, nn.pad) mixed with elementwise calls, as one loop
** nest over the result instead of a reference kernel per call.
**
** The loops run over the result's indices in row-major order. The value
** of a node at an index is computed from its operands at the indices the
** operator maps it to: an elementwise call reads its operands at their
** broadcast positions and computes its template of lower.def (the same
** rounding per call as elemwise.c's chains, through ew_put_call); a layout
** operator is no computation, only a new index for its operand (transpose
** permutes it, strided_slice scales and shifts it, a reshape goes through
** the flat position, nn.pad shifts it, clamped in edge mode); concatenate
** picks the operand whose part of the axis holds the index, in an if/else
** chain, and computes that operand's value inside its branch; a constant
** pad is such a branch between the operand and the pad value. A parameter (or a field of a tuple parameter) is
** loaded at its flat position. Each (node, index) is computed once per
** element: later uses in the same scope read its local.
**
** Index expressions other than a loop counter or 0 are named by locals
** (jN), which keeps the text short and lets the C compiler share them.
** The loop nest is a function of its own with restrict pointers, as in
** elemwise.c, with AVX-512 and AVX2 versions for float32; a large result
** is split along its outermost loop over the module's threads, every
** element computed as in one thread. A concatenate read only at the
** result's index (under elementwise calls alone) gets a loop nest per
** field over its part of the axis instead of a branch per element. */
#include <stdlib.h>
#include <string.h>

#include "lower/kernel.h"

enum { INJ_MAX_MEMO = 1024, INJ_NAME = 24, INJ_MAX_PTRS = 64 };

typedef char IdxName[INJ_NAME]; /* a loop counter "i3", "0", or a local "j12" */

typedef struct Memo {
  int node;  /* >= 0 a node; < 0 the parameter -1 - node */
  int field; /* of a tuple parameter, or -1 */
  char key[256];
  char name[INJ_NAME];
} Memo;

typedef struct Inj {
  const Group *g;
  StrBuf *sb; /* the loop body */
  int indent;
  int tmp;    /* the next local's number */
  int nmemo;
  Memo memo[INJ_MAX_MEMO];
  int nptrs;
  int ptr_param[INJ_MAX_PTRS], ptr_field[INJ_MAX_PTRS]; /* the pointers the body reads */
  const char *tmpl[GROUP_MAX_NODES];
  bool bounded[GROUP_MAX_NODES];
  double lo[GROUP_MAX_NODES], hi[GROUP_MAX_NODES];
  bool layout; /* the group has a layout operator (else elemwise.c's) */
} Inj;

static const AttrValue *attr(const Attrs *a, const char *field) {
  if (!a || !a->cls) return NULL;
  int i = attrs_class_field(a->cls, field, strlen(field));
  return i < 0 ? NULL : a->values[i];
}

/* The type of operand a (a node, or the parameter -1 - a) and of field f
** of a tuple parameter. */
static const Type *type_of(const Inj *J, int a, int f) {
  const Type *t = a >= 0 ? J->g->nodes[a].call->type : J->g->fn->u.func.params[-1 - a]->type;
  if (f >= 0) return t && t->kind == TYPE_TUPLE && f < t->u.tuple.n ? t->u.tuple.fields[f] : NULL;
  return t;
}

static bool static_tensor(const Type *t) {
  DClass c;
  return t && lower_static_tensor(t) && lower_dtype_class(t->u.tensor.dtype, &c);
}

/* A local for the index expression e (or e itself when it is a counter or
** a number). */
static bool name_index(Inj *J, const char *e, char *out) {
  bool simple = (e[0] == 'i' || e[0] == 'j') && strspn(e + 1, "0123456789") == strlen(e + 1);
  simple = simple || strspn(e, "0123456789") == strlen(e);
  if (simple) {
    if (strlen(e) >= INJ_NAME) return false;
    strcpy(out, e);
    return true;
  }
  snprintf(out, INJ_NAME, "j%d", J->tmp++);
  sb_printf(J->sb, "%*sconst int64_t %s = %s;\n", J->indent, "", out, e);
  return true;
}

/* The flat position of idx in a row-major tensor of shape s. */
static void put_flat(StrBuf *e, const IdxName *idx, int nd, const int64_t *s) {
  int64_t stride = 1, strides[LOWER_MAX_NDIM];
  for (int d = nd - 1; d >= 0; d--) {
    strides[d] = stride;
    stride *= s[d];
  }
  bool any = false;
  for (int d = 0; d < nd; d++) {
    if (!strcmp(idx[d], "0")) continue;
    if (any) sb_puts(e, " + ");
    if (strides[d] == 1) sb_puts(e, idx[d]);
    else sb_printf(e, "%s * %lld", idx[d], (long long)strides[d]);
    any = true;
  }
  if (!any) sb_putc(e, '0');
}

/* The memo's key of an index: its names joined; false when too long. */
static bool memo_key(char *key, size_t n, const IdxName *idx, int nd) {
  size_t at = 0;
  key[0] = 0;
  for (int d = 0; d < nd; d++) {
    size_t len = strlen(idx[d]);
    if (at + len + 2 > n) return false;
    memcpy(key + at, idx[d], len);
    key[at + len] = ',';
    at += len + 1;
    key[at] = 0;
  }
  return true;
}

static const char *memo_find(const Inj *J, int node, int field, const char *key) {
  for (int k = J->nmemo - 1; k >= 0; k--)
    if (J->memo[k].node == node && J->memo[k].field == field && !strcmp(J->memo[k].key, key)) return J->memo[k].name;
  return NULL;
}

static bool memo_add(Inj *J, int node, int field, const char *key, const char *name) {
  if (J->nmemo == INJ_MAX_MEMO || strlen(key) >= sizeof J->memo[0].key) return false;
  Memo *m = &J->memo[J->nmemo++];
  m->node = node;
  m->field = field;
  strcpy(m->key, key);
  strcpy(m->name, name);
  return true;
}

static bool val(Inj *J, int a, int field, const IdxName *idx, char *out);

/* A parameter (or field of one) at idx: a load. */
static bool load(Inj *J, int param, int field, const IdxName *idx, char *out) {
  const Type *t = type_of(J, -1 - param, field);
  if (!static_tensor(t)) return false;
  int k = 0;
  while (k < J->nptrs && !(J->ptr_param[k] == param && J->ptr_field[k] == field)) k++;
  if (k == J->nptrs) {
    if (k == INJ_MAX_PTRS) return false;
    J->ptr_param[k] = param;
    J->ptr_field[k] = field;
    J->nptrs++;
  }
  StrBuf e = {0};
  put_flat(&e, idx, t->u.tensor.ndim, t->u.tensor.shape);
  const char *ct = ew_value_ctype(t->u.tensor.dtype);
  snprintf(out, INJ_NAME, "v%d", J->tmp++);
  sb_printf(J->sb, "%*sconst %s %s = (%s)q%d[%s];\n", J->indent, "", ct, out, ct, k, sb_str(&e));
  sb_free(&e);
  return true;
}

/* idx of a tensor of shape os through a reshape to the operand's shape is:
** the same indices when the two shapes differ only in dims of 1, else
** unraveled from the flat position. */
static bool reshape_index(Inj *J, const IdxName *idx, const Type *ot, const Type *it, IdxName *in) {
  int no = ot->u.tensor.ndim, ni = it->u.tensor.ndim;
  const int64_t *os = ot->u.tensor.shape, *is = it->u.tensor.shape;
  int d = 0, j = 0;
  bool same = true;
  while (same) { /* the dims that are not 1, pairwise equal */
    while (d < no && os[d] == 1) d++;
    while (j < ni && is[j] == 1) j++;
    if (d == no || j == ni) {
      same = d == no && j == ni;
      break;
    }
    same = os[d++] == is[j++];
  }
  if (same) {
    d = 0;
    for (j = 0; j < ni; j++) {
      if (is[j] == 1) {
        strcpy(in[j], "0");
        continue;
      }
      while (os[d] == 1) d++;
      strcpy(in[j], idx[d++]);
    }
    return true;
  }
  StrBuf e = {0};
  put_flat(&e, idx, no, os);
  char flat[INJ_NAME];
  bool ok = name_index(J, sb_str(&e), flat);
  sb_free(&e);
  if (!ok) return false;
  int64_t stride = 1;
  for (j = ni - 1; j >= 0; j--) {
    char x[96];
    if (is[j] == 1) snprintf(x, sizeof x, "0");
    else if (j == 0 && stride == 1) snprintf(x, sizeof x, "%s", flat);
    else if (j == 0) snprintf(x, sizeof x, "%s / %lld", flat, (long long)stride);
    else if (stride == 1) snprintf(x, sizeof x, "%s %% %lld", flat, (long long)is[j]);
    else snprintf(x, sizeof x, "%s / %lld %% %lld", flat, (long long)stride, (long long)is[j]);
    if (!name_index(J, x, in[j])) return false;
    stride *= is[j];
  }
  return true;
}

/* strided_slice's first index and step per axis, by the reference kernel's
** rules (k_transform.c, slice_axis) for integer begin, end and strides;
** the lengths must be the result's. */
static int64_t canon(int64_t index, int64_t extent, int64_t step) {
  int64_t lo = step < 0 ? -1 : 0, hi = step < 0 ? extent - 1 : extent;
  if (index < 0) index += extent;
  return index < lo ? lo : index > hi ? hi : index;
}

static int ints(const Attrs *at, const char *field, int64_t *out, int max) {
  const AttrValue *v = attr(at, field);
  if (!v || v->kind == AV_NONE) return -1;
  if (v->kind != AV_ARRAY || v->u.arr.n > max) return -2;
  for (int i = 0; i < v->u.arr.n; i++) {
    if (v->u.arr.items[i]->kind != AV_INT) return -2;
    out[i] = v->u.arr.items[i]->u.i.v;
  }
  return v->u.arr.n;
}

static bool slice_dims(const GNode *n, const Type *it, const Type *ot, int64_t *begin, int64_t *step) {
  const Attrs *at = n->call->u.call.attrs;
  int nd = it->u.tensor.ndim;
  int64_t b[LOWER_MAX_NDIM], e[LOWER_MAX_NDIM], s[LOWER_MAX_NDIM], ax[LOWER_MAX_NDIM];
  int nb = ints(at, "begin", b, nd), ne = ints(at, "end", e, nd), ns = ints(at, "strides", s, nd);
  int na = ints(at, "axes", ax, nd);
  const AttrValue *mode = attr(at, "slice_mode");
  bool size_mode = false;
  if (mode && mode->kind == AV_STR) {
    size_mode = mode->u.str.len == 4 && !memcmp(mode->u.str.s, "size", 4);
    if (!size_mode && !(mode->u.str.len == 0 || (mode->u.str.len == 3 && !memcmp(mode->u.str.s, "end", 3))))
      return false;
  } else if (mode && mode->kind != AV_NONE) {
    return false;
  }
  if (nb < 0 || ne < 0 || ns == -2 || na == -2) return false; /* begin and end given, integers */
  if (ns < 0) ns = 0;
  int count = na >= 0 ? na : nd;
  if (nb > count || ne > count || ns > count || (na >= 0 && (nb != na || ne != na || (ns && ns != na))))
    return false;
  for (int d = 0; d < nd; d++) {
    begin[d] = 0;
    step[d] = 1;
  }
  bool seen[LOWER_MAX_NDIM] = {false};
  for (int k = 0; k < count; k++) {
    int64_t axis = k;
    if (na >= 0) {
      axis = ax[k] < 0 ? ax[k] + nd : ax[k];
      if (axis < 0 || axis >= nd || seen[axis]) return false;
      seen[axis] = true;
    }
    int64_t dim = it->u.tensor.shape[axis];
    int64_t stride = k < ns ? s[k] : 1;
    if (stride == 0) return false;
    int64_t st = size_mode ? 1 : stride, bv, ev;
    bv = k < nb ? b[k] : stride > 0 ? 0 : INT64_MAX;
    if (k >= ne) ev = stride < 0 ? 0 : INT64_MAX;
    else if (!size_mode) ev = e[k];
    else if (e[k] < 0) ev = INT64_MAX;
    else ev = bv > INT64_MAX - e[k] ? INT64_MAX : bv + e[k];
    int64_t bb = canon(bv, dim, st), en = canon(ev, dim, st);
    if (st < 0 ? en > bb : bb > en) return false;
    uint64_t interval = (uint64_t)(bb > en ? bb - en : en - bb);
    uint64_t astep = st < 0 ? (uint64_t)0 - (uint64_t)st : (uint64_t)st;
    int64_t len = interval == 0 ? 0 : (int64_t)((interval - 1) / astep + 1);
    if (len != ot->u.tensor.shape[axis]) return false;
    begin[axis] = bb;
    step[axis] = st;
  }
  for (int d = 0; d < nd; d++)
    if (!seen[d] && na >= 0 && it->u.tensor.shape[d] != ot->u.tensor.shape[d]) return false;
  return true;
}

static bool is_reshape(OpId id) {
  return id == OP_RESHAPE || id == OP_EXPAND_DIMS || id == OP_SQUEEZE || id == OP_BATCH_FLATTEN;
}

/* concatenate of fields (operand a a tuple node, or a tuple parameter) at
** idx: an if/else chain on the axis's index, each branch computing its
** field at the index shifted into it. Values a branch computes are local
** to it. */
static bool concat(Inj *J, int i, const IdxName *idx, char *out) {
  const GNode *n = &J->g->nodes[i];
  const Type *ot = n->call->type;
  int nd = ot->u.tensor.ndim, a = n->args[0], nf;
  int64_t axis = lower_attr_int(n->call->u.call.attrs, "axis", 0);
  if (axis < 0) axis += nd;
  if (n->nargs != 1 || axis < 0 || axis >= nd) return false;
  if (a >= 0 && J->g->nodes[a].kind == GN_TUPLE) nf = J->g->nodes[a].nargs;
  else if (a < 0 && type_of(J, a, -1)->kind == TYPE_TUPLE) nf = type_of(J, a, -1)->u.tuple.n;
  else return false;
  int last = -1; /* the last field with elements: the final else */
  for (int k = 0; k < nf; k++) {
    const Type *ft = type_of(J, a >= 0 ? J->g->nodes[a].args[k] : a, a >= 0 ? -1 : k);
    if (!static_tensor(ft) || ft->u.tensor.ndim != nd || !dtype_eq(ft->u.tensor.dtype, ot->u.tensor.dtype)) return false;
    if (ft->u.tensor.shape[axis]) last = k;
  }
  if (last < 0) return false;
  snprintf(out, INJ_NAME, "v%d", J->tmp++);
  sb_printf(J->sb, "%*s%s %s;\n", J->indent, "", ew_value_ctype(ot->u.tensor.dtype), out);
  int64_t at = 0;
  for (int k = 0; k <= last; k++) {
    int fa = a >= 0 ? J->g->nodes[a].args[k] : a, ff = a >= 0 ? -1 : k;
    int64_t len = type_of(J, fa, ff)->u.tensor.shape[axis];
    if (!len) continue;
    if (k < last) sb_printf(J->sb, "%*s%sif (%s < %lld) {\n", J->indent, "", at ? "else " : "", idx[axis],
                              (long long)(at + len));
    else sb_printf(J->sb, "%*s%s{\n", J->indent, "", at ? "else " : "");
    int saved = J->nmemo;
    J->indent += 2;
    IdxName in[LOWER_MAX_NDIM];
    memcpy(in, idx, sizeof in[0] * (size_t)nd);
    char shifted[96], v[INJ_NAME];
    snprintf(shifted, sizeof shifted, "%s - %lld", idx[axis], (long long)at);
    if ((at && !name_index(J, shifted, in[axis])) || !val(J, fa, ff, in, v)) return false;
    sb_printf(J->sb, "%*s%s = %s;\n", J->indent, "", out, v);
    J->indent -= 2;
    J->nmemo = saved;
    sb_printf(J->sb, "%*s}\n", J->indent, "");
    at += len;
  }
  return at == ot->u.tensor.shape[axis];
}

/* nn.pad (constant and edge modes, the reference kernel's rules) at idx:
** the operand at idx - before, clamped into it (edge), or the pad value
** outside it (constant, in a branch as concatenate's). */
static bool pad(Inj *J, int i, const IdxName *idx, char *out) {
  const GNode *n = &J->g->nodes[i];
  const Type *ot = n->call->type, *it = type_of(J, n->args[0], -1), *pt = type_of(J, n->args[1], -1);
  int nd = ot->u.tensor.ndim;
  if (n->nargs != 2 || !static_tensor(it) || it->u.tensor.ndim != nd || !static_tensor(pt) || pt->u.tensor.ndim ||
      !dtype_eq(pt->u.tensor.dtype, it->u.tensor.dtype))
    return false;
  const AttrValue *pw = attr(n->call->u.call.attrs, "pad_width"), *mode = attr(n->call->u.call.attrs, "pad_mode");
  bool edge = false;
  if (mode && mode->kind == AV_STR) {
    edge = mode->u.str.len == 4 && !memcmp(mode->u.str.s, "edge", 4);
    if (!edge && !(mode->u.str.len == 8 && !memcmp(mode->u.str.s, "constant", 8))) return false;
  } else if (mode && mode->kind != AV_NONE) {
    return false;
  }
  if (!pw || pw->kind != AV_ARRAY || pw->u.arr.n != nd) return false;
  IdxName in[LOWER_MAX_NDIM];
  StrBuf cond = {0};
  bool ok = true;
  for (int d = 0; ok && d < nd; d++) {
    const AttrValue *p = pw->u.arr.items[d];
    ok = p->kind == AV_ARRAY && p->u.arr.n == 2 && p->u.arr.items[0]->kind == AV_INT && p->u.arr.items[1]->kind == AV_INT;
    if (!ok) break;
    int64_t before = p->u.arr.items[0]->u.i.v, after = p->u.arr.items[1]->u.i.v, dim = it->u.tensor.shape[d];
    char x[4 * INJ_NAME + 64]; /* three names and two numbers */
    if (!before) snprintf(x, sizeof x, "%s", idx[d]);
    else snprintf(x, sizeof x, "%s - %lld", idx[d], (long long)before);
    ok = name_index(J, x, in[d]);
    if (!ok || (before <= 0 && after <= 0)) continue; /* cropped or kept: always inside */
    if (edge) {
      snprintf(x, sizeof x, "%s < 0 ? 0 : %s > %lld ? %lld : %s", in[d], in[d], (long long)(dim - 1),
               (long long)(dim - 1), in[d]);
      ok = dim > 0 && name_index(J, x, in[d]);
    } else {
      sb_printf(&cond, "%s%s >= 0 && %s < %lld", cond.len ? " && " : "", in[d], in[d], (long long)dim);
    }
  }
  if (ok && !cond.len) ok = val(J, n->args[0], -1, in, out);
  else if (ok) {
    char v[INJ_NAME];
    snprintf(out, INJ_NAME, "v%d", J->tmp++);
    sb_printf(J->sb, "%*s%s %s;\n%*sif (%s) {\n", J->indent, "", ew_value_ctype(ot->u.tensor.dtype), out, J->indent, "",
              sb_str(&cond));
    for (int b = 0; ok && b < 2; b++) {
      int saved = J->nmemo;
      J->indent += 2;
      ok = b ? val(J, n->args[1], -1, in, v) : val(J, n->args[0], -1, in, v);
      if (ok) sb_printf(J->sb, "%*s%s = %s;\n", J->indent, "", out, v);
      J->indent -= 2;
      J->nmemo = saved;
      sb_printf(J->sb, "%*s}%s\n", J->indent, "", b ? "" : " else {");
    }
  }
  sb_free(&cond);
  return ok;
}

/* The value of operand a (field f of a tuple parameter when f >= 0) at
** idx: the name of a local, or of a constant. */
static bool val(Inj *J, int a, int f, const IdxName *idx, char *out) {
  const Group *g = J->g;
  const Type *t = type_of(J, a, f);
  if (!t || t->kind != TYPE_TENSOR) return false;
  int nd = t->u.tensor.ndim;
  char key[256];
  if (!memo_key(key, sizeof key, idx, nd)) return false;
  const char *m = memo_find(J, a, f, key);
  if (m) {
    strcpy(out, m);
    return true;
  }
  bool ok;
  if (a < 0) {
    ok = load(J, -1 - a, f, idx, out);
  } else {
    const GNode *n = &g->nodes[a];
    if (n->kind == GN_PROJ && n->args[0] < 0) return val(J, n->args[0], n->index, idx, out);
    if (n->kind == GN_CONST) {
      const ConstData *c = n->call->u.constant.value;
      if (!static_tensor(t)) return false;
      int64_t numel = 1;
      for (int d = 0; d < nd; d++) numel *= t->u.tensor.shape[d];
      if (numel != 1 || !dtype_eq(c->dtype, t->u.tensor.dtype)) return false;
      snprintf(out, INJ_NAME, "v%d", J->tmp++);
      sb_printf(J->sb, "%*sconst %s %s = ", J->indent, "", ew_value_ctype(c->dtype), out);
      ew_put_const(J->sb, c);
      sb_puts(J->sb, ";\n");
      ok = true;
    } else if (n->kind != GN_CALL || !static_tensor(t)) {
      return false;
    } else {
      OpId id = n->op->id;
      IdxName in[LOWER_MAX_NDIM];
      const Type *it = n->nargs >= 1 ? type_of(J, n->args[0], -1) : NULL;
      bool layout = is_reshape(id) || id == OP_TRANSPOSE || id == OP_STRIDED_SLICE;
      if (layout && (n->nargs != 1 || !static_tensor(it) || !dtype_eq(it->u.tensor.dtype, t->u.tensor.dtype)))
        return false;
      J->layout = J->layout || layout || id == OP_CONCATENATE;
      if (is_reshape(id)) {
        ok = reshape_index(J, idx, t, it, in) && val(J, n->args[0], -1, in, out);
      } else if (id == OP_TRANSPOSE) {
        int64_t axes[LOWER_MAX_NDIM];
        int na = ints(n->call->u.call.attrs, "axes", axes, nd);
        if (na == -2 || (na >= 0 && na != nd) || it->u.tensor.ndim != nd) return false;
        bool used[LOWER_MAX_NDIM] = {false};
        for (int d = 0; d < nd; d++) {
          int64_t x = na < 0 ? nd - 1 - d : axes[d] < 0 ? axes[d] + nd : axes[d];
          if (x < 0 || x >= nd || used[x]) return false;
          used[x] = true;
          strcpy(in[x], idx[d]);
        }
        ok = val(J, n->args[0], -1, in, out);
      } else if (id == OP_STRIDED_SLICE) {
        int64_t begin[LOWER_MAX_NDIM], step[LOWER_MAX_NDIM];
        if (it->u.tensor.ndim != nd || !slice_dims(n, it, t, begin, step)) return false;
        ok = true;
        for (int d = 0; ok && d < nd; d++) {
          char x[96];
          if (begin[d] == 0 && step[d] == 1) snprintf(x, sizeof x, "%s", idx[d]);
          else if (!strcmp(idx[d], "0")) snprintf(x, sizeof x, "%lld", (long long)begin[d]);
          else snprintf(x, sizeof x, "%lld + %lld * %s", (long long)begin[d], (long long)step[d], idx[d]);
          ok = name_index(J, x, in[d]);
        }
        ok = ok && val(J, n->args[0], -1, in, out);
      } else if (id == OP_CONCATENATE) {
        ok = concat(J, a, idx, out);
      } else if (id == OP_PAD) {
        J->layout = true;
        ok = pad(J, a, idx, out);
      } else {
        /* an elementwise call: operands at their broadcast positions */
        if (!J->tmpl[a] && !ew_call_template(g, a, &J->tmpl[a], &J->bounded[a], &J->lo[a], &J->hi[a])) return false;
        char names[GROUP_MAX_ARGS][INJ_NAME], lo[48], hi[48];
        const char *ops[GROUP_MAX_ARGS];
        for (int j = 0; j < n->nargs; j++) {
          const Type *jt = type_of(J, n->args[j], -1);
          if (!jt || jt->kind != TYPE_TENSOR) return false;
          int jn = jt->u.tensor.ndim;
          if (id == OP_BIAS_ADD && j == 1) { /* [C] along the axis */
            int64_t ax = lower_attr_int(n->call->u.call.attrs, "axis", 1);
            if (ax < 0) ax += nd;
            if (jn != 1 || ax < 0 || ax >= nd) return false;
            strcpy(in[0], jt->u.tensor.shape[0] == 1 ? "0" : idx[ax]);
          } else {
            if (jn > nd) return false;
            for (int d = 0; d < jn; d++) strcpy(in[d], jt->u.tensor.shape[d] == 1 ? "0" : idx[nd - jn + d]);
          }
          if (!val(J, n->args[j], -1, in, names[j])) return false;
          ops[j] = names[j];
        }
        if (J->bounded[a]) { /* the bounds as constants of the operand's dtype */
          DType dt = type_of(J, n->args[0], -1)->u.tensor.dtype;
          for (int b = 0; b < 2; b++) {
            char nm[INJ_NAME];
            snprintf(nm, sizeof nm, "b%d", J->tmp++);
            StrBuf bt = {0};
            lower_put_bound(&bt, nm, dt, b ? J->hi[a] : J->lo[a]);
            /* lower_put_bound declares at indent 2: re-indent, float32 kept as float */
            const char *text = sb_str(&bt), *dbl = "  const double ";
            sb_printf(J->sb, "%*s", J->indent - 2, "");
            if (dt.code == DT_FLOAT && dt.bits == 32 && !strncmp(text, dbl, strlen(dbl)))
              sb_printf(J->sb, "  const float %s", text + strlen(dbl));
            else sb_puts(J->sb, text);
            sb_free(&bt);
            strcpy(b ? hi : lo, nm);
          }
        } else {
          strcpy(lo, "0");
          strcpy(hi, "0");
        }
        snprintf(out, INJ_NAME, "v%d", J->tmp++);
        sb_printf(J->sb, "%*sconst %s %s = ", J->indent, "", ew_value_ctype(t->u.tensor.dtype), out);
        ew_put_call(J->sb, g, a, J->tmpl[a], ops, lo, hi);
        sb_puts(J->sb, ";\n");
        ok = true;
      }
    }
  }
  return ok && memo_add(J, a, f, key, out);
}

/* The parameter list of the loop function (params) or its arguments. */
static void put_ptrs(StrBuf *sb, const Inj *J, bool params) {
  for (int k = 0; k < J->nptrs; k++) {
    const Type *t = type_of(J, -1 - J->ptr_param[k], J->ptr_field[k]);
    const char *ct = lower_elem_ctype(t->u.tensor.dtype);
    if (params) sb_printf(sb, ", const %s *restrict q%d", ct, k);
    else if (J->ptr_field[k] >= 0)
      sb_printf(sb, ", (const %s *)RLYRT_AS_TENSOR(RLYRT_AS_TUPLE(args[%d])->fields[%d])->dl.data", ct,
                J->ptr_param[k], J->ptr_field[k]);
    else sb_printf(sb, ", (const %s *)RLYRT_AS_TENSOR(args[%d])->dl.data", ct, J->ptr_param[k]);
  }
}

static void put_ops(StrBuf *sb, const Group *g) {
  bool first = true;
  for (int i = 0; i < g->nnodes; i++) {
    if (!g->nodes[i].live || g->nodes[i].kind != GN_CALL) continue;
    sb_printf(sb, "%s%s", first ? "" : ", ", g->nodes[i].op->name);
    first = false;
  }
}

/* The concatenate whose value every use reads at the result's index: the
** group's only concatenate, of the result's shape, and every node that
** depends on it an elementwise call of the result's shape (so each reads
** it at its own index). Its fields then get loop nests of their own over
** their part of the axis, without a branch per element. -1: none. */
static int split_concat(const Group *g, const Type *res) {
  int c = -1;
  for (int i = 0; i < g->nnodes; i++) {
    const GNode *n = &g->nodes[i];
    if (!n->live || n->kind != GN_CALL || n->op->id != OP_CONCATENATE) continue;
    if (c >= 0) return -1;
    c = i;
  }
  if (c < 0 || !ir_type_equal(g->nodes[c].call->type, res)) return -1;
  bool dep[GROUP_MAX_NODES] = {false};
  dep[c] = true;
  for (int i = c + 1; i < g->nnodes; i++) {
    const GNode *n = &g->nodes[i];
    if (!n->live) continue;
    for (int j = 0; j < n->nargs; j++) dep[i] = dep[i] || (n->args[j] >= 0 && dep[n->args[j]]);
    if (!dep[i]) continue;
    if (n->kind != GN_CALL || n->op->id == OP_BIAS_ADD || !lower_find_row(n->op->id) ||
        !ir_type_equal(n->call->type, res))
      return -1;
  }
  return c;
}

/* Whether the word w occurs in s other than at skip. */
static bool word_used(const char *s, const char *w, const char *skip) {
  size_t n = strlen(w);
  for (const char *p = strstr(s, w); p; p = strstr(p + 1, w)) {
    bool start = p == s || !((p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= '0' && p[-1] <= '9') || p[-1] == '_');
    bool end = !((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9') || p[n] == '_');
    if (start && end && p != skip) return true;
  }
  return false;
}

/* Drops the index locals (`const int64_t jN = ...;` lines) nothing reads
** (an index a broadcast operand ignores), last first, so that a local read
** only by dropped ones goes too: the C compiler would warn. */
static void drop_unused(StrBuf *body) {
  const char *decl = "const int64_t j";
  for (;;) {
    char *last = NULL, *line = NULL;
    for (char *p = strstr(body->data, decl); p; p = strstr(p + 1, decl)) {
      char name[INJ_NAME];
      size_t len = strspn(p + strlen(decl), "0123456789");
      if (len + 2 > sizeof name) continue;
      snprintf(name, sizeof name, "j%.*s", (int)len, p + strlen(decl));
      if (!word_used(body->data, name, p + strlen(decl) - 1)) last = p;
    }
    if (!last) return;
    line = last;
    while (line > body->data && line[-1] != '\n') line--;
    char *eol = strchr(last, '\n');
    size_t cut = (size_t)(eol + 1 - line);
    memmove(line, eol + 1, body->len - (size_t)(eol + 1 - body->data) + 1);
    body->len -= cut;
  }
}

/* One loop nest over the result (indices idx), its body computing the
** result at idx; over [from, to) of dim `axis` only when axis >= 0; the
** outermost dim over [lo, hi) too when par (threads). */
static bool put_nest(StrBuf *sb, Inj *J, const Type *res, const IdxName *idx, int outer, bool par, int axis,
                     int64_t from, int64_t to, int concat, int field, int64_t shift) {
  int nd = res->u.tensor.ndim;
  const int64_t *rs = res->u.tensor.shape;
  StrBuf body = {0};
  J->sb = &body;
  J->nmemo = 0;
  J->indent = 4 + 2 * nd;
  char v[INJ_NAME];
  bool ok = true;
  if (concat >= 0) { /* the concatenate's value: its field's at the index shifted into it */
    const GNode *n = &J->g->nodes[concat];
    int a = n->args[0];
    int fa = a >= 0 ? J->g->nodes[a].args[field] : a, ff = a >= 0 ? -1 : field;
    IdxName in[LOWER_MAX_NDIM];
    memcpy(in, idx, sizeof in[0] * (size_t)nd);
    char shifted[96], key[256];
    snprintf(shifted, sizeof shifted, "%s - %lld", idx[axis], (long long)shift);
    ok = (!shift || name_index(J, shifted, in[axis])) && val(J, fa, ff, in, v) && memo_key(key, sizeof key, idx, nd) &&
         memo_add(J, concat, -1, key, v);
  }
  ok = ok && val(J, J->g->nnodes - 1, -1, idx, v);
  if (ok) {
    drop_unused(&body);
    StrBuf flat = {0};
    put_flat(&flat, idx, nd, rs);
    sb_printf(&body, "%*so[%s] = (%s)%s;\n", J->indent, "", sb_str(&flat), lower_elem_ctype(res->u.tensor.dtype), v);
    sb_free(&flat);
    sb_puts(sb, "  {\n");
    for (int d = 0; d < nd; d++) {
      if (rs[d] == 1) continue;
      char lo[64], hi[64];
      snprintf(lo, sizeof lo, "%lld", (long long)(d == axis ? from : 0));
      snprintf(hi, sizeof hi, "%lld", (long long)(d == axis ? to : rs[d]));
      if (par && d == outer && d == axis) {
        snprintf(lo, sizeof lo, "(lo > %lld ? lo : %lld)", (long long)from, (long long)from);
        snprintf(hi, sizeof hi, "(hi < %lld ? hi : %lld)", (long long)to, (long long)to);
      } else if (par && d == outer) {
        strcpy(lo, "lo");
        strcpy(hi, "hi");
      }
      sb_printf(sb, "%*sfor (int64_t i%d = %s; i%d < %s; i%d++)\n", 4 + 2 * d, "", d, lo, d, hi, d);
    }
    sb_printf(sb, "%*s{\n%s%*s}\n  }\n", J->indent - 2, "", sb_str(&body), J->indent - 2, "");
  }
  sb_free(&body);
  return ok;
}

bool inj_lower(StrBuf *sb, const char *name, const Group *g, const char *where) {
  const Type *res = g->nodes[g->nnodes - 1].call->type;
  if (!static_tensor(res)) return false;
  /* a chain of reshapes alone is select.c's copy */
  bool all_reshape = true;
  for (int i = 0; i < g->nnodes; i++)
    if (g->nodes[i].live && g->nodes[i].kind == GN_CALL && !is_reshape(g->nodes[i].op->id)) all_reshape = false;
  if (all_reshape) return false;
  Inj *J = rly_xcalloc(1, sizeof *J);
  J->g = g;
  int nd = res->u.tensor.ndim;
  const int64_t *rs = res->u.tensor.shape;
  int64_t numel = 1;
  for (int d = 0; d < nd; d++) numel *= rs[d];
  IdxName idx[LOWER_MAX_NDIM];
  for (int d = 0; d < nd; d++) {
    if (rs[d] == 1) strcpy(idx[d], "0");
    else snprintf(idx[d], INJ_NAME, "i%d", d);
  }
  const char *ot = lower_elem_ctype(res->u.tensor.dtype);
  /* the outermost loop of more than one index, split over threads when large */
  int outer = 0;
  while (outer < nd && rs[outer] == 1) outer++;
  bool par = numel && outer < nd && lower_par_worth((double)numel, LOWER_PAR_MIN_ELEMS);
  /* the nests: one, or one per field of a concatenate read at the result's index */
  StrBuf nests = {0};
  int c = split_concat(g, res), nf = 1, axis = -1;
  if (c >= 0) {
    int a = g->nodes[c].args[0];
    const Type *tt = type_of(J, a, -1);
    nf = a >= 0 && g->nodes[a].kind == GN_TUPLE ? g->nodes[a].nargs : tt && tt->kind == TYPE_TUPLE ? tt->u.tuple.n : 0;
    axis = (int)lower_attr_int(g->nodes[c].call->u.call.attrs, "axis", 0);
    if (axis < 0) axis += nd;
    if (nf < 1 || axis < 0 || axis >= nd) c = -1;
  }
  bool ok = true;
  int64_t at = 0;
  for (int k = 0; ok && k < nf; k++) {
    if (c < 0) {
      ok = put_nest(&nests, J, res, idx, outer, par, -1, 0, 0, -1, 0, 0);
      break;
    }
    int a = g->nodes[c].args[0];
    const Type *ft = type_of(J, a >= 0 ? g->nodes[a].args[k] : a, a >= 0 ? -1 : k);
    ok = static_tensor(ft) && ft->u.tensor.ndim == nd && dtype_eq(ft->u.tensor.dtype, res->u.tensor.dtype);
    int64_t len = ok ? ft->u.tensor.shape[axis] : 0;
    if (ok && len) ok = put_nest(&nests, J, res, idx, outer, par, axis, at, at + len, c, k, at);
    at += len;
  }
  ok = ok && (c < 0 || at == rs[axis]) && (J->layout || c >= 0);
  if (!ok) {
    sb_free(&nests);
    free(J);
    return false;
  }
  sb_puts(sb, "/* ");
  put_ops(sb, g);
  sb_printf(sb, ": injective chain, %d loops%s */\n", nd, c >= 0 ? " per field of the concatenate" : "");
  /* float32 results of 16 elements or more: AVX-512 and AVX2 versions of
  ** the loops too, picked at run time (elemwise.c's rule; the same
  ** operations, so the same bits) */
  DType rt = res->u.tensor.dtype;
  bool versions = numel >= 16 && rt.code == DT_FLOAT && rt.bits == 32 && rt.lanes == 1;
  if (versions) lower_put_isa_preamble(sb);
  if (par) lower_put_threads_preamble(sb);
  for (int i = 0; numel && i < (versions ? lower_isa_count() : 1); i++) {
    if (versions) {
      lower_put_isa_if(sb, i);
      if (lower_isa_target(i)) sb_printf(sb, "__attribute__((target(\"%s\"))) ", lower_isa_target(i));
      sb_printf(sb, "static void %s_loop_%s(%s *restrict o", name, lower_isa_suffix(i), ot);
    } else {
      sb_printf(sb, "static void %s_loop(%s *restrict o", name, ot);
    }
    put_ptrs(sb, J, true);
    sb_puts(sb, par ? ", int64_t lo, int64_t hi) {\n" : ") {\n");
    sb_puts(sb, sb_str(&nests));
    sb_puts(sb, "}\n");
    if (versions) sb_puts(sb, "#endif\n");
  }
  sb_free(&nests);
  StrBuf call = {0};
  if (numel) {
    StrBuf cargs = {0}, fn = {0};
    sb_puts(&cargs, "o");
    put_ptrs(&cargs, J, false);
    if (par) sb_puts(&cargs, ", lo, hi");
    sb_printf(&fn, "%s_loop", name);
    if (versions) lower_put_isa_call(&call, sb_str(&fn), sb_str(&cargs));
    else sb_printf(&call, "  %s(%s);\n", sb_str(&fn), sb_str(&cargs));
    sb_free(&cargs);
    sb_free(&fn);
  }
  if (par) {
    sb_printf(sb, "typedef struct %s_job {\n  rlyrt_object *const *args;\n  %s *o;\n  int64_t step;\n} %s_job;\n", name,
              ot, name);
    sb_printf(sb, "static void %s_part(void *ctx, int64_t i, int32_t slot) {\n", name);
    sb_printf(sb, "  const %s_job *J = (const %s_job *)ctx;\n  rlyrt_object *const *args = J->args;\n", name, name);
    sb_printf(sb, "  %s *o = J->o;\n  const int64_t lo = i * J->step, hi = lo + J->step < %lld ? lo + J->step : %lld;\n",
              ot, (long long)rs[outer], (long long)rs[outer]);
    sb_printf(sb, "  (void)slot;\n%s", sb_str(&call));
    sb_puts(sb, "}\n");
  }
  sb_printf(sb, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n", name);
  if (nd) {
    sb_printf(sb, "  static const int64_t shape[%d] = {", nd);
    for (int d = 0; d < nd; d++) sb_printf(sb, "%s%lld", d ? ", " : "", (long long)rs[d]);
    sb_puts(sb, "};\n");
  }
  sb_printf(sb,
            "  rlyrt_tensor *t = *out ? RLYRT_AS_TENSOR(*out) : rlyrt_tensor_new((DLDataType){%s, %d, 1}, %d, %s, "
            "false);\n",
            lower_dl_code(rt), dtype_is_bool(rt) ? 1 : rt.bits, nd, nd ? "shape" : "NULL");
  sb_puts(sb, "  if (!t) return rlyrt_error_at(RLYRT_E_NOMEM, ");
  lower_put_cstring(sb, where ? where : "");
  sb_puts(sb, ");\n");
  if (!numel) {
    sb_puts(sb, "  (void)args;\n");
  } else {
    sb_printf(sb, "  %s *o = (%s *)t->dl.data;\n", ot, ot);
    if (par) {
      sb_puts(sb, "  const int32_t nt = RLYRT_KERNEL_THREADS;\n  if (nt > 1) {\n");
      sb_printf(sb, "    const int64_t step = (%lld + 4 * nt - 1) / (4 * nt);\n", (long long)rs[outer]);
      sb_printf(sb, "    %s_job J = {args, o, step};\n", name);
      sb_printf(sb, "    rlyrt_parallel_for(nt, (%lld + step - 1) / step, %s_part, &J);\n", (long long)rs[outer], name);
      sb_printf(sb, "  } else {\n    const int64_t lo = 0, hi = %lld;\n%s  }\n", (long long)rs[outer], sb_str(&call));
    } else {
      sb_puts(sb, sb_str(&call));
    }
  }
  sb_free(&call);
  sb_puts(sb, "  *out = &t->obj;\n  return RLYRT_OK;\n}\n");
  free(J);
  return true;
}
