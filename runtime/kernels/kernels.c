/* kernels.c: the registry of reference kernels (name -> function), gathered
** from the per-family lists k_<family>.def. */
#include <string.h>

#include "kernels/kernel.h"

#define KERNEL(name, fn) rlyrt_status fn(rlyrt_kernel_call *c);
#include "relayc/kernels/k_elemwise.def"
#include "relayc/kernels/k_nn.def"
#include "relayc/kernels/k_transform.def"
#undef KERNEL

static const struct {
  const char *name;
  rlyrt_kernel_fn fn;
} table[] = {
#define KERNEL(name, fn) {name, fn},
#include "relayc/kernels/k_elemwise.def"
#include "relayc/kernels/k_nn.def"
#include "relayc/kernels/k_transform.def"
#undef KERNEL
    {NULL, NULL},
};

rlyrt_kernel_fn rlyrt_kernel_lookup(const char *op) {
  for (size_t i = 0; table[i].name; i++)
    if (strcmp(table[i].name, op) == 0) return table[i].fn;
  return NULL;
}
