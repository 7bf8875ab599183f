/* engine/cli/cmd_models.c: `datm models` — the registered variants (models/registry.c). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "pipeline/pipeline.h"

int datm_cmd_models(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: datm models\n\nLists the registered model variants (the values of "
                   "model.variant).\nSee 'datm describe VARIANT' for the keys of one.\n");
            return DATM_EXIT_OK;
        }
        fprintf(stderr, "datm models: unexpected argument '%s'\n", argv[i]);
        return DATM_EXIT_USAGE;
    }
    datm_model_catalog cat = DATM_REGISTRY_CATALOG;
    for (int i = 0; i < cat.count(); i++) {
        const datm_model_ops *ops = cat.at(i);
        printf("%-14s %s\n", ops->name, ops->summary ? ops->summary : "");
    }
    return DATM_EXIT_OK;
}
