/* kb_report.c: Markdown, JSON and gnuplot-data writers for bench rows. */
#include "kb_report.h"

#include <math.h>
#include <string.h>

/* Why: the 2-thread numbers and the ceilings print next to the 1-thread
 * kernel row they belong to; rows are few, a linear search is fine. */
static const kb_row *kb_find(const kb_row *rows, size_t n, const char *shape,
                             const char *dtype, const char *what, int threads)
{
  for (size_t i = 0; i < n; i++)
    if (rows[i].threads == threads && strcmp(rows[i].shape, shape) == 0 &&
        strcmp(rows[i].dtype, dtype) == 0 && strcmp(rows[i].what, what) == 0)
      return &rows[i];
  return NULL;
}

/* Why: one place formats "1.5 MiB" / "480 MiB" for the header. */
static void kb_size(char *buf, size_t len, double b)
{
  if (b >= 1024.0 * 1024.0) snprintf(buf, len, "%.0f MiB", b / (1024.0 * 1024.0));
  else if (b >= 1024.0) snprintf(buf, len, "%.0f KiB", b / 1024.0);
  else snprintf(buf, len, "%.0f B", b);
}

/* Why: a missing number prints as a dash, never as "nan". */
static void kb_num(char *buf, size_t len, const char *fmt, double v)
{
  if (isnan(v) || v <= 0.0) snprintf(buf, len, "-");
  else snprintf(buf, len, fmt, v);
}

/* Why: the first row of a (shape, dtype) group carries its labels. */
static int kb_new_group(const kb_row *rows, size_t i)
{
  return i == 0 || strcmp(rows[i].shape, rows[i - 1].shape) != 0 ||
         strcmp(rows[i].dtype, rows[i - 1].dtype) != 0;
}

/* Why: the report people read: machine and method first, then one row per
 * kernel (1 thread, with its 2-thread figures), the ceilings, the targets. */
