/* compile.c: the compiler's public entry point (include/relayc/relayc.h).
**
** rly_compile is the whole pipeline from text to C, in one place:
**   parse the sources as one module -> bind a .params file to @main
**   -> infer types (errors are reported on the program as written)
**   -> the passes of `pipeline` below, in order (pass_run)
**   -> codegen_module: NAME.c and NAME.h from the prepared module.
** A pass joins the back end by taking a row of `pipeline`, with the lowest
** optimisation level at which it runs. The command line (tools/relayc)
** builds and runs through this entry point; its other commands (check,
** fmt, run --interp) use the front end directly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/file.h"
#include "base/strbuf.h"
#include "base/vec.h"
#include "codegen/codegen.h"
#include "driver/compile_ext.h"
#include "passes/pass.h"
#include "onnx/onnx.h"
#include "relayc/relayc.h"
#include "relayc/runtime.h"
#include "syntax/metadata.h"
#include "syntax/parser.h"
#include "types/infer.h"

/* The back end's passes, in order: a pass runs when the optimisation
** level is at least min_level. */
static const struct {
  const char *pass;  /* a name pass_find knows */
  int min_level;
} pipeline[] = {
    {"to_main", 0},    /* an expression module becomes def @main */
    {"unfuse", 0},     /* Primitive functions of the input become ordinary functions */
    {"graph_form", 1},         /* dataflow lets become graph bindings: folding and fusion see across them */
    {"simplify_inference", 1}, /* batch_norm, dropout, layer/instance/group_norm into elementwise ops (after
                                  graph_form: `let %b = nn.batch_norm(...); %b.0` is then `nn.batch_norm(...).0`) */
    {"hoist_projection", 1},   /* a loop's input projection as one dense before it */
    {"fold_constant", 1},      /* calls of constants evaluated by the reference kernels */
    {"fuse_ops", 1},           /* groups of operators (TVM's patterns), each one Primitive function */
    {"dce", 0},        /* before anf: re-inference after primitive needs dead lets' annotations */
    {"anf", 0},        /* the form code generation reads */
    {"primitive", 0},  /* one Primitive function (one kernel) per call left outside a group */
};

