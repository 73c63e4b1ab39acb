/* module.c: loading compiled modules, calling their functions and
** closures, and the small value API that makes every Relay value
** buildable and inspectable from C.
**
** A shared library built by relayc links its own private copy of the
** runtime (its symbols are hidden), so two models never clash. Values
** cross the boundary freely (same layout, same allocator: the loader hands
** the module this process's allocator); only the thread-local error
** message lives twice, so after a failed call the loader copies the
** module's message into this copy. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "relayc/runtime.h"

struct rlyrt_module {
  const rlyrt_module_info *info;
  void *handle; /* dlopen handle; NULL for a wrapped static module */
  const rlyrt_module_build *build; /* rlyrt_module_build_entry() of a loaded library, or NULL */
};

/* {==== Values ====} */

rlyrt_tuple *rlyrt_tuple_make(rlyrt_object *const *fields, int32_t n) {
  for (int32_t i = 0; i < n; i++)
    if (!fields[i]) {
      rlyrt_error(RLYRT_E_ARG, "rlyrt_tuple_make: field %d is NULL", (int)i);
      return NULL;
    }
  rlyrt_tuple *t = rlyrt_tuple_new(n);
  if (!t) return NULL;
  for (int32_t i = 0; i < n; i++) t->fields[i] = rlyrt_retain(fields[i]);
  return t;
}

int32_t rlyrt_num_fields(const rlyrt_object *v) {
  if (v && v->kind == RLYRT_TUPLE) return ((const rlyrt_tuple *)v)->n;
  if (v && v->kind == RLYRT_ADT) return ((const rlyrt_adt *)v)->n;
  return -1;
}

rlyrt_object *rlyrt_field(const rlyrt_object *v, int32_t i) {
  int32_t n = rlyrt_num_fields(v);
  if (n < 0) {
    rlyrt_error(RLYRT_E_ARG, "rlyrt_field: the value is not a tuple or an ADT value");
    return NULL;
  }
  if (i < 0 || i >= n) {
    rlyrt_error(RLYRT_E_ARG, "rlyrt_field: index %d is out of range (%d fields)", (int)i, (int)n);
    return NULL;
  }
  return v->kind == RLYRT_TUPLE ? ((const rlyrt_tuple *)v)->fields[i] : ((const rlyrt_adt *)v)->fields[i];
}

const char *rlyrt_adt_ctor(const rlyrt_object *v) {
  return v && v->kind == RLYRT_ADT ? ((const rlyrt_adt *)v)->ctor : NULL;
}

rlyrt_object *rlyrt_ref_get(const rlyrt_object *r) {
  return r && r->kind == RLYRT_REF ? ((const rlyrt_ref *)r)->value : NULL;
}

/* {==== Checks for generated code ====} */

static const char *kind_name(const rlyrt_object *v) {
  if (!v) return "NULL";
  switch ((rlyrt_kind)v->kind) {
  case RLYRT_TENSOR: return "a tensor";
  case RLYRT_TUPLE: return "a tuple";
  case RLYRT_ADT: return "an ADT value";
  case RLYRT_CLOSURE: return "a closure";
  case RLYRT_REF: return "a reference";
  }
  return "an unknown object";
}

rlyrt_status rlyrt_check_tensor(const rlyrt_object *v, DLDataType dtype, int32_t ndim, const int64_t *shape,
                                const char *what, const char *expected) {
  if (!v || v->kind != RLYRT_TENSOR)
    return rlyrt_error(RLYRT_E_ARG, "%s expects %s, got %s", what, expected, kind_name(v));
  const rlyrt_tensor *t = (const rlyrt_tensor *)v;
  if (t->dl.ndim < 0 || t->dl.ndim > 64 || (t->dl.ndim > 0 && !t->dl.shape))
    return rlyrt_error(RLYRT_E_ARG, "%s expects %s, got a tensor of rank %d without a shape", what, expected,
                       (int)t->dl.ndim);
  bool ok = rlyrt_dtype_eq(t->dl.dtype, dtype) && t->dl.ndim == ndim;
  for (int32_t i = 0; ok && i < ndim; i++)
    if (shape[i] >= 0 && t->dl.shape[i] != shape[i]) ok = false;
  if (ok && t->dl.data == NULL && rlyrt_tensor_numel(t) > 0) {
    return rlyrt_error(RLYRT_E_ARG, "%s: the tensor has no data", what);
  }
  if (ok && t->dl.device.device_type != kDLCPU)
    return rlyrt_error(RLYRT_E_ARG, "%s: only CPU tensors are supported", what);
  if (ok && t->dl.strides) {
    int64_t expect = 1;
    for (int32_t i = ndim - 1; i >= 0; i--) {
      if (t->dl.shape[i] != 1 && t->dl.strides[i] != expect)
        return rlyrt_error(RLYRT_E_ARG, "%s: only compact row-major tensors are supported", what);
      expect *= t->dl.shape[i];
    }
  }
  if (ok && t->dl.byte_offset != 0) return rlyrt_error(RLYRT_E_ARG, "%s: tensors with a byte offset are not supported", what);
  if (ok) return RLYRT_OK;
  char got[256];
  return rlyrt_error(RLYRT_E_ARG, "%s expects %s, got %s", what, expected, rlyrt_tensor_type_text(t, got, sizeof got));
}