void kb_report_md(FILE *f, const kb_meta *m, const kb_row *rows, size_t n)
{
  char a[32], b[32], c[32], d[32], e[32], g[32];
  kb_size(a, sizeof a, (double)m->l1d);
  kb_size(b, sizeof b, (double)m->l2);
  kb_size(c, sizeof c, (double)m->l3);
  kb_size(d, sizeof d, (double)m->l2_target);
  kb_size(e, sizeof e, (double)m->llc_target);
  kb_size(g, sizeof g, (double)m->dram_target);
  fprintf(f, "# kgen benchmark%s\n\n", m->quick ? " (--quick: not for comparison)" : "");
  fprintf(f, "| | |\n|---|---|\n");
  fprintf(f, "| machine | %s; L1d %s, L2 %s, L3 %s (as reported); ISAs: %s |\n", m->cpu, a, b, c, m->isas);
  fprintf(f, "| date | %s |\n| commit | %s |\n", m->date, m->commit);
  fprintf(f, "| build | %s, %s; memcpy of glibc %s; NT copy and RMW pass: %s; THP: %s |\n",
          m->compiler, m->cflags, m->libc, m->ceil_flavor, m->thp);
  fprintf(f, "| threads | %s |\n", m->pin);
  fprintf(f, "| method | median of %d rounds (DRAM shapes: %d); a round times one batch (>= %.0f us) of every "
             "kernel and every ceiling of the shape, in rotating order; input sets rotated per call: "
             "L2 shapes over <= %s, LLC shapes over <= %s, DRAM shapes over >= %s%s; "
             "x and y start %zu bytes past a 64-byte boundary, QK-norm k %zu bytes further, the weights %zu bytes past one |\n",
          m->rounds_small, m->rounds_large, m->min_batch_ns / 1000.0, d, e, g,
          m->no_rotate ? " (--no-rotate: L2 and LLC shapes not rotated, every call on one set, "
                         "data in \"1 set\")" : "",
          m->offset, m->kshift, m->woff);
  fprintf(f, "| run time | %.1f s |\n", m->wall_s);
  fprintf(f, "| core clock | %.2f GHz at the start, %.2f at the end, as a chain of dependent adds sees it "
             "(0: not measured here); per shape in the ceilings table. A shared host moves it, and compute-bound "
             "kernels with it more than the ceilings: compare runs at like clocks |\n",
          m->ghz_start, m->ghz_end);
  fprintf(f, "| core width | independent integer adds a cycle, per shape in the ceilings table for the CPU the "
             "1-thread runs took and the other one (about 4.4 on an idle Zen 5 core). A core shared with another "
             "thread (SMT, a VM host's other tenant) keeps its clock but not its width, and decode-sized kernels "
             "then run up to 2x slower while memcpy holds: compare ratios only at like widths. Time share: the part of "
             "12 ms of wall time the CPU gave the probe (about 50 %% where another busy process shares it) |\n\n");
  fprintf(f, "Bytes per call = read + written (q and k heads only for the in-place QK-norm) + the weights once. "
             "ratio = kernel time per byte / ceiling time per byte (= ceiling GB/s / kernel GB/s), "
             "the median of the per-round paired ratios; <= 1 is as fast as the ceiling. "
             "vs: memcpy for out-of-place ops and decode, the in-place RMW pass for in-place prefill. "
             "2T: the same call split into two row ranges on two threads; speed-up = 1T time / 2T time. "
             "+-%%: half the interquartile range over the median.\n\n");
  long batches = 0, retimed = 0, oncpu = 0;
  for (size_t i = 0; i < n; i++) {
    batches += rows[i].rounds;
    retimed += rows[i].retried;
    oncpu += rows[i].disturbed;
  }
  fprintf(f, "Other load on the machine: a batch during which a thread lost its CPU (more than 1%% of the batch) "
             "was timed again when short (< 2 ms), else counted by its on-CPU time (column preempted: share of "
             "such rounds). This run: %ld re-timings, %ld of %ld rounds (%.1f%%) counted by on-CPU time. "
             "2T figures marked * come mostly from on-CPU time: the two halves may not have run at the same "
             "time, so they overstate the 2-thread speed; trust them only from a quiet machine.\n\n",
          retimed, oncpu, batches, batches ? 100.0 * (double)oncpu / (double)batches : 0.0);

  int checked = 0, differ = 0;
  for (size_t i = 0; i < n; i++)
    if (rows[i].threads == 1 && rows[i].check >= 0) checked++, differ += rows[i].check;
  fprintf(f, "Wiring check (first rows of each shape, each variant vs the scalar variant): %d of %d agree.\n\n",
          checked - differ, checked);
  for (size_t i = 0; i < n; i++)
    if (rows[i].threads == 1 && rows[i].check == 1)
      fprintf(f, "- **%s %s %s differs from scalar by %g**\n", rows[i].label, rows[i].dtype, rows[i].what,
              rows[i].check_err);
  if (differ) fprintf(f, "\n");

  fprintf(f, "## Kernels\n\n");
  fprintf(f, "| shape | data in | dtype | ISA | MB/call | us/call | GB/s | +-%% | vs | ratio | target | met | vs NT | 2T GB/s | 2T speed-up | 2T ratio | preempted 1T / 2T |\n");
  fprintf(f, "|---|---|---|---|--:|--:|--:|--:|---|--:|--:|---|--:|--:|--:|--:|--:|\n");
  for (size_t i = 0; i < n; i++) {
    const kb_row *r = &rows[i];
    if (r->ceiling || r->threads != 1) continue;
    char spread[16], rat[16], tgt[16], g2[16], s2[16], r2[16], nt[16];
    kb_num(spread, sizeof spread, "%.1f", 50.0 * (r->ns_p75 - r->ns_p25) / r->ns_med);
    if (r->ns_p75 - r->ns_p25 == 0.0) snprintf(spread, sizeof spread, "0.0");
    kb_num(rat, sizeof rat, "%.2f", r->ratio);
    kb_num(tgt, sizeof tgt, "<= %.2f", r->target);
    kb_num(nt, sizeof nt, "%.2f", r->ratio_nt);
    const kb_row *t2 = kb_find(rows, n, r->shape, r->dtype, r->what, 2);
    kb_num(g2, sizeof g2, "%.1f", t2 ? t2->gbps : NAN);
    kb_num(s2, sizeof s2, "%.2fx", t2 ? t2->scaling : NAN);
    kb_num(r2, sizeof r2, "%.2f", t2 ? t2->ratio : NAN);
    char pre[32];
    if (t2)
      snprintf(pre, sizeof pre, "%d%% / %d%%", (int)lround(100.0 * r->disturbed / r->rounds),
               (int)lround(100.0 * t2->disturbed / t2->rounds));
    else
      snprintf(pre, sizeof pre, "%d%%", (int)lround(100.0 * r->disturbed / r->rounds));
    if (t2 && 2 * t2->disturbed > t2->rounds) {
      /* mostly on-CPU time: whether the halves overlapped is unknown */
      strncat(g2, "*", sizeof g2 - strlen(g2) - 1);
      strncat(s2, "*", sizeof s2 - strlen(s2) - 1);
      strncat(r2, "*", sizeof r2 - strlen(r2) - 1);
    }
    fprintf(f, "| %s | %s | %s | %s | %.3f | %.2f | %.1f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
            r->label, r->resid, r->dtype, r->what, r->bytes / 1e6, r->ns_med / 1000.0, r->gbps, spread,
            r->ceil_ref ? r->ceil_ref : "-", rat, tgt, r->met < 0 ? "" : r->met ? "yes" : "**no**", nt, g2, s2,
            r2, pre);
  }

  fprintf(f, "\n## Ceilings (same bytes, same buffers, interleaved with the kernels)\n\n");
  fprintf(f, "| shape | data in | dtype | MB/call | memcpy GB/s | NT copy GB/s | in-place RMW GB/s | 2T memcpy GB/s | 2T RMW GB/s | sets x footprint | core GHz | CPU: adds/cycle, time share (other CPU) |\n");
  fprintf(f, "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (size_t i = 0; i < n; i++) {
    const kb_row *r = &rows[i];
    if (!kb_new_group(rows, i)) continue;
    const kb_row *mc = kb_find(rows, n, r->shape, r->dtype, "memcpy", 1);
    const kb_row *nt = kb_find(rows, n, r->shape, r->dtype, "nt-copy", 1);
    const kb_row *rw = kb_find(rows, n, r->shape, r->dtype, "rmw", 1);
    const kb_row *mc2 = kb_find(rows, n, r->shape, r->dtype, "memcpy", 2);
    const kb_row *rw2 = kb_find(rows, n, r->shape, r->dtype, "rmw", 2);
    char x1[16], x2[16], x3[16], x4[16], x5[16], fp[32];
    kb_num(x1, sizeof x1, "%.1f", mc ? mc->gbps : NAN);
    kb_num(x2, sizeof x2, "%.1f", nt ? nt->gbps : NAN);
    kb_num(x3, sizeof x3, "%.1f", rw ? rw->gbps : NAN);
    kb_num(x4, sizeof x4, "%.1f", mc2 ? mc2->gbps : NAN);
    kb_num(x5, sizeof x5, "%.1f", rw2 ? rw2->gbps : NAN);
    kb_size(fp, sizeof fp, r->footprint);
    char cw[96];
    if (r->other_cpu >= 0)
      snprintf(cw, sizeof cw, "%d: %.2f, %.0f%% (%d: %.2f, %.0f%%)", r->core_cpu, r->core_apc, 100.0 * r->core_share,
               r->other_cpu, r->other_apc, 100.0 * r->other_share);
    else
      snprintf(cw, sizeof cw, "%d: %.2f, %.0f%%", r->core_cpu, r->core_apc, 100.0 * r->core_share);
    fprintf(f, "| %s | %s | %s | %.3f | %s | %s | %s | %s | %s | %zu x = %s | %.2f | %s |\n", r->label, r->resid,
            r->dtype, (mc ? mc->bytes : 0.0) / 1e6, x1, x2, x3, x4, x5, r->nsets, fp, r->core_ghz, cw);
  }

  /* one table per ISA the issue sets targets for (AVX-512 first) */
  static const char *const tisa[][2] = { { "avx512", "AVX-512" }, { "avx2", "AVX2" } };
  for (size_t t = 0; t < sizeof tisa / sizeof tisa[0]; t++) {
    int met = 0, total = 0;
    for (size_t i = 0; i < n; i++)
      if (rows[i].met >= 0 && strcmp(rows[i].what, tisa[t][0]) == 0) total++, met += rows[i].met;
    if (!total) continue;
    fprintf(f, "\n## Targets (%s, 1 thread, ratio vs the ceiling in the same run): %d of %d met\n\n", tisa[t][1], met,
            total);
    fprintf(f, "| shape | dtype | vs | ratio | p25-p75 | target | met |\n|---|---|---|--:|--:|--:|---|\n");
    for (size_t i = 0; i < n; i++) {
      const kb_row *r = &rows[i];
      if (r->met < 0 || strcmp(r->what, tisa[t][0]) != 0) continue;
      fprintf(f, "| %s | %s | %s | %.2f | %.2f-%.2f | <= %.2f | %s |\n", r->label, r->dtype, r->ceil_ref, r->ratio,
              r->ratio_p25, r->ratio_p75, r->target, r->met ? "yes" : "**no**");
    }
  }
}

