/* engine/io/results_layout.h: the names inside RUN_DIR/result.h5 as
 * constants that the writer (pipeline) and the readers (compare, check-metrics, topics,
 * figures) share. Change a name here and both sides follow; README documents the same list.
 *
 * /                    attributes (DATM_ATTR_*): datm_version, git_commit, git_dirty,
 *                      created_utc, finished_utc, status, spec (resolved YAML), spec_hash,
 *                      seed, threads, compiler, compiler_flags, blas_config, hdf5_version,
 *                      yaml_version, host, argv, heartbeat_utc
 * /data                attrs: dataset, dir, protocol, file hashes; datasets: vocab (V strings),
 *                      n_train, n_test, n_vocab (scalars)
 * /metrics/<name>      final scalars (f64, rank 0): perplexity, perplexity_observed,
 *                      test_s_per_doc, train_s, error_rate, npmi_<l> (all topics),
 *                      npmi_live_<l>, unused_<l>, diversity_<l>, <measure>_<l> and
 *                      <measure>_live_<l> for the other coherence measures, ...
 * /curves/<name>       1-D f64 datasets of equal length, one row per evaluation:
 *                      iteration, epoch, wall_s, loss, loglik, perplexity,
 *                      perplexity_observed, kl_<l>, step_<l>
 *                      (l = 1..L; NaN where a value was not measured at that row)
 * /sample_curve        the final evaluation as draws accumulate: samples, perplexity,
 *                      perplexity_observed (1-D f64, equal length; a row every
 *                      floor(S/20) draws and the last, under 40 rows; held-out
 *                      NaN without a held-out part)
 * /model               the variant's own save() (phi_<l> is (K_{l-1}, K_l), r, M_<l>, ...)
 * /usage               the run's topic usage over its training documents (eval/topic_diag.h):
 *                      tokens_<l>, theta_<l> (K_l) f64 shares; attr n_docs
 * /topics              attrs: n_layers, top_n, n_vocab, and the settings of the values:
 *                      coherence_measures ("npmi,cv"), coherence_top_n, coherence_window
 *                      (0 = documents), coherence_reference, unused_share, dup_cos;
 *                      per layer /topics/layer_<l>/:
 *                      top_ids (K_l, n) i32 word ids, top_weights (K_l, n) f32,
 *                      link_ids (K_l, m) i32 strongest children in layer l-1 (l >= 2),
 *                      link_weights (K_l, m) f32 the matching Phi(l) entries,
 *                      <measure> (K_l) f64 per topic for npmi, uci, umass, cv (those
 *                      computed), attrs <measure> (mean), <measure>_live (mean over live
 *                      topics), diversity, n_unused;
 *                      usage, usage_theta (K_l) f64, unused (K_l) i32 0/1 (when usage is known),
 *                      nearest (K_l) i32, nearest_cos (K_l) f64, corpus_kl (K_l) f64,
 *                      projected (V, K_l) f32 Phi(1)...Phi(l) (paper eq. Phi_notation),
 *                      written when V * K_l is small enough (image data, small runs)
 * /checkpoint          resume state (pipeline-owned)
 * l is 1-based everywhere. */
#ifndef DATM_RESULTS_LAYOUT_H
#define DATM_RESULTS_LAYOUT_H

#define DATM_RESULT_FILE      "result.h5"
#define DATM_RESULT_SPEC_FILE "spec.resolved.yaml"

/* root attributes */
#define DATM_ATTR_VERSION      "datm_version"
#define DATM_ATTR_GIT_COMMIT   "git_commit"
#define DATM_ATTR_GIT_DIRTY    "git_dirty"
#define DATM_ATTR_CREATED      "created_utc"
#define DATM_ATTR_FINISHED     "finished_utc"
#define DATM_ATTR_HEARTBEAT    "heartbeat_utc"
#define DATM_ATTR_STATUS       "status"
#define DATM_ATTR_SPEC         "spec"
#define DATM_ATTR_SPEC_HASH    "spec_hash"
#define DATM_ATTR_SEED         "seed"
#define DATM_ATTR_THREADS      "threads"
#define DATM_ATTR_COMPILER     "compiler"
#define DATM_ATTR_CFLAGS       "compiler_flags"
#define DATM_ATTR_BLAS         "blas_config"
#define DATM_ATTR_HDF5_VERSION "hdf5_version"
#define DATM_ATTR_YAML_VERSION "yaml_version"
#define DATM_ATTR_HOST         "host"
#define DATM_ATTR_ARGV         "argv"

