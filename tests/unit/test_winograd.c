/* test_winograd.c: the filter transform of lower/winograd.c, through
** lower_prepack (lower.h) with LowerPrepack.wino = 2 and 4: the packed
** layout (float[ceil(n / 32)][point][k][32], zero-padded past n), and
** Winograd's identity: with U the packed transform of a random 3x3 filter,
** A^T (U . (B^T d B)) A is the direct correlation of d with the filter (an
** m x m output tile, in double, up to the float32 rounding of U). B^T and
** A^T are written here again from the interpolation points (0, 1, -1 for
** F(2x2); 0, 1, -1, 2, -2 for F(4x4); and infinity), independently of
** winograd.c's tables. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "lower/lower.h"

static const double bt2[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
static const double at2[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
static const double bt4[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                                 {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
static const double at4[4][6] = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};

static double rnd(void) { return (double)rand() / RAND_MAX * 2 - 1; }

static void check_m(int m) {
  enum { N = 35, K = 3 }; /* filters (two panels, the second zero-padded past 3), input channels */
  int a = m + 2;
  const double *bt = m == 2 ? &bt2[0][0] : &bt4[0][0], *at = m == 2 ? &at2[0][0] : &at4[0][0];
  float w[N * K * 9];
  for (int i = 0; i < N * K * 9; i++) w[i] = (float)rnd();
  LowerPrepack p = {0};
  p.param = 1;
  p.q = a * a, p.k = K, p.n = N;
  p.b_sq = N * K, p.b_sk = 1, p.b_sj = K;
  p.wino = m;
  size_t nbytes = 0;
  float *u = lower_prepack(&p, w, &nbytes);
  CHECK_EQ(nbytes, (size_t)(a * a * 2 * K * 32) * sizeof(float));
  /* zero past the last filter */
  for (int pt = 0; pt < a * a; pt++)
    for (int l = 0; l < K; l++)
      for (int x = N - 32; x < 32; x++) CHECK(u[((a * a + pt) * K + l) * 32 + x] == 0);
  double worst = 0;
  for (int o = 0; o < N; o++)
    for (int c = 0; c < K; c++) {
      double d[6][6], v[6][6], mm[6][6], y[4][4];
      for (int r = 0; r < a; r++)
        for (int s = 0; s < a; s++) d[r][s] = rnd();
      /* V = B^T d B */
      for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++) {
          double t = 0;
          for (int r = 0; r < a; r++)
            for (int s = 0; s < a; s++) t += bt[i * a + r] * d[r][s] * bt[j * a + s];
          v[i][j] = t;
        }
      for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++) {
          int pt = i * a + j;
          mm[i][j] = (double)u[((o / 32 * a * a + pt) * K + c) * 32 + o % 32] * v[i][j];
        }
      for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
          double t = 0, ref = 0;
          for (int r = 0; r < a; r++)
            for (int s = 0; s < a; s++) t += at[i * a + r] * mm[r][s] * at[j * a + s];
          for (int r = 0; r < 3; r++)
            for (int s = 0; s < 3; s++) ref += d[i + r][j + s] * w[(o * K + c) * 9 + r * 3 + s];
          y[i][j] = t;
          if (fabs(y[i][j] - ref) > worst) worst = fabs(y[i][j] - ref);
        }
    }
  /* U rounded to float32: relative 6e-8 per element, times the sums' size */
  CHECK(worst < 2e-5);
  if (worst >= 2e-5) fprintf(stderr, "F(%dx%d): worst error %g\n", m, m, worst);
  free(u);
}

/* LowerPrepack.kc (conv.c's tiles of pixel rows): B(q, l, j) =
** W[q][j][l] in 32-wide panels, each block of kc reduction rows' panels
** together: float[q][ceil(k / kc)][ceil(n / 32)][kcb][32], kcb = kc but
** in the last block, zero past n. Every float is checked against W. */
static void check_blocks(void) {
  enum { Q = 2, KR = 300, N = 40, KC = 256, NP = 2 }; /* blocks of 256 and 44 rows; panels of 32 and 8 */
  float *w = malloc(sizeof(float) * Q * N * KR);
  for (int i = 0; i < Q * N * KR; i++) w[i] = (float)(i + 1);
  LowerPrepack p = {0};
  p.param = 0;
  p.q = Q, p.k = KR, p.n = N;
  p.b_sq = (int64_t)N * KR, p.b_sk = 1, p.b_sj = KR;
  p.pw = 32, p.kc = KC;
  size_t nbytes = 0;
  float *b = lower_prepack(&p, w, &nbytes);
  CHECK_EQ(nbytes, (size_t)Q * NP * KR * 32 * sizeof(float));
  int bad = 0;
  for (int q = 0; q < Q; q++)
    for (int l = 0; l < KR; l++)
      for (int j = 0; j < NP * 32; j++) {
        int pc = l / KC * KC, kcb = KR - pc < KC ? KR - pc : KC;
        size_t at = (size_t)q * NP * KR * 32 + (size_t)pc * NP * 32 + (size_t)(j / 32) * kcb * 32 +
                    (size_t)(l - pc) * 32 + (size_t)(j % 32);
        float want = j < N ? w[(size_t)q * N * KR + (size_t)j * KR + l] : 0.0f;
        if (b[at] != want) bad++;
      }
  CHECK_EQ(bad, 0);
  free(b);
  free(w);
}

int main(void) {
  srand(7);
  check_m(2);
  check_m(4);
  check_blocks();
  return check_report("test_winograd");
}
