/* kb_sys.c: OS services for the bench (Linux; degrades where absent). */
#define _GNU_SOURCE
#include "kb_sys.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

/* Why: CLOCK_MONOTONIC never jumps with NTP steps; batches are timed in
 * nanoseconds as doubles (53 bits are plenty for a run of minutes). */
double kb_sys_now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Why: tells a batch that ran from one that was preempted (another
 * process took the CPU), which wall time alone cannot. */
double kb_sys_cpu_ns(clockid_t clock)
{
  struct timespec t;
  if (clock_gettime(clock, &t) != 0) return 0.0;
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Why: the report names the machine the way a reader recognizes it. */
void kb_sys_cpu_model(char *buf, size_t len)
{
  char line[512];
  FILE *f = fopen("/proc/cpuinfo", "r");
  buf[0] = '\0';
  if (f) {
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "model name", 10) == 0) {
        const char *p = strchr(line, ':');
        if (p) {
          p++;
          while (*p == ' ' || *p == '\t') p++;
          snprintf(buf, len, "%s", p);
          buf[strcspn(buf, "\n")] = '\0';
        }
        break;
      }
    }
    fclose(f);
  }
  if (!buf[0]) {
    struct utsname u;
    snprintf(buf, len, "%s", uname(&u) == 0 ? u.machine : "unknown");
  }
}

/* Why: sysconf reports 0 or -1 for unknown levels; normalize to 0. */
static size_t kb_sys_conf(int name)
{
  long v = sysconf(name);
  return v > 0 ? (size_t)v : 0;
}

/* Why: the L2 and LLC sizes decide how many sets the L2/LLC shapes
 * rotate; all three are printed with the results. */
size_t kb_sys_cache_l1d(void)
{
#ifdef _SC_LEVEL1_DCACHE_SIZE
  return kb_sys_conf(_SC_LEVEL1_DCACHE_SIZE);
#else
  return 0;
#endif
}

size_t kb_sys_cache_l2(void)
{
#ifdef _SC_LEVEL2_CACHE_SIZE
  return kb_sys_conf(_SC_LEVEL2_CACHE_SIZE);
#else
  return 0;
#endif
}

size_t kb_sys_cache_l3(void)
{
#ifdef _SC_LEVEL3_CACHE_SIZE
  return kb_sys_conf(_SC_LEVEL3_CACHE_SIZE);
#else
  return 0;
#endif
}

/* Why: a container may allow fewer CPUs than the machine has; the 2-thread
 * runs need two allowed ones. */
int kb_sys_cpus(int *cpus, int max)
{
  cpu_set_t set;
  int n = 0;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  for (int c = 0; c < CPU_SETSIZE && n < max; c++)
    if (CPU_ISSET(c, &set)) cpus[n++] = c;
  return n;
}

/* Why: migrations between cores in the middle of a batch add noise. */
int kb_sys_pin(int cpu)
{
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : -1;
}

/* Why: mmap gives page-aligned zeroed memory that goes back to the OS on
 * free (the DRAM shapes allocate hundreds of MiB per case); huge pages keep
 * TLB misses out of the kernel-vs-memcpy comparison. */
void *kb_sys_alloc(size_t bytes)
{
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
  if (bytes >= ((size_t)2 << 20)) madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

/* Why: the probes add a register, not an immediate: Intel cores since
 * Golden Cove fold chains of `add $1` at rename, several a cycle (an
 * Emerald Rapids VM read 11.95 GHz), while a register operand keeps one
 * add a cycle on every core measured.  volatile: the compiler cannot see
 * the 1. */
static volatile unsigned long kb_sys_one = 1;

/* Why: runs of the bench minutes apart differ by up to 1.8x in compute-
 * bound kernels on a shared VM host; a clock probe next to each case lets
 * a reader tell a slow host from a slow kernel (kb_sys.h). */
double kb_sys_core_ghz(void)
{
#if defined(__x86_64__) || defined(__aarch64__)
  const unsigned long n = 200000;
  double best = 0.0;
  for (int r = 0; r < 15; r++) {
    unsigned long x = 0;
    const unsigned long one = kb_sys_one;
    const double t0 = kb_sys_now_ns();
    for (unsigned long i = 0; i < n; i += 8) {
#if defined(__x86_64__)
      __asm__ volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                       "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0" : "+r"(x) : "r"(one));
#else
      __asm__ volatile("add %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\t"
                       "add %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1" : "+r"(x) : "r"(one));
#endif
    }
    const double dt = kb_sys_now_ns() - t0;
    if (x == n && dt > 0.0 && (double)n / dt > best) best = (double)n / dt;
  }
  return best;
#else
  return 0.0;
#endif
}

