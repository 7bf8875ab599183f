/* engine/cli/cmd_models.c: `datm models` — the registered variants (models/registry.c):
 * the built-in ones, then those of loaded plugins with the file each came from. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "pipeline/pipeline.h"

int datm_cmd_models(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: datm models [--plugin PATH.so ...]\n\nLists the registered model "
                   "variants (the values of model.variant):\nthe built-in ones, then those of "
                   "the plugins loaded by --plugin and from the\ndirectories of "
                   "DATM_PLUGIN_PATH, each marked built-in or plugin (with its file).\n"
                   "See 'datm describe VARIANT' for the keys of one.\n");
            return DATM_EXIT_OK;
        }
        fprintf(stderr, "datm models: unexpected argument '%s'\n", argv[i]);
        return DATM_EXIT_USAGE;
    }
    datm_model_catalog cat = DATM_REGISTRY_CATALOG;
    for (int i = 0; i < cat.count(); i++) {
        const datm_model_ops *ops = cat.at(i);
        const char *path = NULL;
        const int plugin = cat.source(ops, &path, NULL);
        printf("%-14s %-9s %s%s%s%s\n", ops->name, plugin ? "plugin" : "built-in",
               ops->summary ? ops->summary : "", plugin ? " (" : "", plugin ? path : "",
               plugin ? ")" : "");
    }
    return DATM_EXIT_OK;
}
