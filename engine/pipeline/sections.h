/* engine/pipeline/sections.h: the tables of the engine's own spec sections (top level, data:,
 * train:, evaluate:, output:), one row per key (pipeline/params.h explains the columns), and
 * the typed structs made from them. The model: section's keys come from the variant's table.
 * The same rows validate specs, fill defaults, print `datm describe` and the README key
 * reference. */
#ifndef DATM_SECTIONS_H
#define DATM_SECTIONS_H

#include "pipeline/params.h"

#define DATM_RUN_PARAMS(X) \
    X(name, "name", STRING, "", DATM_NOB, NULL, \
      "run name; default: the spec file name without .yaml") \
    X(description, "description", STRING, "", DATM_NOB, NULL, \
      "free text kept with the results") \
    X(seed, "seed", INT, "1", 0, 9007199254740991.0, NULL, \
      "root seed of every random stream (initialisation, batches, splits, evaluation)") \
    X(threads, "threads", INT, "0", 0, 1024, NULL, \
      "OpenMP threads (0 = OMP_NUM_THREADS or all cores); results do not depend on it")

#define DATM_DATA_PARAMS(X) \
    X(dataset, "dataset", STRING, NULL, DATM_NOB, NULL, \
      "data set name under $DATM_DATA (e.g. 20news_2000, digits) or a directory") \
    X(protocol, "protocol", CHOICE, "auto", DATM_NOB, "auto|heldout-docs|token-split", \
      "evaluation protocol (docs/reference.md 4.5); auto = heldout-docs when the set ships " \
      "test_obs and test_heldout, else token-split") \
    X(obs_fraction, "obs_fraction", REAL, "0.7", 0.05, 0.95, NULL, \
      "token-split: share of each document's tokens observed (trained on); the rest is " \
      "scored (an error to set under heldout-docs)") \
    X(train_docs, "train_docs", INT, "0", 0, 1e12, NULL, \
      "use only the first N training documents (0 = all)") \
    X(eval_docs, "eval_docs", INT, "0", 0, 1e12, NULL, \
      "score only the first N evaluation documents (0 = all)") \
    X(stream, "stream", BOOL, "false", DATM_NOB, NULL, \
      "read training mini-batches from DIR/train.shards (datm corpus convert) with read-ahead: " \
      "memory two shards + parameters; evaluation documents are held in memory")

#define DATM_TRAIN_PARAMS(X) \
    X(epochs, "epochs", INT, "10", 1, 1e7, NULL, \
      "passes over the training documents") \
    X(batch_size, "batch_size", INT, "200", 1, 1e9, NULL, \
      "documents per mini-batch (B)") \
    X(shuffle, "shuffle", BOOL, "true", DATM_NOB, NULL, \
      "visit documents in a seeded random order each epoch") \
    X(drop_last, "drop_last", BOOL, "false", DATM_NOB, NULL, \
      "skip the last partial mini-batch of each epoch") \
    X(eval_every, "eval_every", INT, "0", 0, 1e12, NULL, \
      "mini-batches between curve evaluations of perplexity (0 = at the end only)") \
    X(eval_docs, "eval_docs", INT, "500", 0, 1e12, NULL, \
      "evaluation documents used for curve points (0 = all; the final evaluation uses all)") \
    X(eval_burnin, "eval_burnin", INT, "0", 0, 1e6, NULL, \
      "posterior draws discarded before collecting, at each curve point") \
    X(eval_samples, "eval_samples", INT, "10", 1, 1e6, NULL, \
      "posterior draws averaged into the rate at each curve point") \
    X(checkpoint_every, "checkpoint_every", INT, "0", 0, 1e12, NULL, \
      "mini-batches between checkpoints (0 = only on SIGINT)") \
    X(keep_checkpoints, "keep_checkpoints", INT, "2", 1, 1000, NULL, \
      "newest checkpoints kept on disk") \
    X(check_phi, "check_phi", BOOL, "true", DATM_NOB, NULL, \
      "check every Phi(l) for NaN/Inf after each mini-batch (stops naming batch and layer)") \
    X(reduce_chunks, "reduce_chunks", INT, "0", 0, 4096, NULL, \
      "C > 0: each mini-batch is cut into C fixed chunks whose gradient and loss sums are " \
      "added in chunk order, so results are the same on any number of MPI ranks (R <= C; " \
      "docs/scaling.md); 0: the one-process reduction (whai and the variants on its iteration)")

