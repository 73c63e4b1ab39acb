/* lexer.c: Relay text -> tokens (spec section 2).
** Character driven, first match wins: whitespace and comments, numbers
** (with sign parity and suffixes), `inff`, identifiers and keywords, `%`
** and `@` names, strings, `meta[..][..]`, `#[...]` attributes, punctuation.
** Deviations from TVM's lexer, all in the direction of accepting more or
** failing more clearly: `inff` is a literal only as a whole word; `nanf` is
** accepted as NaN; string escapes are decoded; `\r` is whitespace anywhere;
** a UTF-8 byte order mark at the start of a file is skipped;
** after an adjacent '.', digits lex as a plain integer (so `%0.1.0` is two
** projections rather than a float). */
#include "syntax/lexer.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

const char *const tok_kind_desc[TOK_KIND_COUNT] = {
#define X(K, desc) desc,
    TOKENS(X)
#undef X
};

typedef struct Lexer {
  const char *src, *p, *end;
  const char *line_start;
  uint32_t line, file;
  Diag *d;
  Vec(Token) toks;
  bool space;        /* whitespace/comment seen since the last token */
  bool in_error_run; /* suppress a cascade of "unexpected character" errors */
} Lexer;

static bool is_ident_start(int c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_ident_char(int c) { return is_ident_start(c) || is_digit(c) || c == '/'; }
static bool is_num_body(int c) { return is_digit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'; }

static Span span_at(Lexer *lx, const char *start, const char *end) {
  Span s;
  s.file = lx->file;
  s.line = lx->line;
  s.col = (uint32_t)(start - lx->line_start) + 1;
  s.len = (uint32_t)(end - start);
  return s;
}

static Token *push(Lexer *lx, TokKind k, const char *start, const char *end) {
  Token t;
  memset(&t, 0, sizeof t);
  t.kind = k;
  t.span = span_at(lx, start, end);
  t.start = start;
  t.space_before = lx->space;
  lx->space = false;
  if (k != TOK_ERROR) lx->in_error_run = false;
  VEC_PUSH(&lx->toks, t);
  return &VEC_LAST(&lx->toks);
}

static void error_tok(Lexer *lx, const char *start, const char *end, const char *fmt, const char *arg) {
  Token *t = push(lx, TOK_ERROR, start, end);
  diag_error(lx->d, t->span, fmt, arg);
  lx->in_error_run = true;
}

/* Advances over a newline at p (which must be '\n'). */
static void newline(Lexer *lx, const char *p) {
  lx->line++;
  lx->line_start = p + 1;
}

/* {==== Comments and whitespace ====} */

/* Skips whitespace and comments. Returns false after an unterminated block
** comment (reported; the rest of the file is consumed). */
static bool skip_space(Lexer *lx) {
  for (;;) {
    const char *p = lx->p;
    if (p >= lx->end) return true;
    char c = *p;
    if (c == ' ' || c == '\t' || c == '\r') {
      lx->p++;
      lx->space = true;
    } else if (c == '\n') {
      newline(lx, p);
      lx->p++;
      lx->space = true;
    } else if (c == '/' && p + 1 < lx->end && p[1] == '/') {
      while (lx->p < lx->end && *lx->p != '\n') lx->p++;
      lx->space = true;
    } else if (c == '/' && p + 1 < lx->end && p[1] == '*') {
      Span open = span_at(lx, p, p + 2);
      int depth = 0;
      const char *q = p;
      while (q < lx->end) {
        if (q + 1 < lx->end && q[0] == '/' && q[1] == '*') {
          depth++;
          q += 2;
        } else if (q + 1 < lx->end && q[0] == '*' && q[1] == '/') {
          q += 2;
          if (--depth == 0) break;
        } else {
          if (*q == '\n') newline(lx, q);
          q++;
        }
      }
      lx->p = q;
      lx->space = true;
      if (depth != 0) {
        Token t;
        memset(&t, 0, sizeof t);
        t.kind = TOK_ERROR;
        t.span = open;
        t.start = p;
        VEC_PUSH(&lx->toks, t);
        diag_error(lx->d, open, "unterminated block comment");
        return false;
      }
    } else {
      return true;
    }
  }
}

/* {==== Numbers ====} */

static bool all_digits(const char *s, const char *e) {
  if (s == e) return false;
  for (; s < e; s++)
    if (!is_digit(*s)) return false;
  return true;
}

/* float syntax: digits ('.' digits*)? ([eE] [+-]? digits+)? */
static bool float_syntax(const char *s, const char *e, bool *has_point_or_exp) {
  const char *q = s;
  *has_point_or_exp = false;
  if (q == e || !is_digit(*q)) return false;
  while (q < e && is_digit(*q)) q++;
  if (q < e && *q == '.') {
    *has_point_or_exp = true;
    q++;
    while (q < e && is_digit(*q)) q++;
  }
  if (q < e && (*q == 'e' || *q == 'E')) {
    *has_point_or_exp = true;
    q++;
    if (q < e && (*q == '+' || *q == '-')) q++;
    if (q == e || !is_digit(*q)) return false;
    while (q < e && is_digit(*q)) q++;
  }
  return q == e;
}

/* Parses the magnitude of a decimal integer; false on overflow of uint64. */
static bool parse_magnitude(const char *s, const char *e, uint64_t *out) {
  uint64_t v = 0;
  for (; s < e; s++) {
    uint64_t d = (uint64_t)(*s - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

static void lex_number(Lexer *lx, bool after_period) {
  const char *start = lx->p, *q = lx->p;
  int ndash = 0;
  while (q < lx->end && *q == '-') q++, ndash++;
  bool negative = ndash % 2 == 1;
  if (after_period) {
    /* `%t.0`, `%0.1.0`: a plain projection index. */
    while (q < lx->end && is_digit(*q)) q++;
    uint64_t mag;
    if (!parse_magnitude(start, q, &mag) || mag > INT32_MAX) {
      lx->p = q;
      error_tok(lx, start, q, "projection index %s is too large", "");
      return;
    }
    Token *t = push(lx, TOK_INT, start, q);
    t->u.i.v = (int64_t)mag;
    t->u.i.dt = DTYPE(DT_INT, 32);
    lx->p = q;
    return;
  }
  /* -inff */
  if (ndash && q + 4 <= lx->end && memcmp(q, "inff", 4) == 0 && !(q + 4 < lx->end && is_ident_char(q[4]))) {
    lx->p = q + 4;
    Token *t = push(lx, TOK_FLOAT, start, lx->p);
    t->u.f.v = negative ? -INFINITY : INFINITY;
    t->u.f.dt = DTYPE(DT_FLOAT, 32);
    return;
  }
  const char *body = q;
  while (q < lx->end && is_num_body(*q)) q++;
  const char *body_end = q;
  char suffix = 0;
  const char *width = q, *width_end = q;
  if (q < lx->end && (*q == 'f' || *q == 'i')) {
    suffix = *q++;
    width = q;
    while (q < lx->end && is_num_body(*q)) q++;
    width_end = q;
  }
  lx->p = q;
  size_t wlen = (size_t)(width_end - width);
  int bits = 32;
  if (suffix) {
    if (wlen == 0) bits = 32;
    else if (wlen == 2 && memcmp(width, "32", 2) == 0) bits = 32;
    else if (wlen == 2 && memcmp(width, "16", 2) == 0) bits = 16;
    else if (wlen == 2 && memcmp(width, "64", 2) == 0) bits = 64;
    else bits = 0;
  }
  /* Quote the whole literal in messages, bounded for enormous ones. */
  char quoted[64];
  size_t tl = (size_t)(q - start);
  if (tl < sizeof quoted) {
    memcpy(quoted, start, tl);
    quoted[tl] = 0;
  } else {
    memcpy(quoted, start, 40);
    memcpy(quoted + 40, "...", 4);
  }
  bool point_or_exp;
  bool is_float_syntax = float_syntax(body, body_end, &point_or_exp);
  if (!bits) {
    error_tok(lx, start, q,
              suffix == 'f' ? "invalid number '%s' (float widths are f16, f32 and f64)"
                            : "invalid number '%s' (integer widths are i16, i32 and i64)",
              quoted);
    return;
  }
  bool is_int = suffix == 'i' || (!suffix && all_digits(body, body_end));
  if (is_int) {
    uint64_t mag;
    if (!all_digits(body, body_end)) {
      error_tok(lx, start, q, "invalid number '%s'", quoted);
      return;
    }
    if (!parse_magnitude(body, body_end, &mag) || mag > (uint64_t)INT64_MAX) {
      error_tok(lx, start, q, "integer literal %s does not fit int64", quoted);
      return;
    }
    int64_t v = negative ? -(int64_t)mag : (int64_t)mag;
    if (!suffix) bits = (v >= INT32_MIN && v <= INT32_MAX) ? 32 : 64;
    int64_t lo = bits == 16 ? INT16_MIN : bits == 32 ? INT32_MIN : INT64_MIN;
    int64_t hi = bits == 16 ? INT16_MAX : bits == 32 ? INT32_MAX : INT64_MAX;
    if (v < lo || v > hi) {
      error_tok(lx, start, q, bits == 16 ? "integer literal %s does not fit int16"
                                         : "integer literal %s does not fit int32", quoted);
      return;
    }
    Token *t = push(lx, TOK_INT, start, q);
    t->u.i.v = v;
    t->u.i.dt = DTYPE(DT_INT, bits);
    return;
  }
  if (!is_float_syntax) {
    error_tok(lx, start, q, "invalid number '%s'", quoted);
    return;
  }
  size_t blen = (size_t)(body_end - body);
  char small[128];
  char *buf = blen < sizeof small ? small : rly_xmalloc(blen + 1);
  memcpy(buf, body, blen);
  buf[blen] = 0;
  errno = 0;
  double v = strtod(buf, NULL);
  bool overflow = errno == ERANGE && isinf(v);
  if (buf != small) free(buf);
  if (negative) v = -v;
  double limit = bits == 16 ? 65504.0 : bits == 32 ? (double)FLT_MAX : DBL_MAX;
  if (overflow || fabs(v) > limit) {
    error_tok(lx, start, q, bits == 16 ? "float literal %s does not fit float16"
                            : bits == 32 ? "float literal %s does not fit float32"
                                         : "float literal %s does not fit float64", quoted);
    return;
  }
  Token *t = push(lx, TOK_FLOAT, start, q);
  t->u.f.v = v;
  t->u.f.dt = DTYPE(DT_FLOAT, bits);
}

/* {==== Names, strings, attributes ====} */

static const struct {
  const char *word;
  TokKind kind;
} keywords[] = {
    {"let", TOK_LET},       {"fn", TOK_FN},         {"def", TOK_DEF},
    {"if", TOK_IF},         {"else", TOK_ELSE},     {"type", TOK_TYPE},
    {"match", TOK_MATCH},   {"extern", TOK_EXTERN}, {"free_var", TOK_FREE_VAR},
    {"ref", TOK_REF},       {"ref_read", TOK_REF_READ}, {"ref_write", TOK_REF_WRITE},
};

static void lex_ident(Lexer *lx) {
  const char *start = lx->p, *q = lx->p;
  while (q < lx->end && is_ident_char(*q)) q++;
  size_t n = (size_t)(q - start);
  if (n == 4 && memcmp(start, "meta", 4) == 0 && q < lx->end && *q == '[') {
    /* meta[KEY][INDEX] */
    const char *k = q + 1, *ke = k;
    while (ke < lx->end && *ke != ']' && *ke != '\n' && ke - k < 256) ke++;
    const char *r = ke;
    bool ok = ke < lx->end && *ke == ']' && ke > k && r + 1 < lx->end && r[1] == '[';
    const char *i = r + 2, *ie = i;
    if (ok) {
      while (ie < lx->end && is_digit(*ie)) ie++;
      ok = ie > i && ie < lx->end && *ie == ']' && ie - i <= 18;
    }
    if (!ok) {
      lx->p = q + 1;
      error_tok(lx, start, q + 1, "malformed meta reference%s: expected meta[TYPE_KEY][INDEX]", "");
      return;
    }
    uint64_t idx = 0;
    parse_magnitude(i, ie, &idx);
    lx->p = ie + 1;
    Token *t = push(lx, TOK_META, start, lx->p);
    t->u.meta.key = k;
    t->u.meta.keylen = (uint32_t)(ke - k);
    t->u.meta.index = (int64_t)idx;
    return;
  }
  if (n == 4 && memcmp(start, "inff", 4) == 0) {
    lx->p = q;
    Token *t = push(lx, TOK_FLOAT, start, q);
    t->u.f.v = INFINITY;
    t->u.f.dt = DTYPE(DT_FLOAT, 32);
    return;
  }
  if (n == 4 && memcmp(start, "nanf", 4) == 0) {
    lx->p = q;
    Token *t = push(lx, TOK_FLOAT, start, q);
    t->u.f.v = NAN;
    t->u.f.dt = DTYPE(DT_FLOAT, 32);
    return;
  }
  for (size_t k = 0; k < RLY_COUNTOF(keywords); k++) {
    if (strlen(keywords[k].word) == n && memcmp(keywords[k].word, start, n) == 0) {
      TokKind kind = keywords[k].kind;
      if (kind == TOK_MATCH && q < lx->end && *q == '?') {
        kind = TOK_MATCH_PARTIAL;
        q++;
      }
      lx->p = q;
      push(lx, kind, start, q);
      return;
    }
  }
  lx->p = q;
  Token *t = push(lx, TOK_IDENT, start, q);
  t->u.name.s = start;
  t->u.name.len = t->u.name.base_len = (uint32_t)n;
}

/* `%name`, `%name.with.dots`, `%0`, `@name`. */
static void lex_sigil(Lexer *lx) {
  const char *start = lx->p, *q = lx->p + 1;
  char sigil = *start;
  if (sigil == '%' && q < lx->end && is_digit(*q)) {
    while (q < lx->end && is_digit(*q)) q++;
    uint64_t v;
    if (!parse_magnitude(start + 1, q, &v) || v > INT32_MAX) {
      lx->p = q;
      error_tok(lx, start, q, "graph binding number %s is too large", "");
      return;
    }
    lx->p = q;
    Token *t = push(lx, TOK_GRAPH, start, q);
    t->u.i.v = (int64_t)v;
    return;
  }
  if (q >= lx->end || !is_ident_start(*q)) {
    lx->p = q;
    error_tok(lx, start, q, sigil == '%' ? "'%%' must be followed by a name or a number%s"
                                          : "'@' must be followed by a name%s", "");
    return;
  }
  while (q < lx->end && is_ident_char(*q)) q++;
  const char *base_end = q;
  if (sigil == '%') {
    /* Dotted names from importers (spec 5.7): keep `.segment` tails; the
    ** parser decides between a dotted name and projections. */
    while (q + 1 < lx->end && *q == '.' && (is_ident_char(q[1]))) {
      q++;
      while (q < lx->end && is_ident_char(*q)) q++;
    }
  }
  lx->p = q;
  Token *t = push(lx, sigil == '%' ? TOK_LOCAL : TOK_GLOBAL, start, q);
  t->u.name.s = start + 1;
  t->u.name.len = (uint32_t)(q - start - 1);
  t->u.name.base_len = (uint32_t)(base_end - start - 1);
}

static void lex_string(Lexer *lx) {
  const char *start = lx->p, *q = lx->p + 1;
  Span open = span_at(lx, start, start + 1);
  uint32_t line = lx->line;
  const char *ls = lx->line_start;
  while (q < lx->end && *q != '"') {
    if (*q == '\\' && q + 1 < lx->end) {
      if (q[1] == '\n') newline(lx, q + 1);
      q += 2;
      continue;
    }
    if (*q == '\n') newline(lx, q);
    q++;
  }
  if (q >= lx->end) {
    lx->p = lx->end;
    Token t;
    memset(&t, 0, sizeof t);
    t.kind = TOK_ERROR;
    t.span = open;
    t.start = start;
    VEC_PUSH(&lx->toks, t);
    diag_error(lx->d, open, "unterminated string");
    return;
  }
  lx->p = q + 1;
  /* The span starts at the opening quote, on its line. */
  uint32_t save_line = lx->line;
  const char *save_ls = lx->line_start;
  lx->line = line;
  lx->line_start = ls;
  Token *t = push(lx, TOK_STRING, start, line == save_line ? lx->p : start + 1);
  lx->line = save_line;
  lx->line_start = save_ls;
  t->u.str.s = start + 1;
  t->u.str.len = (uint32_t)(q - start - 1);
}

/* `#[version = "0.0.5"]` and `#[metadata]`. Returns true when lexing stops
** (after the metadata token). */
static bool lex_attribute(Lexer *lx) {
  const char *start = lx->p;
  if (start + 1 >= lx->end || start[1] != '[') {
    lx->p++;
    error_tok(lx, start, start + 1, "'#' must start an attribute such as #[version = \"0.0.5\"]%s", "");
    return false;
  }
  const char *q = start + 2;
  while (q < lx->end && *q != ']' && *q != '\n') q++;
  if (q >= lx->end || *q != ']') {
    lx->p = q;
    error_tok(lx, start, q, "unterminated attribute: expected ']'%s", "");
    return false;
  }
  const char *a = start + 2, *b = q;
  while (a < b && (*a == ' ' || *a == '\t')) a++;
  while (b > a && (b[-1] == ' ' || b[-1] == '\t')) b--;
  lx->p = q + 1;
  if (b - a == 8 && memcmp(a, "metadata", 8) == 0) {
    Token *t = push(lx, TOK_METADATA, start, lx->p);
    t->u.metadata.offset = (size_t)(lx->p - lx->src);
    return true;
  }
  if (b - a >= 7 && memcmp(a, "version", 7) == 0) {
    const char *v = a + 7;
    while (v < b && (*v == ' ' || *v == '\t')) v++;
    if (v < b && *v == '=') {
      v++;
      while (v < b && (*v == ' ' || *v == '\t')) v++;
      if (b - v >= 2 && *v == '"' && b[-1] == '"') {
        Token *t = push(lx, TOK_VERSION, start, lx->p);
        t->u.str.s = v + 1;
        t->u.str.len = (uint32_t)(b - v - 2);
        return false;
      }
    }
    error_tok(lx, start, lx->p, "malformed version header: expected #[version = \"0.0.5\"]%s", "");
    return false;
  }
  char shown[64];
  snprintf(shown, sizeof shown, "%.*s%s", (int)(lx->p - start > 40 ? 40 : lx->p - start), start,
           lx->p - start > 40 ? "..." : "");
  error_tok(lx, start, lx->p, "unknown attribute '%s': expected #[version = \"0.0.5\"] or #[metadata]", shown);
  return false;
}

/* {==== Driver ====} */

static TokKind punct_kind(char c) {
  switch (c) {
  case '(': return TOK_LPAREN;
  case ')': return TOK_RPAREN;
  case '[': return TOK_LBRACKET;
  case ']': return TOK_RBRACKET;
  case '{': return TOK_LBRACE;
  case '}': return TOK_RBRACE;
  case ',': return TOK_COMMA;
  case '.': return TOK_PERIOD;
  case '=': return TOK_EQUAL;
  case ';': return TOK_SEMI;
  case ':': return TOK_COLON;
  case '+': return TOK_PLUS;
  case '-': return TOK_MINUS;
  case '*': return TOK_STAR;
  case '/': return TOK_SLASH;
  case '<': return TOK_LT;
  case '>': return TOK_GT;
  case '!': return TOK_BANG;
  case '?': return TOK_QUESTION;
  default: return TOK_EOF;
  }
}

static void unexpected_char(Lexer *lx) {
  const char *start = lx->p;
  unsigned char c = (unsigned char)*start;
  lx->p++;
  if (lx->in_error_run) {
    /* One error per run of garbage; extend the error token instead. */
    return;
  }
  char buf[32];
  if (c >= 0x20 && c < 0x7f) snprintf(buf, sizeof buf, "'%c'", c);
  else snprintf(buf, sizeof buf, "byte 0x%02x", c);
  error_tok(lx, start, lx->p, "unexpected character %s", buf);
}

/* {==== Binary input ====} */

enum { TEXT_PROBE = 4096 }; /* bytes examined for the proportion rule */

/* Is the source text? Not when it holds a NUL byte anywhere, or when more
** than one in eight of its first TEXT_PROBE bytes are control characters
** (other than tab, newline, carriage return and form feed) or not
** well-formed UTF-8. Otherwise reports one error for the whole file (no
** excerpt: the bytes would be garbage) and returns false. */
static bool check_text(const Source *s, uint32_t file, Diag *d) {
  Span whole = {file, 0, 0, 0};
  const char *nul = memchr(s->text, 0, s->len);
  if (nul) {
    diag_error(d, whole, "not a Relay text file (contains a NUL byte at offset %zu)", (size_t)(nul - s->text));
    return false;
  }
  size_t n = s->len < TEXT_PROBE ? s->len : TEXT_PROBE, bad = 0;
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)s->text[i];
    size_t k = c >= 0x80 ? utf8_len(s->text + i, s->len - i) : 1;
    bool ok = c >= 0x80 ? k > 0 : (c >= 0x20 && c != 0x7f) || c == '\t' || c == '\n' || c == '\r' || c == '\f';
    if (!ok) bad++, k = 1;
    i += k;
  }
  if (bad * 8 > n) {
    diag_error(d, whole,
               "not a Relay text file (%zu of its first %zu bytes are control characters or not UTF-8)", bad, n);
    return false;
  }
  return true;
}

TokenList lex_file(const SourceMap *sm, uint32_t file, Diag *d) {
  const Source *s = srcmap_get(sm, file);
  Lexer lx;
  memset(&lx, 0, sizeof lx);
  lx.src = lx.p = lx.line_start = s->text;
  lx.end = s->text + s->len;
  lx.line = 1;
  lx.file = file;
  lx.d = d;
  if (!check_text(s, file, d)) {
    /* One token for the whole file: the parser sees an error already
    ** reported and nothing else. */
    push(&lx, TOK_ERROR, lx.p, lx.p);
    lx.p = lx.end;
  }
  /* A UTF-8 byte order mark, which some editors write, starts no token. */
  if (lx.end - lx.p >= 3 && memcmp(lx.p, "\xEF\xBB\xBF", 3) == 0) lx.p += 3;
  for (;;) {
    if (!skip_space(&lx)) break;
    if (lx.p >= lx.end || diag_full(d)) break;
    char c = *lx.p;
    bool after_period = !lx.space && lx.toks.len && VEC_LAST(&lx.toks).kind == TOK_PERIOD;
    if (is_digit(c)) {
      lex_number(&lx, after_period);
    } else if (c == '-') {
      const char *q = lx.p;
      while (q < lx.end && *q == '-') q++;
      if (q < lx.end && (is_digit(*q) || (q + 4 <= lx.end && memcmp(q, "inff", 4) == 0 &&
                                          !(q + 4 < lx.end && is_ident_char(q[4]))))) {
        lex_number(&lx, false);
      } else {
        push(&lx, TOK_MINUS, lx.p, lx.p + 1);
        lx.p++;
      }
    } else if (is_ident_start(c)) {
      lex_ident(&lx);
    } else if (c == '%' || c == '@') {
      lex_sigil(&lx);
    } else if (c == '"') {
      lex_string(&lx);
    } else if (c == '#') {
      if (lex_attribute(&lx)) break;
    } else if (punct_kind(c) != TOK_EOF) {
      push(&lx, punct_kind(c), lx.p, lx.p + 1);
      lx.p++;
    } else {
      unexpected_char(&lx);
    }
  }
  push(&lx, TOK_EOF, lx.p < lx.end ? lx.p : lx.end, lx.p < lx.end ? lx.p : lx.end);
  TokenList tl = {lx.toks.data, lx.toks.len};
  return tl;
}

void tokens_free(TokenList *tl) {
  free(tl->toks);
  tl->toks = NULL;
  tl->n = 0;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

char *lex_decode_string(Arena *a, const Token *t, size_t *len, Diag *d) {
  const char *s = t->u.str.s;
  size_t n = t->u.str.len;
  char *out = arena_alloc(a, n + 1, 1);
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c != '\\') {
      out[o++] = c;
      continue;
    }
    if (++i >= n) break;
    switch (s[i]) {
    case 'n': out[o++] = '\n'; break;
    case 't': out[o++] = '\t'; break;
    case 'r': out[o++] = '\r'; break;
    case '0': out[o++] = '\0'; break;
    case '\\': out[o++] = '\\'; break;
    case '"': out[o++] = '"'; break;
    case '\'': out[o++] = '\''; break;
    case 'x': {
      int h1 = i + 1 < n ? hexval(s[i + 1]) : -1;
      int h2 = i + 2 < n ? hexval(s[i + 2]) : -1;
      if (h1 < 0 || h2 < 0) {
        diag_error(d, t->span, "invalid escape in string: \\x needs two hex digits");
        return NULL;
      }
      out[o++] = (char)(h1 * 16 + h2);
      i += 2;
      break;
    }
    default:
      diag_error(d, t->span, "invalid escape '\\%c' in string", s[i]);
      return NULL;
    }
  }
  out[o] = 0;
  *len = o;
  return out;
}
