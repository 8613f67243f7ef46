/* Top-k tables into counters: the out-of-line half of access.h. */
#include "access.h"

const iochar_rw_topk iochar_rw_topk_none;

void iochar_rw_finish(iochar_record *r, const iochar_rw_layout *L) {
  iochar_rw_state *s = r->state;
  if (s) iochar_rw_flush_run(r, L, s);
  const iochar_rw_topk *tk = s ? iochar_rw_tk(s) : &iochar_rw_topk_none;
  if (L->access1 >= 0) iochar_topk_emit(&tk->access, r->c, L->access1);
  if (L->stride1 >= 0) iochar_topk_emit(&tk->stride, r->c, L->stride1);
}

int iochar_rw_tables(const iochar_rw_layout *L, iochar_rw_state *s, int first[2],
                     const iochar_topk *t[2]) {
  int n = 0;
  int a = L->access1, b = L->stride1;
  /* No state yet: empty tables (the callers only read them) */
  const iochar_rw_topk *tk = s ? iochar_rw_tk(s) : &iochar_rw_topk_none;
  if (a >= 0 && b >= 0 && b < a) { /* POSIX declares STRIDE before ACCESS */
    first[n] = b;
    if (t) t[n] = &tk->stride;
    n++;
    b = -1;
  }
  if (a >= 0) {
    first[n] = a;
    if (t) t[n] = &tk->access;
    n++;
  }
  if (b >= 0) {
    first[n] = b;
    if (t) t[n] = &tk->stride;
    n++;
  }
  return n;
}

/* Slots ordered by count desc, value asc (the order every table is shown in). */
void iochar_topk_order(const iochar_topk *t, int *idx) {
  int used[IOCHAR_TOPK_SLOTS] = {0};
  for (int k = 0; k < t->n; k++) {
    int best = -1;
    for (int i = 0; i < t->n; i++) {
      if (used[i]) continue;
      if (best < 0 || t->cnt[i] > t->cnt[best] ||
          (t->cnt[i] == t->cnt[best] && t->val[i] < t->val[best]))
        best = i;
    }
    idx[k] = best;
    used[best] = 1;
  }
}

void iochar_topk_dump(const iochar_topk *t, int64_t *out) {
  int idx[IOCHAR_TOPK_SLOTS];
  iochar_topk_order(t, idx);
  for (int k = 0; k < IOCHAR_TOPK_SLOTS; k++) {
    out[k] = k < t->n ? t->val[idx[k]] : 0;
    out[IOCHAR_TOPK_SLOTS + k] = k < t->n ? t->cnt[idx[k]] : 0;
  }
}

void iochar_topk_emit(const iochar_topk *t, int64_t *c, int first) {
  int idx[IOCHAR_TOPK_SLOTS];
  iochar_topk_order(t, idx);
  for (int k = 0; k < 4; k++) {
    c[first + k] = k < t->n ? t->val[idx[k]] : 0;
    c[first + 4 + k] = k < t->n ? t->cnt[idx[k]] : 0;
  }
  c[first + 8] = t->approx;
}