/* values of the status attribute */
#define DATM_STATUS_RUNNING     "RUNNING"
#define DATM_STATUS_COMPLETED   "COMPLETED"
#define DATM_STATUS_FAILED      "FAILED"
#define DATM_STATUS_INTERRUPTED "INTERRUPTED"

/* groups */
#define DATM_GRP_DATA       "data"
#define DATM_GRP_METRICS    "metrics"
#define DATM_GRP_CURVES     "curves"
#define DATM_GRP_SAMPLE_CURVE "sample_curve"
#define DATM_GRP_MODEL      "model"
#define DATM_GRP_TOPICS     "topics"
#define DATM_GRP_USAGE      "usage"
#define DATM_GRP_CHECKPOINT "checkpoint"

/* /data */
#define DATM_DATA_VOCAB     "vocab"          /* (V) strings */
#define DATM_DATA_ATTR_NAME "dataset"        /* dataset name as in the spec */
#define DATM_DATA_ATTR_DIR  "dir"            /* resolved directory */

/* /metrics scalars (others may be added; readers list the group) */
#define DATM_MET_PERPLEXITY     "perplexity"
#define DATM_MET_PERPLEXITY_OBS "perplexity_observed"
#define DATM_MET_TEST_S_PER_DOC "test_s_per_doc"
#define DATM_MET_TRAIN_S        "train_s"
#define DATM_MET_ERROR_RATE     "error_rate"
#define DATM_MET_VAL_ERROR      "val_error"     /* supervised runs with model.val_fraction > 0 */
#define DATM_MET_NPMI_FMT       "npmi_%d"       /* per layer l, mean over topics */
#define DATM_MET_DIVERSITY_FMT  "diversity_%d"  /* per layer l */
#define DATM_MET_UNUSED_FMT     "unused_%d"     /* per layer l: topics flagged unused */
/* coherence per layer l: "<measure>_<l>" (all topics) and "<measure>_live_<l>" */

/* /curves columns */
#define DATM_CURVE_ITERATION  "iteration"
#define DATM_CURVE_EPOCH      "epoch"
#define DATM_CURVE_WALL_S     "wall_s"
#define DATM_CURVE_LOSS       "loss"
#define DATM_CURVE_LOGLIK     "loglik"
#define DATM_CURVE_PERPLEXITY "perplexity"
#define DATM_CURVE_PERPLEXITY_OBS "perplexity_observed"
#define DATM_CURVE_KL_FMT     "kl_%d"         /* per layer l */
#define DATM_CURVE_STEP_FMT   "step_%d"       /* per layer l: mean eps/M_k */

/* /model */
#define DATM_MODEL_PHI_FMT    "phi_%d"        /* (K_{l-1}, K_l) */

/* /topics */
#define DATM_TOPICS_LAYER_FMT    "layer_%d"
#define DATM_TOPICS_TOP_IDS      "top_ids"
#define DATM_TOPICS_TOP_WEIGHTS  "top_weights"
#define DATM_TOPICS_LINK_IDS     "link_ids"
#define DATM_TOPICS_LINK_WEIGHTS "link_weights"
#define DATM_TOPICS_NPMI         "npmi"
#define DATM_TOPICS_PROJECTED    "projected"
#define DATM_TOPICS_ATTR_NPMI      "npmi"
#define DATM_TOPICS_ATTR_DIVERSITY "diversity"
#define DATM_TOPICS_ATTR_LAYERS    "n_layers"
#define DATM_TOPICS_ATTR_TOP_N     "top_n"
#define DATM_TOPICS_USAGE          "usage"
#define DATM_TOPICS_USAGE_THETA    "usage_theta"
#define DATM_TOPICS_UNUSED         "unused"
#define DATM_TOPICS_NEAREST        "nearest"
#define DATM_TOPICS_NEAREST_COS    "nearest_cos"
#define DATM_TOPICS_CORPUS_KL      "corpus_kl"
#define DATM_TOPICS_ATTR_N_UNUSED  "n_unused"
#define DATM_TOPICS_ATTR_MEASURES  "coherence_measures"
#define DATM_TOPICS_ATTR_COH_TOP_N "coherence_top_n"
#define DATM_TOPICS_ATTR_WINDOW    "coherence_window"
#define DATM_TOPICS_ATTR_REFERENCE "coherence_reference"
#define DATM_TOPICS_ATTR_UNUSED_SHARE "unused_share"
#define DATM_TOPICS_ATTR_DUP_COS   "dup_cos"

/* /usage */
#define DATM_USAGE_TOKENS_FMT "tokens_%d"    /* (K_l) share of the training tokens */
#define DATM_USAGE_THETA_FMT  "theta_%d"     /* (K_l) share of the theta mass */
#define DATM_USAGE_ATTR_DOCS  "n_docs"

#endif
