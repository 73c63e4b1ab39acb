/* rnn.c: ONNX LSTM, GRU and RNN as Relay loops (import.h).
**
** Each direction of the node becomes a tail-recursive global (`@lstmN`,
** `@gruN`, `@rnnN`) over the time steps, which relayc compiles to a loop,
** called once from the function being written. What does not depend on the
** hidden state is computed before the loop: the input projection of every
** step at once, x W^T + bias as one nn.dense over the [T * B, input]
** sequence (reshaped to [T, B, gates * H]), the direction's slices of the
** weights and biases, the initial states. A step then reads its row of the
** projection (take), adds h R^T (one GEMV or GEMM), splits the gates and
** updates the state; Y, the hidden state of every step, is an accumulator
** [T, B, H] whose row is set by scatter_nd (only when Y is used). The
** reverse direction walks the rows from the last. The outputs stack the
** directions: Y [T, D, B, H], Y_h and Y_c [D, B, H] (layout 1 transposes
** the input and the outputs to batch-first). A global with the text of an
** earlier one (another layer of the same sizes) is called again instead.
**
** ONNX's gate orders: LSTM i, o, f, c (peepholes i, o, f); GRU z, r, h.
** Activations: Sigmoid, Tanh and Relu, any of them in any slot; clip
** bounds each gate's input to its activation. sequence_lens (int32, [B],
** a constant or computed) masks the steps: past its length a sequence
** keeps its state and gets rows of zeros in Y; the reverse direction runs
** forward over the sequences reversed in place (reverse_sequence) and its Y
** is reversed back. A constant of T everywhere is as if absent. The shapes
** must be static. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/import.h"

typedef enum { RNN_LSTM, RNN_GRU, RNN_SIMPLE } RnnKind;

static const char *const kind_names[] = {"LSTM", "GRU", "RNN"}, *const kind_globals[] = {"lstm", "gru", "rnn"};

typedef struct Rnn {
  RnnKind kind;
  bool lstm, gru;       /* kind == RNN_LSTM, RNN_GRU */
  int ngates;           /* 4 (LSTM), 3 (GRU) or 1 (RNN) */
  int nacts;            /* activations per direction: 3 (LSTM), 2 (GRU) or 1 (RNN) */
  int64_t T, B, In, H;
  int D;                /* directions: 1 or 2 */
  bool reverse;         /* direction "reverse" (D = 1) */
  bool batch_first;     /* layout 1 */
  int elem;
  char dt[32];          /* the Relay dtype */
  bool has_clip;
  double clip;
  bool lbr;             /* GRU: linear_before_reset */
  bool input_forget;    /* LSTM: f = 1 - i */
  const char *acts[6];  /* Relay ops, nacts per direction */
  Value *x, *w, *r, *b, *h0, *c0, *p;
  bool masked;          /* sequence_lens given, not all T: lens holds them */
  char lens[32];        /* the variable of the lengths, int32 [B] */
  Value *seq;
} Rnn;

/* The activation's Relay operator, or NULL. */
static const char *act_op(const char *onnx) {
  static const char *const map[][2] = {{"Sigmoid", "sigmoid"}, {"Tanh", "tanh"}, {"Relu", "nn.relu"}};
  for (size_t i = 0; i < RLY_COUNTOF(map); i++)
    if (strcmp(onnx, map[i][0]) == 0) return map[i][1];
  return NULL;
}

