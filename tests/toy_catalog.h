/* tests/toy_catalog.h: a model catalog of two fake variants ("toy" and "whai", both with one key
 * of every schema type and a required int `k`), so that spec tests do not depend on the real
 * models. Include once per test program. */
#ifndef DATM_TEST_TOY_CATALOG_H
#define DATM_TEST_TOY_CATALOG_H

#include <string.h>

#include "pipeline/pipeline.h"

static const datm_param_schema toy_schema[] = {
    {"layers", DATM_PARAM_INT_LIST, "[128, 64, 32]", 1, 10000, NULL, "widths"},
    {"eta", DATM_PARAM_REAL_LIST, "[0.1]", 0.0, 10.0, NULL, "Dirichlet"},
    {"lr", DATM_PARAM_REAL, "0.001", 1e-8, 1.0, NULL, "learning rate"},
    {"downward", DATM_PARAM_BOOL, "true", 1, 0, NULL, "downward links"},
    {"encoder", DATM_PARAM_CHOICE, "weibull", 1, 0, "weibull|gamma|lognormal", "family"},
    {"tag", DATM_PARAM_STRING, "x", 1, 0, NULL, "free text"},
    {"k", DATM_PARAM_INT, NULL, 1, 100, NULL, "required int"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};
static const datm_model_ops toy_ops = {.api_version = DATM_MODEL_API_VERSION, .name = "toy",
                                       .summary = "test", .schema = toy_schema};
static const datm_model_ops toy_whai_ops = {.api_version = DATM_MODEL_API_VERSION, .name = "whai",
                                            .summary = "test", .schema = toy_schema};
static const datm_model_ops *const toy_variants[] = {&toy_ops, &toy_whai_ops};
static const datm_model_ops *toy_find(const char *n)
{
    for (int i = 0; i < 2; i++)
        if (!strcmp(toy_variants[i]->name, n)) return toy_variants[i];
    return NULL;
}
static int toy_count(void) { return 2; }
static const datm_model_ops *toy_at(int i) { return toy_variants[i]; }
static const datm_model_catalog toy_cat = {toy_find, toy_count, toy_at, NULL, NULL};

#endif