struct rly_compiler {
  char name[80];
  int level;              /* the passes' level, 0..3 */
  bool size;              /* RLY_OPT_SIZE: level 2, the summary says -Os */
  bool no_fuse;           /* rly_set_fuse(c, 0): FuseOps does not run */
  bool profile;           /* rly_set_profile: kernels timed */
  int threads;            /* rly_set_threads: 0 not set (1), -1 one per CPU, else the count */
  char *target, *isa;     /* rly_set_target (NULL: the default) */
  StrBuf summary;         /* what the last rly_compile built */
  SourceMap sm;           /* the sources, in order (file ids 1..) */
  Vec(uint32_t) files;    /* their ids in sm */
  char *params;           /* the .params file, or NULL */
  bool unreadable;        /* a source could not be read */
  Diag d;                 /* of the last rly_compile */
  char *diag_text;        /* d printed */
  StrBuf c, h;            /* the outputs */
  char *blob_path;        /* rly_set_blob_file (NULL: constants inline) */
  size_t blob_min;
  bool blob_written;      /* the last rly_compile wrote blob_path */
  bool want_stats;        /* rly_set_stats */
  bool release_meta;      /* rly_set_release_metadata_text */
  bool meta_released;     /* a source's metadata text was given back */
  StrBuf stats;           /* rly_stats */
  char message[1024];
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int rly_name_ok(const char *name) { return name && codegen_name_ok(name); }

rly_compiler *rly_compiler_new(void) {
  rly_compiler *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  snprintf(c->name, sizeof c->name, "model");
  c->level = 2;
  diag_init(&c->d, &c->sm);
  return c;
}

static void clear_outputs(rly_compiler *c) {
  sb_free(&c->c);
  sb_free(&c->h);
  sb_free(&c->summary);
  sb_free(&c->stats);
  c->blob_written = false;
  free(c->diag_text);
  c->diag_text = NULL;
  diag_free(&c->d);
  diag_init(&c->d, &c->sm);
  c->message[0] = 0;
}

void rly_compiler_free(rly_compiler *c) {
  if (!c) return;
  clear_outputs(c);
  diag_free(&c->d);
  srcmap_free(&c->sm);
  VEC_FREE(&c->files);
  free(c->params);
  free(c->target);
  free(c->isa);
  free(c->blob_path);
  free(c);
}

int rly_set_name(rly_compiler *c, const char *name) {
  if (!rly_name_ok(name)) return -1;
  snprintf(c->name, sizeof c->name, "%s", name);
  return 0;
}

void rly_set_fuse(rly_compiler *c, int on) { c->no_fuse = !on; }

void rly_set_profile(rly_compiler *c, int on) { c->profile = on != 0; }

_Static_assert(RLY_MAX_THREADS == RLYRT_MAX_THREADS, "relayc.h and runtime.h disagree on the most threads");

int rly_set_threads(rly_compiler *c, int n) {
  if (n < 0 || n > RLY_MAX_THREADS) return -1;
  c->threads = n == 0 ? -1 : n;
  return 0;
}

void rly_set_stats(rly_compiler *c, int on) { c->want_stats = on != 0; }

void rly_set_release_metadata_text(rly_compiler *c, int on) { c->release_meta = on != 0; }

const char *rly_stats(const rly_compiler *c) { return c->stats.data ? c->stats.data : ""; }

int rly_blob_written(const rly_compiler *c) { return c->blob_written; }

/* A malloc'd copy of s, or NULL for NULL or "". */
static char *copy_or_null(const char *s) {
  if (!s || !s[0]) return NULL;
  char *d = rly_xmalloc(strlen(s) + 1);
  strcpy(d, s);
  return d;
}

void rly_set_blob_file(rly_compiler *c, const char *path, size_t min_bytes) {
  free(c->blob_path);
  c->blob_path = copy_or_null(path);
  c->blob_min = min_bytes;
}

void rly_set_target(rly_compiler *c, const char *target, const char *isa) {
  free(c->target);
  free(c->isa);
  c->target = copy_or_null(target);
  c->isa = copy_or_null(isa);
}

const char *rly_version(void) { return RLY_VERSION; }

const char *rly_build_summary(const rly_compiler *c) { return c->summary.data ? c->summary.data : ""; }

int rly_set_opt_level(rly_compiler *c, int level) {
  if (level < 0 || level > RLY_OPT_SIZE) return -1;
  c->size = level == RLY_OPT_SIZE;
  c->level = c->size ? 2 : level;
  return 0;
}

int rly_add_file(rly_compiler *c, const char *path) {
  size_t len;
  char *text = file_read_all(path, &len, c->message, sizeof c->message);
  if (!text) {
    c->unreadable = true;
    return -1;
  }
  c->message[0] = 0;
  if (onnx_is_model_path(path)) {
    /* An ONNX model: imported as Relay text; an error of the import ends
    ** up in the message (the import stops at its first). */
    Diag d;
    diag_init(&d, &c->sm);
    uint32_t id = onnx_add_source(&c->sm, path, text, len, &d);
    if (!id) {
      const Diagnostic *e = d.items.len ? &d.items.data[0] : NULL;
      snprintf(c->message, sizeof c->message, "%s: error: %s", path, e ? e->msg : "cannot import the model");
      diag_free(&d);
      c->unreadable = true;
      return -1;
    }
    diag_free(&d);
    VEC_PUSH(&c->files, id);
    return 0;
  }
  uint32_t id = srcmap_add(&c->sm, strcmp(path, "-") == 0 ? "<stdin>" : path, text, len);
  VEC_PUSH(&c->files, id);
  return 0;
}

int rly_add_text(rly_compiler *c, const char *name, const char *text, size_t len) {
  char *copy = rly_xmalloc(len + 1);
  memcpy(copy, text, len);
  copy[len] = 0;
  uint32_t id = srcmap_add(&c->sm, name ? name : "<text>", copy, len);
  VEC_PUSH(&c->files, id);
  return 0;
}

void rly_set_params_file(rly_compiler *c, const char *path) {
  free(c->params);
  c->params = NULL;
  if (path) {
    c->params = rly_xmalloc(strlen(path) + 1);
    strcpy(c->params, path);
  }
}

/* Binds the entries of c->params to @main's parameters. */
static bool bind_params_file(rly_compiler *c, Module *m) {
  char *empty = rly_xcalloc(1, 1);
  uint32_t pf = srcmap_add(&c->sm, c->params, empty, 0);
  ParamEntry *entries = NULL;
  int n = params_read(c->params, m, &entries, &c->d, pf);
  Span at = {pf, 0, 0, 0};
  return n >= 0 && bind_params(m, entries, n, &c->d, at);
}

/* The wall time of each phase of rly_compile, in milliseconds. */
typedef struct Phases {
  double parse, metadata, infer, passes, codegen;
} Phases;

/* Types, passes and C for the parsed module m. */
static bool compile_module(rly_compiler *c, Module *m, Phases *ph) {
  double t = now_ms();
  bool typed = ty_infer_module(m, &c->d);
  ph->infer = now_ms() - t;
  if (!typed) return false;
  t = now_ms();
  const char *names[RLY_COUNTOF(pipeline)];
  int n = 0;
  for (size_t i = 0; i < RLY_COUNTOF(pipeline); i++)
    if (c->level >= pipeline[i].min_level && !(c->no_fuse && strcmp(pipeline[i].pass, "fuse_ops") == 0))
      names[n++] = pipeline[i].pass;
  bool passed = pass_run(m, names, n, &c->d) && (pass_module_typed(m) || pass_retype(m, &c->d));
  ph->passes = now_ms() - t;
  if (!passed) return false;
  CodegenOptions co = {.name = c->name, .sm = &c->sm};
  co.version = RLY_VERSION;
  co.target = c->target;
  co.isa = c->isa;
  co.opt_level = c->level;
  co.opt_size = c->size;
  co.fuse = c->level >= 1 && !c->no_fuse;
  co.profile = c->profile;
  co.threads = c->threads;
  co.summary = &c->summary;
  CodegenExtra x = {.blob_path = c->blob_path, .blob_min = c->blob_min, .stats = c->want_stats ? &c->stats : NULL};
  t = now_ms();
  bool ok = codegen_module_ext(m, &co, &x, &c->c, &c->h, &c->d);
  ph->codegen = now_ms() - t;
  c->blob_written = ok && x.blob_written;
  return ok;
}

/* c->d as the command line prints it. */
static void render_diagnostics(rly_compiler *c) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (f) {
    diag_print(&c->d, f);
    fclose(f);
  }
  c->diag_text = buf;
}