/* Reads and checks the node's inputs and attributes. */
static bool rnn_read(Importer *I, Rnn *R, RnnKind kind) {
  bool lstm = kind == RNN_LSTM;
  R->kind = kind;
  R->lstm = lstm;
  R->gru = kind == RNN_GRU;
  R->ngates = lstm ? 4 : R->gru ? 3 : 1;
  R->nacts = lstm ? 3 : R->gru ? 2 : 1;
  if (I->node->n_input < 3) return onnx_node_error(I, "needs the inputs X, W and R");
  R->x = onnx_input(I, 0);
  R->w = R->x ? onnx_input(I, 1) : NULL;
  R->r = R->w ? onnx_input(I, 2) : NULL;
  if (!R->r) return false;
  R->b = onnx_input(I, 3);
  Value *seq = onnx_input(I, 4);
  R->h0 = onnx_input(I, 5);
  R->c0 = lstm ? onnx_input(I, 6) : NULL;
  R->p = lstm ? onnx_input(I, 7) : NULL;
  for (size_t i = 3; i < I->node->n_input && i < (lstm ? 8u : 6u); i++)
    if (*I->node->input[i] && !onnx_find_value(I, I->node->input[i])) return false;
  if (!lstm && I->node->n_input > 6)
    return onnx_node_error(I, "has %zu inputs; %s has 6", I->node->n_input, kind_names[kind]);
  DType t;
  R->elem = R->x->elem;
  if (!onnx_elem_dtype(R->elem, &t) || t.code != DT_FLOAT) return onnx_node_error(I, "X must be a float tensor");
  dtype_name(t, R->dt);

  char buf[64];
  const char *dir = onnx_attr_str(I, "direction", "forward", buf, sizeof buf);
  if (strcmp(dir, "forward") == 0) R->D = 1;
  else if (strcmp(dir, "reverse") == 0) R->D = 1, R->reverse = true;
  else if (strcmp(dir, "bidirectional") == 0) R->D = 2;
  else return onnx_node_error(I, "direction '%s' is not known", dir);
  int64_t layout = onnx_attr_int(I, "layout", 0);
  if (layout != 0 && layout != 1) return onnx_node_error(I, "layout %lld is not known", (long long)layout);
  R->batch_first = layout == 1;

  /* Shapes: X [T, B, In] (layout 1: [B, T, In]), W [D, G * H, In], R [D, G * H, H]. */
  if (R->x->rank != 3 || R->x->dims[0] < 0 || R->x->dims[1] < 0 || R->x->dims[2] < 0)
    return onnx_node_error(I, "needs X of rank 3 with a static shape");
  R->T = R->x->dims[R->batch_first ? 1 : 0];
  R->B = R->x->dims[R->batch_first ? 0 : 1];
  R->In = R->x->dims[2];
  if (R->T < 1 || R->B < 1 || R->In < 1) return onnx_node_error(I, "X has an empty dimension");
  if (R->r->rank != 3 || R->r->dims[2] < 1) return onnx_node_error(I, "needs R of rank 3 with a static shape");
  R->H = onnx_attr_int(I, "hidden_size", R->r->dims[2]);
  int64_t g = R->ngates * R->H;
  if (R->H != R->r->dims[2]) return onnx_node_error(I, "hidden_size %lld, but R has %lld columns", (long long)R->H,
                                                    (long long)R->r->dims[2]);
  const int64_t wd[3] = {R->D, g, R->In}, rd[3] = {R->D, g, R->H};
  for (int i = 0; i < 3; i++) {
    if (R->w->rank != 3 || R->w->dims[i] != wd[i])
      return onnx_node_error(I, "W must have shape (%lld, %lld, %lld)", (long long)wd[0], (long long)wd[1],
                             (long long)wd[2]);
    if (R->r->dims[i] != rd[i])
      return onnx_node_error(I, "R must have shape (%lld, %lld, %lld)", (long long)rd[0], (long long)rd[1],
                             (long long)rd[2]);
  }
  if (R->b && (R->b->rank != 2 || R->b->dims[0] != R->D || R->b->dims[1] != 2 * g))
    return onnx_node_error(I, "B must have shape (%d, %lld)", R->D, (long long)(2 * g));
  const Value *states[2] = {R->h0, R->c0};
  for (int k = 0; k < 2; k++) {
    const Value *s = states[k];
    if (!s) continue;
    int64_t want[3] = {R->batch_first ? R->B : R->D, R->batch_first ? R->D : R->B, R->H};
    if (s->rank != 3 || s->dims[0] != want[0] || s->dims[1] != want[1] || s->dims[2] != want[2])
      return onnx_node_error(I, "%s must have shape (%lld, %lld, %lld)", k ? "initial_c" : "initial_h",
                             (long long)want[0], (long long)want[1], (long long)want[2]);
  }
  if (R->p && (R->p->rank != 2 || R->p->dims[0] != R->D || R->p->dims[1] != 3 * R->H))
    return onnx_node_error(I, "P must have shape (%d, %lld)", R->D, (long long)(3 * R->H));
  if (seq) {
    /* All T (a constant): as if absent; else each step is masked. */
    int64_t lens[64];
    int n = onnx_const_ints(seq, lens, 64);
    bool whole = n == R->B;
    for (int i = 0; whole && i < n; i++) whole = lens[i] == R->T;
    if (!whole) {
      if (seq->rank != 1 || (seq->dims[0] >= 0 && seq->dims[0] != R->B) ||
          (seq->elem != ONNX__TENSOR_PROTO__DATA_TYPE__INT32 && seq->elem != ONNX__TENSOR_PROTO__DATA_TYPE__INT64))
        return onnx_node_error(I, "sequence_lens must be an int32 tensor of shape (%lld)", (long long)R->B);
      R->masked = true;
      R->seq = seq;
    }
  }

  /* Attributes. */
  const Onnx__AttributeProto *a = onnx_attr(I, "activations");
  for (int d = 0; d < R->D; d++) {
    static const char *const defaults[][3] = {{"sigmoid", "tanh", "tanh"}, {"sigmoid", "tanh"}, {"tanh"}};
    for (int j = 0; j < R->nacts; j++) R->acts[d * R->nacts + j] = defaults[kind][j];
  }
  if (a) {
    if (a->n_strings != (size_t)(R->D * R->nacts))
      return onnx_node_error(I, "needs %d activations, has %zu", R->D * R->nacts, a->n_strings);
    for (size_t i = 0; i < a->n_strings; i++) {
      char name[32];
      size_t n = a->strings[i].len < sizeof name - 1 ? a->strings[i].len : sizeof name - 1;
      memcpy(name, a->strings[i].data, n);
      name[n] = '\0';
      if (!(R->acts[i] = act_op(name)))
        return onnx_node_error(I, "activation '%s' is not supported (Sigmoid, Tanh and Relu are)", name);
    }
  }
  if (onnx_attr(I, "activation_alpha") || onnx_attr(I, "activation_beta"))
    return onnx_node_error(I, "activation_alpha and activation_beta are not supported");
  const Onnx__AttributeProto *clip = onnx_attr(I, "clip");
  if (clip) {
    R->has_clip = true;
    R->clip = clip->f;
    if (!(R->clip > 0)) return onnx_node_error(I, "clip must be positive");
  }
  R->lbr = R->gru && onnx_attr_int(I, "linear_before_reset", 0) != 0;
  R->input_forget = lstm && onnx_attr_int(I, "input_forget", 0) != 0;
  return true;
}

