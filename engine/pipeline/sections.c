/* engine/pipeline/sections.c: schemas of the engine's own spec sections (top level, data:,
 * train:, evaluate:, output:). The model: section's keys come from the variant's schema.
 * These tables validate specs, fill defaults and generate `datm describe` / the README. */
#include "pipeline/pipeline.h"

#define NOB 1.0, 0.0   /* no bounds (min > max) */

static const datm_param_schema run_schema[] = {
    {"name", DATM_PARAM_STRING, "", NOB, NULL,
     "run name; default: the spec file name without .yaml"},
    {"description", DATM_PARAM_STRING, "", NOB, NULL, "free text kept with the results"},
    {"seed", DATM_PARAM_INT, "1", 0, 9007199254740991.0, NULL,
     "root seed of every random stream (initialisation, batches, splits, evaluation)"},
    {"threads", DATM_PARAM_INT, "0", 0, 1024, NULL,
     "OpenMP threads (0 = OMP_NUM_THREADS or all cores); results do not depend on it"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static const datm_param_schema data_schema[] = {
    {"dataset", DATM_PARAM_STRING, NULL, NOB, NULL,
     "data set name under $DATM_DATA (e.g. 20news_2000, digits) or a directory"},
    {"protocol", DATM_PARAM_CHOICE, "auto", NOB, "auto|heldout-docs|token-split",
     "evaluation protocol (docs/reference.md 4.5); auto = heldout-docs when the set ships "
     "test_obs and test_heldout, else token-split"},
    {"obs_fraction", DATM_PARAM_REAL, "0.7", 0.05, 0.95, NULL,
     "token-split: share of each document's tokens observed (trained on); the rest is scored"},
    {"train_docs", DATM_PARAM_INT, "0", 0, 1e12, NULL,
     "use only the first N training documents (0 = all)"},
    {"eval_docs", DATM_PARAM_INT, "0", 0, 1e12, NULL,
     "score only the first N evaluation documents (0 = all)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static const datm_param_schema train_schema[] = {
    {"epochs", DATM_PARAM_INT, "10", 1, 1e7, NULL, "passes over the training documents"},
    {"batch_size", DATM_PARAM_INT, "200", 1, 1e9, NULL, "documents per mini-batch (B)"},
    {"shuffle", DATM_PARAM_BOOL, "true", NOB, NULL,
     "visit documents in a seeded random order each epoch"},
    {"drop_last", DATM_PARAM_BOOL, "false", NOB, NULL,
     "skip the last partial mini-batch of each epoch"},
    {"eval_every", DATM_PARAM_INT, "0", 0, 1e12, NULL,
     "mini-batches between curve evaluations of perplexity (0 = at the end only)"},
    {"eval_docs", DATM_PARAM_INT, "500", 0, 1e12, NULL,
     "evaluation documents used for curve points (0 = all; the final evaluation uses all)"},
    {"eval_burnin", DATM_PARAM_INT, "0", 0, 1e6, NULL,
     "posterior draws discarded before collecting, at each curve point"},
    {"eval_samples", DATM_PARAM_INT, "10", 1, 1e6, NULL,
     "posterior draws averaged into the rate at each curve point"},
    {"checkpoint_every", DATM_PARAM_INT, "0", 0, 1e12, NULL,
     "mini-batches between checkpoints (0 = only on SIGINT)"},
    {"keep_checkpoints", DATM_PARAM_INT, "2", 1, 1000, NULL, "newest checkpoints kept on disk"},
    {"check_phi", DATM_PARAM_BOOL, "true", NOB, NULL,
     "check every Phi(l) for NaN/Inf after each mini-batch (stops naming batch and layer)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static const datm_param_schema evaluate_schema[] = {
    {"perplexity", DATM_PARAM_BOOL, "true", NOB, NULL,
     "per-heldout-word perplexity of the final model (docs/reference.md 4.5)"},
    {"burnin", DATM_PARAM_INT, "0", 0, 1e6, NULL, "posterior draws discarded before collecting"},
    {"samples", DATM_PARAM_INT, "100", 1, 1e6, NULL,
     "S: posterior draws whose rates are averaged before normalising"},
    {"time_samples", DATM_PARAM_INT, "0", 0, 1e6, NULL,
     "draws per document in a separate timing pass for test_s_per_doc (0 = time the "
     "perplexity pass with S draws)"},
    {"classify", DATM_PARAM_BOOL, "true", NOB, NULL,
     "error_rate on the labelled test documents: the model's own prediction (supervised "
     "variants), else a cross-validated logistic regression on log(1 + theta) of all layers"},
    {"feature_samples", DATM_PARAM_INT, "0", 0, 1e6, NULL,
     "draws averaged into the theta features for the logistic regression (0 = the mean)"},
    {"predict_samples", DATM_PARAM_INT, "50", 0, 1e6, NULL,
     "draws averaged for class prediction (paper: N_collect = 50; 0 = no sampling: the "
     "posterior mean of theta and of the classifier weights)"},
    {"coherence.measures", DATM_PARAM_CHOICE_LIST, "[npmi, uci, umass, cv]", NOB,
     "npmi|uci|umass|cv",
     "topic coherence measures stored per topic under /topics (gensim's c_npmi, c_uci, "
     "u_mass, c_v definitions; README: Topic coherence)"},
    {"coherence.top_n", DATM_PARAM_INT, "10", 2, 25, NULL,
     "most probable words per topic that coherence scores"},
    {"coherence.window", DATM_PARAM_INT, "0", 0, 1e9, NULL,
     "0: a word pair co-occurs when a document holds both (boolean document); N: when a "
     "window of N consecutive token positions does (boolean sliding window; needs a text "
     "reference)"},
    {"coherence.reference", DATM_PARAM_STRING, "", NOB, NULL,
     "corpus the co-occurrences are counted in: \"\" = the run's training documents; a data "
     "set directory = its training documents; a text file (a document per line) or a "
     "directory of text files = that text, tokenised like `datm corpus build`"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static const datm_param_schema output_schema[] = {
    {"dir", DATM_PARAM_STRING, "", NOB, NULL,
     "run directory (default results/<name>); `datm run -o DIR` overrides"},
    {"figures", DATM_PARAM_BOOL, "true", NOB, NULL, "draw gnuplot figures next to result.h5"},
    {"report", DATM_PARAM_BOOL, "true", NOB, NULL, "write report.md next to result.h5"},
    {"topics", DATM_PARAM_BOOL, "true", NOB, NULL,
     "store per-layer top words, coherence, diversity and per-topic diagnostics under "
     "/topics"},
    {"top_words", DATM_PARAM_INT, "10", 1, 1000, NULL, "top words stored per topic"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

typedef struct section_entry {
    const char *name;
    const char *doc;
    const datm_param_schema *schema;
} section_entry;

static const section_entry sections[] = {
    [DATM_SEC_RUN] = {"", "top-level keys", run_schema},
    [DATM_SEC_DATA] = {"data", "the corpus and the evaluation protocol", data_schema},
    [DATM_SEC_MODEL] = {"model", "`variant` plus the keys of that variant's schema", NULL},
    [DATM_SEC_TRAIN] = {"train", "mini-batch training, curve evaluations, checkpoints",
                        train_schema},
    [DATM_SEC_EVALUATE] = {"evaluate", "final evaluation of the trained model", evaluate_schema},
    [DATM_SEC_OUTPUT] = {"output", "where and what to write", output_schema},
};
_Static_assert(DATM_COUNTOF(sections) == DATM_SEC_COUNT_, "sections lists every section");

const char *datm_section_name(datm_section_id s)
{
    DATM_ASSERT(s >= 0 && s < DATM_SEC_COUNT_);
    return sections[s].name;
}

const char *datm_section_doc(datm_section_id s)
{
    DATM_ASSERT(s >= 0 && s < DATM_SEC_COUNT_);
    return sections[s].doc;
}

const datm_param_schema *datm_section_schema(datm_section_id s)
{
    DATM_ASSERT(s >= 0 && s < DATM_SEC_COUNT_);
    return sections[s].schema;
}
