/* metadata.c: the metadata section (spec 6.1-6.4): TVM's JSON object graph
** read with cJSON, the lookups behind meta[<type key>][<index>] (constants
** and attrs objects), and the writer that produces a section of constants.
**
** meta_parse checks the structure once (root Map -> Array nodes -> element
** node indices in range, every node an object with a type_key) and builds
** index tables, so each later lookup is O(1): cJSON keeps arrays as linked
** lists, so nothing here indexes a cJSON array by position after parsing.
** Object contents (a constant's blob, an attrs object's fields) are checked
** when they are used, at the span of the reference.
**
** Input is untrusted: every node index, array index and field type is
** checked; references are followed to a bounded depth, so cyclic graphs
** cannot loop.
**
** Weights (meta_parse_borrowed, which the parser uses): the base64 strings
** of "b64ndarrays" are most of a model's text. A scan finds that top-level
** array first; when it is a plain array of base64 strings, cJSON reads the
** rest of the section only (a copy with the array emptied, small), and each
** blob is decoded straight from the caller's text, which must outlive the
** Metadata: no copy of the base64 text is ever made. Anything unusual (no
** such array, escapes in keys, other characters in the strings, a document
** the copy does not parse) goes the plain way, with cJSON's own errors. */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "syntax/metadata_impl.h"

/* {==== The parsed section ====} */

typedef struct MetaKey {
  const char *key;   /* type key, borrowed from the JSON */
  int64_t *items;    /* node index of each object, in meta[key][i] order (heap) */
  int64_t n;
} MetaKey;

struct Metadata {
  cJSON *doc;
  const cJSON **nodes;       /* node i (heap) */
  int64_t nnodes;
  const cJSON **arrays;      /* b64ndarrays[i], string items (heap) */
  int64_t narrays;
  struct BlobRef *refs;      /* meta_parse_borrowed: b64ndarrays[i] in the caller's text (heap), else NULL */
  ConstData *decoded;        /* per array: decoded once; its base64 text is then freed (heap) */
  bool *is_decoded;
  const Module *decoded_into; /* the module whose arena holds the decoded data */
  MetaKey *keys;             /* entries of the root Map (heap) */
  int nkeys;
  const MetaKey *constants;  /* the "relay.Constant" entry, or NULL */
  int64_t attrs_work;        /* values built and nodes scanned by meta_attrs so far */
};

/* Attribute values nest at most this deep (arrays of arrays...); deeper
** means a malformed or cyclic graph. */
enum { MAX_VALUE_DEPTH = 16 };
/* At most this many values (and node visits) in all the attrs objects
** converted from one section: a small graph whose arrays point back at
** themselves could otherwise expand into exponentially many values within
** the depth limit, and each reference in the text converts its object
** again, so a limit per object would still let a few kilobytes of text
** cost minutes. Real sections hold a few values per object. */
enum { MAX_VALUE_WORK = 1 << 20 };
enum { MAX_TYPE_KEYS = 4096 };

static const char *json_kind(const cJSON *v) {
  if (!v) return "nothing";
  if (cJSON_IsObject(v)) return "an object";
  if (cJSON_IsArray(v)) return "an array";
  if (cJSON_IsString(v)) return "a string";
  if (cJSON_IsNumber(v)) return "a number";
  if (cJSON_IsBool(v)) return "a boolean";
  if (cJSON_IsNull(v)) return "null";
  return "an invalid value";
}

static const cJSON *field(const cJSON *obj, const char *name) {
  return cJSON_GetObjectItemCaseSensitive(obj, name);
}

static int64_t list_len(const cJSON *arr) {
  int64_t n = 0;
  for (const cJSON *c = arr ? arr->child : NULL; c; c = c->next) n++;
  return n;
}

/* A JSON number that is an integer in [0, limit). */
static bool json_index(const cJSON *v, int64_t limit, int64_t *out) {
  if (!cJSON_IsNumber(v)) return false;
  double x = v->valuedouble;
  if (!(x >= 0) || x != floor(x) || x >= (double)limit) return false;
  *out = (int64_t)x;
  return true;
}

/* Strict decimal integer text: optional '-', digits, nothing else. */
static bool parse_i64(const char *s, int64_t *out) {
  const char *p = s;
  bool neg = *p == '-';
  if (neg) p++;
  if (*p < '0' || *p > '9') return false;
  uint64_t v = 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    unsigned dig = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - dig) / 10) return false;
    v = v * 10 + dig;
  }
  if (*p) return false;
  if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX) return false;
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return true;
}

static const char *node_type(const Metadata *md, int64_t i) {
  return field(md->nodes[i], "type_key")->valuestring;  /* checked by meta_parse */
}

static const MetaKey *find_key(const Metadata *md, const char *type_key) {
  for (int i = 0; i < md->nkeys; i++)
    if (strcmp(md->keys[i].key, type_key) == 0) return &md->keys[i];
  return NULL;
}