/* An activation of a gate's input: op(clip(x)). */
static void put_act(Importer *I, const Rnn *R, StrBuf *sb, const char *op, const char *x) {
  sb_printf(sb, "%s(", op);
  if (R->has_clip) {
    sb_printf(sb, "clip(%s, a_min=", x);
    onnx_put_float_lit(I, sb, R->elem, -R->clip);
    sb_puts(sb, ", a_max=");
    onnx_put_float_lit(I, sb, R->elem, R->clip);
    sb_puts(sb, ")");
  } else {
    sb_puts(sb, x);
  }
  sb_puts(sb, ")");
}

static void put_tensor(StrBuf *sb, const Rnn *R, int rank, int64_t d0, int64_t d1, int64_t d2) {
  int64_t dims[3] = {d0, d1, d2};
  onnx_put_type(sb, R->elem, rank, dims);
}

/* Binds e to a fresh variable in I->body; its name in var. */
static const char *let(Importer *I, char var[32], const char *e) {
  onnx_fresh(I, var);
  sb_printf(&I->body, "  let %s = %s;\n", var, e);
  return var;
}

/* The text of the loop over the steps of direction d, named name, into
** gl: def NAME(%t: int32, %xw, the weights, the state) -> the state. */
static void step_global(Importer *I, const Rnn *R, int d, bool reverse, bool with_y, const char *name, StrBuf *gl) {
  int64_t g = R->ngates * R->H;
  bool gru_split = R->gru && !R->lbr;
  const char *const *act = R->acts + d * R->nacts;
  StrBuf args = {0}, state = {0}, ret = {0};
  sb_printf(gl, "def %s(%%t: int32, %%xw: ", name);
  put_tensor(gl, R, 3, R->T, R->B, g);
  sb_printf(&args, "%%xw");
  if (gru_split) {
    sb_puts(gl, ", %rzr: ");
    put_tensor(gl, R, 2, 2 * R->H, R->H, 0);
    sb_puts(gl, ", %rh: ");
    put_tensor(gl, R, 2, R->H, R->H, 0);
    sb_puts(&args, ", %rzr, %rh");
  } else {
    sb_puts(gl, ", %r: ");
    put_tensor(gl, R, 2, g, R->H, 0);
    sb_puts(&args, ", %r");
  }
  bool rbias = R->gru && R->b;
  if (rbias && gru_split) {
    sb_puts(gl, ", %rbzr: ");
    put_tensor(gl, R, 1, 2 * R->H, 0, 0);
    sb_puts(gl, ", %rbh: ");
    put_tensor(gl, R, 1, R->H, 0, 0);
    sb_puts(&args, ", %rbzr, %rbh");
  } else if (rbias) {
    sb_puts(gl, ", %rb: ");
    put_tensor(gl, R, 1, g, 0, 0);
    sb_puts(&args, ", %rb");
  }
  if (R->p) {
    sb_puts(gl, ", %p: ");
    put_tensor(gl, R, 1, 3 * R->H, 0, 0);
    sb_puts(&args, ", %p");
  }
  if (R->masked) {
    sb_printf(gl, ", %%lens: Tensor[(%lld,), int32]", (long long)R->B);
    sb_puts(&args, ", %lens");
  }
  sb_puts(gl, ", %h: ");
  put_tensor(gl, R, 2, R->B, R->H, 0);
  sb_puts(&ret, "(");
  put_tensor(&ret, R, 2, R->B, R->H, 0);
  sb_puts(&state, "%h");
  if (R->lstm) {
    sb_puts(gl, ", %c: ");
    put_tensor(gl, R, 2, R->B, R->H, 0);
    sb_puts(&ret, ", ");
    put_tensor(&ret, R, 2, R->B, R->H, 0);
    sb_puts(&state, ", %c");
  }
  if (with_y) {
    sb_puts(gl, ", %y: ");
    put_tensor(gl, R, 3, R->T, R->B, R->H);
    sb_puts(&ret, ", ");
    put_tensor(&ret, R, 3, R->T, R->B, R->H);
    sb_puts(&state, ", %y");
  }
  bool one = !R->lstm && !with_y;
  sb_printf(gl, ") -> %s%s {\n", sb_str(&ret), one ? ",)" : ")");
  sb_printf(gl, "  if (equal(%%t, %lld)) {\n    (%s%s)\n  } else {\n", (long long)R->T, sb_str(&state), one ? "," : "");
  if (reverse) sb_printf(gl, "    let %%k = subtract(%lld, %%t);\n", (long long)(R->T - 1));
  else sb_puts(gl, "    let %k = %t;\n");
  StrBuf a = {0};
  if (R->lstm) {
    sb_puts(gl, "    let %s = split(add(take(%xw, %k, axis=0), nn.dense(%h, %r)), indices_or_sections=4, axis=1);\n");
    if (R->p) sb_puts(gl, "    let %ps = split(%p, indices_or_sections=3, axis=0);\n");
    /* i = f(Xi + Hi + Pi c), f = f(Xf + Hf + Pf c), c~ = g(Xc + Hc),
    ** c' = f c + i c~, o = f(Xo + Ho + Po c'), h' = o h(c'). */
    put_act(I, R, &a, act[0], R->p ? "add(%s.0, multiply(%ps.0, %c))" : "%s.0");
    sb_printf(gl, "    let %%i = %s;\n", sb_str(&a));
    sb_clear(&a);
    if (R->input_forget) {
      sb_puts(&a, "subtract(");
      onnx_put_float_lit(I, &a, R->elem, 1);
      sb_puts(&a, ", %i)");
    } else {
      put_act(I, R, &a, act[0], R->p ? "add(%s.2, multiply(%ps.2, %c))" : "%s.2");
    }
    sb_printf(gl, "    let %%f = %s;\n", sb_str(&a));
    sb_clear(&a);
    put_act(I, R, &a, act[1], "%s.3");
    sb_printf(gl, "    let %%c2 = add(multiply(%%f, %%c), multiply(%%i, %s));\n", sb_str(&a));
    sb_clear(&a);
    put_act(I, R, &a, act[0], R->p ? "add(%s.1, multiply(%ps.1, %c2))" : "%s.1");
    sb_printf(gl, "    let %%h2 = multiply(%s, %s(%%c2));\n", sb_str(&a), act[2]);
    sb_clear(&a);
  } else if (!R->gru) {
    /* RNN: h' = f(Xi + Hi). */
    put_act(I, R, &a, act[0], "add(take(%xw, %k, axis=0), nn.dense(%h, %r))");
    sb_printf(gl, "    let %%h2 = %s;\n", sb_str(&a));
    sb_clear(&a);
  } else {
    /* z = f(Xz + Hz), r = f(Xr + Hr), n = g(Xh + r (h Rh^T + Rbh)) with
    ** linear_before_reset, else g(Xh + (r h) Rh^T + Rbh); h' = (1 - z) n + z h. */
    sb_puts(gl, "    let %x = split(take(%xw, %k, axis=0), indices_or_sections=3, axis=1);\n");
    if (gru_split)
      sb_printf(gl, "    let %%hr = split(%s, indices_or_sections=2, axis=1);\n",
                rbias ? "nn.bias_add(nn.dense(%h, %rzr), %rbzr)" : "nn.dense(%h, %rzr)");
    else
      sb_printf(gl, "    let %%hr = split(%s, indices_or_sections=3, axis=1);\n",
                rbias ? "nn.bias_add(nn.dense(%h, %r), %rb)" : "nn.dense(%h, %r)");
    put_act(I, R, &a, act[0], "add(%x.0, %hr.0)");
    sb_printf(gl, "    let %%z = %s;\n", sb_str(&a));
    sb_clear(&a);
    put_act(I, R, &a, act[0], "add(%x.1, %hr.1)");
    sb_printf(gl, "    let %%rt = %s;\n", sb_str(&a));
    sb_clear(&a);
    if (gru_split)
      put_act(I, R, &a, act[1],
              rbias ? "add(%x.2, nn.bias_add(nn.dense(multiply(%rt, %h), %rh), %rbh))"
                    : "add(%x.2, nn.dense(multiply(%rt, %h), %rh))");
    else put_act(I, R, &a, act[1], "add(%x.2, multiply(%rt, %hr.2))");
    sb_printf(gl, "    let %%n = %s;\n", sb_str(&a));
    sb_clear(&a);
    sb_puts(gl, "    let %h2 = add(multiply(subtract(");
    onnx_put_float_lit(I, gl, R->elem, 1);
    sb_puts(gl, ", %z), %n), multiply(%z, %h));\n");
  }
  sb_free(&a);
  if (R->masked) {
    /* Past its length a sequence keeps its state, and its Y rows are 0
    ** (the reverse direction runs on the sequences reversed in place). */
    sb_printf(gl, "    let %%m = reshape(less(%%t, %%lens), newshape=[%lld, 1]);\n", (long long)R->B);
    sb_printf(gl, "    %s(add(%%t, 1), %s, where(%%m, %%h2, %%h)%s%s)\n  }\n}\n\n", name, sb_str(&args),
              R->lstm ? ", where(%m, %c2, %c)" : "",
              with_y ? ", scatter_nd(%y, reshape(%k, newshape=[1]), where(%m, %h2, zeros_like(%h2)))" : "");
  } else {
    sb_printf(gl, "    %s(add(%%t, 1), %s, %%h2%s%s)\n  }\n}\n\n", name, sb_str(&args), R->lstm ? ", %c2" : "",
              with_y ? ", scatter_nd(%y, reshape(%k, newshape=[1]), %h2)" : "");
  }
  sb_free(&args);
  sb_free(&state);
  sb_free(&ret);
}

