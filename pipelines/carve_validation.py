#!/usr/bin/env python3
"""pipelines/carve_validation.py: a validation data set carved from a data set's TRAINING
documents, for choosing settings without looking at its test documents.

    python3 pipelines/carve_validation.py SRC_DIR OUT_DIR [--every 5] [--heldout 0.21] [--seed 1]

Training document i (0-based, file order) becomes a validation document when
i % every == every - 1, else it stays a training document. OUT_DIR gets, in the common
format (see the data sets' README):
  train.docword.gz (+ train.labels)  the remaining training documents,
  test.docword.gz  (+ test.labels)   the validation documents, whole,
  test_obs.docword.gz, test_heldout.docword.gz
                                     the validation documents' tokens split at random, each
                                     token held out with probability --heldout (20news_2000's
                                     own test split holds out ~21%), so that `datm run` with
                                     protocol heldout-docs scores the held-out part;
  vocab.txt, classes.txt             copied.
A validation document that loses every token to the held-out part keeps its first token in
the observed part. Python standard library only; the same arguments give the same files
(gzip mtime 0)."""
import argparse
import gzip
import os
import random
import shutil
import sys


def read_docword(path):
    with gzip.open(path, "rt") as f:
        d = int(f.readline())
        w = int(f.readline())
        f.readline()
        docs = [[] for _ in range(d)]
        for ln, line in enumerate(f, start=4):
            parts = line.split()
            if len(parts) != 3:
                sys.exit(f"{path}:{ln}: expected 'docID wordID count'")
            i, v, c = int(parts[0]), int(parts[1]), int(parts[2])
            docs[i - 1].append((v, c))
    return w, docs


def write_docword(path, w, docs):
    nnz = sum(len(d) for d in docs)
    with open(path, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write(f"{len(docs)}\n{w}\n{nnz}\n".encode())
            for i, d in enumerate(docs, start=1):
                for v, c in d:
                    f.write(f"{i} {v} {c}\n".encode())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--every", type=int, default=5)
    ap.add_argument("--heldout", type=float, default=0.21)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    w, docs = read_docword(os.path.join(a.src, "train.docword.gz"))
    labels = None
    lp = os.path.join(a.src, "train.labels")
    if os.path.exists(lp):
        with open(lp) as f:
            labels = f.read().split()
    rng = random.Random(a.seed)
    tr, va, obs, held, ltr, lva = [], [], [], [], [], []
    for i, d in enumerate(docs):
        if i % a.every != a.every - 1:
            tr.append(d)
            if labels: ltr.append(labels[i])
            continue
        va.append(d)
        if labels: lva.append(labels[i])
        o, h = [], []
        for v, c in d:
            k = sum(rng.random() < a.heldout for _ in range(c))
            if c - k: o.append((v, c - k))
            if k: h.append((v, k))
        if not o and h:   # keep one observed token
            v, k = h[0]
            o.append((v, 1))
            h = h[1:] if k == 1 else [(v, k - 1)] + h[1:]
        obs.append(o)
        held.append(h)
    os.makedirs(a.out, exist_ok=True)
    write_docword(os.path.join(a.out, "train.docword.gz"), w, tr)
    write_docword(os.path.join(a.out, "test.docword.gz"), w, va)
    write_docword(os.path.join(a.out, "test_obs.docword.gz"), w, obs)
    write_docword(os.path.join(a.out, "test_heldout.docword.gz"), w, held)
    if labels:
        with open(os.path.join(a.out, "train.labels"), "w") as f:
            f.write("".join(x + "\n" for x in ltr))
        with open(os.path.join(a.out, "test.labels"), "w") as f:
            f.write("".join(x + "\n" for x in lva))
    for name in ("vocab.txt", "classes.txt"):
        if os.path.exists(os.path.join(a.src, name)):
            shutil.copy(os.path.join(a.src, name), os.path.join(a.out, name))
    print(f"{a.out}: {len(tr)} training, {len(va)} validation documents; validation tokens "
          f"{sum(c for d in obs for _, c in d)} observed, {sum(c for d in held for _, c in d)} "
          f"held out")


if __name__ == "__main__":
    main()