rlyrt_status rlyrt_check_kind(const rlyrt_object *v, rlyrt_kind kind, int32_t n, const char *what,
                              const char *expected) {
  if (!v || v->kind != kind) return rlyrt_error(RLYRT_E_ARG, "%s expects %s, got %s", what, expected, kind_name(v));
  if (kind == RLYRT_CLOSURE) {
    const rlyrt_closure *c = (const rlyrt_closure *)v;
    if (!(v->flags & RLYRT_CLOSURE_NATIVE))
      return rlyrt_error(RLYRT_E_ARG, "%s expects %s, got a closure that is not compiled code", what, expected);
    int32_t arity = ((const rlyrt_code *)c->code)->arity;
    if (n >= 0 && arity != n)
      return rlyrt_error(RLYRT_E_ARG, "%s expects %s, got a closure of %d parameters", what, expected, (int)arity);
    return RLYRT_OK;
  }
  int32_t have = rlyrt_num_fields(v);
  if (n >= 0 && have >= 0 && have != n)
    return rlyrt_error(RLYRT_E_ARG, "%s expects %s, got %s of %d fields", what, expected, kind_name(v), (int)have);
  return RLYRT_OK;
}

rlyrt_status rlyrt_check_closure(const rlyrt_object *v, int32_t n, const char *type, const char *what) {
  const char *expected = type ? type : "a function";
  rlyrt_status s = rlyrt_check_kind(v, RLYRT_CLOSURE, n, what, expected);
  if (s != RLYRT_OK || !type) return s;
  const rlyrt_code *code = ((const rlyrt_closure *)v)->code;
  if (code->type && strcmp(code->type, type) != 0)
    return rlyrt_error(RLYRT_E_ARG, "%s expects %s, got a closure of type %s", what, type, code->type);
  return RLYRT_OK;
}

/* {==== Calls ====} */

/* After a failed call into info's code: bring its message into this copy
** of the runtime. */
static rlyrt_status fetch_error(const rlyrt_module_info *info, rlyrt_status s) {
  if (info && info->last_error && info->last_error != rlyrt_last_error)
    rlyrt_error(s, "%s", info->last_error());
  return s;
}

rlyrt_status rlyrt_closure_failed(const rlyrt_object *c, rlyrt_status s) {
  if (c && c->kind == RLYRT_CLOSURE && (c->flags & RLYRT_CLOSURE_NATIVE))
    fetch_error(((const rlyrt_code *)((const rlyrt_closure *)c)->code)->module, s);
  return s;
}

static rlyrt_status call_code(const rlyrt_code *code, const rlyrt_closure *self, rlyrt_object *const *args,
                              int32_t nargs, rlyrt_object **out) {
  *out = NULL;
  if (nargs != code->arity)
    return rlyrt_error(RLYRT_E_ARG, "%s takes %d argument%s, not %d", code->name, (int)code->arity,
                       code->arity == 1 ? "" : "s", (int)nargs);
  if (nargs > 0 && !args) return rlyrt_error(RLYRT_E_ARG, "%s: the argument array is NULL", code->name);
  rlyrt_status s = code->check ? code->check(args, nargs) : RLYRT_OK;
  if (s == RLYRT_OK) {
    /* Values passed in may be passed to other calls at the same time
    ** (one set of weights, many threads): their counts become atomic. */
    rlyrt_share((rlyrt_object *)self);
    for (int32_t i = 0; i < nargs; i++) rlyrt_share(args[i]);
    s = code->fn(self, args, out);
  }
  if (s != RLYRT_OK) {
    fetch_error(code->module, s);
    *out = NULL;
  }
  return s;
}

