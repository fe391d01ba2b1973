/* kb_pool.c: the 2-thread pool of the bench (pthreads, no OpenMP). */
#define _GNU_SOURCE
#include "kb_pool.h"

#include <sched.h>

#include "kb_sys.h"

/* Why: the worker sleeps on a condition variable between jobs, so it takes
 * no CPU from the single-threaded measurements. */
static void *kb_pool_main(void *arg)
{
  kb_pool *p = arg;
  unsigned seen = 0;
  if (p->cpu >= 0) (void)kb_sys_pin(p->cpu);
  for (;;) {
    pthread_mutex_lock(&p->mu);
    while (p->gen == seen && !p->quit) pthread_cond_wait(&p->cv, &p->mu);
    if (p->quit) {
      pthread_mutex_unlock(&p->mu);
      return NULL;
    }
    seen = p->gen;
    kb_pool_fn fn = p->fn;
    void *a = p->arg;
    pthread_mutex_unlock(&p->mu);
    fn(a);
    atomic_store_explicit(&p->done, seen, memory_order_release);
  }
}

/* Why: one worker, created once, pinned to its own CPU: thread start-up
 * never lands inside a timed batch. */
int kb_pool_start(kb_pool *p, int cpu)
{
  p->fn = NULL;
  p->arg = NULL;
  p->gen = 0;
  atomic_init(&p->done, 0);
  p->quit = 0;
  p->cpu = cpu;
  if (pthread_mutex_init(&p->mu, NULL) != 0) return -1;
  if (pthread_cond_init(&p->cv, NULL) != 0) return -1;
  if (pthread_create(&p->thread, NULL, kb_pool_main, p) != 0) return -1;
  if (pthread_getcpuclockid(p->thread, &p->clock) != 0) p->clock = CLOCK_MONOTONIC;
  return 0;
}

/* Why: the bench moves the 1-thread runs to the quieter core before each
 * case (bench.c kb_pick_core); the worker takes the other one. */
int kb_pool_move(kb_pool *p, int cpu)
{
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(p->thread, sizeof set, &set) != 0) return -1;
  p->cpu = cpu;
  return 0;
}

/* Why: the caller does its half while the worker does the other; waiting
 * for the worker spins (the calls split are milliseconds long, and a
 * futex wake would add its latency to the timed batch). */
void kb_pool_run2(kb_pool *p, kb_pool_fn fn, void *main_arg, void *worker_arg)
{
  pthread_mutex_lock(&p->mu);
  p->fn = fn;
  p->arg = worker_arg;
  unsigned g = ++p->gen;
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
  fn(main_arg);
  unsigned spins = 0;
  while (atomic_load_explicit(&p->done, memory_order_acquire) != g)
    if (++spins > 1000) sched_yield();
}

/* Why: a clean join, so tools that look for leaked threads stay quiet. */
void kb_pool_stop(kb_pool *p)
{
  pthread_mutex_lock(&p->mu);
  p->quit = 1;
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
  pthread_join(p->thread, NULL);
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
}
