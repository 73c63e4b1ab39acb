/* test_ops.c: the operator table (ops.def), the attribute schemas
** (attrs.def), lookups and suggestions, default values, and the checking
** and normalisation done by op_make_attrs. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "ops/ops.h"

static const OpDef *lookup(const char *name) { return op_lookup(name, strlen(name)); }

static const char *suggest(const char *name) {
  const OpDef *op = op_suggest(name, strlen(name));
  return op ? op->name : NULL;
}

static void test_table(void) {
  for (int i = 0; i < OP_COUNT; i++) {
    const OpDef *op = op_get((OpId)i);
    CHECK_EQ(op->id, i);
    CHECK(op->nargs >= 0 && op->nargs <= 5);
    /* op_lookup binary-searches ops.def: rows must be in strcmp order. */
    if (i > 0) CHECK(strcmp(op_get((OpId)(i - 1))->name, op->name) < 0);
    CHECK(lookup(op->name) == op);
  }
  CHECK(OP_COUNT > 150);
  CHECK_STR(op_get(OP_ADD)->name, "add");
  CHECK_STR(op_get(OP_CONV2D)->name, "nn.conv2d");
  CHECK_STR(op_get(OP_DYN_PAD)->name, "dyn.nn.pad");
}

static void test_lookup(void) {
  static const char *const names[] = {
      "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "floor_divide",
      "floor_mod", "mod", "trunc_divide", "trunc_mod", "equal", "not_equal", "less",
      "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
      "logical_not", "where", "exp", "log", "log2", "sqrt", "rsqrt", "sigmoid", "tanh", "erf",
      "negative", "abs", "floor", "ceil", "round", "trunc", "sign", "sin", "cos", "tan", "atan",
      "copy", "fast_exp", "fast_tanh", "fast_erf", "isnan", "isinf", "isfinite", "nn.relu",
      "nn.leaky_relu", "nn.prelu", "clip", "cast", "cast_like", "zeros_like", "ones_like",
      "full_like", "nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv1d_transpose",
      "nn.conv2d_transpose", "nn.conv3d_transpose", "nn.dense", "nn.matmul", "nn.batch_matmul",
      "nn.bias_add", "nn.batch_norm", "nn.layer_norm", "nn.group_norm", "nn.instance_norm",
      "nn.l2_normalize", "nn.lrn", "nn.softmax", "nn.log_softmax", "nn.fast_softmax",
      "nn.dropout", "nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d", "nn.avg_pool1d",
      "nn.avg_pool2d", "nn.avg_pool3d", "nn.global_avg_pool2d", "nn.global_max_pool2d",
      "nn.adaptive_avg_pool1d", "nn.adaptive_avg_pool2d", "nn.adaptive_avg_pool3d",
      "nn.adaptive_max_pool1d", "nn.adaptive_max_pool2d", "nn.adaptive_max_pool3d", "nn.pad",
      "nn.batch_flatten", "nn.upsampling", "image.resize2d", "nn.depth_to_space",
      "nn.space_to_depth", "reshape", "reshape_like", "transpose", "squeeze", "expand_dims",
      "concatenate", "stack", "split", "strided_slice", "take", "gather", "gather_nd",
      "broadcast_to", "tile", "repeat", "reverse", "layout_transform", "one_hot", "full",
      "zeros", "ones", "arange", "shape_of", "cumsum", "cumprod", "einsum", "sum", "mean", "max",
      "min", "prod", "all", "any", "argmax", "argmin", "variance", "topk", "argsort", "sort",
      "annotation.stop_fusion", "on_device", "device_copy", "dyn.reshape", "dyn.strided_slice",
      "dyn.broadcast_to", "dyn.full", "dyn.zeros", "dyn.ones", "dyn.nn.pad",
      "dyn.image.resize2d", "dyn.tile", "dyn.topk", "dyn.squeeze", "dyn.expand_dims",
      "dyn.one_hot", "dyn.nn.upsampling", "collapse_sum_like", "scatter_elements", "scatter_nd",
      "nn.dilate", "unique", "fixed_point_multiply",
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const OpDef *op = lookup(names[i]);
    CHECK(op != NULL);
    if (op) CHECK_STR(op->name, names[i]);
    else fprintf(stderr, "  missing op: %s\n", names[i]);
  }
  /* The name is a (pointer, length) pair, not NUL-terminated. */
  CHECK(op_lookup("nn.conv2d_transpose", 9) == op_get(OP_CONV2D));
  CHECK(op_lookup("addx", 3) == op_get(OP_ADD));
  CHECK(lookup("") == NULL);
  CHECK(lookup("nn.conv") == NULL);
  CHECK(lookup("conv2d") == NULL);
  CHECK(lookup("Add") == NULL);
  CHECK(lookup("nn.relu6") == NULL);
  CHECK(lookup("zzz") == NULL);
  CHECK(lookup("a") == NULL);

  /* Arities: tuple arguments count as one, dyn ops take shape operands. */
  CHECK_EQ(lookup("concatenate")->nargs, 1);
  CHECK_EQ(lookup("stack")->nargs, 1);
  CHECK_EQ(lookup("einsum")->nargs, 1);
  CHECK_EQ(lookup("nn.batch_norm")->nargs, 5);
  CHECK_EQ(lookup("full")->nargs, 1);
  CHECK_EQ(lookup("zeros")->nargs, 0);
  CHECK_EQ(lookup("ones")->nargs, 0);
  CHECK_EQ(lookup("arange")->nargs, 3);
  CHECK_EQ(lookup("where")->nargs, 3);
  CHECK_EQ(lookup("one_hot")->nargs, 3);
  CHECK_EQ(lookup("nn.pad")->nargs, 2);
  CHECK_EQ(lookup("dyn.reshape")->nargs, 2);
  CHECK_EQ(lookup("dyn.strided_slice")->nargs, 4);
  CHECK_EQ(lookup("dyn.nn.pad")->nargs, 3);
  CHECK_EQ(lookup("dyn.one_hot")->nargs, 4);
  CHECK_EQ(lookup("exp")->nargs, 1);
  CHECK_EQ(lookup("add")->nargs, 2);

  /* Patterns. */
  CHECK_EQ(lookup("add")->pattern, OPP_BROADCAST);
  CHECK_EQ(lookup("exp")->pattern, OPP_ELEMWISE);
  CHECK_EQ(lookup("nn.relu")->pattern, OPP_ELEMWISE);
  CHECK_EQ(lookup("nn.conv2d")->pattern, OPP_OUT_EWISE_FUSABLE);
  CHECK_EQ(lookup("nn.dense")->pattern, OPP_OUT_EWISE_FUSABLE);
  CHECK_EQ(lookup("nn.softmax")->pattern, OPP_OUT_EWISE_FUSABLE);
  CHECK_EQ(lookup("sum")->pattern, OPP_COMM_REDUCE);
  CHECK_EQ(lookup("argmax")->pattern, OPP_COMM_REDUCE);
  CHECK_EQ(lookup("reshape")->pattern, OPP_INJECTIVE);
  CHECK_EQ(lookup("expand_dims")->pattern, OPP_BROADCAST);
  CHECK_EQ(lookup("nn.dropout")->pattern, OPP_OPAQUE);
  CHECK_EQ(lookup("nn.layer_norm")->pattern, OPP_OPAQUE);
  CHECK_EQ(lookup("shape_of")->pattern, OPP_OPAQUE);
  CHECK_EQ(lookup("full")->pattern, OPP_ELEMWISE);
}

