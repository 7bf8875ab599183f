/* ctest-labels: unit
 * tests/test_plugin_abi.c: include/datm_model.h (the header plugins are built against) and the
 * engine's own headers describe the same structs, constants and entry-point table, entry by
 * entry (plugin_abi_layout.h): every size, member offset and constant the list names is
 * compared; a change to one side alone fails here rather than in a plugin. */
#include <stdio.h>

#include "../models/variant_schema.h"
#include "../models/whai.h"
#include "plugin/plugin.h"
#include "plugin_abi_layout.h"

extern const size_t plugin_abi_public[];
extern const size_t plugin_abi_public_count;

#define X(v, name) v,
static const size_t engine[] = {PLUGIN_ABI_LAYOUT};
#undef X
#define X(v, name) name,
static const char *const names[] = {PLUGIN_ABI_LAYOUT};
#undef X

int main(void)
{
    const size_t n = sizeof engine / sizeof engine[0];
    int fail = plugin_abi_public_count != n;
    if (fail) printf("FAIL: %zu entries in the public list, %zu in the engine's\n",
                     plugin_abi_public_count, n);
    for (size_t i = 0; i < n && !fail; i++)
        if (engine[i] != plugin_abi_public[i]) {
            printf("FAIL: %s: engine %zu, include/datm_model.h %zu\n", names[i], engine[i],
                   plugin_abi_public[i]);
            fail = 1;
        }
    printf("%s: %zu layout facts agree\n", fail ? "FAIL" : "ok", n);
    return fail;
}
