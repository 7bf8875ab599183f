# tests/par_compare.sh: the comparison of two runs that the data-parallel tests share
# (sourced): same DIR1 DIR2 is true when every dataset of /model, /metrics and /curves of
# their result.h5 is equal at 17 digits (wall times left out); dump FILE prints them.
dump() {
    local ds=() p
    for p in $(h5dump -n "$1" | awk '$1 == "dataset" {print $2}' |
               grep -E '^/(model|metrics|curves)/' | grep -vE '(_s|_s_per_doc)$'); do ds+=(-d "$p"); done
    h5dump -m %.17g "${ds[@]}" "$1" | grep -v '^HDF5 "'
}
same() { [ -f "$1/result.h5" ] && [ -f "$2/result.h5" ] &&
         diff <(dump "$1/result.h5") <(dump "$2/result.h5") > /dev/null; }
# the small WHAI spec of these tests: 2 layers, 1 epoch (23 mini-batches of 200) on Brown
PAR_SPEC=$SRC/experiments/brown/whai.yaml
PAR_C="model.layers=[32,16] model.kl_weight=[0.1,0.01] model.eta=[] model.aug_gibbs_burn=0
   model.aug_gibbs_collect=0 train.epochs=1 train.eval_every=10 data.eval_docs=200
   train.eval_samples=3 evaluate.samples=3 evaluate.classify=false output.figures=false
   output.report=false output.topics=false"
# the small DLDA-TLASGR spec: 2 layers, short local chains, 1 epoch
PAR_DLDA=$SRC/experiments/brown/dlda-tlasgr.yaml
PAR_DC="model.layers=[32,16] model.burnin_sweeps=4 model.collect_sweeps=2 model.test_burnin=5
   train.epochs=1 train.eval_every=10 data.eval_docs=100 train.eval_samples=2 evaluate.samples=2
   evaluate.classify=false output.figures=false output.report=false output.topics=false"
