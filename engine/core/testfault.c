/* engine/core/testfault.c: the test-only interface of testhooks.h: the path switches
 * (datm_test_hooks) and DATM_TEST_FAULT. Products never set either; tests use them to compare
 * a fast path with the portable one, to fail a write with ENOSPC or to kill the process at a
 * chosen instant, deterministically. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

#define MAX_FAULTS 8

datm_test_hooks_t datm_test_hooks;

void datm_test_hooks_reset(void)
{
    datm_test_hooks = (datm_test_hooks_t){0};
}

typedef struct fault { char point[48]; long at, seen; } fault;

static fault faults[MAX_FAULTS];
static int n_faults = -1;

static void parse(void)
{
    n_faults = 0;
    const char *env = getenv("DATM_TEST_FAULT");
    if (!env) return;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", env);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && n_faults < MAX_FAULTS;
         t = strtok_r(NULL, ",", &save)) {
        fault *f = &faults[n_faults++];
        char *at = strchr(t, '@');
        f->at = at ? atol(at + 1) : 1;
        if (at) *at = '\0';
        snprintf(f->point, sizeof f->point, "%s", t);
        f->seen = 0;
    }
}

int datm_test_fault(const char *point)
{
    if (n_faults < 0) parse();
    for (int i = 0; i < n_faults; i++)
        if (!strcmp(faults[i].point, point) && ++faults[i].seen == faults[i].at) return 1;
    return 0;
}

void datm_test_kill(const char *where)
{
    char point[64];
    snprintf(point, sizeof point, "kill:%s", where);
    if (datm_test_fault(point)) raise(SIGKILL);
}
