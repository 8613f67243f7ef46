/* Top-k tables into counters: the out-of-line half of access.h. */
#include "access.h"

void iochar_rw_finish(iochar_record *r, const iochar_rw_layout *L) {
  iochar_rw_state *s = r->state;
  iochar_rw_flush_run(r, L, s);
  if (L->access1 >= 0) iochar_topk_emit(&s->access, r->c, L->access1);
  if (L->stride1 >= 0) iochar_topk_emit(&s->stride, r->c, L->stride1);
}

void iochar_topk_emit(const iochar_topk *t, int64_t *c, int first) {
  int used[IOCHAR_TOPK_SLOTS] = {0};
  for (int k = 0; k < 4; k++) {
    int best = -1;
    for (int i = 0; i < t->n; i++) {
      if (used[i]) continue;
      if (best < 0 || t->cnt[i] > t->cnt[best] ||
          (t->cnt[i] == t->cnt[best] && t->val[i] < t->val[best]))
        best = i;
    }
    c[first + k] = best < 0 ? 0 : t->val[best];
    c[first + 4 + k] = best < 0 ? 0 : t->cnt[best];
    if (best >= 0) used[best] = 1;
  }
}

int iochar_observing;

/* Without observers compiled in, nothing to do (the flag stays 0). */
__attribute__((weak)) void iochar_observe(iochar_record *r, int op, int64_t off, int64_t len,
                                          double t0, double t1) {
  (void)r, (void)op, (void)off, (void)len, (void)t0, (void)t1;
}
