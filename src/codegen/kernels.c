/* kernels.c: the kernel of each Primitive function.
**
** A Primitive function is one C kernel `static rlyrt_status K<n>(args,
** out)`, written by lower/: plain loops where lower_loops has a lowering,
** else a call of the runtime's reference kernel (lower_reference).
** Identical kernels are emitted once. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg.h"

/* FNV-1a of a kernel's text. */
static uint64_t text_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* The slot of text s in the table: the one holding it, or the empty one
** where it goes. Texts differ late (they name their source position), so
** comparing with every earlier kernel made long programs quadratic. */
static size_t kernel_slot(const Cg *cg, const char *s, uint64_t h) {
  size_t mask = cg->kernel_nslots - 1, i = (size_t)h & mask;
  while (cg->kernel_slots[i] && strcmp(cg->kernel_texts.data[cg->kernel_slots[i] - 1], s) != 0) i = (i + 1) & mask;
  return i;
}

static void kernel_table_grow(Cg *cg) {
  size_t n = cg->kernel_nslots ? cg->kernel_nslots * 2 : 64;
  free(cg->kernel_slots);
  cg->kernel_slots = rly_xcalloc(n, sizeof(int));
  cg->kernel_nslots = n;
  for (int k = 0; k < cg->kernel_texts.len; k++) {
    const char *t = cg->kernel_texts.data[k];
    cg->kernel_slots[kernel_slot(cg, t, text_hash(t))] = k + 1;
  }
}

/* The kernel of Primitive function prim: its name in name. Identical
** kernels (same operator, attributes and types) are emitted once: the text
** is made with a placeholder name, compared with the kernels so far, and
** the placeholder replaced by the kernel's name. */
void cg_kernel_for(Cg *cg, Expr *prim, char *name, size_t n) {
  static const char placeholder[] = "K__X";
  char where[256], err[256];
  cg_where(cg, prim->span, where, sizeof where);
  StrBuf text = {0};
  if (!lower_loops(&text, placeholder, prim, where) &&
      !lower_reference(cg->L, &cg->kdecls, &text, placeholder, prim, where, err, sizeof err)) {
    cg_error(cg, prim->span, "cannot compile this operator call: %s", err);
    sb_free(&text);
    snprintf(name, n, "K_none");
    return;
  }
  const char *s = sb_str(&text);
  if ((size_t)cg->kernel_texts.len * 2 >= cg->kernel_nslots) kernel_table_grow(cg);
  size_t slot = kernel_slot(cg, s, text_hash(s));
  if (cg->kernel_slots[slot]) {
    snprintf(name, n, "K%d", cg->kernel_slots[slot] - 1);
    sb_free(&text);
    return;
  }
  cg->kernel_slots[slot] = cg->kernel_texts.len + 1;
  snprintf(name, n, "K%d", cg->kernel_texts.len);
  for (const char *p = s, *q; *p; p = q + strlen(placeholder)) {
    q = strstr(p, placeholder);
    if (!q) {
      sb_puts(&cg->kernels, p);
      break;
    }
    sb_putn(&cg->kernels, p, (size_t)(q - p));
    sb_puts(&cg->kernels, name);
  }
  sb_puts(&cg->kernels, "\n");
  VEC_PUSH(&cg->kernel_texts, text.data); /* owned by the table now */
}
