/* test_rel.c: the table-driven test of every operator's type relation.
** Reads tests/types/rel_*.txt (run from the repository root). Each case:
**   OP | ARGTYPE | ARGTYPE ... [| attrs: KEY=VALUE, ...] => RESULT
** RESULT is the expected result type as printed (Tensor[(1, 3), float32],
** (A, B), float32) or `error: TEXT`, where TEXT must occur in the message.
** The case is turned into `def @t(%a0: ARGTYPE, ...) { OP(%a0, ..., attrs) }`,
** parsed with the real parser, and the op's relation is called on the
** parameters' types. Every op of the table must have at least one case with
** a result and one with an error. */
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/strbuf.h"
#include "cases.h"
#include "check.h"
#include "ops/rel.h"
#include "syntax/parser.h"

static int ok_cases[OP_COUNT], err_cases[OP_COUNT];

static void fail(const char *where, const char *line, const char *why, const char *got) {
  check_failures++;
  fprintf(stderr, "%s: %s\n  %s%s%s\n", where, line, why, got ? ": " : "", got ? got : "");
}

static void run_case(const char *where, char *line) {
  check_count++;
  char *orig = strdup(line);
  char *arrow = strstr(line, " => ");
  if (!arrow) {
    fail(where, orig, "no ' => '", NULL);
    free(orig);
    return;
  }
  *arrow = 0;
  char *expected = cases_trim(arrow + 4);
  /* Split the left side on '|'. */
  char *parts[64] = {0};
  int np = 0;
  for (char *p = strtok(line, "|"); p && np < 64; p = strtok(NULL, "|")) parts[np++] = cases_trim(p);
  if (np < 1) {
    fail(where, orig, "no operator", NULL);
    free(orig);
    return;
  }
  const char *opname = parts[0];
  const char *attrs = NULL;
  StrBuf src = {0};
  sb_puts(&src, "#[version = \"0.0.5\"]\ndef @t(");
  int nargs = 0;
  for (int i = 1; i < np; i++) {
    if (strncmp(parts[i], "attrs:", 6) == 0) {
      attrs = cases_trim(parts[i] + 6);
      continue;
    }
    sb_printf(&src, "%s%%a%d: %s", nargs ? ", " : "", nargs, parts[i]);
    nargs++;
  }
  sb_printf(&src, ") {\n  %s(", opname);
  for (int i = 0; i < nargs; i++) sb_printf(&src, "%s%%a%d", i ? ", " : "", i);
  if (attrs && *attrs) sb_printf(&src, "%s%s", nargs ? ", " : "", attrs);
  sb_puts(&src, ")\n}\n");

  SourceMap sm = {0};
  char *text = strdup(sb_str(&src));
  uint32_t f = srcmap_add(&sm, where, text, strlen(text));
  Diag d;
  diag_init(&d, &sm);
  Module *m = parse_module(&sm, f, &d);
  if (!m) {
    StrBuf msg = {0};
    for (int i = 0; i < d.items.len; i++) sb_printf(&msg, "%s; ", d.items.data[i].msg);
    fail(where, orig, "does not parse", sb_str(&msg));
    sb_free(&msg);
    goto done;
  }
  Expr *fn = m->defs[0]->func;
  Expr *call = fn->u.func.body;
  if (call->kind != EXPR_CALL || call->u.call.callee->kind != EXPR_OP) {
    fail(where, orig, "not an operator call", NULL);
    goto done;
  }
  const OpDef *op = call->u.call.callee->u.op.op;
  TypeRel rel = op_type_rel(op);
  if (!rel) {
    fail(where, orig, "the op has no type relation", NULL);
    goto done;
  }
  Type *args[64];
  for (int i = 0; i < fn->u.func.nparams; i++) args[i] = fn->u.func.params[i]->u.var.annot;
  Diag rd;
  diag_init(&rd, &sm);
  RelCtx rc = {m, &rd, call->span, op};
  Type *out = NULL;
  RelResult r = rel(&rc, args, call->u.call.nargs, call->u.call.attrs, &out);
  bool want_error = strncmp(expected, "error:", 6) == 0;
  if (r == REL_DEFER) {
    fail(where, orig, "the relation deferred although every argument is known", NULL);
  } else if (r == REL_ERROR) {
    const char *msg = rd.items.len ? rd.items.data[0].msg : "(no message reported)";
    if (!want_error) fail(where, orig, "unexpected error", msg);
    else if (!strstr(msg, cases_trim(expected + 6))) fail(where, orig, "different error", msg);
    else err_cases[op->id]++;
    if (rd.items.len != 1 && want_error) fail(where, orig, "an error must be reported exactly once", msg);
  } else {
    StrBuf got = {0};
    if (out) ir_print_type(&got, out);
    if (want_error) fail(where, orig, "expected an error, got", sb_str(&got));
    else if (!out || strcmp(sb_str(&got), expected) != 0) fail(where, orig, "different type", sb_str(&got));
    else ok_cases[op->id]++;
    if (rd.items.len) fail(where, orig, "REL_OK but an error was reported", rd.items.data[0].msg);
    sb_free(&got);
  }
  diag_free(&rd);
done:
  module_free(m);
  diag_free(&d);
  srcmap_free(&sm);
  sb_free(&src);
  free(orig);
}

int main(void) {
  if (!cases_run("tests/types", "rel_", run_case)) return 1;
  /* Coverage of the table: every op has a relation, a valid and an invalid case. */
  for (int id = 0; id < OP_COUNT; id++) {
    const OpDef *op = op_get((OpId)id);
    check_count++;
    if (!op_type_rel(op)) {
      check_failures++;
      fprintf(stderr, "op %s has no type relation\n", op->name);
      continue;
    }
    if (!ok_cases[id] || !err_cases[id]) {
      check_failures++;
      fprintf(stderr, "op %s needs %s in tests/types/rel_*.txt\n", op->name,
              !ok_cases[id] && !err_cases[id] ? "a valid and an invalid case"
              : !ok_cases[id]                  ? "a valid case"
                                               : "an invalid case");
    }
  }
  return check_report("test_rel");
}
