/* match.c: match expressions.
**
** A match over an ADT is a switch over the scrutinee's constructor tag;
** each case tests, in order, the clauses that can match that constructor
** (nested constructor and tuple patterns as conditions on fields, then the
** pattern's variables bound). When no clause matches, the call fails with
** RLYRT_E_MATCH and the match's position. */
#include <string.h>

#include "codegen/cg.h"

/* Pattern test of p against the C expression v (a borrowed object); appends
** "cond && cond" (or "1") to o. */
static void pattern_test(StrBuf *o, const Pattern *p, const char *v, bool *any) {
  char sub[512];
  switch (p->kind) {
  case PAT_CTOR:
    sb_printf(o, "%sRLYRT_AS_ADT(%s)->tag == %d", *any ? " && " : "", v, p->u.ctor.ctor->tag);
    *any = true;
    for (int i = 0; i < p->u.ctor.n; i++) {
      snprintf(sub, sizeof sub, "RLYRT_AS_ADT(%s)->fields[%d]", v, i);
      pattern_test(o, p->u.ctor.args[i], sub, any);
    }
    break;
  case PAT_TUPLE:
    for (int i = 0; i < p->u.tuple.n; i++) {
      snprintf(sub, sizeof sub, "RLYRT_AS_TUPLE(%s)->fields[%d]", v, i);
      pattern_test(o, p->u.tuple.fields[i], sub, any);
    }
    break;
  default: break;
  }
}

static void pattern_bind(StrBuf *o, int ind, const Pattern *p, const char *v) {
  char sub[512];
  switch (p->kind) {
  case PAT_VAR:
    cg_indent(o, ind);
    sb_printf(o, "v%u = RC_retain(%s);\n", p->u.var.var->id, v);
    break;
  case PAT_CTOR:
    for (int i = 0; i < p->u.ctor.n; i++) {
      snprintf(sub, sizeof sub, "RLYRT_AS_ADT(%s)->fields[%d]", v, i);
      pattern_bind(o, ind, p->u.ctor.args[i], sub);
    }
    break;
  case PAT_TUPLE:
    for (int i = 0; i < p->u.tuple.n; i++) {
      snprintf(sub, sizeof sub, "RLYRT_AS_TUPLE(%s)->fields[%d]", v, i);
      pattern_bind(o, ind, p->u.tuple.fields[i], sub);
    }
    break;
  default: break;
  }
}

/* The clauses of e that can match constructor tag (or all when tag < 0),
** tested in order. */
static void emit_clauses(Cg *cg, StrBuf *o, int ind, Expr *e, const char *m, int tag, const char *dest, bool tail) {
  bool first = true;
  bool closed = false;
  for (int i = 0; i < e->u.match.nclauses && !closed; i++) {
    const Pattern *p = e->u.match.clauses[i].pat;
    if (tag >= 0 && p->kind == PAT_CTOR && p->u.ctor.ctor->tag != tag) continue;
    /* Top-level constructor test is done by the switch. */
    StrBuf cond = {0};
    bool any = false;
    if (tag >= 0 && p->kind == PAT_CTOR) {
      char sub[512];
      for (int k = 0; k < p->u.ctor.n; k++) {
        snprintf(sub, sizeof sub, "RLYRT_AS_ADT(%s)->fields[%d]", m, k);
        pattern_test(&cond, p->u.ctor.args[k], sub, &any);
      }
    } else {
      pattern_test(&cond, p, m, &any);
    }
    cg_indent(o, ind);
    if (any) sb_printf(o, "%sif (%s) {\n", first ? "" : "else ", sb_str(&cond));
    else {
      sb_printf(o, "%s{\n", first ? "" : "else ");
      closed = true; /* matches always: later clauses are unreachable here */
    }
    sb_free(&cond);
    pattern_bind(o, ind + 1, p, m);
    cg_emit_block(cg, o, ind + 1, e->u.match.clauses[i].body, dest, tail);
    cg_indent(o, ind);
    sb_puts(o, "}\n");
    first = false;
  }
  if (!closed) {
    char where[256];
    cg_where(cg, e->span, where, sizeof where);
    cg_indent(o, ind);
    sb_printf(o, "%s{\n", first ? "" : "else ");
    cg_indent(o, ind + 1);
    sb_puts(o, "st = rlyrt_error(RLYRT_E_MATCH, \"%s: match");
    sb_puts(o, e->u.match.complete ? "" : "?");
    sb_puts(o, " found no clause\", ");
    lower_cstring(o, where, strlen(where));
    sb_puts(o, ");\n");
    cg_indent(o, ind + 1);
    sb_puts(o, "goto fail;\n");
    cg->used_fail = true;
    cg_indent(o, ind);
    sb_puts(o, "}\n");
  }
}

static const TypeDef *match_adt(const Expr *e) {
  for (int i = 0; i < e->u.match.nclauses; i++) {
    const Pattern *p = e->u.match.clauses[i].pat;
    if (p->kind == PAT_CTOR) return p->u.ctor.ctor->adt;
  }
  return NULL;
}

void cg_emit_match(Cg *cg, StrBuf *o, int ind, Expr *v, const char *dest, bool tail) {
  cg_need_boxed(cg, o, ind, v->u.match.scrut);
  int k = cg->tmp++;
  char m[32];
  snprintf(m, sizeof m, "m%d", k);
  cg_indent(o, ind);
  sb_puts(o, "{\n");
  cg_indent(o, ind + 1);
  sb_printf(o, "rlyrt_object *%s = ", m);
  cg_atom(cg, o, v->u.match.scrut);
  sb_puts(o, ";\n");
  const TypeDef *adt = match_adt(v);
  if (adt) {
    cg_indent(o, ind + 1);
    sb_printf(o, "switch (RLYRT_AS_ADT(%s)->tag) {\n", m);
    for (int c = 0; c < adt->nctors; c++) {
      cg_indent(o, ind + 1);
      sb_printf(o, "case %d: /* %s */\n", c, adt->ctors[c]->name->text);
      emit_clauses(cg, o, ind + 2, v, m, c, dest, tail);
      cg_indent(o, ind + 2);
      sb_puts(o, "break;\n");
    }
    cg_indent(o, ind + 1);
    sb_puts(o, "default:\n");
    emit_clauses(cg, o, ind + 2, v, m, 1 << 30, dest, tail);
    cg_indent(o, ind + 2);
    sb_puts(o, "break;\n");
    cg_indent(o, ind + 1);
    sb_puts(o, "}\n");
  } else {
    cg_indent(o, ind + 1); /* clauses of only `_` test nothing */
    sb_printf(o, "(void)%s;\n", m);
    emit_clauses(cg, o, ind + 1, v, m, -1, dest, tail);
  }
  cg_indent(o, ind);
  sb_puts(o, "}\n");
}