#define DATM_EVALUATE_PARAMS(X) \
    X(perplexity, "perplexity", BOOL, "true", DATM_NOB, NULL, \
      "per-heldout-word perplexity of the final model (docs/reference.md 4.5)") \
    X(burnin, "burnin", INT, "0", 0, 1e6, NULL, \
      "posterior draws discarded before collecting") \
    X(samples, "samples", INT, "100", 1, 1e6, NULL, \
      "S: posterior draws whose rates are averaged before normalising") \
    X(time_samples, "time_samples", INT, "0", 0, 1e6, NULL, \
      "draws per document in a separate timing pass for test_s_per_doc (0 = time the " \
      "perplexity pass with S draws)") \
    X(classify, "classify", BOOL, "true", DATM_NOB, NULL, \
      "error_rate on the labelled test documents: the model's own prediction (supervised " \
      "variants), else a cross-validated logistic regression on log(1 + theta) of all layers") \
    X(feature_samples, "feature_samples", INT, "0", 0, 1e6, NULL, \
      "draws averaged into the theta features for the logistic regression (0 = the mean)") \
    X(cv_folds, "cv_folds", INT, "5", 2, 100, NULL, \
      "folds of the cross-validation that chooses the logistic regression's C " \
      "(docs/reference.md 4.6: 5)") \
    X(cv_docs, "cv_docs", INT, "20000", 0, 1e12, NULL, \
      "that cross-validation runs on an evenly spaced per-class subset of at most this many " \
      "training documents (0 = all); the final fit uses all") \
    X(predict_samples, "predict_samples", INT, "50", 0, 1e6, NULL, \
      "draws averaged for class prediction (paper: N_collect = 50; 0 = no sampling: the " \
      "posterior mean of theta and of the classifier weights)") \
    X(coherence_measures, "coherence.measures", CHOICE_LIST, "[npmi, uci, umass, cv]", DATM_NOB, "npmi|uci|umass|cv", \
      "topic coherence measures stored per topic under /topics (gensim's c_npmi, c_uci, " \
      "u_mass, c_v definitions; README: Topic coherence)") \
    X(coherence_top_n, "coherence.top_n", INT, "10", 2, 25, NULL, \
      "most probable words per topic that coherence scores") \
    X(coherence_window, "coherence.window", INT, "0", 0, 1e9, NULL, \
      "0: a word pair co-occurs when a document holds both (boolean document); N: when a " \
      "window of N consecutive token positions does (boolean sliding window; needs a text " \
      "reference)") \
    X(coherence_reference, "coherence.reference", STRING, "", DATM_NOB, NULL, \
      "corpus the co-occurrences are counted in: \"\" = the run's training documents; a data " \
      "set directory = its training documents; a text file (a document per line) or a " \
      "directory of text files = that text, tokenised like `datm corpus build`")

#define DATM_OUTPUT_PARAMS(X) \
    X(dir, "dir", STRING, "", DATM_NOB, NULL, \
      "run directory (default results/<name>); `datm run -o DIR` overrides") \
    X(figures, "figures", BOOL, "true", DATM_NOB, NULL, \
      "draw gnuplot figures next to result.h5") \
    X(report, "report", BOOL, "true", DATM_NOB, NULL, \
      "write report.md next to result.h5") \
    X(topics, "topics", BOOL, "true", DATM_NOB, NULL, \
      "store per-layer top words, coherence, diversity and per-topic diagnostics under " \
      "/topics") \
    X(top_words, "top_words", INT, "10", 1, 1000, NULL, \
      "not used (/topics keeps 25 words per topic; `datm topics --top N` prints N): any " \
      "value but 10 is an error")

DATM_PARAMS_DECLARE(datm_run_params, DATM_RUN_PARAMS)
DATM_PARAMS_DECLARE(datm_data_params, DATM_DATA_PARAMS)
DATM_PARAMS_DECLARE(datm_train_params, DATM_TRAIN_PARAMS)
DATM_PARAMS_DECLARE(datm_evaluate_params, DATM_EVALUATE_PARAMS)
DATM_PARAMS_DECLARE(datm_output_params, DATM_OUTPUT_PARAMS)

/* Row indices into the schemas, for code that needs a row itself (its key in a message, its
 * default): DATM_DATA_ROW_obs_fraction indexes datm_data_params_schema. */
#define DATM_RUN_ROW_(field, ...)    DATM_RUN_ROW_##field,
#define DATM_DATA_ROW_(field, ...)   DATM_DATA_ROW_##field,
#define DATM_OUTPUT_ROW_(field, ...) DATM_OUTPUT_ROW_##field,
enum { DATM_RUN_PARAMS(DATM_RUN_ROW_) };
enum { DATM_DATA_PARAMS(DATM_DATA_ROW_) };
enum { DATM_OUTPUT_PARAMS(DATM_OUTPUT_ROW_) };

/* Every engine section of a resolved spec, typed (datm_spec.p; valid while the spec lives). */
typedef struct datm_spec_params {
    datm_run_params      run;
    datm_data_params     data;
    datm_train_params    train;
    datm_evaluate_params evaluate;
    datm_output_params   output;
} datm_spec_params;

#endif