rlyrt_status rlyrt_closure_call(const rlyrt_object *closure, rlyrt_object *const *args, int32_t nargs,
                                rlyrt_object **out) {
  if (!out) return rlyrt_error(RLYRT_E_ARG, "rlyrt_closure_call: out is NULL");
  *out = NULL;
  if (!closure || closure->kind != RLYRT_CLOSURE)
    return rlyrt_error(RLYRT_E_ARG, "rlyrt_closure_call: expected a closure, got %s", kind_name(closure));
  if (!(closure->flags & RLYRT_CLOSURE_NATIVE))
    return rlyrt_error(RLYRT_E_ARG, "rlyrt_closure_call: the closure is not compiled code");
  const rlyrt_closure *c = (const rlyrt_closure *)closure;
  return call_code((const rlyrt_code *)c->code, c, args, nargs, out);
}

/* {==== Modules ====} */

static rlyrt_status check_info(const rlyrt_module_info *info, const char *what) {
  if (!info) return rlyrt_error(RLYRT_E_IO, "%s: the module description is NULL", what);
  if (info->abi != RLYRT_ABI_VERSION)
    return rlyrt_error(RLYRT_E_IO, "%s: built for runtime ABI %u, this runtime has ABI %u: rebuild it with this relayc",
                       what, (unsigned)info->abi, (unsigned)RLYRT_ABI_VERSION);
  return RLYRT_OK;
}

rlyrt_status rlyrt_module_wrap(const rlyrt_module_info *info, rlyrt_module **out) {
  if (!out) return rlyrt_error(RLYRT_E_ARG, "rlyrt_module_wrap: out is NULL");
  *out = NULL;
  rlyrt_status s = check_info(info, "rlyrt_module_wrap");
  if (s != RLYRT_OK) return s;
  rlyrt_module *m = calloc(1, sizeof *m);
  if (!m) return rlyrt_error(RLYRT_E_NOMEM, "out of memory");
  m->info = info;
  if (info->set_allocator && info->set_allocator != rlyrt_set_allocator)
    info->set_allocator(rlyrt_allocator_is_default() ? NULL : rlyrt_get_allocator());
  *out = m;
  return RLYRT_OK;
}

/* The build description of the library h (NULL when it has none: built
** without --profile and --target native), after checking that this CPU
** has the extensions it was built for. This runs before any other code of
** the library: code built with -march=native may fault (SIGILL) on a CPU
** without them, so the check is this runtime's, built for baseline x86-64
** (the library's entry for the description is built for it too). */
static rlyrt_status load_build(void *h, const char *path, const rlyrt_module_build **out) {
  union {
    void *p;
    const rlyrt_module_build *(*fn)(void);
  } entry;
  entry.p = dlsym(h, "rlyrt_module_build_entry");
  *out = entry.p ? entry.fn() : NULL;
  if (!*out) return RLYRT_OK;
  return rlyrt_cpu_check((*out)->isa, path);
}

rlyrt_status rlyrt_module_load(const char *path, rlyrt_module **out) {
  if (!out) return rlyrt_error(RLYRT_E_ARG, "rlyrt_module_load: out is NULL");
  *out = NULL;
  if (!path) return rlyrt_error(RLYRT_E_ARG, "rlyrt_module_load: path is NULL");
  /* dlopen searches the library path for a name without '/': a module is a file. */
  char buf[4096];
  if (!strchr(path, '/')) {
    if (snprintf(buf, sizeof buf, "./%s", path) >= (int)sizeof buf)
      return rlyrt_error(RLYRT_E_IO, "%s: the path is too long", path);
  } else if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
    return rlyrt_error(RLYRT_E_IO, "%s: the path is too long", path);
  }
  void *h = dlopen(buf, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    return rlyrt_error(RLYRT_E_IO, "cannot load '%s': %s", path, why ? why : "unknown error");
  }
  const rlyrt_module_build *build = NULL;
  if (load_build(h, path, &build) != RLYRT_OK) {
    dlclose(h);
    return RLYRT_E_UNSUPPORTED;
  }
  union {
    void *p;
    const rlyrt_module_info *(*fn)(void);
  } entry;
  entry.p = dlsym(h, "rlyrt_module_entry");
  if (!entry.p) {
    dlclose(h);
    return rlyrt_error(RLYRT_E_IO, "'%s' is not a module built by relayc (no rlyrt_module_entry)", path);
  }
  rlyrt_status s = check_info(entry.fn(), path);
  if (s == RLYRT_OK) s = rlyrt_module_wrap(entry.fn(), out);
  if (s != RLYRT_OK) {
    dlclose(h);
    return s;
  }
  (*out)->handle = h;
  (*out)->build = build;
  return RLYRT_OK;
}

