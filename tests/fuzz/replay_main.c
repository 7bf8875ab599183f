/* tests/fuzz/replay_main.c: a main() for a libFuzzer harness built without libFuzzer (gcc, the
 * normal and the ASan+UBSan builds), so that CI runs every harness on every build:
 *   fuzz_replay_HARNESS [--mutants N] [--seed S] FILE_OR_DIR...
 * runs the harness once on every kept input (tests/fuzz/corpus/HARNESS: seeds and the inputs
 * of past findings) and then on N deterministic mutants of each (bytes flipped, set to edge
 * values, cut, a chunk repeated or dropped; seeded, so a failure reproduces). This is the
 * smoke of CI: no coverage guidance, which only the libFuzzer build (cmake -DDATM_FUZZ=ON,
 * tests/fuzz/run_fuzz.sh) gives. A failing input is written to fuzz_replay_failed.bin in the
 * working directory before the harness runs on it, so a crash leaves it behind. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rng_state;

static uint64_t rnd(void)   /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + len, 1, cap - len, f)) > 0) {
        len += r;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb) { free(buf); buf = NULL; }
            else buf = nb;
        }
    }
    fclose(f);
    *n = len;
    return buf;
}

/* Keeps the input about to run, so that a crash leaves it behind for the report. */
static void keep(const uint8_t *d, size_t n)
{
    FILE *f = fopen("fuzz_replay_failed.bin", "wb");
    if (!f) return;
    if (n) fwrite(d, 1, n, f);
    fclose(f);
}

/* One mutant of src (n bytes) into dst (capacity 2n + 16); returns its length. */
static size_t mutate(const uint8_t *src, size_t n, uint8_t *dst)
{
    memcpy(dst, src, n);
    size_t m = n;
    const int ops = 1 + (int)(rnd() % 4);
    for (int k = 0; k < ops && m > 0; k++) {
        const size_t at = (size_t)(rnd() % m);
        switch (rnd() % 6) {
        case 0: dst[at] ^= (uint8_t)(1u << (rnd() % 8)); break;               /* a bit */
        case 1: dst[at] = (uint8_t)rnd(); break;                                /* a byte */
        case 2: {                                                               /* an edge value */
            static const uint8_t edge[] = {0, 0xff, 0x7f, 0x80, '0', '9', '-', '\n', ' ', ':'};
            dst[at] = edge[rnd() % sizeof edge];
            break;
        }
        case 3: m = at; break;                                                  /* cut */
        case 4: {                                                               /* repeat a chunk */
            size_t len = 1 + (size_t)(rnd() % 64);
            if (at + len > m) len = m - at;
            if (m + len <= 2 * n + 16) {
                memmove(dst + at + len, dst + at, m - at);
                m += len;
            }
            break;
        }
        default: {                                                              /* drop a chunk */
            size_t len = 1 + (size_t)(rnd() % 64);
            if (at + len > m) len = m - at;
            memmove(dst + at, dst + at + len, m - at - len);
            m -= len;
        }
        }
    }
    return m;
}

static long runs;

static void run_file(const char *path, long mutants)
{
    size_t n = 0;
    uint8_t *d = slurp(path, &n);
    if (!d) { fprintf(stderr, "fuzz_replay: cannot read %s\n", path); exit(2); }
    keep(d, n);
    LLVMFuzzerTestOneInput(d, n);
    runs++;
    uint8_t *m = malloc(2 * n + 16);
    for (long i = 0; m && i < mutants && n > 0; i++) {
        const size_t mn = mutate(d, n, m);
        keep(m, mn);
        LLVMFuzzerTestOneInput(m, mn);
        runs++;
    }
    free(m);
    free(d);
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    long mutants = 0;
    uint64_t seed = 1;
    int files = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mutants") && i + 1 < argc) { mutants = atol(argv[++i]); continue; }
        if (!strcmp(argv[i], "--seed") && i + 1 < argc) { seed = strtoull(argv[++i], NULL, 10); continue; }
        rng_state = seed;
        struct stat st;
        if (stat(argv[i], &st) != 0) { fprintf(stderr, "fuzz_replay: %s: not found\n", argv[i]); return 2; }
        if (!S_ISDIR(st.st_mode)) { run_file(argv[i], mutants); files++; continue; }
        DIR *dir = opendir(argv[i]);
        if (!dir) { fprintf(stderr, "fuzz_replay: cannot list %s\n", argv[i]); return 2; }
        char **names = NULL;
        size_t nn = 0;
        for (struct dirent *e; (e = readdir(dir));) {
            if (e->d_name[0] == '.') continue;
            char **nb = realloc(names, (nn + 1) * sizeof *names);
            if (!nb) return 2;
            names = nb;
            names[nn++] = strdup(e->d_name);
        }
        closedir(dir);
        qsort(names, nn, sizeof *names, cmp);   /* a fixed order: the same mutants each time */
        for (size_t k = 0; k < nn; k++) {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[i], names[k]);
            run_file(p, mutants);
            files++;
            free(names[k]);
        }
        free(names);
    }
    remove("fuzz_replay_failed.bin");
    printf("fuzz_replay: %d inputs, %ld runs (%ld mutants each, seed %llu): no crash, no report\n",
           files, runs, mutants, (unsigned long long)seed);
    return 0;
}
