/* test_ctor_boxes.c: a constructor called with unboxed scalars allocates
** one block, its value and the tensors of its scalar fields together.
**
** usage: test_ctor_boxes CTOR_BOXES.so (tests/api/ctor_boxes.relay built
** by relayc build at any level).
**
** @build(n, N) makes a list of n cells C(i * 0.5, i * 2, ...): exactly n
** allocations through the counting allocator (@build_by_value too,
** through the constructor as a value, a static closure), the right fields, and
** nothing live once the list (or a field kept after it) is released. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../unit/check.h"
#include "counting.h"
#include "relayc/runtime.h"

static long live_at_load; /* blocks the loaded module holds */

static rlyrt_object *scalar_i32(int32_t v) {
  rlyrt_tensor *t = rlyrt_tensor_new((DLDataType){kDLInt, 32, 1}, 0, NULL, false);
  *(int32_t *)t->dl.data = v;
  return &t->obj;
}

/* @fn(n, N); its allocations in *allocs. */
static rlyrt_object *build(const rlyrt_module *m, const char *fn, int n, long *allocs) {
  rlyrt_object *nil = NULL;
  CHECK_EQ(rlyrt_module_adt_new(m, "N", NULL, 0, &nil), RLYRT_OK);
  rlyrt_object *args[] = {scalar_i32(n), nil};
  rlyrt_object *r = NULL;
  long before = atomic_load(&all_blocks);
  CHECK_EQ(rlyrt_module_call(m, fn, args, 2, &r), RLYRT_OK);
  *allocs = atomic_load(&all_blocks) - before;
  rlyrt_release(args[0]);
  rlyrt_release(args[1]);
  return r;
}

static void test_build(const rlyrt_module *m, const char *fn, int n) {
  long allocs = 0;
  rlyrt_object *l = build(m, fn, n, &allocs);
  CHECK_EQ(allocs, (long)n);
  rlyrt_object *cell = l;
  for (int i = 1; i <= n && cell; i++) {
    CHECK(cell->kind == RLYRT_ADT && strcmp(rlyrt_adt_ctor(cell), "C") == 0);
    rlyrt_adt *a = RLYRT_AS_ADT(cell);
    CHECK(a->n == 3 && a->fields[0]->kind == RLYRT_TENSOR && a->fields[1]->kind == RLYRT_TENSOR);
    CHECK(rlyrt_get_f64(RLYRT_AS_TENSOR(a->fields[0]), 0) == i * 0.5);
    CHECK_EQ(rlyrt_get_i64(RLYRT_AS_TENSOR(a->fields[1]), 0), (int64_t)i * 2);
    cell = a->fields[2];
  }
  CHECK(cell && strcmp(rlyrt_adt_ctor(cell), "N") == 0);
  /* A field kept beyond its list. */
  rlyrt_object *kept = rlyrt_retain(RLYRT_AS_ADT(l)->fields[0]);
  rlyrt_release(l);
  CHECK(rlyrt_get_f64(RLYRT_AS_TENSOR(kept), 0) == 0.5);
  rlyrt_release(kept);
  CHECK_EQ(atomic_load(&live_blocks), live_at_load);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_ctor_boxes CTOR_BOXES.so\n");
    return 2;
  }
  rlyrt_set_allocator(&counting);
  rlyrt_module *m = NULL;
  if (rlyrt_module_load(argv[1], &m) != RLYRT_OK) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], rlyrt_last_error());
    return 1;
  }
  live_at_load = atomic_load(&live_blocks);
  test_build(m, "build", 10);
  test_build(m, "build", 1000);
  test_build(m, "build_by_value", 10);
  test_build(m, "build_by_value", 1000);
  rlyrt_module_free(m);
  CHECK_EQ(atomic_load(&live_blocks), 0);
  return check_report("test_ctor_boxes");
}
