/* engine/cli/cmd_describe.c: `datm describe VARIANT|SECTION` and `datm describe --all
 * [--markdown]` — keys, types, defaults, bounds and docs, printed from the same schema tables
 * that validate specs (the README's key reference is this command's markdown output). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "pipeline/pipeline.h"

static void help(FILE *f)
{
    fprintf(f, "usage: datm describe VARIANT [--markdown] [--plugin PATH.so]\n"
               "       datm describe SECTION [--markdown]   (data, train, evaluate, output, top)\n"
               "       datm describe --all [--markdown]\n\n"
               "Prints the schema (key, type, default, range, description) of a model variant or\n"
               "of an engine section of the spec; --all prints every section and variant.\n"
               "--plugin PATH.so (repeatable) loads a plugin's variants first (as do the\n"
               "directories of DATM_PLUGIN_PATH).\n");
}

int datm_cmd_describe(int argc, char **argv)
{
    int markdown = 0, all = 0;
    const char *what = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { help(stdout); return 0; }
        else if (!strcmp(argv[i], "--markdown")) markdown = 1;
        else if (!strcmp(argv[i], "--all")) all = 1;
        else if (argv[i][0] == '-') {
            fprintf(stderr, "datm describe: unknown option '%s'\n", argv[i]);
            return DATM_EXIT_USAGE;
        } else if (!what) what = argv[i];
        else { help(stderr); return DATM_EXIT_USAGE; }
    }
    datm_model_catalog cat = DATM_REGISTRY_CATALOG;
    if (all) {
        datm_describe_all(stdout, &cat, markdown);
        return DATM_EXIT_OK;
    }
    if (!what) { help(stderr); return DATM_EXIT_USAGE; }
    const datm_model_ops *ops = cat.find(what);
    if (ops) {
        char title[128];
        snprintf(title, sizeof title, "model.variant: %s", ops->name);
        datm_schema_describe(stdout, title, ops->summary, ops->schema, "model.", markdown);
        return DATM_EXIT_OK;
    }
    for (int id = 0; id < DATM_SEC_COUNT_; id++) {
        const char *name = datm_section_name((datm_section_id)id);
        if (id == DATM_SEC_MODEL) continue;
        if (strcmp(what, id ? name : "top") == 0) {
            char prefix[64];
            snprintf(prefix, sizeof prefix, "%s%s", name, id ? "." : "");
            datm_schema_describe(stdout, id ? name : "top level",
                                 datm_section_doc((datm_section_id)id),
                                 datm_section_schema((datm_section_id)id), prefix, markdown);
            return DATM_EXIT_OK;
        }
    }
    const char *cand[160];
    int n = 0;
    for (int i = 0; i < cat.count() && n < 150; i++) cand[n++] = cat.at(i)->name;
    for (int id = 1; id < DATM_SEC_COUNT_; id++) cand[n++] = datm_section_name((datm_section_id)id);
    const char *near = datm_closest_name(what, cand, n);
    fprintf(stderr, "datm describe: no variant or section named '%s'%s%s%s; see 'datm models'\n",
            what, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
    return DATM_EXIT_USAGE;
}
