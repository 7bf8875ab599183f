/* engine/plugin/plugin.c: dlopen, entry point, version check and validation of a model plugin
 * (plugin.h). */
#include "plugin/plugin.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline/pipeline.h"

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int datm_plugin_resolve(const char *name, const char *base_dir, char *out, size_t size,
                        datm_error *err)
{
    char cand[PATH_MAX], tried[2048] = "";
    size_t o = 0;
    int n_env = 0;
    if (name[0] == '/') snprintf(cand, sizeof cand, "%s", name);
    else if (base_dir && base_dir[0]) snprintf(cand, sizeof cand, "%s/%s", base_dir, name);
    else snprintf(cand, sizeof cand, "%s", name);
    int found = is_file(cand);
    o += (size_t)snprintf(tried + o, sizeof tried - o, "%s", cand);
    /* a relative name is also looked for in each directory of DATM_PLUGIN_PATH */
    const char *env = getenv("DATM_PLUGIN_PATH");
    if (!found && name[0] != '/' && env && *env) {
        char buf[4096];
        snprintf(buf, sizeof buf, "%s", env);
        for (char *save = NULL, *d = strtok_r(buf, ":", &save); d && !found;
             d = strtok_r(NULL, ":", &save)) {
            snprintf(cand, sizeof cand, "%s/%s", d, name);
            found = is_file(cand);
            n_env++;
            if (o + 1 < sizeof tried) o += (size_t)snprintf(tried + o, sizeof tried - o, ", %s", cand);
        }
    }
    if (!found)
        return datm_error_set(err, DATM_E_IO, "plugin '%s': no such file (looked for %s%s)", name,
                              tried, n_env ? "" : "; relative names are also looked for in "
                                                  "the directories of DATM_PLUGIN_PATH");
    char real[PATH_MAX];
    if (!realpath(cand, real))
        return datm_error_set(err, DATM_E_IO, "plugin %s: %s", cand, strerror(errno));
    if (strlen(real) >= size)
        return datm_error_set(err, DATM_E_INVALID, "plugin %s: path too long", real);
    snprintf(out, size, "%s", real);
    return DATM_OK;
}

static int valid_name(const char *s, int allow_dot)
{
    if (!s || !islower((unsigned char)s[0])) return 0;
    for (const char *p = s; *p; p++)
        if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && *p != '_' &&
            *p != '-' && !(allow_dot && *p == '.'))
            return 0;
    return strlen(s) < 64;
}

int datm_plugin_check_schema(const datm_param_schema *schema, datm_error *err)
{
    if (!schema) return DATM_OK;   /* a variant without keys */
    int n = 0;
    for (; schema[n].key; n++) {
        const datm_param_schema *r = &schema[n];
        if (n >= 512)
            return datm_error_set(err, DATM_E_INVALID, "schema: more than 512 rows (is the "
                                  "table terminated by a row whose key is NULL?)");
        if (!valid_name(r->key, 0))
            return datm_error_set(err, DATM_E_INVALID, "schema row %d: key '%s' is not a "
                                  "lower-case name (a-z, 0-9, _, -)", n + 1, r->key);
        if (!strcmp(r->key, "variant") || !strcmp(r->key, "plugin"))
            return datm_error_set(err, DATM_E_INVALID, "schema row %d: key '%s' is the "
                                  "engine's own key of model:", n + 1, r->key);
        for (int j = 0; j < n; j++)
            if (!strcmp(schema[j].key, r->key))
                return datm_error_set(err, DATM_E_INVALID, "schema row %d: key '%s' is given "
                                      "twice (rows %d and %d)", n + 1, r->key, j + 1, n + 1);
        if ((int)r->type < 0 || r->type >= DATM_PARAM_TYPE_COUNT_)
            return datm_error_set(err, DATM_E_INVALID, "schema row %d (%s): unknown type %d",
                                  n + 1, r->key, (int)r->type);
        if ((r->type == DATM_PARAM_CHOICE || r->type == DATM_PARAM_CHOICE_LIST) &&
            (!r->choices || !r->choices[0]))
            return datm_error_set(err, DATM_E_INVALID, "schema row %d (%s): a %s key needs its "
                                  "choices (\"a|b|c\")", n + 1, r->key,
                                  datm_param_type_name(r->type));
        if (!r->doc || !r->doc[0])
            return datm_error_set(err, DATM_E_INVALID, "schema row %d (%s): no doc line (datm "
                                  "describe prints it)", n + 1, r->key);
    }
    /* every default parses and lies within its bounds: the engine's own parser decides */
    datm_config *c = NULL;
    int rc = datm_config_create_partial(schema, "model", &c, err);
    datm_config_destroy(&c);
    if (rc) return datm_error_prefix(err, "schema: ");
    return DATM_OK;
}

