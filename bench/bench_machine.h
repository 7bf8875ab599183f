/* bench/bench_machine.h: the machine line every benchmark prints first, so that a figure names
 * where it came from: CPU model, online cores, the 1-minute load average (on a shared machine a
 * load above the core count means OpenMP threads are descheduled and multi-thread figures drop),
 * the OpenMP threads and wait policy (spinning threads stall their siblings at every barrier
 * when one is descheduled). Header-only: each bench is one program (bench/CMakeLists.txt). */
#ifndef DATM_BENCH_MACHINE_H
#define DATM_BENCH_MACHINE_H

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The 1-minute load average, -1 when the system does not say. */
static inline double bench_load1(void)
{
    double l[1] = {-1};
    return getloadavg(l, 1) == 1 ? l[0] : -1;
}

/* This process's peak resident set in MB (ru_maxrss is in KiB on Linux). */
static inline double bench_peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

static inline void bench_print_machine(void)
{
    char model[256] = "unknown", line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *c = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && c) {
            snprintf(model, sizeof model, "%s", c + 2);
            model[strcspn(model, "\n")] = 0;
            break;
        }
    }
    if (f) fclose(f);
    const char *wp = getenv("OMP_WAIT_POLICY"), *sc = getenv("GOMP_SPINCOUNT");
    printf("machine: %s, %ld cores online, load average %.2f at start; %d OpenMP threads, "
           "OMP_WAIT_POLICY %s, GOMP_SPINCOUNT %s\n", model, sysconf(_SC_NPROCESSORS_ONLN),
           bench_load1(), omp_get_max_threads(), wp ? wp : "(unset)", sc ? sc : "(unset)");
}

#endif
