/* models/registry.c: the only list of model variants. Adding a variant = one extern line and
 * one table entry. The registry is the one global table the style guide allows; after the
 * built-in table come the variants of plugins loaded at run time (engine/plugin), in load
 * order, each with the file it came from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/model.h"
#include "plugin/plugin.h"

/* extern const datm_model_ops datm_model_xxx; -- one line per variant, in table order */
extern const datm_model_ops datm_model_unigram;
extern const datm_model_ops datm_model_dlda_gibbs;
extern const datm_model_ops datm_model_dlda_tlasgr;
extern const datm_model_ops datm_model_sdatm_l;
extern const datm_model_ops datm_model_sdatm_n;
extern const datm_model_ops datm_model_whai;
extern const datm_model_ops datm_model_wai;
extern const datm_model_ops datm_model_iwhai;
extern const datm_model_ops datm_model_ghai;
extern const datm_model_ops datm_model_layerwise;

static const datm_model_ops *const registry[] = {
    &datm_model_unigram,
    &datm_model_dlda_gibbs,
    &datm_model_dlda_tlasgr,
    &datm_model_sdatm_l,
    &datm_model_sdatm_n,
    &datm_model_whai,
    &datm_model_wai,
    &datm_model_iwhai,
    &datm_model_ghai,
    &datm_model_layerwise,
    NULL /* end */
};

enum { N_BUILTIN = (int)(sizeof registry / sizeof registry[0]) - 1, MAX_PLUGINS = 16 };

/* Loaded plugins: opened once per process and never closed (their code is in use). */
static datm_plugin plugins[MAX_PLUGINS];
static int         n_plugins;
static const datm_model_ops *loaded[MAX_PLUGINS * DATM_PLUGIN_MAX_MODELS];
static const datm_plugin    *loaded_from[MAX_PLUGINS * DATM_PLUGIN_MAX_MODELS];
static int                   n_loaded;

int datm_registry_count(void) { return N_BUILTIN + n_loaded; }

const datm_model_ops *datm_registry_at(int i)
{
    if (i >= 0 && i < N_BUILTIN) return registry[i];
    if (i >= N_BUILTIN && i < N_BUILTIN + n_loaded) return loaded[i - N_BUILTIN];
    return NULL;
}

const datm_model_ops *datm_registry_find(const char *name)
{
    for (int i = 0; i < datm_registry_count(); i++)
        if (strcmp(datm_registry_at(i)->name, name) == 0) return datm_registry_at(i);
    return NULL;
}

int datm_registry_source(const datm_model_ops *ops, const char **path, const char **sha256)
{
    for (int i = 0; i < n_loaded; i++)
        if (loaded[i] == ops) {
            if (path) *path = loaded_from[i]->path;
            if (sha256) *sha256 = loaded_from[i]->sha256;
            return 1;
        }
    if (path) *path = NULL;
    if (sha256) *sha256 = NULL;
    return 0;
}

int datm_registry_load(const char *path, const char *base_dir, const char *where,
                       datm_error *err)
{
    if (!where) where = "";
    char real[4096];
    int rc = datm_plugin_resolve(path, base_dir, real, sizeof real, err);
    if (rc) return datm_error_prefix(err, "%s", where);
    for (int i = 0; i < n_plugins; i++)
        if (!strcmp(plugins[i].path, real)) return DATM_OK;   /* loaded already */
    if (n_plugins >= MAX_PLUGINS)
        return datm_error_set(err, DATM_E_INVALID, "%splugin %s: at most %d plugins", where,
                              real, MAX_PLUGINS);
    datm_plugin *p = &plugins[n_plugins];
    rc = datm_plugin_open(real, where, p, err);
    if (rc) return rc;
    for (int m = 0; m < p->n_models; m++) {
        const datm_model_ops *clash = datm_registry_find(p->models[m]->name);
        if (!clash) continue;
        const char *from = NULL;
        datm_registry_source(clash, &from, NULL);
        rc = datm_error_set(err, DATM_E_INVALID, "%splugin %s: variant '%s' clashes with the %s "
                            "variant of that name%s%s (give it another name)", where, real,
                            p->models[m]->name, from ? "loaded" : "built-in",
                            from ? " from " : "", from ? from : "");
        memset(p, 0, sizeof *p);   /* the handle stays open: its constructors have run */
        return rc;
    }
    n_plugins++;
    for (int m = 0; m < p->n_models; m++) {
        loaded[n_loaded] = p->models[m];
        loaded_from[n_loaded++] = p;
    }
    return DATM_OK;
}
