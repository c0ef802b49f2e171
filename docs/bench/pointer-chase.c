/* How long one random memory read takes on this machine, by working-set size: the floor under
 * a random-offset lookup (docs/BENCHMARKS.md, "Lookups: what the memory allows").
 *
 *   gcc -O2 -o /tmp/pointer-chase docs/bench/pointer-chase.c && for m in 1 2 4 16 64 256; do /tmp/pointer-chase $m; done
 *
 * "dependent": each read's address comes from the previous read (a random cycle through every
 * 64-byte line of MB megabytes), so reads never overlap: the latency. "independent": the same
 * lines at addresses from a generator, so the core overlaps as many reads as it can. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MEGABYTES\n", argv[0]);
    return 2;
  }
  size_t lines = (size_t)atoi(argv[1]) * 1024 * 1024 / 64;
  uint64_t *mem = aligned_alloc(64, lines * 64);
  size_t *order = malloc(lines * sizeof *order);
  if (!mem || !order || lines < 2) return 1;
  for (size_t i = 0; i < lines; i++) order[i] = i;
  uint64_t x = 1266;
  for (size_t i = lines - 1; i > 0; i--) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    size_t j = (x >> 17) % (i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (size_t i = 0; i < lines; i++) mem[order[i] * 8] = order[(i + 1) % lines] * 8;
  free(order);

  const long steps = 20000000;
  size_t at = 0;
  double t0 = seconds();
  for (long i = 0; i < steps; i++) at = mem[at];
  double dependent = (seconds() - t0) * 1e9 / steps;

  uint64_t sum = 0;
  t0 = seconds();
  for (long i = 0; i < steps; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    sum += mem[((x >> 20) % lines) * 8];
  }
  double independent = (seconds() - t0) * 1e9 / steps;
  printf("%s MB: dependent %.1f ns, independent %.1f ns a read (%zu %llu)\n", argv[1], dependent,
         independent, at, (unsigned long long)sum);
  free(mem);
  return 0;
}