/* Why: JSON has no NaN; a missing number is null. */
static void kb_jnum(FILE *f, const char *key, double v, int last)
{
  if (isnan(v) || isinf(v)) fprintf(f, "\"%s\": null%s", key, last ? "" : ", ");
  else fprintf(f, "\"%s\": %.6g%s", key, v, last ? "" : ", ");
}

/* Why: strings come from /proc and the compiler; escape them properly. */
static void kb_jstr(FILE *f, const char *key, const char *s, int last)
{
  fprintf(f, "\"%s\": ", key);
  if (!s) {
    fprintf(f, "null%s", last ? "" : ", ");
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
    else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
    else fputc(ch, f);
  }
  fprintf(f, "\"%s", last ? "" : ", ");
}

/* Why: every number of every row, for scripts and for comparing runs. */
void kb_report_json(FILE *f, const kb_meta *m, const kb_row *rows, size_t n)
{
  fprintf(f, "{\n  \"meta\": {");
  kb_jstr(f, "cpu", m->cpu, 0);
  kb_jstr(f, "date", m->date, 0);
  kb_jstr(f, "commit", m->commit, 0);
  kb_jstr(f, "compiler", m->compiler, 0);
  kb_jstr(f, "cflags", m->cflags, 0);
  kb_jstr(f, "libc", m->libc, 0);
  kb_jstr(f, "thp", m->thp, 0);
  kb_jstr(f, "isas", m->isas, 0);
  kb_jstr(f, "ceiling_isa", m->ceil_flavor, 0);
  kb_jstr(f, "threads", m->pin, 0);
  kb_jnum(f, "l1d_bytes", (double)m->l1d, 0);
  kb_jnum(f, "l2_bytes", (double)m->l2, 0);
  kb_jnum(f, "l3_bytes", (double)m->l3, 0);
  kb_jnum(f, "l2_footprint_max", (double)m->l2_target, 0);
  kb_jnum(f, "llc_footprint_max", (double)m->llc_target, 0);
  kb_jnum(f, "dram_footprint_min", (double)m->dram_target, 0);
  kb_jnum(f, "rounds_small", m->rounds_small, 0);
  kb_jnum(f, "rounds_dram", m->rounds_large, 0);
  kb_jnum(f, "min_batch_ns", m->min_batch_ns, 0);
  kb_jnum(f, "offset_bytes", (double)m->offset, 0);
  kb_jnum(f, "k_shift_bytes", (double)m->kshift, 0);
  kb_jnum(f, "w_offset_bytes", (double)m->woff, 0);
  kb_jnum(f, "wall_s", m->wall_s, 0);
  fprintf(f, "\"no_rotate\": %s, ", m->no_rotate ? "true" : "false");
  kb_jnum(f, "core_ghz_start", m->ghz_start, 0);
  kb_jnum(f, "core_ghz_end", m->ghz_end, 0);
  fprintf(f, "\"quick\": %s},\n  \"results\": [", m->quick ? "true" : "false");
  for (size_t i = 0; i < n; i++) {
    const kb_row *r = &rows[i];
    fprintf(f, "%s\n    {", i ? "," : "");
    kb_jstr(f, "shape", r->shape, 0);
    kb_jstr(f, "label", r->label, 0);
    kb_jstr(f, "data_in", r->resid, 0);
    kb_jstr(f, "dtype", r->dtype, 0);
    kb_jstr(f, "kind", r->ceiling ? "ceiling" : "kernel", 0);
    kb_jstr(f, "what", r->what, 0);
    kb_jstr(f, "symbol", r->symbol, 0);
    kb_jnum(f, "threads", r->threads, 0);
    kb_jnum(f, "bytes", r->bytes, 0);
    kb_jnum(f, "ns_median", r->ns_med, 0);
    kb_jnum(f, "ns_p25", r->ns_p25, 0);
    kb_jnum(f, "ns_p75", r->ns_p75, 0);
    kb_jnum(f, "gbps", r->gbps, 0);
    kb_jstr(f, "ratio_vs", r->ceil_ref, 0);
    kb_jnum(f, "ratio", r->ratio, 0);
    kb_jnum(f, "ratio_p25", r->ratio_p25, 0);
    kb_jnum(f, "ratio_p75", r->ratio_p75, 0);
    kb_jnum(f, "core_ghz", r->core_ghz, 0);
    kb_jnum(f, "core_cpu", (double)r->core_cpu, 0);
    kb_jnum(f, "core_adds_per_cycle", r->core_apc, 0);
    kb_jnum(f, "core_cpu_share", r->core_share, 0);
    kb_jnum(f, "other_cpu", (double)r->other_cpu, 0);
    kb_jnum(f, "other_core_adds_per_cycle", r->other_apc, 0);
    kb_jnum(f, "other_cpu_share", r->other_share, 0);
    kb_jnum(f, "ratio_vs_nt_copy", r->ratio_nt, 0);
    kb_jnum(f, "target", r->target > 0 ? r->target : NAN, 0);
    if (r->met < 0) fprintf(f, "\"met\": null, ");
    else fprintf(f, "\"met\": %s, ", r->met ? "true" : "false");
    kb_jnum(f, "speedup_2t", r->threads == 2 ? r->scaling : NAN, 0);
    kb_jnum(f, "sets", (double)r->nsets, 0);
    kb_jnum(f, "footprint_bytes", r->footprint, 0);
    kb_jnum(f, "rounds", r->rounds, 0);
    kb_jnum(f, "reps_per_batch", (double)r->reps, 0);
    kb_jnum(f, "batches_retimed", r->retried, 0);
    kb_jnum(f, "rounds_on_cpu_time", r->disturbed, 0);
    if (r->check < 0) fprintf(f, "\"check_vs_scalar\": null, ");
    else fprintf(f, "\"check_vs_scalar\": %s, ", r->check ? "\"differs\"" : "\"agrees\"");
    kb_jnum(f, "check_max_abs_diff", r->check_err, 1);
    fputc('}', f);
  }
  fprintf(f, "\n  ]\n}\n");
}