/* One direction (d of the weights; reverse walks the steps from the last):
** the values computed before the loop, the loop's global, and its call,
** whose result (a tuple: h, then c for LSTM, then Y when with_y) is bound
** to the variable in res. */
static void direction(Importer *I, const Rnn *R, int d, bool reverse, const char *x2, bool with_y, char res[32]) {
  int64_t g = R->ngates * R->H;
  char w[32], r[32], bs[32], xw[32], h0[32], c0[32], p[32], rs[32], rbs[32];
  StrBuf e = {0};
  /* Weights of the direction; the input projection of every step. */
  sb_printf(&e, "take(%s, %d, axis=0)", R->w->expr, d);
  let(I, w, sb_str(&e));
  sb_clear(&e);
  sb_printf(&e, "take(%s, %d, axis=0)", R->r->expr, d);
  let(I, r, sb_str(&e));
  sb_clear(&e);
  if (R->b) {
    sb_printf(&e, "split(take(%s, %d, axis=0), indices_or_sections=2, axis=0)", R->b->expr, d);
    let(I, bs, sb_str(&e));
    sb_clear(&e);
  }
  sb_printf(&e, "reshape(");
  if (R->b && !R->gru) sb_printf(&e, "nn.bias_add(nn.dense(%s, %s), add(%s.0, %s.1))", x2, w, bs, bs);
  else if (R->b) sb_printf(&e, "nn.bias_add(nn.dense(%s, %s), %s.0)", x2, w, bs);
  else sb_printf(&e, "nn.dense(%s, %s)", x2, w);
  sb_printf(&e, ", newshape=[%lld, %lld, %lld])", (long long)R->T, (long long)R->B, (long long)g);
  if (reverse && R->masked) {
    StrBuf t = {0};
    sb_printf(&t, "reverse_sequence(%s, %s, seq_axis=0, batch_axis=1)", sb_str(&e), R->lens);
    sb_free(&e);
    e = t;
  }
  let(I, xw, sb_str(&e));
  sb_clear(&e);
  /* GRU without linear_before_reset multiplies r * h by R_h alone: R and
  ** its bias split into the z, r rows and the h rows. */
  bool gru_split = R->gru && !R->lbr;
  if (gru_split) {
    sb_printf(&e, "split(%s, indices_or_sections=[%lld], axis=0)", r, (long long)(2 * R->H));
    let(I, rs, sb_str(&e));
    sb_clear(&e);
    if (R->b) {
      sb_printf(&e, "split(%s.1, indices_or_sections=[%lld], axis=0)", bs, (long long)(2 * R->H));
      let(I, rbs, sb_str(&e));
      sb_clear(&e);
    }
  }
  /* Initial states: the direction's [B, H] (layout 1 gives [B, D, H]). */
  const Value *init[2] = {R->h0, R->c0};
  char *vars[2] = {h0, c0};
  for (int k = 0; k < (R->lstm ? 2 : 1); k++) {
    if (init[k]) sb_printf(&e, "take(%s, %d, axis=%d)", init[k]->expr, d, R->batch_first ? 1 : 0);
    else sb_printf(&e, "zeros(shape=[%lld, %lld], dtype=\"%s\")", (long long)R->B, (long long)R->H, R->dt);
    let(I, vars[k], sb_str(&e));
    sb_clear(&e);
  }
  if (R->p) {
    sb_printf(&e, "take(%s, %d, axis=0)", R->p->expr, d);
    let(I, p, sb_str(&e));
    sb_clear(&e);
  }

  /* The global: an identical one (another layer's, the same shapes)
  ** serves again. */
  StrBuf gl = {0};
  char name[32];
  bool found = false;
  for (int j = 0; j < I->nglobals && !found; j++) {
    snprintf(name, sizeof name, "@%s%d", kind_globals[R->kind], j);
    sb_clear(&gl);
    step_global(I, R, d, reverse && !R->masked, with_y, name, &gl);
    found = strstr(sb_str(&I->globals), sb_str(&gl)) != NULL;
  }
  if (!found) {
    snprintf(name, sizeof name, "@%s%d", kind_globals[R->kind], I->nglobals++);
    sb_clear(&gl);
    step_global(I, R, d, reverse && !R->masked, with_y, name, &gl);
    sb_puts(&I->globals, sb_str(&gl));
  }

  /* The call. */
  bool rbias = R->gru && R->b;
  sb_printf(&e, "%s(0, %s", name, xw);
  if (gru_split) sb_printf(&e, ", %s.0, %s.1", rs, rs);
  else sb_printf(&e, ", %s", r);
  if (rbias && gru_split) sb_printf(&e, ", %s.0, %s.1", rbs, rbs);
  else if (rbias) sb_printf(&e, ", %s.1", bs);
  if (R->p) sb_printf(&e, ", %s", p);
  if (R->masked) sb_printf(&e, ", %s", R->lens);
  sb_printf(&e, ", %s", h0);
  if (R->lstm) sb_printf(&e, ", %s", c0);
  if (with_y) sb_printf(&e, ", zeros(shape=[%lld, %lld, %lld], dtype=\"%s\")", (long long)R->T, (long long)R->B,
                        (long long)R->H, R->dt);
  sb_puts(&e, ")");
  let(I, res, sb_str(&e));
  sb_free(&e);
  sb_free(&gl);
}