int rly_compile(rly_compiler *c) {
  clear_outputs(c);
  if (c->unreadable || c->files.len == 0) {
    snprintf(c->message, sizeof c->message, "%s",
             c->unreadable ? "a source file could not be read" : "no source to compile");
    return -1;
  }
  if (c->meta_released) {
    snprintf(c->message, sizeof c->message, "%s",
             "the sources' metadata text was given back after the last compile (rly_set_release_metadata_text): "
             "add the files to a new compiler");
    return -1;
  }
  Phases ph = {0};
  double t = now_ms();
  size_t *meta_at = rly_xcalloc((size_t)c->files.len, sizeof *meta_at);
  Module *m = parse_module_files_timed(&c->sm, c->files.data, c->files.len, &c->d, &ph.metadata, meta_at);
  bool ok = m != NULL;
  /* Asked (rly_set_release_metadata_text), the metadata sections' text
  ** (ResNet-50: 130 MB of base64 weights, decoded into the module) goes
  ** back before the build doubles the weights (packed filters); no
  ** diagnostic can point into it any more unless parsing reported one. */
  for (int i = 0; c->release_meta && ok && c->d.items.len == 0 && i < c->files.len; i++)
    if (meta_at[i]) {
      srcmap_truncate(&c->sm, c->files.data[i], meta_at[i]);
      c->meta_released = true;
    }
  free(meta_at);
  double t1 = now_ms();
  ph.parse = t1 - t - ph.metadata; /* lexing and parsing, less the metadata sections */
  if (ph.parse < 0) ph.parse = 0;
  if (ok && c->params) ok = bind_params_file(c, m);
  ph.metadata += now_ms() - t1; /* a .params file: decoding weights too */
  if (ok) ok = compile_module(c, m, &ph);
  t = now_ms();
  module_free(m);
  double t_free = now_ms() - t;
  if (!ok) {
    sb_free(&c->c);
    sb_free(&c->h);
    sb_free(&c->summary);
    sb_free(&c->stats);
    if (c->blob_written) remove(c->blob_path);
    c->blob_written = false;
  } else if (c->want_stats) {
    sb_printf(&c->stats, "time parse: %.1f ms\ntime metadata: %.1f ms\ntime infer: %.1f ms\ntime passes: %.1f ms\n",
              ph.parse, ph.metadata, ph.infer, ph.passes);
    sb_printf(&c->stats, "time codegen: %.1f ms\n", ph.codegen + t_free);
  }
  render_diagnostics(c);
  return ok ? 0 : -1;
}

const char *rly_c_text(const rly_compiler *c, size_t *len) {
  if (len) *len = c->c.len;
  return c->c.data ? c->c.data : "";
}

const char *rly_h_text(const rly_compiler *c, size_t *len) {
  if (len) *len = c->h.len;
  return c->h.data ? c->h.data : "";
}

const char *rly_diagnostics(const rly_compiler *c) { return c->diag_text ? c->diag_text : ""; }

int rly_error_count(const rly_compiler *c) { return c->d.nerrors; }

const char *rly_message(const rly_compiler *c) { return c->message; }