static void test_suggest(void) {
  CHECK_STR(suggest("nn.conv2 "), "nn.conv2d");
  CHECK_STR(suggest("nn.conv2"), "nn.conv2d");
  CHECK_STR(suggest("ad"), "add");
  CHECK_STR(suggest("nn.relux"), "nn.relu");
  CHECK_STR(suggest("resahpe"), "reshape");
  CHECK_STR(suggest("nn.batchnorm"), "nn.batch_norm");
  CHECK_STR(suggest("nn.global_avg_pool"), "nn.global_avg_pool2d");
  CHECK_STR(suggest("concatenat"), "concatenate");
  CHECK(suggest("qwertyuiopasdf") == NULL);
  CHECK(suggest("completely_unrelated_name") == NULL);
  /* Long inputs must not overflow the distance table. */
  char longname[300];
  memset(longname, 'x', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  CHECK(suggest(longname) == NULL);
}

static void test_classes(void) {
  const AttrsClass *conv = attrs_class_lookup("Conv2DAttrs", 11);
  CHECK(conv != NULL);
  CHECK(conv == lookup("nn.conv2d")->attrs);
  CHECK(attrs_class_lookup("relay.attrs.Conv2DAttrs", 23) == conv);
  CHECK(attrs_class_lookup("relay.attrs.Conv2DAttrsX", 23) == conv);
  CHECK(attrs_class_lookup("relay.attrs.TopkAttrs", 21) == lookup("topk")->attrs);
  CHECK(attrs_class_lookup("TopKAttrs", 9) == lookup("topk")->attrs);
  CHECK(attrs_class_lookup("ScanopAttrs", 11) == lookup("cumsum")->attrs);
  CHECK(attrs_class_lookup("NoSuchAttrs", 11) == NULL);
  CHECK(attrs_class_lookup("relay.attrs.", 12) == NULL);
  CHECK(attrs_class_lookup("", 0) == NULL);
  CHECK(lookup("add")->attrs == NULL);

  /* Ops that share a class in TVM share one AttrsClass. */
  CHECK(lookup("sum")->attrs == lookup("mean")->attrs);
  CHECK(lookup("sum")->attrs == lookup("any")->attrs);
  CHECK(lookup("argmax")->attrs == lookup("argmin")->attrs);
  CHECK(lookup("argmax")->attrs != lookup("sum")->attrs);
  CHECK(lookup("nn.softmax")->attrs == lookup("nn.log_softmax")->attrs);
  CHECK(lookup("cumsum")->attrs == lookup("cumprod")->attrs);
  CHECK(lookup("full")->attrs == lookup("zeros")->attrs);
  CHECK(lookup("reshape")->attrs == lookup("dyn.reshape")->attrs);
  CHECK(lookup("argsort")->attrs == lookup("sort")->attrs);
  CHECK_STR(lookup("sum")->attrs->name, "ReduceAttrs");
  CHECK_STR(lookup("nn.max_pool2d")->attrs->name, "MaxPool2DAttrs");

  /* Fields in TVM's declaration order. */
  CHECK_EQ(attrs_class_field(conv, "strides", 7), 0);
  CHECK_EQ(attrs_class_field(conv, "kernel_layout", 13), 7);
  CHECK_EQ(attrs_class_field(conv, "out_dtype", 9), 9);
  CHECK_EQ(attrs_class_field(conv, "foo", 3), -1);
  CHECK_EQ(attrs_class_field(conv, "stride", 6), -1);
  CHECK_EQ(conv->nfields, 10);
  const AttrsClass *pool = lookup("nn.max_pool2d")->attrs;
  CHECK_EQ(attrs_class_field(pool, "dilation", 8), 2);
  CHECK_EQ(attrs_class_field(pool, "padding", 7), 3);
}

/* Every field's default reads back, equals itself, and passes op_make_attrs
** when written out explicitly. */
static void test_defaults_all(void) {
  Module *m = module_new();
  int nfields = 0;
  for (int i = 0; i < OP_COUNT; i++) {
    const OpDef *op = op_get((OpId)i);
    const AttrsClass *cls = op->attrs;
    if (!cls) continue;
    CHECK(cls->nfields > 0);
    CHECK(attrs_class_lookup(cls->name, strlen(cls->name)) == cls);
    for (int k = 0; k < cls->nfields; k++) {
      const AttrField *f = &cls->fields[k];
      AttrValue *v = attr_default_value(m, f);
      CHECK(v != NULL);
      nfields++;
      if (!f->def) {
        CHECK_EQ(v->kind, AV_NONE);
        CHECK(!attr_is_default(f, v));
        continue;
      }
      CHECK(attr_is_default(f, v));
      if (!attr_is_default(f, v)) fprintf(stderr, "  %s.%s\n", cls->name, f->name);
      CHECK_EQ(attrs_class_field(cls, f->name, strlen(f->name)), k);
      Diag d;
      diag_init(&d, NULL);
      Symbol *key = sym_intern_cstr(&m->syms, f->name);
      Span sp = {1, 1, 1, 1};
      Attrs *a = op_make_attrs(m, op, &key, &v, &sp, 1, &d);
      CHECK(a != NULL);
      CHECK_EQ(diag_count(&d), 0);
      if (a) {
        CHECK(a->cls == cls);
        CHECK_EQ(a->n, cls->nfields);
        CHECK(a->keys == NULL);
        for (int j = 0; j < a->n; j++) {
          CHECK(a->values[j] != NULL);
          if (cls->fields[j].def) CHECK(attr_is_default(&cls->fields[j], a->values[j]));
        }
      }
      diag_free(&d);
    }
  }
  CHECK(nfields > 300);
  module_free(m);
}

static AttrValue *val_int(Module *m, int64_t x) {
  AttrValue *v = ir_attr_value_new(m, AV_INT, (Span){1, 1, 20, 1});
  v->u.i.v = x;
  v->u.i.bits = 32;
  return v;
}

static AttrValue *val_float(Module *m, double x) {
  AttrValue *v = ir_attr_value_new(m, AV_FLOAT, (Span){1, 1, 20, 2});
  v->u.f.v = x;
  v->u.f.bits = 32;
  return v;
}

static AttrValue *val_str(Module *m, const char *s) {
  AttrValue *v = ir_attr_value_new(m, AV_STR, (Span){1, 1, 20, 3});
  v->u.str.s = s;
  v->u.str.len = strlen(s);
  return v;
}

static AttrValue *val_none(Module *m) { return ir_attr_value_new(m, AV_NONE, (Span){1, 1, 20, 4}); }

static AttrValue *val_bool(Module *m, bool b) {
  AttrValue *v = ir_attr_value_new(m, AV_BOOL, (Span){1, 1, 20, 4});
  v->u.b = b;
  return v;
}

static AttrValue *val_array(Module *m, int n, AttrValue **items) {
  AttrValue *v = ir_attr_value_new(m, AV_ARRAY, (Span){1, 1, 20, 5});
  v->u.arr.n = n;
  v->u.arr.items = arena_dup(m->arena, items, sizeof(AttrValue *) * (size_t)n);
  return v;
}

static AttrValue *val_ints2(Module *m, int64_t a, int64_t b) {
  AttrValue *items[2] = {val_int(m, a), val_int(m, b)};
  return val_array(m, 2, items);
}

/* Builds the attrs of a call of op with keys/values; the key of pair i is at
** column i + 1. Returns NULL on error, with the messages in d. */
static Attrs *make(Module *m, const char *opname, int n, const char *const *keys,
                   AttrValue **values, Diag *d) {
  Symbol *syms[8];
  Span spans[8];
  for (int i = 0; i < n; i++) {
    syms[i] = sym_intern_cstr(&m->syms, keys[i]);
    spans[i] = (Span){1, 1, (uint32_t)i + 1, (uint32_t)strlen(keys[i])};
  }
  const OpDef *op = lookup(opname);
  RLY_ASSERT(op != NULL);
  return op_make_attrs(m, op, syms, values, spans, n, d);
}

static const char *first_msg(const Diag *d) { return d->items.len ? d->items.data[0].msg : NULL; }

static int field(const Attrs *a, const char *name) {
  return attrs_class_field(a->cls, name, strlen(name));
}

static void test_make_ok(void) {
  Module *m = module_new();
  Diag d;
  diag_init(&d, NULL);

  /* nn.conv2d(..., strides=[2, 2], channels=64, kernel_size=[3, 3]) */
  {
    const char *keys[] = {"strides", "channels", "kernel_size"};
    AttrValue *vals[] = {val_ints2(m, 2, 2), val_int(m, 64), val_ints2(m, 3, 3)};
    Attrs *a = make(m, "nn.conv2d", 3, keys, vals, &d);
    CHECK(a != NULL);
    CHECK_EQ(diag_count(&d), 0);
    CHECK_EQ(a->n, 10);
    CHECK(a->values[field(a, "strides")] == vals[0]);
    CHECK(a->values[field(a, "channels")] == vals[1]);
    CHECK(!attr_is_default(&a->cls->fields[0], a->values[0]));
    int dl = field(a, "data_layout");
    CHECK_EQ(a->values[dl]->kind, AV_STR);
    CHECK_STR(a->values[dl]->u.str.s, "NCHW");
    CHECK(attr_is_default(&a->cls->fields[dl], a->values[dl]));
    int pad = field(a, "padding");
    CHECK_EQ(a->values[pad]->kind, AV_ARRAY);
    CHECK_EQ(a->values[pad]->u.arr.n, 2);
    CHECK_EQ(a->values[pad]->u.arr.items[1]->u.i.v, 0);
    int od = field(a, "out_dtype");
    CHECK_EQ(a->values[od]->u.str.len, 0);
  }

  /* No keywords: every default; required fields become None. */
  {
    Attrs *a = make(m, "nn.dense", 0, NULL, NULL, &d);
    CHECK(a != NULL);
    CHECK_EQ(a->values[field(a, "units")]->kind, AV_NONE);
    CHECK(!attr_is_default(&a->cls->fields[0], a->values[0]));
    CHECK(attr_is_default(&a->cls->fields[1], a->values[1]));
    CHECK(make(m, "add", 0, NULL, NULL, &d) == NULL);
    CHECK(make(m, "nn.relu", 0, NULL, NULL, &d) == NULL);
    CHECK_EQ(diag_count(&d), 0);
  }

  /* Normalisation: 0/1 to bools, ints to floats. */
  {
    const char *keys[] = {"pool_size", "ceil_mode"};
    AttrValue *vals[] = {val_ints2(m, 2, 2), val_int(m, 1)};
    Attrs *a = make(m, "nn.max_pool2d", 2, keys, vals, &d);
    CHECK(a != NULL);
    AttrValue *cm = a->values[field(a, "ceil_mode")];
    CHECK_EQ(cm->kind, AV_BOOL);
    CHECK(cm->u.b);
    CHECK_EQ(vals[1]->kind, AV_INT);  /* the input is not modified */
  }
  {
    const char *keys[] = {"epsilon", "center"};
    AttrValue *vals[] = {val_int(m, 1), val_int(m, 0)};
    Attrs *a = make(m, "nn.batch_norm", 2, keys, vals, &d);
    CHECK(a != NULL);
    AttrValue *eps = a->values[field(a, "epsilon")];
    CHECK_EQ(eps->kind, AV_FLOAT);
    CHECK(eps->u.f.v == 1.0);
    AttrValue *center = a->values[field(a, "center")];
    CHECK_EQ(center->kind, AV_BOOL);
    CHECK(!center->u.b);
    CHECK(!attr_is_default(&a->cls->fields[field(a, "center")], center));
  }
  {
    const char *keys[] = {"a_min", "a_max"};
    AttrValue *vals[] = {val_int(m, 0), val_float(m, 6.0)};
    Attrs *a = make(m, "clip", 2, keys, vals, &d);
    CHECK(a != NULL);
    CHECK_EQ(a->values[0]->kind, AV_FLOAT);
    CHECK(a->values[0]->u.f.v == 0.0);
    CHECK(a->values[1] == vals[1]);
  }
  {
    /* roi: ints inside a float array become floats. */
    AttrValue *roi_items[] = {val_int(m, 0), val_float(m, 0.5), val_int(m, 1), val_int(m, 1)};
    const char *keys[] = {"size", "roi", "method"};
    AttrValue *vals[] = {val_ints2(m, 224, 224), val_array(m, 4, roi_items),
                         val_str(m, "nearest_neighbor")};
    Attrs *a = make(m, "image.resize2d", 3, keys, vals, &d);
    CHECK(a != NULL);
    AttrValue *roi = a->values[field(a, "roi")];
    CHECK_EQ(roi->u.arr.n, 4);
    CHECK_EQ(roi->u.arr.items[0]->kind, AV_FLOAT);
    CHECK_EQ(roi->u.arr.items[2]->kind, AV_FLOAT);
    CHECK(roi->u.arr.items[1] == roi_items[1]);
  }

  /* Int-or-ints, None, nested arrays, None items, dtypes, metadata objects. */
  {
    const char *k1[] = {"indices_or_sections", "axis"};
    AttrValue *v1[] = {val_int(m, 3), val_int(m, 1)};
    CHECK(make(m, "split", 2, k1, v1, &d) != NULL);
    AttrValue *v2[] = {val_ints2(m, 1, 4), val_int(m, 1)};
    CHECK(make(m, "split", 2, k1, v2, &d) != NULL);

    const char *k3[] = {"axis", "keepdims"};
    AttrValue *one[] = {val_int(m, 1)};
    AttrValue *v3[] = {val_array(m, 1, one), val_bool(m, true)};
    CHECK(make(m, "sum", 2, k3, v3, &d) != NULL);
    AttrValue *v4[] = {val_int(m, 1), val_bool(m, false)};
    Attrs *a = make(m, "mean", 2, k3, v4, &d);
    CHECK(a != NULL);
    if (a) CHECK(attr_is_default(&a->cls->fields[1], a->values[1]));
    AttrValue *v5[] = {val_none(m), val_bool(m, false)};
    CHECK(make(m, "max", 2, k3, v5, &d) != NULL);

    const char *k6[] = {"pad_width"};
    AttrValue *pairs[] = {val_ints2(m, 0, 0), val_ints2(m, 1, 1)};
    AttrValue *v6[] = {val_array(m, 2, pairs)};
    CHECK(make(m, "nn.pad", 1, k6, v6, &d) != NULL);

    const char *k7[] = {"output_size"};
    AttrValue *sizes[] = {val_none(m), val_int(m, 7)};
    AttrValue *v7[] = {val_array(m, 2, sizes)};
    CHECK(make(m, "nn.adaptive_avg_pool2d", 1, k7, v7, &d) != NULL);

    const char *k8[] = {"dtype"};
    AttrValue *v8[] = {val_str(m, "float16")};
    CHECK(make(m, "cast", 1, k8, v8, &d) != NULL);
    AttrValue *v9[] = {val_str(m, "")};
    CHECK(make(m, "shape_of", 1, k8, v9, &d) != NULL);

    const char *k10[] = {"virtual_device", "constrain_result"};
    AttrValue *meta = ir_attr_value_new(m, AV_META, (Span){1, 1, 30, 20});
    meta->u.meta.key = sym_intern_cstr(&m->syms, "VirtualDevice");
    AttrValue *v10[] = {meta, val_bool(m, true)};
    CHECK(make(m, "on_device", 2, k10, v10, &d) != NULL);

    const char *k11[] = {"units"};
    AttrValue *v11[] = {val_none(m)};
    CHECK(make(m, "nn.dense", 1, k11, v11, &d) != NULL);

    const char *k12[] = {"axes"};
    AttrValue *v12[] = {val_none(m)};
    CHECK(make(m, "transpose", 1, k12, v12, &d) != NULL);
    /* A required field accepts None: that is what "missing" means. */
    AttrValue *v13[] = {val_none(m)};
    CHECK(make(m, "cast", 1, k8, v13, &d) != NULL);
  }
  CHECK_EQ(diag_count(&d), 0);
  if (diag_count(&d)) diag_print(&d, stderr);
  diag_free(&d);
  module_free(m);
}

/* Runs op_make_attrs expecting exactly one error; returns its message
** (valid until the next call) and checks the error's column. */
static char msg_buf[512];
static const char *make_err(Module *m, const char *opname, int n, const char *const *keys,
                            AttrValue **values, uint32_t col) {
  Diag d;
  diag_init(&d, NULL);
  Attrs *a = make(m, opname, n, keys, values, &d);
  CHECK(a == NULL);
  CHECK_EQ(diag_count(&d), 1);
  msg_buf[0] = '\0';
  if (d.items.len) {
    snprintf(msg_buf, sizeof msg_buf, "%s", first_msg(&d));
    CHECK_EQ(d.items.data[0].at.col, col);
  }
  diag_free(&d);
  return msg_buf;
}

static void test_make_errors(void) {
  Module *m = module_new();

  const char *k_foo[] = {"foo"};
  AttrValue *v1[] = {val_int(m, 1)};
  CHECK_STR(make_err(m, "nn.conv2d", 1, k_foo, v1, 1), "nn.conv2d has no attribute 'foo'");

  const char *k_stride[] = {"stride"};
  CHECK_STR(make_err(m, "nn.conv2d", 1, k_stride, (AttrValue *[]){val_ints2(m, 2, 2)}, 1),
            "nn.conv2d has no attribute 'stride'; did you mean 'strides'?");

  const char *k_dup[] = {"channels", "strides", "strides"};
  AttrValue *v_dup[] = {val_int(m, 8), val_ints2(m, 1, 1), val_ints2(m, 2, 2)};
  CHECK_STR(make_err(m, "nn.conv2d", 3, k_dup, v_dup, 3), "duplicate attribute 'strides'");

  /* Kind errors point at the value (column 20 in these tests). */
  const char *k_strides[] = {"strides"};
  CHECK_STR(make_err(m, "nn.conv2d", 1, k_strides, (AttrValue *[]){val_str(m, "a")}, 20),
            "attribute 'strides' of nn.conv2d expects an array of integers, found a string");
  AttrValue *mixed[] = {val_int(m, 1), val_str(m, "a")};
  CHECK_STR(make_err(m, "nn.conv2d", 1, k_strides, (AttrValue *[]){val_array(m, 2, mixed)}, 20),
            "attribute 'strides' of nn.conv2d expects an array of integers, found an array "
            "containing a string");
  CHECK_STR(make_err(m, "nn.conv2d", 1, k_strides, (AttrValue *[]){val_int(m, 2)}, 20),
            "attribute 'strides' of nn.conv2d expects an array of integers, found an integer");
  /* A duplicate is still reported after a kind error for the same key. */
  {
    Diag d;
    diag_init(&d, NULL);
    const char *keys[] = {"strides", "strides"};
    AttrValue *vals[] = {val_str(m, "a"), val_ints2(m, 1, 1)};
    CHECK(make(m, "nn.conv2d", 2, keys, vals, &d) == NULL);
    CHECK_EQ(diag_count(&d), 2);
    if (d.items.len == 2) CHECK_STR(d.items.data[1].msg, "duplicate attribute 'strides'");
    diag_free(&d);
  }

  const char *k_channels[] = {"channels"};
  CHECK_STR(make_err(m, "nn.conv2d", 1, k_channels, (AttrValue *[]){val_str(m, "x")}, 20),
            "attribute 'channels' of nn.conv2d expects an integer or None, found a string");
  CHECK_STR(make_err(m, "nn.conv2d", 1, k_strides, (AttrValue *[]){val_none(m)}, 20),
            "attribute 'strides' of nn.conv2d expects an array of integers, found None");
  CHECK_STR(make_err(m, "nn.conv2d", 1, k_strides, (AttrValue *[]){val_float(m, 1.5)}, 20),
            "attribute 'strides' of nn.conv2d expects an array of integers, found a float");
  CHECK_STR(make_err(m, "nn.conv2d", 1, k_strides, (AttrValue *[]){val_bool(m, true)}, 20),
            "attribute 'strides' of nn.conv2d expects an array of integers, found a boolean");

  const char *k_ceil[] = {"pool_size", "ceil_mode"};
  CHECK_STR(make_err(m, "nn.max_pool2d", 2, k_ceil,
                     (AttrValue *[]){val_ints2(m, 2, 2), val_int(m, 2)}, 20),
            "attribute 'ceil_mode' of nn.max_pool2d expects a boolean, found an integer");

  const char *k_eps[] = {"epsilon"};
  CHECK_STR(make_err(m, "nn.batch_norm", 1, k_eps, (AttrValue *[]){val_str(m, "1e-5")}, 20),
            "attribute 'epsilon' of nn.batch_norm expects a float, found a string");

  const char *k_layout[] = {"data_layout"};
  CHECK_STR(make_err(m, "nn.conv2d", 1, k_layout, (AttrValue *[]){val_int(m, 0)}, 20),
            "attribute 'data_layout' of nn.conv2d expects a string, found an integer");

  const char *k_dtype[] = {"dtype"};
  CHECK_STR(make_err(m, "cast", 1, k_dtype, (AttrValue *[]){val_str(m, "flaot32")}, 20),
            "attribute 'dtype' of cast expects a data type, found \"flaot32\"");
  CHECK_STR(make_err(m, "cast", 1, k_dtype, (AttrValue *[]){val_int(m, 32)}, 20),
            "attribute 'dtype' of cast expects a data type, found an integer");

  const char *k_pad[] = {"pad_width"};
  AttrValue *bad_pair[] = {val_int(m, 0), val_float(m, 0.5)};
  AttrValue *pairs[] = {val_ints2(m, 0, 0), val_array(m, 2, bad_pair)};
  CHECK_STR(make_err(m, "nn.pad", 1, k_pad, (AttrValue *[]){val_array(m, 2, pairs)}, 20),
            "attribute 'pad_width' of nn.pad expects an array of integer arrays or None, found "
            "an array containing an array containing a float");
  AttrValue *flat[] = {val_int(m, 0), val_int(m, 1)};
  CHECK_STR(make_err(m, "nn.pad", 1, k_pad, (AttrValue *[]){val_array(m, 2, flat)}, 20),
            "attribute 'pad_width' of nn.pad expects an array of integer arrays or None, found "
            "an array containing an integer");

  const char *k_ios[] = {"indices_or_sections"};
  CHECK_STR(make_err(m, "split", 1, k_ios, (AttrValue *[]){val_str(m, "3")}, 20),
            "attribute 'indices_or_sections' of split expects an integer or an array of "
            "integers, found a string");

  AttrValue *expr = ir_attr_value_new(m, AV_EXPR, (Span){1, 1, 20, 3});
  CHECK_STR(make_err(m, "nn.conv2d", 1, k_channels, (AttrValue *[]){expr}, 20),
            "attribute 'channels' of nn.conv2d expects an integer or None, found an expression");
  AttrValue *meta = ir_attr_value_new(m, AV_META, (Span){1, 1, 20, 3});
  CHECK_STR(make_err(m, "nn.conv2d", 1, k_layout, (AttrValue *[]){meta}, 20),
            "attribute 'data_layout' of nn.conv2d expects a string, found a metadata object");

  /* A value without a location: the error points at the key. */
  AttrValue *nowhere = ir_attr_value_new(m, AV_STR, (Span){0, 0, 0, 0});
  nowhere->u.str.s = "x";
  nowhere->u.str.len = 1;
  CHECK_STR(make_err(m, "nn.conv2d", 1, k_strides, (AttrValue *[]){nowhere}, 1),
            "attribute 'strides' of nn.conv2d expects an array of integers, found a string");

  const char *k_alpha[] = {"alpha"};
  CHECK_STR(make_err(m, "add", 1, k_alpha, (AttrValue *[]){val_int(m, 1)}, 1),
            "add takes no attributes");

  /* Several errors in one call are all reported. */
  {
    Diag d;
    diag_init(&d, NULL);
    const char *keys[] = {"foo", "strides", "groups", "bar"};
    AttrValue *vals[] = {val_int(m, 1), val_str(m, "x"), val_int(m, 2), val_int(m, 3)};
    CHECK(make(m, "nn.conv2d", 4, keys, vals, &d) == NULL);
    CHECK_EQ(diag_count(&d), 3);
    diag_free(&d);
  }
  module_free(m);
}

static void test_default_values(void) {
  Module *m = module_new();
  const AttrsClass *conv = lookup("nn.conv2d")->attrs;
  AttrValue *strides = attr_default_value(m, &conv->fields[0]);
  CHECK_EQ(strides->kind, AV_ARRAY);
  CHECK_EQ(strides->u.arr.n, 2);
  CHECK_EQ(strides->u.arr.items[0]->kind, AV_INT);
  CHECK_EQ(strides->u.arr.items[0]->u.i.v, 1);
  CHECK_EQ(attr_default_value(m, &conv->fields[4])->kind, AV_NONE);  /* channels */

  const AttrsClass *bn = lookup("nn.batch_norm")->attrs;
  AttrValue *eps = attr_default_value(m, &bn->fields[1]);
  CHECK_EQ(eps->kind, AV_FLOAT);
  CHECK(fabs(eps->u.f.v - 1e-5) < 1e-12);
  CHECK_EQ(eps->u.f.bits, 32);
  AttrValue *center = attr_default_value(m, &bn->fields[2]);
  CHECK_EQ(center->kind, AV_BOOL);
  CHECK(center->u.b);

  /* Values equal to the default in another spelling still count. */
  AttrValue *eps32 = val_float(m, (double)(float)1e-5);
  CHECK(attr_is_default(&bn->fields[1], eps32));
  CHECK(!attr_is_default(&bn->fields[1], val_float(m, 1e-3)));
  CHECK(!attr_is_default(&bn->fields[1], val_float(m, 1.0000001e-5 * 1.01)));
  AttrValue *groups64 = val_int(m, 1);
  groups64->u.i.bits = 64;
  CHECK(attr_is_default(&conv->fields[3], groups64));
  CHECK(!attr_is_default(&conv->fields[3], val_int(m, 2)));
  CHECK(attr_is_default(&conv->fields[0], val_ints2(m, 1, 1)));
  CHECK(!attr_is_default(&conv->fields[0], val_ints2(m, 2, 2)));
  CHECK(!attr_is_default(&conv->fields[0], val_ints2(m, 1, 2)));
  AttrValue *one[] = {val_int(m, 1)};
  CHECK(!attr_is_default(&conv->fields[0], val_array(m, 1, one)));
  AttrValue *three[] = {val_int(m, 1), val_int(m, 1), val_int(m, 1)};
  CHECK(!attr_is_default(&conv->fields[0], val_array(m, 3, three)));
  CHECK(!attr_is_default(&conv->fields[0], val_none(m)));
  CHECK(attr_is_default(&conv->fields[4], val_none(m)));
  CHECK(!attr_is_default(&conv->fields[4], val_int(m, 64)));
  CHECK(attr_is_default(&conv->fields[6], val_str(m, "NCHW")));
  CHECK(!attr_is_default(&conv->fields[6], val_str(m, "NHWC")));
  CHECK(!attr_is_default(&conv->fields[6], val_str(m, "NCH")));
  CHECK(attr_is_default(&conv->fields[9], val_str(m, "")));
  CHECK(!attr_is_default(&conv->fields[9], val_str(m, "float32")));

  /* Defaults that changed or that the Python API overrides (spec 9). */
  const AttrsClass *convt = lookup("nn.conv2d_transpose")->attrs;
  int kl = attrs_class_field(convt, "kernel_layout", 13);
  CHECK(attr_is_default(&convt->fields[kl], val_str(m, "IOHW")));
  const AttrsClass *bmm = lookup("nn.batch_matmul")->attrs;
  CHECK(attr_is_default(&bmm->fields[2], val_bool(m, false)));
  CHECK(!attr_is_default(&bmm->fields[2], val_bool(m, true)));
  const AttrsClass *lrelu = lookup("nn.leaky_relu")->attrs;
  CHECK(attr_is_default(&lrelu->fields[0], val_float(m, 0.25)));
  CHECK(!attr_is_default(&lrelu->fields[0], val_float(m, 0.01)));
  const AttrsClass *ln = lookup("nn.layer_norm")->attrs;
  CHECK(attr_is_default(&ln->fields[0], val_int(m, -1)));
  const AttrsClass *lrn = lookup("nn.lrn")->attrs;
  CHECK(attr_is_default(&lrn->fields[2], val_float(m, 2.0)));
  CHECK(attr_is_default(&lrn->fields[2], val_int(m, 2)));
  CHECK(attr_is_default(&lrn->fields[3], val_float(m, 0.0001)));
  const AttrsClass *resize = lookup("image.resize2d")->attrs;
  int ca = attrs_class_field(resize, "cubic_alpha", 11);
  CHECK(attr_is_default(&resize->fields[ca], val_float(m, -0.5)));
  const AttrsClass *pool = lookup("nn.adaptive_avg_pool2d")->attrs;
  CHECK(attr_is_default(&pool->fields[0], val_array(m, 0, NULL)));
  CHECK(!attr_is_default(&pool->fields[0], val_none(m)));
  const AttrsClass *take = lookup("take")->attrs;
  CHECK(attr_is_default(&take->fields[2], val_str(m, "clip")));
  const AttrsClass *reshape = lookup("reshape")->attrs;
  CHECK(!attr_is_default(&reshape->fields[0], val_none(m)));  /* required */
  CHECK(attr_is_default(&reshape->fields[1], val_bool(m, false)));
  CHECK(attr_is_default(&reshape->fields[1], val_int(m, 0)));
  module_free(m);
}

int main(void) {
  test_table();
  test_lookup();
  test_suggest();
  test_classes();
  test_defaults_all();
  test_default_values();
  test_make_ok();
  test_make_errors();
  return check_report("test_ops");
}
