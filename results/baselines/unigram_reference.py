#!/usr/bin/env python3
"""results/baselines/unigram_reference.py: the metrics of the `unigram` model computed
independently of datm (plain Python, no datm code), the source of the values in
quick-unigram.yaml.

usage: python3 unigram_reference.py DATA_DIR [ALPHA]

After whole epochs the unigram model is phi_v = (n_v + alpha) / (n + alpha V) with n_v the
training count of word v (models/unigram.c). It scores every evaluation document with the
same phi, so (docs/reference.md section 4.5)
  perplexity          = exp(-sum_{d,v} y_dv log phi_v / sum y) over test_heldout,
  perplexity_observed = the same over test_obs,
  npmi_1  = mean NPMI over the pairs of the 10 most probable words, document co-occurrence
            in the training documents, eps = 1e-12 (engine/eval/coherence.h),
  diversity_1 = 1 (one topic: its top 25 words are distinct).
"""
import gzip
import math
import sys


def read_docword(path):
    with gzip.open(path, "rt") as f:
        n_docs, n_words, _ = (int(f.readline()) for _ in range(3))
        triples = [(int(d) - 1, int(w) - 1, float(c)) for d, w, c in (l.split() for l in f)]
    return n_docs, n_words, triples


def main():
    data, alpha = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
    n_docs, V, train = read_docword(data + "/train.docword.gz")
    counts = [0.0] * V
    for _, w, c in train:
        counts[w] += c
    n = sum(counts)
    phi = [(counts[v] + alpha) / (n + alpha * V) for v in range(V)]
    for split, name in (("test_heldout", "perplexity"), ("test_obs", "perplexity_observed")):
        _, _, y = read_docword("%s/%s.docword.gz" % (data, split))
        s = sum(c * math.log(phi[w]) for _, w, c in y)
        print("%s: %.17g" % (name, math.exp(-s / sum(c for _, _, c in y))))
    top = sorted(range(V), key=lambda v: (-phi[v], v))[:10]
    docs = {}
    for d, w, _ in train:
        docs.setdefault(d, set()).add(w)
    df = {w: sum(1 for s in docs.values() if w in s) for w in top}
    total, pairs = 0.0, 0
    for i in range(10):
        for j in range(i + 1, 10):
            a, b = top[i], top[j]
            pab = sum(1 for s in docs.values() if a in s and b in s) / n_docs + 1e-12
            total += math.log(pab / (df[a] / n_docs * df[b] / n_docs)) / -math.log(pab)
            pairs += 1
    print("npmi_1: %.17g" % (total / pairs))
    print("diversity_1: 1")


if __name__ == "__main__":
    main()