/* Why: a core shared with another thread keeps its clock but not its
 * issue slots; the clock probe above cannot see that, this one does
 * (kb_sys.h).  The median, not the best: sharing lasts minutes, and a
 * best-of would pick the moments the other thread paused. */
double kb_sys_core_width(void)
{
#if defined(__x86_64__) || defined(__aarch64__)
  const unsigned long n = 40000;
  double v[9];
  for (int r = 0; r < 9; r++) {
    unsigned long a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0;
    const unsigned long one = kb_sys_one;
    const double t0 = kb_sys_now_ns();
    for (unsigned long i = 0; i < n; i++) {
#if defined(__x86_64__)
      __asm__ volatile("add %8, %0\n\tadd %8, %1\n\tadd %8, %2\n\tadd %8, %3\n\t"
                       "add %8, %4\n\tadd %8, %5\n\tadd %8, %6\n\tadd %8, %7"
                       : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g), "+r"(h)
                       : "r"(one));
#else
      __asm__ volatile("add %0, %0, %8\n\tadd %1, %1, %8\n\tadd %2, %2, %8\n\tadd %3, %3, %8\n\t"
                       "add %4, %4, %8\n\tadd %5, %5, %8\n\tadd %6, %6, %8\n\tadd %7, %7, %8"
                       : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g), "+r"(h)
                       : "r"(one));
#endif
    }
    const double dt = kb_sys_now_ns() - t0;
    v[r] = a + b + c + d + e + f + g + h == 8 * n && dt > 0.0 ? 8.0 * (double)n / dt : 0.0;
  }
  for (int i = 1; i < 9; i++) /* insertion sort of 9 */
    for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
      const double t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return v[4];
#else
  return 0.0;
#endif
}

/* Why: a CPU shared in time with another busy process loses whole time
 * slices; the width probe's short runs fit between them and read an idle
 * core, and the bench would pick that CPU (bench/README.md, "Pinning"). */
double kb_sys_cpu_share(double ms)
{
  const double w0 = kb_sys_now_ns(), c0 = kb_sys_cpu_ns(CLOCK_THREAD_CPUTIME_ID);
  volatile unsigned long sink = 0;
  while (kb_sys_now_ns() - w0 < ms * 1e6)
    for (unsigned long i = 0; i < 4096; i++) sink = sink + i;
  const double w = kb_sys_now_ns() - w0, c = kb_sys_cpu_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
  if (!(w > 0.0) || !(c >= 0.0)) return NAN;
  return c >= w ? 1.0 : c / w;
}

/* Why: the counterpart of kb_sys_alloc (munmap needs the length). */
void kb_sys_free(void *p, size_t bytes)
{
  if (p) munmap(p, bytes);
}

/* Why: whether huge pages were on changes DRAM-shape numbers; record it. */
void kb_sys_thp(char *buf, size_t len)
{
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  snprintf(buf, len, "?");
  if (f) {
    if (fgets(buf, (int)len, f)) buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
  }
}

/* Why: the memcpy ceiling is the C library's; its version matters. */
const char *kb_sys_libc(void)
{
#ifdef __GLIBC__
  return gnu_get_libc_version();
#else
  return "?";
#endif
}
