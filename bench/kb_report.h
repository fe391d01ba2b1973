/* kb_report.h: the bench's results and the three ways it writes them:
 * Markdown (people), JSON (tools), a gnuplot data file (the plot). */
#ifndef KB_REPORT_H
#define KB_REPORT_H

#include <stddef.h>
#include <stdio.h>

/* One measured thing: a kernel variant or a ceiling, 1 or 2 threads. */
typedef struct kb_row {
  char shape[64];       /* "rmsnorm_4096x8192" */
  char label[80];       /* "RMSNorm 4096 x 8192" */
  const char *resid;    /* "L2", "LLC", "DRAM": where the rotated data lives */
  const char *dtype;    /* "f32", "bf16", "f16" */
  char what[16];        /* ISA name, or "memcpy", "nt-copy", "rmw" */
  const char *symbol;   /* kernel symbol; NULL for a ceiling */
  int ceiling;          /* 1 for a ceiling row */
  int threads;          /* 1 or 2 */
  double bytes;         /* counted per call: read + written (+ weights) */
  double ns_med, ns_p25, ns_p75; /* per call */
  double gbps;          /* bytes / ns_med */
  const char *ceil_ref; /* the ceiling the ratio is taken against */
  double ratio, ratio_p25, ratio_p75; /* per-round paired, NaN if none */
  double ratio_nt;      /* the same against the non-temporal copy */
  double target;        /* ratio target, 0 = none */
  int met;              /* 1 met, 0 not, -1 no target */
  double scaling;       /* 2-thread rows: 1-thread time / this time */
  size_t nsets;         /* buffer sets rotated */
  double footprint;     /* bytes touched over one rotation */
  int rounds;
  size_t reps;          /* calls per timed batch */
  int retried;          /* batches timed again: a thread was preempted */
  int disturbed;        /* rounds timed by on-CPU time (no quiet retry) */
  int check;            /* output vs the scalar variant: 0 agrees, 1 differs, -1 unchecked */
  double check_err;     /* largest difference found */
  double core_ghz;      /* kb_sys_core_ghz just before the row's case */
  int core_cpu;         /* the CPU its 1-thread items ran on (-1: not pinned) */
  double core_apc;      /* that core's independent adds a cycle (kb_sys_core_width) */
  double core_share;    /* the CPU's on-CPU share of wall time (kb_sys_cpu_share) */
  int other_cpu;        /* the other CPU probed (the 2-thread worker's), -1: none */
  double other_apc;     /* its adds a cycle, NaN: none */
  double other_share;   /* its on-CPU share, NaN: none */
} kb_row;

/* What the run was, for the report headers. */
typedef struct kb_meta {
  char cpu[160];
  char date[32];
  char commit[64];
  char compiler[96];
  char cflags[160];     /* the flags the harness and kernels were built with */
  char libc[32];
  char thp[64];
  char isas[64];        /* ISAs this CPU runs */
  char ceil_flavor[16]; /* vector width of the NT copy and RMW pass */
  char pin[256];        /* how threads were pinned */
  size_t l1d, l2, l3;
  size_t l2_target, llc_target, dram_target;
  int rounds_small, rounds_large;
  size_t offset;        /* --offset: bytes past a line boundary of x and y */
  size_t kshift;        /* --k-shift: QK-norm k that many bytes further */
  size_t woff;          /* --w-offset: bytes past a line boundary of the weights */
  double min_batch_ns;
  double wall_s;
  double ghz_start, ghz_end; /* kb_sys_core_ghz before the first case, after the last */
  int quick;
  int no_rotate;        /* --no-rotate: cached shapes on one set */
} kb_meta;

void kb_report_md(FILE *f, const kb_meta *m, const kb_row *rows, size_t n);
void kb_report_json(FILE *f, const kb_meta *m, const kb_row *rows, size_t n);
void kb_report_dat(FILE *f, const kb_row *rows, size_t n);

#endif
