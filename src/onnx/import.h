/* import.h: the importer's state and helpers, shared by the files of
** src/onnx (private: nothing outside src/onnx includes it).
**
** import.c owns the model, the value table and the converters of the
** plain operators; rnn.c converts LSTM, GRU and RNN, control.c If and Loop
** (the subgraphs they carry, and the sequences a loop appends to). A
** converter reads the node being converted (I->node) and its inputs,
** writes its let bindings to I->body and defines its outputs as values; it
** returns false after reporting an error with onnx_node_error. Functions a
** converter generates (a loop's recursive global) go to I->globals,
** printed before @main. */
#ifndef RLY_ONNX_IMPORT_H
#define RLY_ONNX_IMPORT_H

#include "onnx/onnx.h"
#include "onnx.pb-c.h"

enum { MAX_RANK = 8, OPSET_MIN = 7, OPSET_MAX = 18 };

typedef struct Value {
  char *name;         /* ONNX name */
  char *expr;         /* Relay expression */
  int elem;           /* ONNX element type */
  int rank;           /* -1: unknown */
  int64_t dims[MAX_RANK]; /* -1: unknown */
  const ConstData *cdata; /* a constant's data, or NULL */
  int seq;            /* a sequence (control.c): a SeqKind, 0 for a tensor */
} Value;

/* The sequences relayc reads: a Loop's list that each iteration appends
** one tensor to. SequenceEmpty gives SEQ_EMPTY (the loop's initial value);
** in the body the list so far is SEQ_SO_FAR (expr: the accumulator),
** SequenceInsert onto it SEQ_APPENDED (expr: the tensor appended); after
** the loop the list is SEQ_STACKED (expr: its tensors stacked on a new
** axis 0), which ConcatFromSequence reads. input() refuses sequences. */
typedef enum { SEQ_NONE, SEQ_EMPTY, SEQ_SO_FAR, SEQ_APPENDED, SEQ_STACKED } SeqKind;

typedef struct Importer {
  Diag *d;
  Span at;
  int opset;
  bool as_params;
  StrBuf body;                /* the let bindings of the function being written */
  StrBuf globals;             /* generated globals (loops), before @main */
  int nglobals;               /* their count, for their names */
  Vec(Value) values;
  Vec(ConstData *) consts;    /* metadata constants, in order */
  Vec(char *) pnames;         /* with as_params: initializer parameters */
  Vec(ConstData *) pvalues;
  StrBuf sig;                 /* @main's parameters */
  Vec(char *) idents;         /* their names, to keep them distinct */
  int nsig;
  int tmp;
  const Onnx__NodeProto *node; /* being converted, for messages */
  const char *dir;            /* the model's folder, for external data */
} Importer;

/* An error about the node being converted ("ONNX node 'NAME' (OP, opset
** N): MESSAGE"); returns false. */
bool onnx_node_error(Importer *I, const char *fmt, ...) RLY_PRINTF(2, 3);

/* Input i of the node, or NULL: absent (an empty name or past the end), or
** not defined (then with an error). */
Value *onnx_input(Importer *I, size_t i);

/* The value named name, innermost first; NULL when there is none. The
** pointer is valid until the next value is added. */
Value *onnx_find_value(Importer *I, const char *name);

/* Adds a value (name and expr copied); dims has rank entries (or NULL). */
Value *onnx_add_value(Importer *I, const char *name, const char *expr, int elem, int rank, const int64_t *dims);

/* Binds a fresh variable to the expression e and makes it output k of the
** node (when the node has one there), with the element type, rank and
** dims given; returns that value or NULL. */
Value *onnx_bind_output(Importer *I, size_t k, const char *e, int elem, int rank, const int64_t *dims);

/* The node's attributes: the attribute (or NULL), and its int, float,
** string (copied into buf of len bytes) or ints (at most max into out;
** their count, -1 when absent) with def when absent. */
const Onnx__AttributeProto *onnx_attr(Importer *I, const char *name);
int64_t onnx_attr_int(Importer *I, const char *name, int64_t def);
double onnx_attr_float(Importer *I, const char *name, double def);
const char *onnx_attr_str(Importer *I, const char *name, const char *def, char *buf, size_t len);
int onnx_attr_ints(Importer *I, const char *name, int64_t *out, int max);

/* The Relay dtype of an ONNX element type; false when relayc has none. */
bool onnx_elem_dtype(int elem, DType *out);

/* Appends a float literal of element type elem (onnx.h's rules: clamped,
** NaN an error). */
void onnx_put_float_lit(Importer *I, StrBuf *sb, int elem, double v);

/* The ints of a small int32/int64 constant value (at most max); -1 when v
** is not one. */
int onnx_const_ints(const Value *v, int64_t *out, int max);

/* A subgraph's initializer as a constant value named by the tensor (in the
** metadata section); false after an error. */
bool onnx_initializer_value(Importer *I, const Onnx__TensorProto *t);

/* Converts I->node (its converter or an error naming it); false after an
** error. */
bool onnx_convert_node(Importer *I);

/* Helpers of control.c that rnn.c shares: a Relay tensor type's text
** ("Tensor[(2, ?), float32]"; rank -1 is an error the caller reports
** first), and a fresh let variable's name ("%vN") in buf. */
void onnx_put_type(StrBuf *sb, int elem, int rank, const int64_t *dims);
const char *onnx_fresh(Importer *I, char buf[32]);

/* The converters of rnn.c and control.c (their rows are in import.c's
** table). */
bool onnx_cv_lstm(Importer *I);
bool onnx_cv_gru(Importer *I);
bool onnx_cv_rnn(Importer *I);
bool onnx_cv_if(Importer *I);
bool onnx_cv_loop(Importer *I);
bool onnx_cv_sequence_empty(Importer *I);
bool onnx_cv_sequence_insert(Importer *I);
bool onnx_cv_concat_from_sequence(Importer *I);

#endif
