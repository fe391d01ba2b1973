/* kb_pool.h: one pinned worker thread, so a call can be split over two
 * threads the way an engine would split rows (the kernels themselves stay
 * single-threaded: each thread calls the kernel on its own row range). */
#ifndef KB_POOL_H
#define KB_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

typedef void (*kb_pool_fn)(void *arg);

typedef struct kb_pool {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  kb_pool_fn fn;
  void *arg;
  unsigned gen;          /* bumped per job, under mu */
  atomic_uint done;      /* gen of the last finished job */
  int quit;
  int cpu;               /* CPU the worker pins to; -1: not pinned */
  clockid_t clock;       /* the worker's CPU-time clock */
} kb_pool;

/* Start the worker pinned to `cpu` (-1: anywhere); 0 on success. */
int kb_pool_start(kb_pool *p, int cpu);

/* Pin the (idle) worker to `cpu` instead; 0 on success. */
int kb_pool_move(kb_pool *p, int cpu);

/* Run fn(main_arg) here and fn(worker_arg) on the worker; return when both
 * are done. */
void kb_pool_run2(kb_pool *p, kb_pool_fn fn, void *main_arg, void *worker_arg);

/* Stop and join the worker. */
void kb_pool_stop(kb_pool *p);

#endif
