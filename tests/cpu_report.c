/* cpu_report.c: print what the runtime detects, for the dispatch proof.
 *
 *   cpu_report        ->  best=avx2 has=scalar avx2
 *   cpu_report --cap  ->  cap=scalar   (KGEN_ISA honoured; a bad value
 *                                       exits 2 with "kgen: ..." on stderr)
 *
 * Run natively and under `qemu-x86_64 -cpu Haswell|Nehalem` to show that
 * detection picks avx2 / scalar where AVX-512 / AVX2 are missing. */
#include <stdio.h>
#include <string.h>

#include "kg_cpu.h"
#include "kg_dispatch.h"

/* Why: one line, stable format, easy to grep in CI logs. */
int main(int argc, char **argv) {
  int i;
  if (argc > 1 && strcmp(argv[1], "--cap") == 0) {
    printf("cap=%s\n", kg_cpu_isa_name(kg_dispatch_cap()));
    return 0;
  }
  printf("best=%s has=", kg_cpu_isa_name(kg_cpu_best()));
  for (i = 0; i < KG_ISA_COUNT; i++)
    if (kg_cpu_has(i))
      printf("%s%s", i ? " " : "", kg_cpu_isa_name(i));
  printf("\n");
  return 0;
}
