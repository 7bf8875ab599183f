/* tests/plugin_abi_public.c: the plugin ABI's layout as the installed header gives it (see
 * plugin_abi_layout.h); linked into test_plugin_abi. Only include/datm_model.h is in sight. */
#include "../include/datm_model.h"
#include "plugin_abi_layout.h"

#define X(v, name) v,
const size_t plugin_abi_public[] = {PLUGIN_ABI_LAYOUT};
#undef X
const size_t plugin_abi_public_count = sizeof plugin_abi_public / sizeof plugin_abi_public[0];
