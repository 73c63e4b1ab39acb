/* lexer.h: tokens of the Relay text format (spec section 2).
** The lexer turns one source file into an array of tokens, stopping after
** the `#[metadata]` token (whose payload is the rest of the file). Lexical
** errors are reported to the Diag and leave a TOK_ERROR token behind, so the
** parser can tell "already reported" from "unexpected". */
#ifndef RLY_LEXER_H
#define RLY_LEXER_H

#include "base/diag.h"
#include "ir/ir.h"

#define TOKENS(X)                                                              \
  X(EOF, "end of file") X(ERROR, "invalid token")                              \
  X(INT, "integer") X(FLOAT, "float") X(IDENT, "identifier")                   \
  X(LOCAL, "local variable") X(GRAPH, "graph binding") X(GLOBAL, "global")     \
  X(STRING, "string") X(META, "meta reference") X(VERSION, "version header")   \
  X(METADATA, "metadata section")                                              \
  X(LET, "'let'") X(FN, "'fn'") X(DEF, "'def'") X(IF, "'if'")                  \
  X(ELSE, "'else'") X(TYPE, "'type'") X(MATCH, "'match'")                      \
  X(MATCH_PARTIAL, "'match?'") X(EXTERN, "'extern'")                           \
  X(FREE_VAR, "'free_var'") X(REF, "'ref'") X(REF_READ, "'ref_read'")          \
  X(REF_WRITE, "'ref_write'")                                                  \
  X(LPAREN, "'('") X(RPAREN, "')'") X(LBRACKET, "'['") X(RBRACKET, "']'")      \
  X(LBRACE, "'{'") X(RBRACE, "'}'") X(COMMA, "','") X(PERIOD, "'.'")           \
  X(EQUAL, "'='") X(SEMI, "';'") X(COLON, "':'") X(PLUS, "'+'")                \
  X(MINUS, "'-'") X(STAR, "'*'") X(SLASH, "'/'") X(LT, "'<'") X(GT, "'>'")     \
  X(BANG, "'!'") X(QUESTION, "'?'")

typedef enum {
#define X(K, desc) TOK_##K,
  TOKENS(X)
#undef X
  TOK_KIND_COUNT
} TokKind;

extern const char *const tok_kind_desc[TOK_KIND_COUNT];

typedef struct Token {
  TokKind kind;
  Span span;
  const char *start;  /* the token's text in the source (span.len bytes) */
  /* space_before: whitespace or a comment precedes the token (adjacency
  ** rules: `==`, `=>`, `!=`, `<=`, `>=` need adjacent characters). */
  bool space_before;
  union {
    struct { int64_t v; DType dt; } i;           /* INT */
    struct { double v; DType dt; } f;            /* FLOAT */
    struct { const char *s; uint32_t len; uint32_t base_len; } name;
      /* LOCAL (without '%'; len covers dotted tails like conv1.weight,
      ** base_len stops at the first '.'), GLOBAL (without '@'), IDENT */
    struct { const char *key; uint32_t keylen; int64_t index; } meta; /* META */
    struct { const char *s; uint32_t len; } str; /* STRING: raw text between the quotes */
    struct { size_t offset; } metadata;          /* METADATA: payload starts at this byte */
  } u;
} Token;

typedef struct TokenList {
  Token *toks;  /* heap; ends with TOK_EOF or TOK_METADATA followed by TOK_EOF */
  int n;
} TokenList;

/* Tokenizes file `file` of sm (its text must be NUL-terminated). Errors go
** to d. A file that is not text (a NUL byte anywhere, or more than one in
** eight of its first 4096 bytes control characters or not UTF-8) gets one
** error, "not a Relay text file (...)", and a single TOK_ERROR token. The
** caller frees the list with tokens_free. */
TokenList lex_file(const SourceMap *sm, uint32_t file, Diag *d);
void tokens_free(TokenList *tl);

/* Decodes a STRING token's escapes (\" \\ \n \t \r \0 \xHH) into the arena;
** *len receives the decoded length. Returns NULL and reports to d when an
** escape is malformed. */
char *lex_decode_string(Arena *a, const Token *t, size_t *len, Diag *d);

#endif