static bool has_output(Importer *I, size_t k) { return k < I->node->n_output && *I->node->output[k]; }

static bool rnn(Importer *I, RnnKind kind) {
  Rnn R = {0};
  if (!rnn_read(I, &R, kind)) return false;
  bool lstm = R.lstm;
  size_t nout = I->node->n_output;
  if (nout > (lstm ? 3u : 2u))
    return onnx_node_error(I, "has %zu outputs; %s has %d", nout, kind_names[kind], lstm ? 3 : 2);
  bool with_y = has_output(I, 0);
  /* The sequence as [T * B, In], time-major. */
  char x2[32];
  StrBuf e = {0};
  if (R.batch_first) sb_printf(&e, "reshape(transpose(%s, axes=[1, 0, 2]), newshape=[%lld, %lld])", R.x->expr,
                               (long long)(R.T * R.B), (long long)R.In);
  else sb_printf(&e, "reshape(%s, newshape=[%lld, %lld])", R.x->expr, (long long)(R.T * R.B), (long long)R.In);
  let(I, x2, sb_str(&e));
  sb_clear(&e);
  if (R.masked) {
    if (R.seq->elem == ONNX__TENSOR_PROTO__DATA_TYPE__INT32) sb_puts(&e, R.seq->expr);
    else sb_printf(&e, "cast(%s, dtype=\"int32\")", R.seq->expr);
    let(I, R.lens, sb_str(&e));
    sb_clear(&e);
  }
  char res[2][32];
  for (int d = 0; d < R.D; d++) direction(I, &R, d, R.reverse || d == 1, x2, with_y, res[d]);
  /* Y [T, D, B, H] (layout 1: [B, T, D, H]). */
  int yk = lstm ? 2 : 1;
  if (with_y) {
    /* A masked reverse direction ran on the reversed sequences. */
    char ys[2][160];
    for (int d = 0; d < R.D; d++) {
      if (R.masked && (R.reverse || d == 1))
        snprintf(ys[d], sizeof ys[d], "reverse_sequence(%s.%d, %s, seq_axis=0, batch_axis=1)", res[d], yk, R.lens);
      else snprintf(ys[d], sizeof ys[d], "%s.%d", res[d], yk);
    }
    if (R.D == 1) sb_printf(&e, "expand_dims(%s, axis=1)", ys[0]);
    else sb_printf(&e, "stack((%s, %s), axis=1)", ys[0], ys[1]);
    int64_t dims[4] = {R.T, R.D, R.B, R.H};
    if (R.batch_first) {
      StrBuf t = {0};
      sb_printf(&t, "transpose(%s, axes=[2, 0, 1, 3])", sb_str(&e));
      sb_free(&e);
      e = t;
      dims[0] = R.B, dims[1] = R.T, dims[2] = R.D;
    }
    onnx_bind_output(I, 0, sb_str(&e), R.elem, 4, dims);
    sb_clear(&e);
  }
  /* Y_h, Y_c [D, B, H] (layout 1: [B, D, H]). */
  for (int k = 0; k < (lstm ? 2 : 1); k++) {
    if (!has_output(I, 1 + (size_t)k)) continue;
    if (R.batch_first) sb_puts(&e, "transpose(");
    if (R.D == 1) sb_printf(&e, "expand_dims(%s.%d, axis=0)", res[0], k);
    else sb_printf(&e, "stack((%s.%d, %s.%d), axis=0)", res[0], k, res[1], k);
    if (R.batch_first) sb_puts(&e, ", axes=[1, 0, 2])");
    int64_t dims[3] = {R.batch_first ? R.B : R.D, R.batch_first ? R.D : R.B, R.H};
    onnx_bind_output(I, 1 + (size_t)k, sb_str(&e), R.elem, 3, dims);
    sb_clear(&e);
  }
  sb_free(&e);
  return true;
}

bool onnx_cv_lstm(Importer *I) { return rnn(I, RNN_LSTM); }
bool onnx_cv_gru(Importer *I) { return rnn(I, RNN_GRU); }
bool onnx_cv_rnn(Importer *I) { return rnn(I, RNN_SIMPLE); }
