/* scc.c: Tarjan's strongly connected components (walk.h, ir_scc).
**
** Used on call graphs: type inference infers the definitions of one
** component together, callees first; the code generator puts globals that
** tail-call each other into one C function. The depth-first search keeps
** its own stack (vertex, next edge), so a long call chain does not recurse
** in C, and visits vertices and edges in the same order as the textbook
** recursive formulation, which fixes the numbering. */
#include <stdlib.h>

#include "base/vec.h"
#include "ir/walk.h"

typedef struct SccFrame {
  int v;
  int next;  /* index into adj of the next edge to follow */
} SccFrame;

int ir_scc(int n, const int *start, const int *adj, int *comp, int *order) {
  size_t sz = (size_t)(n > 0 ? n : 1);
  int *index = rly_xmalloc(sizeof(int) * sz), *low = rly_xmalloc(sizeof(int) * sz);
  int *stack = rly_xmalloc(sizeof(int) * sz);
  uint8_t *on_stack = rly_xcalloc(sz, 1);
  Vec(SccFrame) dfs = {0};
  int counter = 0, sp = 0, ncomp = 0, norder = 0;
  for (int i = 0; i < n; i++) index[i] = -1;
  for (int root = 0; root < n; root++) {
    if (index[root] >= 0) continue;
    index[root] = low[root] = counter++;
    stack[sp++] = root;
    on_stack[root] = 1;
    SccFrame f0 = {root, start[root]};
    VEC_PUSH(&dfs, f0);
    while (dfs.len) {
      SccFrame *f = &VEC_LAST(&dfs);
      int v = f->v;
      if (f->next < start[v + 1]) {
        int w = adj[f->next++];
        if (index[w] < 0) {
          index[w] = low[w] = counter++;
          stack[sp++] = w;
          on_stack[w] = 1;
          SccFrame fw = {w, start[w]};
          VEC_PUSH(&dfs, fw);
        } else if (on_stack[w] && index[w] < low[v]) {
          low[v] = index[w];
        }
        continue;
      }
      /* v is finished: close its component if it is a root of one, then
      ** hand its low link to the vertex that discovered it. */
      if (low[v] == index[v]) {
        int w;
        do {
          w = stack[--sp];
          on_stack[w] = 0;
          comp[w] = ncomp;
          order[norder++] = w;
        } while (w != v);
        ncomp++;
      }
      dfs.len--;
      if (dfs.len) {
        int u = VEC_LAST(&dfs).v;
        if (low[v] < low[u]) low[u] = low[v];
      }
    }
  }
  VEC_FREE(&dfs);
  free(index);
  free(low);
  free(stack);
  free(on_stack);
  return ncomp;
}
