/* kg_emu.cpp: a host emulation of the CUDA runtime subset in
 * cuda_runtime_api.h / cuda_runtime.h, for `make test-cuda-emu` only.
 *
 * Device memory is host memory.  A launch runs its blocks one after
 * another; within a block every CUDA thread is a cooperative context (own
 * stack, ucontext) that runs until it reaches __syncthreads() or a warp
 * shuffle, then yields (in two schedules, see run_block).  The scheduler releases a block barrier when every
 * live thread of the block waits at it, and a warp barrier when every live
 * thread of that warp does; anything else is a deadlock (on a GPU: a hang
 * or undefined behaviour) and aborts with a message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <vector>

#include "cuda_runtime.h"

dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace {

enum { RUN, WAIT_BLOCK, WAIT_WARP, DONE };

struct emu_thread {
  ucontext_t ctx;
  int state;
};

const size_t STACK = 64 * 1024;
const unsigned int MAX_THREADS = 1024;

std::vector<emu_thread> threads(MAX_THREADS);
std::vector<char> stacks;
unsigned char slots[MAX_THREADS][8];
ucontext_t sched;
unsigned int cur;
kg_emu_body cur_body;
unsigned long launches;
void *cur_closure;

void trampoline(void)
{
  cur_body(cur_closure);
  threads[cur].state = DONE;
}

void wait_as(int state)
{
  threads[cur].state = state;
  if (swapcontext(&threads[cur].ctx, &sched) != 0) abort();
  threadIdx = dim3(cur);
}

/* Why: these two are functions of their own, so that no caller variable
 * lives across getcontext/swapcontext (they return twice, like setjmp). */
__attribute__((noinline)) void start(unsigned int t)
{
  if (getcontext(&threads[t].ctx) != 0) abort();
  threads[t].ctx.uc_stack.ss_sp = &stacks[t * STACK];
  threads[t].ctx.uc_stack.ss_size = STACK;
  threads[t].ctx.uc_link = &sched;
  makecontext(&threads[t].ctx, trampoline, 0);
  threads[t].state = RUN;
}

__attribute__((noinline)) void resume(unsigned int t)
{
  cur = t;
  threadIdx = dim3(t);
  if (swapcontext(&sched, &threads[t].ctx) != 0) abort();
}

/* Why: release warp w's shuffle barrier when all its live threads wait. */
bool release_warp(unsigned int w, unsigned int nt)
{
  unsigned int wl = 0, ww = 0;
  for (unsigned int t = w * 32; t < nt && t < w * 32 + 32; t++) {
    if (threads[t].state != DONE) wl++;
    if (threads[t].state == WAIT_WARP) ww++;
  }
  if (wl == 0 || ww != wl) return false;
  for (unsigned int t = w * 32; t < nt && t < w * 32 + 32; t++)
    if (threads[t].state == WAIT_WARP) threads[t].state = RUN;
  return true;
}

/* Why: run one block to completion, releasing barriers as they fill.  Two
 * schedules, alternating between launches: "fair" runs every thread up to
 * its next barrier in turn; "greedy" runs each warp as far as it can get
 * (to a __syncthreads() or its end) before the next warp starts, which is
 * what exposes a warp that overwrites shared memory others still read. */
void run_block(unsigned int nt, bool greedy)
{
  const unsigned int nwarps = (nt + 31) / 32;
  for (unsigned int t = 0; t < nt; t++) start(t);
  for (;;) {
    if (greedy) {
      for (unsigned int w = 0; w < nwarps; w++) {
        do {
          for (unsigned int t = w * 32; t < nt && t < w * 32 + 32; t++)
            if (threads[t].state == RUN) resume(t);
        } while (release_warp(w, nt));
      }
    } else {
      for (unsigned int t = 0; t < nt; t++)
        if (threads[t].state == RUN) resume(t);
    }
    unsigned int live = 0, at_block = 0;
    for (unsigned int t = 0; t < nt; t++) {
      if (threads[t].state != DONE) live++;
      if (threads[t].state == WAIT_BLOCK) at_block++;
    }
    if (live == 0) return;
    bool released = false;
    if (at_block == live) {
      for (unsigned int t = 0; t < nt; t++)
        if (threads[t].state == WAIT_BLOCK) threads[t].state = RUN;
      released = true;
    } else {
      for (unsigned int w = 0; w < nwarps; w++) released = release_warp(w, nt) || released;
    }
    if (!released) {
      fprintf(stderr, "kg_emu: deadlock in block %u: %u live threads, %u at __syncthreads()\n",
              blockIdx.x, live, at_block);
      abort();
    }
  }
}

} // namespace

void kg_emu_syncthreads(void) { wait_as(WAIT_BLOCK); }

void kg_emu_warp_exchange(const void *mine, void *theirs, unsigned int lane, size_t n)
{
  const unsigned int me = cur;
  const unsigned int src = (me & ~31u) | (lane & 31u);
  memcpy(slots[me], mine, n);
  wait_as(WAIT_WARP); /* every lane has published */
  if (src >= blockDim.x) {
    fprintf(stderr, "kg_emu: shuffle from lane %u beyond the block\n", src);
    abort();
  }
  memcpy(theirs, slots[src], n);
  wait_as(WAIT_WARP); /* every lane has read */
}

cudaError_t kg_emu_launch(dim3 grid, dim3 block, kg_emu_body body, void *closure)
{
  if (grid.x == 0 || block.x == 0 || block.x > MAX_THREADS || grid.y != 1 || grid.z != 1 ||
      block.y != 1 || block.z != 1)
    return cudaErrorInvalidConfiguration;
  if (stacks.empty()) stacks.resize(MAX_THREADS * STACK);
  cur_body = body;
  cur_closure = closure;
  gridDim = grid;
  blockDim = block;
  const bool greedy = (launches++ % 2) == 0;
  for (unsigned int b = 0; b < grid.x; b++) {
    blockIdx = dim3(b);
    run_block(block.x, greedy);
  }
  return cudaSuccess;
}

extern "C" {

cudaError_t cudaGetDeviceCount(int *n)
{
  *n = 1;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int dev)
{
  if (dev != 0) return cudaErrorInvalidValue;
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "kgen host emulation (not a GPU)");
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = 1;
  return cudaSuccess;
}

const char *cudaGetErrorString(cudaError_t e)
{
  switch (e) {
  case cudaSuccess: return "no error";
  case cudaErrorInvalidValue: return "invalid argument";
  case cudaErrorMemoryAllocation: return "out of memory";
  case cudaErrorInvalidConfiguration: return "invalid configuration argument";
  default: return "unknown error";
  }
}

cudaError_t cudaGetLastError(void) { return cudaSuccess; }

cudaError_t cudaMalloc(void **p, size_t n)
{
  *p = aligned_alloc(256, (n + 255) / 256 * 256 + 256);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaFree(void *p)
{
  free(p);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
  (void)kind;
  memmove(dst, src, n);
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
  (void)flags;
  *s = (cudaStream_t)malloc(1);
  return *s ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
  free(s);
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
  (void)s;
  return cudaSuccess;
}

} // extern "C"