int datm_plugin_check_ops(const datm_model_ops *ops, datm_error *err)
{
    if (!valid_name(ops->name, 1))
        return datm_error_set(err, DATM_E_INVALID, "variant name '%s' is not a lower-case name "
                              "(a-z, 0-9, _, -, .; at most 63 characters)",
                              ops->name ? ops->name : "(null)");
    if (!datm_model_api_taken(ops->api_version))
        return datm_error_set(err, DATM_E_INVALID, "variant %s: built for model API version "
                              "%d, this datm takes versions %d to %d (rebuild it against this "
                              "datm's datm_model.h)", ops->name, ops->api_version,
                              DATM_MODEL_API_VERSION_MIN, DATM_MODEL_API_VERSION);
    const struct { const void *fn; const char *name; } need[] = {
        {(const void *)ops->create, "create"},         {(const void *)ops->train_batch, "train_batch"},
        {(const void *)ops->eval_begin, "eval_begin"}, {(const void *)ops->eval_step, "eval_step"},
        {(const void *)ops->eval_end, "eval_end"},     {(const void *)ops->infer, "infer"},
        {(const void *)ops->get_phi, "get_phi"},       {(const void *)ops->n_layers, "n_layers"},
        {(const void *)ops->save, "save"},             {(const void *)ops->load, "load"},
        {(const void *)ops->destroy, "destroy"},
    };
    for (size_t i = 0; i < DATM_COUNTOF(need); i++)
        if (!need[i].fn)
            return datm_error_set(err, DATM_E_INVALID, "variant %s: ops.%s is NULL (every "
                                  "function but predict and check is required)", ops->name,
                                  need[i].name);
    int rc = datm_plugin_check_schema(ops->schema, err);
    if (rc) return datm_error_prefix(err, "variant %s: ", ops->name);
    return DATM_OK;
}

/* The first bytes of an ELF file. */
static int is_elf(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char m[4] = {0};
    size_t n = fread(m, 1, 4, f);
    fclose(f);
    return n == 4 && m[0] == 0x7f && m[1] == 'E' && m[2] == 'L' && m[3] == 'F';
}

static int open_checked(const char *path, datm_plugin *out, datm_error *err)
{
    if (!is_file(path)) return datm_error_set(err, DATM_E_IO, "plugin %s: no such file", path);
    if (access(path, R_OK) != 0)
        return datm_error_set(err, DATM_E_IO, "plugin %s: %s", path, strerror(errno));
    if (!is_elf(path))
        return datm_error_set(err, DATM_E_FORMAT, "plugin %s: not a shared object (no ELF "
                              "header; build it with `cc -shared -fPIC`)", path);
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return datm_error_set(err, DATM_E_FORMAT, "plugin %s: not a loadable shared object: %s",
                              path, dlerror());
    out->handle = h;
    typedef const datm_plugin_info *(*entry_fn)(void);
    entry_fn entry;
    void *sym = dlsym(h, DATM_PLUGIN_ENTRY);
    memcpy(&entry, &sym, sizeof entry);   /* object pointer to function pointer (POSIX) */
    if (!sym)
        return datm_error_set(err, DATM_E_FORMAT, "plugin %s: no entry point: the file does not "
                              "export %s() (declare it with DATM_PLUGIN in datm_model.h)", path,
                              DATM_PLUGIN_ENTRY);
    const datm_plugin_info *info = entry();
    if (!info)
        return datm_error_set(err, DATM_E_INVALID, "plugin %s: %s() returned NULL", path,
                              DATM_PLUGIN_ENTRY);
    if (!datm_model_api_taken(info->api_version))
        return datm_error_set(err, DATM_E_INVALID, "plugin %s: built for model API version %d, "
                              "this datm takes versions %d to %d (rebuild it against this datm's "
                              "datm_model.h)", path, info->api_version,
                              DATM_MODEL_API_VERSION_MIN, DATM_MODEL_API_VERSION);
    snprintf(out->name, sizeof out->name, "%s", info->name ? info->name : "");
    for (int i = 0; info->models && info->models[i]; i++) {
        if (i >= DATM_PLUGIN_MAX_MODELS)
            return datm_error_set(err, DATM_E_INVALID, "plugin %s: more than %d variants", path,
                                  DATM_PLUGIN_MAX_MODELS);
        int rc = datm_plugin_check_ops(info->models[i], err);
        if (rc) return datm_error_prefix(err, "plugin %s: ", path);
        for (int j = 0; j < i; j++)
            if (!strcmp(info->models[j]->name, info->models[i]->name))
                return datm_error_set(err, DATM_E_INVALID, "plugin %s: variant %s is given "
                                      "twice", path, info->models[i]->name);
        out->models[out->n_models++] = info->models[i];
    }
    if (out->n_models == 0)
        return datm_error_set(err, DATM_E_INVALID, "plugin %s: offers no variant", path);
    return datm_sha256_file(path, out->sha256, err);
}

int datm_plugin_open(const char *path, const char *where, datm_plugin *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    if (strlen(path) >= sizeof out->path)
        return datm_error_set(err, DATM_E_INVALID, "%splugin path too long", where ? where : "");
    snprintf(out->path, sizeof out->path, "%s", path);
    int rc = open_checked(path, out, err);
    if (rc) {
        /* a plugin that failed is never used: its code goes (its constructors have run) */
        if (out->handle) dlclose(out->handle);
        memset(out, 0, sizeof *out);
        if (where && where[0]) datm_error_prefix(err, "%s", where);
    }
    return rc;
}