/* Reads the element indices of Array node `arr` into a heap array. */
static bool read_array_items(Metadata *md, int64_t arr, const char *key, MetaKey *mk, Diag *d, Span at) {
  const cJSON *node = md->nodes[arr];
  const char *ty = node_type(md, arr);
  if (strcmp(ty, "Array") != 0) {
    diag_error(d, at,
               "metadata: node %" PRId64
               " is not an Array (it is a \"%s\"), but the root Map lists it for \"%s\"",
               arr, ty, key);
    return false;
  }
  const cJSON *data = field(node, "data");  /* absent when the array is empty */
  if (data && !cJSON_IsArray(data)) {
    diag_error(d, at, "metadata: \"data\" of Array node %" PRId64 " is %s, expected an array of node indices",
               arr, json_kind(data));
    return false;
  }
  mk->key = key;
  mk->n = list_len(data);
  mk->items = rly_xmalloc(sizeof(int64_t) * (size_t)(mk->n ? mk->n : 1));
  int64_t i = 0;
  for (const cJSON *c = data ? data->child : NULL; c; c = c->next, i++) {
    if (!json_index(c, md->nnodes, &mk->items[i])) {
      if (cJSON_IsNumber(c))
        diag_error(d, at,
                   "metadata: Array node %" PRId64 " element %" PRId64
                   " refers to node %.0f, but there are only %" PRId64 " nodes",
                   arr, i, c->valuedouble, md->nnodes);
      else
        diag_error(d, at, "metadata: Array node %" PRId64 " element %" PRId64 " is %s, expected a node index",
                   arr, i, json_kind(c));
      free(mk->items);
      mk->items = NULL;
      return false;
    }
  }
  return true;
}

/* Builds md->keys from the root Map: either {"keys": [...], "data": [...]}
** (string keys) or "data" alternating key and value node indices with keys
** being runtime.String nodes. Older TVMs call the string-keyed map StrMap. */
static bool read_root(Metadata *md, int64_t root, Diag *d, Span at) {
  const cJSON *node = md->nodes[root];
  const char *ty = node_type(md, root);
  if (strcmp(ty, "Map") != 0 && strcmp(ty, "StrMap") != 0) {
    diag_error(d, at, "metadata: root node %" PRId64 " is a \"%s\", expected a Map", root, ty);
    return false;
  }
  const cJSON *keys = field(node, "keys"), *data = field(node, "data");
  if ((keys && !cJSON_IsArray(keys)) || (data && !cJSON_IsArray(data))) {
    diag_error(d, at, "metadata: root Map node %" PRId64 ": \"keys\" and \"data\" must be arrays", root);
    return false;
  }
  int64_t nkeys = list_len(keys), ndata = list_len(data);
  int64_t n = keys ? nkeys : ndata / 2;
  if (keys ? nkeys != ndata : ndata % 2 != 0) {
    diag_error(d, at, "metadata: root Map node %" PRId64 " has %" PRId64 " keys but %" PRId64 " values", root,
               keys ? nkeys : (ndata + 1) / 2, keys ? ndata : ndata / 2);
    return false;
  }
  if (n > MAX_TYPE_KEYS) {  /* real files have a handful; keys are looked up by scanning */
    diag_error(d, at, "metadata: root Map has %" PRId64 " entries (at most %d type keys are supported)", n,
               MAX_TYPE_KEYS);
    return false;
  }
  md->keys = rly_xcalloc((size_t)(n ? n : 1), sizeof(MetaKey));
  const cJSON *k = keys ? keys->child : NULL, *v = data ? data->child : NULL;
  for (int64_t i = 0; i < n; i++) {
    const char *key;
    int64_t idx;
    if (keys) {
      if (!cJSON_IsString(k)) {
        diag_error(d, at, "metadata: key %" PRId64 " of the root Map is %s, expected a string", i,
                   json_kind(k));
        return false;
      }
      key = k->valuestring;
      k = k->next;
    } else {
      const cJSON *s;
      if (!json_index(v, md->nnodes, &idx) || strcmp(node_type(md, idx), "runtime.String") != 0 ||
          !cJSON_IsString(s = field(md->nodes[idx], "repr_str"))) {
        diag_error(d, at, "metadata: key %" PRId64 " of the root Map is not a runtime.String node", i);
        return false;
      }
      key = s->valuestring;
      v = v->next;
    }
    if (!json_index(v, md->nnodes, &idx)) {
      diag_error(d, at, "metadata: value %" PRId64 " of the root Map is not a node index below %" PRId64, i,
                 md->nnodes);
      return false;
    }
    v = v->next;
    if (find_key(md, key)) {
      diag_error(d, at, "metadata: type key \"%s\" appears twice in the root Map", key);
      return false;
    }
    if (!read_array_items(md, idx, key, &md->keys[md->nkeys], d, at)) return false;
    md->nkeys++;
  }
  return true;
}

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* {==== Finding the blobs in the text ====} */

typedef struct BlobRef {
  const char *s; /* the base64 text, in the caller's buffer */
  size_t n;
} BlobRef;