const rlyrt_module_build *rlyrt_module_get_build(const rlyrt_module *m) { return m ? m->build : NULL; }

void rlyrt_module_free(rlyrt_module *m) {
  if (!m) return;
  if (m->handle) dlclose(m->handle);
  free(m);
}

const rlyrt_module_info *rlyrt_module_get_info(const rlyrt_module *m) { return m ? m->info : NULL; }

const rlyrt_function_info *rlyrt_module_find(const rlyrt_module *m, const char *name) {
  if (!m || !name) return NULL;
  if (name[0] == '@') name++;
  int32_t lo = 0, hi = m->info->nfunctions - 1;
  while (lo <= hi) {
    int32_t mid = lo + (hi - lo) / 2;
    int c = strcmp(m->info->functions[mid].name, name);
    if (c == 0) return &m->info->functions[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return NULL;
}

rlyrt_status rlyrt_module_call(const rlyrt_module *m, const char *name, rlyrt_object *const *args, int32_t nargs,
                               rlyrt_object **out) {
  if (!out) return rlyrt_error(RLYRT_E_ARG, "rlyrt_module_call: out is NULL");
  *out = NULL;
  if (!m || !name) return rlyrt_error(RLYRT_E_ARG, "rlyrt_module_call: the module or the name is NULL");
  const rlyrt_function_info *f = rlyrt_module_find(m, name);
  if (!f) return rlyrt_error(RLYRT_E_ARG, "the module %s has no function @%s", m->info->name, name[0] == '@' ? name + 1 : name);
  return call_code(f->code, NULL, args, nargs, out);
}

rlyrt_status rlyrt_module_adt_new(const rlyrt_module *m, const char *ctor, rlyrt_object *const *fields, int32_t n,
                                  rlyrt_object **out) {
  if (!out) return rlyrt_error(RLYRT_E_ARG, "rlyrt_module_adt_new: out is NULL");
  *out = NULL;
  if (!m || !ctor) return rlyrt_error(RLYRT_E_ARG, "rlyrt_module_adt_new: the module or the name is NULL");
  const rlyrt_ctor_info *c = NULL;
  for (int32_t i = 0; i < m->info->nctors && !c; i++)
    if (strcmp(m->info->ctors[i].name, ctor) == 0) c = &m->info->ctors[i];
  if (!c) return rlyrt_error(RLYRT_E_ARG, "the module %s has no constructor %s", m->info->name, ctor);
  if (n != c->arity)
    return rlyrt_error(RLYRT_E_ARG, "constructor %s takes %d field%s, not %d", ctor, (int)c->arity,
                       c->arity == 1 ? "" : "s", (int)n);
  for (int32_t i = 0; i < n; i++)
    if (!fields || !fields[i]) return rlyrt_error(RLYRT_E_ARG, "constructor %s: field %d is NULL", ctor, (int)i);
  rlyrt_adt *a = rlyrt_adt_new(c->tag, c->name, n);
  if (!a) return RLYRT_E_NOMEM;
  for (int32_t i = 0; i < n; i++) a->fields[i] = rlyrt_retain(fields[i]);
  *out = &a->obj;
  return RLYRT_OK;
}

/* {==== Threads ====} */

rlyrt_status rlyrt_module_set_threads(rlyrt_module *m, int32_t n) {
  if (!m) return rlyrt_error(RLYRT_E_ARG, "rlyrt_module_set_threads: the module is NULL");
  if (n < 0 || n > RLYRT_MAX_THREADS)
    return rlyrt_error(RLYRT_E_ARG, "rlyrt_module_set_threads: %d threads: give 0 (one per CPU) to %d", (int)n,
                       RLYRT_MAX_THREADS);
  if (!m->info->threads)
    return rlyrt_error(RLYRT_E_UNSUPPORTED, "the module %s has no thread count to set", m->info->name);
  m->info->threads(n);
  return RLYRT_OK;
}

int32_t rlyrt_module_get_threads(const rlyrt_module *m) {
  return m && m->info->threads ? m->info->threads(-1) : 1;
}
