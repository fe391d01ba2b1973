/* kb_sys.h: what the bench needs from the OS: a monotonic clock, the
 * machine's description, CPU pinning and large page-backed buffers. */
#ifndef KB_SYS_H
#define KB_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Nanoseconds of CLOCK_MONOTONIC. */
double kb_sys_now_ns(void);

/* Nanoseconds of a CPU-time clock (the calling thread's with
 * CLOCK_THREAD_CPUTIME_ID, another thread's from pthread_getcpuclockid):
 * time on a CPU, so wall minus this is time the thread was preempted. */
double kb_sys_cpu_ns(clockid_t clock);

/* The core's clock as a chain of dependent integer adds of a register sees
 * it (one add a cycle on every x86-64 and aarch64 core measured; adds of an
 * immediate run faster on recent Intel cores): adds per ns, best of a few
 * short runs; 0 where no such loop is written.  A host that slows the
 * core (a busy sibling thread, a lower clock) shows here, and it moves
 * compute-bound kernels more than the memcpy they are compared with. */
double kb_sys_core_ghz(void);

/* The core's width as eight independent chains of integer adds see it:
 * adds per ns, the median of a few short runs; 0 where no such loop is
 * written.  Divided by kb_sys_core_ghz, adds a cycle: about 4.4 on an idle
 * Zen 5 core.  Unlike the clock, it drops when another thread shares the
 * core (SMT: a VM host's other tenant), which slows compute-bound kernels
 * up to 2x while memcpy from L2 holds (bench/RESULTS.md run 47). */
double kb_sys_core_width(void);

/* The share of wall time this thread was on its CPU while it spun for
 * `ms` milliseconds (on-CPU time / wall time, at most 1): about 1 on a CPU
 * no other runnable thread wants, about 1/2 where another busy process
 * takes every other time slice.  Spinning over several scheduler slices,
 * it sees what kb_sys_core_width's sub-millisecond runs fit between. */
double kb_sys_cpu_share(double ms);

/* "model name" of /proc/cpuinfo (or the uname machine when absent). */
void kb_sys_cpu_model(char *buf, size_t len);

/* Cache sizes in bytes as the C library reports them (0 when unknown). */
size_t kb_sys_cache_l1d(void);
size_t kb_sys_cache_l2(void);
size_t kb_sys_cache_l3(void);

/* The CPUs this process may run on, in order; returns how many (<= max). */
int kb_sys_cpus(int *cpus, int max);

/* Pin the calling thread to `cpu`; 0 on success, -1 when not allowed. */
int kb_sys_pin(int cpu);

/* A zeroed, page-backed buffer (transparent huge pages requested when the
 * size warrants it); NULL on failure.  Free with kb_sys_free(p, bytes). */
void *kb_sys_alloc(size_t bytes);
void kb_sys_free(void *p, size_t bytes);

/* The transparent-huge-page mode line ("always [madvise] never") or "?". */
void kb_sys_thp(char *buf, size_t len);

/* The C library's version ("2.36"), or "?" off glibc. */
const char *kb_sys_libc(void);

#endif
