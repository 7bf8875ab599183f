#!/usr/bin/env python3
"""Carve a validation corpus out of the Brown *training* documents, for choosing settings.

The test documents (test.docword.gz) are never read. A seeded 15% of the training texts of
each category (all chunks of a text stay together, as in the corpus builder's split) become
validation documents; each validation document's tokens are split 70/30 into
test_obs/test_heldout, so a run with `data.protocol: heldout-docs` scores held-out words of
documents it never trained on. The rest of the training texts form train.docword.gz.
For choosing the settings of a supervised model, test.docword.gz holds the validation
documents whole and train.labels / test.labels / classes.txt their genres (the layout of the
corpus builder, so `data.protocol: token-split` classifies them).

usage: make_validation.py BROWN_DIR OUT_DIR [--seed N] [--frac F]
"""
import argparse, gzip, os, random, shutil


def read_docword(path):
    docs = {}
    with gzip.open(path, "rt") as f:
        n_docs, n_vocab, _ = int(f.readline()), int(f.readline()), int(f.readline())
        for line in f:
            d, w, c = line.split()
            docs.setdefault(int(d) - 1, []).append((int(w), int(c)))
    return n_docs, n_vocab, docs


def write_docword(path, n_vocab, rows):
    nnz = sum(len(r) for r in rows)
    with gzip.open(path, "wt") as f:
        f.write("%d\n%d\n%d\n" % (len(rows), n_vocab, nnz))
        for i, r in enumerate(rows):
            for w, c in sorted(r):
                f.write("%d %d %d\n" % (i + 1, w, c))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("brown")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--frac", type=float, default=0.15)
    ap.add_argument("--obs", type=float, default=0.7)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    n_docs, n_vocab, docs = read_docword(os.path.join(a.brown, "train.docword.gz"))
    names = open(os.path.join(a.brown, "train.docs")).read().split()
    labels = open(os.path.join(a.brown, "train.labels")).read().split()
    assert len(names) == n_docs == len(labels)
    texts = {}
    for i, n in enumerate(names):
        texts.setdefault((labels[i], n.split("#")[0]), []).append(i)
    by_class = {}
    for (lab, t) in texts:
        by_class.setdefault(lab, []).append(t)
    val_texts = set()
    for lab in sorted(by_class):
        ts = sorted(by_class[lab])
        rng.shuffle(ts)
        val_texts.update(ts[:max(1, round(a.frac * len(ts)))])
    train_rows, obs_rows, held_rows, val_rows = [], [], [], []
    train_labels, val_labels = [], []
    for i in range(n_docs):
        row = docs.get(i, [])
        if names[i].split("#")[0] not in val_texts:
            train_rows.append(row)
            train_labels.append(labels[i])
            continue
        val_rows.append(row)
        val_labels.append(labels[i])
        tokens = [w for w, c in row for _ in range(c)]
        rng.shuffle(tokens)
        k = max(1, round(a.obs * len(tokens)))
        for part, dst in ((tokens[:k], obs_rows), (tokens[k:], held_rows)):
            cnt = {}
            for w in part:
                cnt[w] = cnt.get(w, 0) + 1
            dst.append(list(cnt.items()))
    os.makedirs(a.out, exist_ok=True)
    write_docword(os.path.join(a.out, "train.docword.gz"), n_vocab, train_rows)
    write_docword(os.path.join(a.out, "test_obs.docword.gz"), n_vocab, obs_rows)
    write_docword(os.path.join(a.out, "test_heldout.docword.gz"), n_vocab, held_rows)
    write_docword(os.path.join(a.out, "test.docword.gz"), n_vocab, val_rows)
    for name, labs in (("train.labels", train_labels), ("test.labels", val_labels)):
        with open(os.path.join(a.out, name), "w") as f:
            f.write("".join(l + "\n" for l in labs))
    for name in ("vocab.txt", "classes.txt"):
        shutil.copy(os.path.join(a.brown, name), os.path.join(a.out, name))
    print("%s: %d training documents, %d validation documents (%d of %d texts)"
          % (a.out, len(train_rows), len(obs_rows), len(val_texts), len(texts)))


if __name__ == "__main__":
    main()