static size_t skip_ws(const char *s, size_t i, size_t n) {
  while (i < n && is_space(s[i])) i++;
  return i;
}

/* s[i] is '"': the index after the closing quote, or 0 when there is none;
** *esc is set when the string has a backslash. */
static size_t skip_string(const char *s, size_t i, size_t n, bool *esc) {
  for (i++; i < n; i++) {
    if (s[i] == '\\') {
      *esc = true;
      i++;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return 0;
}

/* The index after the JSON value at s[i], or 0 (not validated: cJSON
** checks what this skips). */
static size_t skip_value(const char *s, size_t i, size_t n) {
  bool esc = false;
  if (i >= n) return 0;
  if (s[i] == '"') return skip_string(s, i, n, &esc);
  if (s[i] == '{' || s[i] == '[') {
    int64_t depth = 0;
    for (; i < n; i++) {
      char c = s[i];
      if (c == '"') {
        size_t j = skip_string(s, i, n, &esc);
        if (!j) return 0;
        i = j - 1;
      } else if (c == '{' || c == '[') {
        depth++;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        return i + 1;
      }
    }
    return 0;
  }
  while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && !is_space(s[i])) i++;
  return i;
}

/* 1 for the characters of base64 text ('=' included), by byte value. */
#define B64_ROW(a) a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a
static const unsigned char b64_chars[256] = {
    B64_ROW(0), B64_ROW(0),                                   /* 0x00-0x1f */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1,           /* 0x20-0x2f: + / */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0,           /* 0x30-0x3f: 0-9 = */
    0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,           /* 0x40-0x4f: A-O */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0,           /* 0x50-0x5f: P-Z */
    0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,           /* 0x60-0x6f: a-o */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0,           /* 0x70-0x7f: p-z */
    B64_ROW(0), B64_ROW(0), B64_ROW(0), B64_ROW(0), B64_ROW(0), B64_ROW(0), B64_ROW(0), B64_ROW(0),
};
#undef B64_ROW

/* The end of the run of base64 characters from s[i] (at most n). */
static size_t b64_run(const char *s, size_t i, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  while (i + 8 <= n && (b64_chars[u[i]] & b64_chars[u[i + 1]] & b64_chars[u[i + 2]] & b64_chars[u[i + 3]] &
                        b64_chars[u[i + 4]] & b64_chars[u[i + 5]] & b64_chars[u[i + 6]] & b64_chars[u[i + 7]]))
    i += 8;
  while (i < n && b64_chars[u[i]]) i++;
  return i;
}

/* Finds the member "b64ndarrays" of the top-level object of s: an array of
** strings of base64 characters only. Returns true with the array's extent
** [*a0, *a1) and its strings in *refs (malloc'd, *nrefs of them); false
** when the text is not so (also for a key with an escape, or the member
** twice). */
static bool find_blobs(const char *s, size_t n, size_t *a0, size_t *a1, BlobRef **refs, int64_t *nrefs) {
  Vec(BlobRef) v = {0};
  bool found = false;
  size_t i = skip_ws(s, 0, n);
  if (i >= n || s[i] != '{') return false;
  i++;
  for (;;) {
    i = skip_ws(s, i, n);
    if (i < n && s[i] == '}') break;
    if (i >= n || s[i] != '"') goto fail;
    bool esc = false;
    size_t k0 = i, j = skip_string(s, i, n, &esc);
    if (!j || esc) goto fail;
    bool is_blobs = j - k0 == 13 && memcmp(s + k0, "\"b64ndarrays\"", 13) == 0;
    i = skip_ws(s, j, n);
    if (i >= n || s[i] != ':') goto fail;
    i = skip_ws(s, i + 1, n);
    if (!is_blobs) {
      i = skip_value(s, i, n);
      if (!i) goto fail;
    } else {
      if (found || i >= n || s[i] != '[') goto fail;
      found = true;
      *a0 = i;
      i = skip_ws(s, i + 1, n);
      if (i < n && s[i] == ']') {
        i++;
      } else {
        for (;;) {
          if (i >= n || s[i] != '"') goto fail;
          size_t b = i + 1, e = b64_run(s, b, n);
          if (e >= n || s[e] != '"') goto fail;
          BlobRef r = {s + b, e - b};
          VEC_PUSH(&v, r);
          i = skip_ws(s, e + 1, n);
          if (i < n && s[i] == ',') {
            i = skip_ws(s, i + 1, n);
          } else if (i < n && s[i] == ']') {
            i++;
            break;
          } else {
            goto fail;
          }
        }
      }
      *a1 = i;
    }
    i = skip_ws(s, i, n);
    if (i < n && s[i] == ',') {
      i++;
    } else if (!(i < n && s[i] == '}')) {
      goto fail;
    }
  }
  if (!found) goto fail;
  *refs = v.data;
  *nrefs = v.len;
  return true;
fail:
  VEC_FREE(&v);
  return false;
}

/* The document of json less its blobs (an empty b64ndarrays), and the
** blobs in *refs, when find_blobs finds them and the rest is one JSON
** document with nothing but whitespace after it; else NULL. */
static cJSON *parse_without_blobs(const char *json, size_t len, BlobRef **refs, int64_t *nrefs) {
  size_t a0 = 0, a1 = 0;
  if (!json || !len || !find_blobs(json, len, &a0, &a1, refs, nrefs)) return NULL;
  size_t n = a0 + 2 + (len - a1);
  char *skel = rly_xmalloc(n);
  memcpy(skel, json, a0);
  memcpy(skel + a0, "[]", 2);
  memcpy(skel + a0 + 2, json + a1, len - a1);
  const char *end = NULL;
  cJSON *doc = cJSON_ParseWithLengthOpts(skel, n, &end, 0);
  for (size_t i = end ? (size_t)(end - skel) : n; doc && i < n; i++)
    if (!is_space(skel[i])) {
      cJSON_Delete(doc);
      doc = NULL;
    }
  free(skel);
  if (!doc) {
    free(*refs);
    *refs = NULL;
    *nrefs = 0;
  }
  return doc;
}

static Metadata *parse_section(const char *json, size_t len, Diag *d, Span at, bool borrowed);

Metadata *meta_parse(const char *json, size_t len, Diag *d, Span at) { return parse_section(json, len, d, at, false); }

Metadata *meta_parse_borrowed(const char *json, size_t len, Diag *d, Span at) {
  return parse_section(json, len, d, at, true);
}

static Metadata *parse_section(const char *json, size_t len, Diag *d, Span at, bool borrowed) {
  const char *end = NULL;
  BlobRef *refs = NULL;
  int64_t nrefs = 0;
  cJSON *doc = borrowed ? parse_without_blobs(json, len, &refs, &nrefs) : NULL;
  if (doc) end = json + len; /* checked: nothing but whitespace follows */
  else doc = json && len ? cJSON_ParseWithLengthOpts(json, len, &end, 0) : NULL;
  if (!doc) {
    if (!json || len == 0) diag_error(d, at, "metadata: the section is empty; expected a JSON object");
    else
      diag_error(d, at, "metadata: invalid JSON near byte %zu",
                 end && end >= json ? (size_t)(end - json) : 0);
    return NULL;
  }
  Metadata *md = rly_xcalloc(1, sizeof(Metadata));
  md->doc = doc;
  md->refs = refs;
  for (size_t i = end ? (size_t)(end - json) : len; i < len; i++) {
    if (!is_space(json[i])) {
      diag_error(d, at, "metadata: unexpected text after the JSON document at byte %zu", i);
      goto fail;
    }
  }
  if (!cJSON_IsObject(doc)) {
    diag_error(d, at, "metadata: the section is %s, expected a JSON object", json_kind(doc));
    goto fail;
  }
  const cJSON *nodes = field(doc, "nodes");
  if (!cJSON_IsArray(nodes) || !nodes->child) {
    diag_error(d, at, "metadata: \"nodes\" is %s, expected a non-empty array",
               nodes ? json_kind(nodes) : "missing");
    goto fail;
  }
  md->nnodes = list_len(nodes);
  md->nodes = rly_xmalloc(sizeof(cJSON *) * (size_t)md->nnodes);
  int64_t i = 0;
  for (const cJSON *c = nodes->child; c; c = c->next, i++) {
    if (!cJSON_IsObject(c)) {
      diag_error(d, at, "metadata: node %" PRId64 " is %s, expected an object", i, json_kind(c));
      goto fail;
    }
    if (!cJSON_IsString(field(c, "type_key"))) {
      diag_error(d, at, "metadata: node %" PRId64 " has no \"type_key\" string", i);
      goto fail;
    }
    md->nodes[i] = c;
  }
  const cJSON *arrays = field(doc, "b64ndarrays");  /* optional */
  if (arrays && !cJSON_IsArray(arrays)) {
    diag_error(d, at, "metadata: \"b64ndarrays\" is %s, expected an array of strings", json_kind(arrays));
    goto fail;
  }
  md->narrays = md->refs ? nrefs : list_len(arrays);
  md->arrays = rly_xmalloc(sizeof(cJSON *) * (size_t)(md->narrays ? md->narrays : 1));
  i = 0;
  for (const cJSON *c = arrays ? arrays->child : NULL; c; c = c->next, i++) {
    if (!cJSON_IsString(c)) {
      diag_error(d, at, "metadata: b64ndarrays[%" PRId64 "] is %s, expected a base64 string", i,
                 json_kind(c));
      goto fail;
    }
    md->arrays[i] = c;
  }
  const cJSON *root = field(doc, "root");
  int64_t r;
  if (!json_index(root, md->nnodes, &r)) {
    if (cJSON_IsNumber(root))
      diag_error(d, at, "metadata: root node %.0f is out of range (there are %" PRId64 " nodes)",
                 root->valuedouble, md->nnodes);
    else
      diag_error(d, at, "metadata: \"root\" is %s, expected a node index",
                 root ? json_kind(root) : "missing");
    goto fail;
  }
  if (!read_root(md, r, d, at)) goto fail;
  md->constants = find_key(md, "relay.Constant");
  return md;
fail:
  meta_free(md);
  return NULL;
}

void meta_free(Metadata *md) {
  if (!md) return;
  for (int i = 0; i < md->nkeys; i++) free(md->keys[i].items);
  free(md->keys);
  free(md->nodes);
  free(md->arrays);
  free(md->refs);
  free(md->decoded);
  free(md->is_decoded);
  cJSON_Delete(md->doc);
  free(md);
}

int64_t meta_count(const Metadata *md, const char *type_key) {
  const MetaKey *mk = md ? find_key(md, type_key) : NULL;
  return mk ? mk->n : 0;
}

int meta_nkeys(const Metadata *md) { return md ? md->nkeys : 0; }

const char *meta_key(const Metadata *md, int i) {
  RLY_ASSERT(md && i >= 0 && i < md->nkeys);
  return md->keys[i].key;
}

/* Node index of meta[type_key][index], or -1 after an error. */
static int64_t lookup(const MetaKey *mk, const char *type_key, int64_t index, Diag *d,
                      Span at) {
  int64_t n = mk ? mk->n : 0;
  if (index < 0 || index >= n) {
    if (n == 0)
      diag_error(d, at,
                 "metadata: meta[%s][%" PRId64 "] does not exist: the metadata section has no %s objects",
                 type_key, index, type_key);
    else
      diag_error(d, at,
                 "metadata: meta[%s][%" PRId64 "] is out of range: the metadata section has %" PRId64
                 " %s objects",
                 type_key, index, n, type_key);
    return -1;
  }
  return mk->items[index];
}

/* {==== Constants ====} */

/* Decodes the base64 text of one blob straight into m's arena and parses it
** in place. The buffer is placed so that the data (after a header of
** 40 + 8 * ndim bytes, known from the first 28 bytes) is 64-byte aligned. */
static bool decode_blob(const char *s, size_t n, Module *m, ConstData *out, char *err, size_t errlen) {
  unsigned char peek[28];
  size_t pad = 0;
  if (b64_peek(s, n, peek, sizeof peek) == sizeof peek && rd_u64le(peek) == NDARRAY_MAGIC) {
    int32_t ndim = (int32_t)rd_u32le(peek + 24);
    if (ndim >= 0 && ndim <= NDARRAY_MAX_NDIM) pad = (64 - NDARRAY_HEADER_BYTES(ndim) % 64) % 64;
  }
  size_t cap = b64_max_decoded(n), len;
  unsigned char *buf = (unsigned char *)arena_alloc64(m->arena, pad + cap) + pad;
  if (!b64_decode_into(s, n, buf, cap, &len)) {
    snprintf(err, errlen, "not valid base64");
    return false;
  }
  size_t used;
  if (!ndarray_parse(buf, len, m, out, &used, true, err, errlen)) return false;
  if (used != len) {
    snprintf(err, errlen, "NDArray: %zu unexpected bytes after the data", len - used);
    return false;
  }
  return true;
}

bool meta_constant(Metadata *md, int64_t index, Module *m, ConstData *out, Diag *d, Span at) {
  int64_t node = lookup(md ? md->constants : NULL, "relay.Constant", index, d, at);
  if (node < 0) return false;
  const char *ty = node_type(md, node);
  if (strcmp(ty, "relay.Constant") != 0) {
    diag_error(d, at,
               "metadata: meta[relay.Constant][%" PRId64 "] is node %" PRId64
               " of type \"%s\", not a relay.Constant",
               index, node, ty);
    return false;
  }
  const cJSON *attrs = field(md->nodes[node], "attrs");
  const cJSON *data = cJSON_IsObject(attrs) ? field(attrs, "data") : NULL;
  int64_t k;
  if (!cJSON_IsString(data) || !parse_i64(data->valuestring, &k)) {
    diag_error(d, at,
               "metadata: relay.Constant %" PRId64 " (node %" PRId64
               ") has no \"data\" field with a b64ndarrays index",
               index, node);
    return false;
  }
  if (k < 0 || k >= md->narrays) {
    diag_error(d, at,
               "metadata: relay.Constant %" PRId64 " refers to b64ndarrays[%" PRId64
               "], but there are only %" PRId64,
               index, k, md->narrays);
    return false;
  }
  /* Each blob is decoded once (TVM stores a tensor shared by several
  ** constants once); its base64 text is freed right away, so the text, the
  ** JSON strings and the weights are not all alive at the same time. */
  RLY_ASSERT(!md->decoded_into || md->decoded_into == m);
  md->decoded_into = m;
  if (!md->decoded) {
    md->decoded = rly_xcalloc((size_t)(md->narrays ? md->narrays : 1), sizeof(ConstData));
    md->is_decoded = rly_xcalloc((size_t)(md->narrays ? md->narrays : 1), sizeof(bool));
  }
  if (md->is_decoded[k]) {
    *out = md->decoded[k];
    return true;
  }
  char err[256];
  cJSON *item = md->refs ? NULL : (cJSON *)md->arrays[k];
  const char *s = item ? item->valuestring : md->refs[k].s;
  size_t n = item ? strlen(s) : md->refs[k].n;
  if (!decode_blob(s, n, m, out, err, sizeof err)) {
    diag_error(d, at, "metadata: meta[relay.Constant][%" PRId64 "] (b64ndarrays[%" PRId64 "]): %s", index, k,
               err);
    return false;
  }
  md->decoded[k] = *out;
  md->is_decoded[k] = true;
  if (item) {
    cJSON_free(item->valuestring);
    item->valuestring = NULL;
  }
  return true;
}

/* {==== Attrs objects ====} */

/* What the conversion of one attrs object needs. */
typedef struct Conv {
  const Metadata *md;
  Module *m;
  Diag *d;
  Span at;
  const char *where;   /* "meta[relay.attrs.Conv2DAttrs][0]" */
  const char *field;   /* current field name */
  int64_t *work;       /* the section's attrs_work (MAX_VALUE_WORK) */
} Conv;

#define TOO_LARGE "value too large (the section's attrs objects hold more than 1048576 values in all)"
_Static_assert(MAX_VALUE_WORK == 1048576, "update TOO_LARGE");

static AttrValue *conv_error(Conv *cv, const char *what) {
  diag_error(cv->d, cv->at, "metadata: %s, field '%s': %s", cv->where, cv->field, what);
  return NULL;
}

/* The text of node.attrs[name], or NULL. */
static const char *node_attr(const Metadata *md, int64_t node, const char *name) {
  const cJSON *attrs = field(md->nodes[node], "attrs");
  const cJSON *v = cJSON_IsObject(attrs) ? field(attrs, name) : NULL;
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Bits of an IntImm/FloatImm dtype ("int64" -> 64); 32 when absent or odd. */
static uint8_t imm_bits(const Metadata *md, int64_t node) {
  const char *t = node_attr(md, node, "dtype");
  DType dt;
  if (t && dtype_parse(t, strlen(t), &dt) && dt.bits >= 16) return dt.bits;
  return 32;
}

/* The text of a runtime.String node (repr_str, repr_b64, or "" when both
** are absent) copied into the arena. */
static AttrValue *string_node(Conv *cv, int64_t node) {
  const cJSON *obj = cv->md->nodes[node];
  const cJSON *str = field(obj, "repr_str"), *b64 = field(obj, "repr_b64");
  AttrValue *v = ir_attr_value_new(cv->m, AV_STR, cv->at);
  if (cJSON_IsString(str)) {
    size_t n = strlen(str->valuestring);
    v->u.str.s = arena_strndup(cv->m->arena, str->valuestring, n);
    v->u.str.len = n;
  } else if (cJSON_IsString(b64)) {
    size_t n, cap = b64_max_decoded(strlen(b64->valuestring));
    char *s = arena_alloc(cv->m->arena, cap + 1, 1);
    if (!b64_decode_into(b64->valuestring, strlen(b64->valuestring), (unsigned char *)s, cap, &n))
      return conv_error(cv, "runtime.String node has invalid repr_b64");
    s[n] = 0;
    v->u.str.s = s;
    v->u.str.len = n;
  } else {
    v->u.str.s = "";
    v->u.str.len = 0;
  }
  return v;
}

/* Converts the object at node index idx: null -> None, IntImm -> int
** (float when as_float), FloatImm -> float, runtime.String -> string,
** Array -> array of converted elements. */
static AttrValue *node_value(Conv *cv, int64_t idx, int depth, bool as_float) {
  const Metadata *md = cv->md;
  const char *ty = node_type(md, idx);
  char msg[160];
  if (depth > MAX_VALUE_DEPTH) return conv_error(cv, "value nested too deeply (a cyclic node graph?)");
  if (++*cv->work > MAX_VALUE_WORK) return conv_error(cv, TOO_LARGE);
  if (idx == 0 || ty[0] == 0) return ir_attr_value_new(cv->m, AV_NONE, cv->at);
  if (strcmp(ty, "IntImm") == 0 || strcmp(ty, "FloatImm") == 0) {
    const char *text = node_attr(md, idx, "value");
    bool is_int = ty[0] == 'I';
    int64_t iv = 0;
    double fv = 0;
    char *endp = NULL;
    if (text && is_int) {
      if (!parse_i64(text, &iv)) text = NULL;
      fv = (double)iv;
    } else if (text) {
      fv = strtod(text, &endp);
      if (endp == text || *endp) text = NULL;
    }
    if (!text) {
      snprintf(msg, sizeof msg, "%s node %" PRId64 " has no valid \"value\"", ty, idx);
      return conv_error(cv, msg);
    }
    AttrValue *v = ir_attr_value_new(cv->m, is_int && !as_float ? AV_INT : AV_FLOAT, cv->at);
    if (v->kind == AV_INT) {
      v->u.i.v = iv;
      v->u.i.bits = imm_bits(md, idx);
    } else {
      v->u.f.v = fv;
      v->u.f.bits = is_int ? 32 : imm_bits(md, idx);
    }
    return v;
  }
  if (strcmp(ty, "runtime.String") == 0) return string_node(cv, idx);
  if (strcmp(ty, "Array") == 0) {
    const cJSON *data = field(md->nodes[idx], "data");
    if (data && !cJSON_IsArray(data)) {
      snprintf(msg, sizeof msg, "\"data\" of Array node %" PRId64 " is %s", idx, json_kind(data));
      return conv_error(cv, msg);
    }
    AttrValue *v = ir_attr_value_new(cv->m, AV_ARRAY, cv->at);
    int64_t n = list_len(data);
    if (n > INT32_MAX) return conv_error(cv, "array too long");
    v->u.arr.n = (int)n;
    v->u.arr.items = ARENA_ARRAY(cv->m->arena, AttrValue *, n);
    int i = 0;
    for (const cJSON *c = data ? data->child : NULL; c; c = c->next, i++) {
      int64_t e;
      if (!json_index(c, md->nnodes, &e)) {
        snprintf(msg, sizeof msg, "element %d of Array node %" PRId64 " is not a node index below %" PRId64,
                 i, idx, md->nnodes);
        return conv_error(cv, msg);
      }
      if (!(v->u.arr.items[i] = node_value(cv, e, depth + 1, as_float))) return NULL;
    }
    return v;
  }
  /* Other objects (tir.Var in a shape, say) can be referred to as
  ** meta[<type key>][i] when the section lists them. */
  const MetaKey *mk = find_key(md, ty);
  if (mk && (*cv->work += mk->n) > MAX_VALUE_WORK) return conv_error(cv, TOO_LARGE);
  for (int64_t i = 0; mk && i < mk->n; i++) {
    if (mk->items[i] != idx) continue;
    AttrValue *v = ir_attr_value_new(cv->m, AV_META, cv->at);
    v->u.meta.key = sym_intern_cstr(&cv->m->syms, ty);
    v->u.meta.index = i;
    return v;
  }
  snprintf(msg, sizeof msg, "node %" PRId64 " is a \"%s\", which has no attribute form", idx, ty);
  return conv_error(cv, msg);
}

/* The node index held by a field's text ("0" = None). */
static bool text_node(Conv *cv, const char *text, int64_t *idx) {
  if (!parse_i64(text, idx) || *idx < 0 || *idx >= cv->md->nnodes) {
    char msg[160];
    snprintf(msg, sizeof msg, "\"%.40s\" is not a node index below %" PRId64, text, cv->md->nnodes);
    conv_error(cv, msg);
    return false;
  }
  return true;
}

static bool is_int_like(const AttrValue *v) { return v->kind == AV_INT || v->kind == AV_META; }

/* An array of integers (None items allowed when none_ok). */
static bool all_ints(const AttrValue *v, bool none_ok) {
  if (v->kind != AV_ARRAY) return false;
  for (int i = 0; i < v->u.arr.n; i++) {
    const AttrValue *item = v->u.arr.items[i];
    if (!is_int_like(item) && !(none_ok && item->kind == AV_NONE)) return false;
  }
  return true;
}

/* Converts the text of field f (TVM's JSON form) to a value of f's kind. */
static AttrValue *convert_field(Conv *cv, const AttrField *f, const char *text) {
  Module *m = cv->m;
  AttrValue *v;
  int64_t idx, iv;
  switch (f->kind) {
  case AK_INT:
    if (!parse_i64(text, &iv)) return conv_error(cv, "expects an integer");
    /* TVM writes `int` fields as decimal text and IndexExpr / Optional
    ** fields (our nullable ones) as node indices; text that cannot be a
    ** node index is taken as a plain integer either way. */
    if (f->nullable && iv >= 0 && iv < cv->md->nnodes) {
      const char *ty = node_type(cv->md, iv);
      if (strcmp(ty, "Array") == 0 || strcmp(ty, "FloatImm") == 0 || strcmp(ty, "runtime.String") == 0)
        return conv_error(cv, "expects an integer (IntImm node)");
      return node_value(cv, iv, 0, false);
    }
    v = ir_attr_value_new(m, AV_INT, cv->at);
    v->u.i.v = iv;
    v->u.i.bits = iv < INT32_MIN || iv > INT32_MAX ? 64 : 32;  /* as an unsuffixed literal */
    return v;
  case AK_BOOL:
    v = ir_attr_value_new(m, AV_BOOL, cv->at);
    if (!strcmp(text, "1") || !strcmp(text, "true") || !strcmp(text, "True")) v->u.b = true;
    else if (!strcmp(text, "0") || !strcmp(text, "false") || !strcmp(text, "False")) v->u.b = false;
    else return conv_error(cv, "expects a boolean (0 or 1)");
    return v;
  case AK_DOUBLE: {
    char *endp;
    double x = strtod(text, &endp);
    if (endp == text || *endp) return conv_error(cv, "expects a number");
    v = ir_attr_value_new(m, AV_FLOAT, cv->at);
    v->u.f.v = x;
    v->u.f.bits = 32;
    return v;
  }
  case AK_DTYPE: {
    DType dt;
    if (!strcmp(text, "void")) text = "";  /* TVM's empty DataType */
    if (text[0] && !dtype_parse(text, strlen(text), &dt)) return conv_error(cv, "expects a data type");
    v = ir_attr_value_new(m, AV_STR, cv->at);
    v->u.str.len = strlen(text);
    v->u.str.s = arena_strndup(m->arena, text, v->u.str.len);
    return v;
  }
  case AK_STR:
    /* TVM >= 0.8 stores String fields as ObjectRefs (a node index); older
    ** versions stored std::string fields as the text itself. */
    if (parse_i64(text, &idx) && idx >= 0 && idx < cv->md->nnodes) {
      if (idx == 0) {
        if (f->nullable) return ir_attr_value_new(m, AV_NONE, cv->at);
        v = ir_attr_value_new(m, AV_STR, cv->at);
        v->u.str.s = "";
        return v;
      }
      if (strcmp(node_type(cv->md, idx), "runtime.String") == 0) return string_node(cv, idx);
    }
    v = ir_attr_value_new(m, AV_STR, cv->at);
    v->u.str.len = strlen(text);
    v->u.str.s = arena_strndup(m->arena, text, v->u.str.len);
    return v;
  case AK_INTS:
  case AK_DOUBLES:
  case AK_INTS_NESTED:
  case AK_INT_OR_INTS:
  case AK_ANY:
    break;
  }
  if (f->kind == AK_ANY && !(parse_i64(text, &idx) && idx >= 0 && idx < cv->md->nnodes)) {
    v = ir_attr_value_new(m, AV_STR, cv->at);  /* not an object: keep the text */
    v->u.str.len = strlen(text);
    v->u.str.s = arena_strndup(m->arena, text, v->u.str.len);
    return v;
  }
  if (!text_node(cv, text, &idx)) return NULL;
  if (!(v = node_value(cv, idx, 0, f->kind == AK_DOUBLES))) return NULL;
  if (v->kind == AV_NONE) return v;
  bool ok = true;
  switch (f->kind) {
  case AK_INTS: ok = all_ints(v, f->nullable); break;
  case AK_DOUBLES:
    ok = v->kind == AV_ARRAY;
    for (int i = 0; ok && i < v->u.arr.n; i++)
      ok = v->u.arr.items[i]->kind == AV_FLOAT || v->u.arr.items[i]->kind == AV_META;
    break;
  case AK_INTS_NESTED:
    ok = v->kind == AV_ARRAY;
    for (int i = 0; ok && i < v->u.arr.n; i++) ok = all_ints(v->u.arr.items[i], false);
    break;
  case AK_INT_OR_INTS: ok = is_int_like(v) || all_ints(v, false); break;
  default: break;
  }
  if (!ok) {
    static const char *const expect[] = {
        [AK_INTS] = "expects an array of integers",
        [AK_DOUBLES] = "expects an array of numbers",
        [AK_INTS_NESTED] = "expects an array of arrays of integers",
        [AK_INT_OR_INTS] = "expects an integer or an array of integers",
    };
    return conv_error(cv, expect[f->kind]);
  }
  return v;
}

Attrs *meta_attrs(Metadata *md, const char *type_key, int64_t index, const AttrsClass *cls, Module *m,
                  Diag *d, Span at) {
  int64_t node = lookup(md ? find_key(md, type_key) : NULL, type_key, index, d, at);
  if (node < 0) return NULL;
  const cJSON *fields = field(md->nodes[node], "attrs");  /* absent: no fields, all defaults */
  if (fields && !cJSON_IsObject(fields)) {
    diag_error(d, at,
               "metadata: meta[%s][%" PRId64 "] (node %" PRId64 "): \"attrs\" is %s, expected an object",
               type_key, index, node, json_kind(fields));
    return NULL;
  }
  char where[200];
  snprintf(where, sizeof where, "meta[%s][%" PRId64 "]", type_key, index);
  Conv cv = {md, m, d, at, where, NULL, &md->attrs_work};
  Attrs *a = ARENA_NEW(m->arena, Attrs);
  a->cls = cls;
  a->n = cls->nfields;
  a->values = ARENA_ARRAY(m->arena, AttrValue *, cls->nfields);
  bool ok = true;
  for (int i = 0; i < cls->nfields; i++) {
    const AttrField *f = &cls->fields[i];
    const cJSON *item = fields ? field(fields, f->name) : NULL;
    cv.field = f->name;
    if (!item) {
      a->values[i] = attr_default_value(m, f);
    } else if (!cJSON_IsString(item)) {
      diag_error(d, at, "metadata: %s, field '%s' is %s, expected a string", where, f->name, json_kind(item));
      ok = false;
    } else if (!(a->values[i] = convert_field(&cv, f, item->valuestring))) {
      ok = false;
    }
  }
  return ok ? a : NULL;
}