/* Why: gnuplot reads whitespace columns; one block per dtype that was
 * run (blocks separated by two blank lines, so the plot addresses them with
 * `index`), one line per shape: GB/s of each ISA (1 thread), of the three
 * ceilings, and the dtype (for the panel's title). */
void kb_report_dat(FILE *f, const kb_row *rows, size_t n)
{
  static const char *dts[] = { "f32", "bf16", "f16" };
  static const char *cols[] = { "scalar", "avx2", "avx512", "neon", "memcpy", "nt-copy", "rmw" };
  fprintf(f, "# label scalar avx2 avx512 neon memcpy nt-copy rmw dtype (GB/s, 1 thread; NaN = absent)\n");
  int blocks = 0;
  for (int d = 0; d < 3; d++) {
    int any = 0;
    for (size_t i = 0; i < n; i++) {
      const kb_row *r = &rows[i];
      if (!kb_new_group(rows, i) || strcmp(r->dtype, dts[d]) != 0) continue;
      /* two blank lines between blocks, none after the last (gnuplot
       * would count a trailing empty block) */
      if (!any && blocks++) fprintf(f, "\n\n");
      any = 1;
      fprintf(f, "\"%s\"", r->label);
      for (int c = 0; c < 7; c++) {
        const kb_row *x = kb_find(rows, n, r->shape, r->dtype, cols[c], 1);
        if (x && x->gbps > 0) fprintf(f, " %.3f", x->gbps);
        else fprintf(f, " NaN");
      }
      fprintf(f, " %s\n", dts[d]);
    }
  }
}
