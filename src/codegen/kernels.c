/* kernels.c: the kernel of each Primitive function.
**
** A Primitive function is one C kernel `static rlyrt_status K<n>(args,
** out)`, written by lower/: plain loops where lower_loops has a lowering,
** else a call of the runtime's reference kernel (lower_reference).
** Identical kernels are emitted once. */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg.h"

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
  for (int i = 0; i < cg->kernel_texts.len; i++)
    if (strcmp(cg->kernel_texts.data[i], s) == 0) {
      snprintf(name, n, "K%d", i);
      sb_free(&text);
      return;
    }
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
