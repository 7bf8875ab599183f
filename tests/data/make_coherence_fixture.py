#!/usr/bin/env python3
"""Writes tests/data/coherence_gensim.txt: per-topic coherence from gensim's CoherenceModel on
a small fixed case, the reference figures of tests/test_eval_coherence.c.

Made once with Debian 12's python3-gensim (4.2.0+dfsg):
    apt-get install python3-gensim
    /usr/bin/python3 tests/data/make_coherence_fixture.py > tests/data/coherence_gensim.txt

The case: 80 texts drawn with a seeded generator from 30 topic words (t00..t29, at most once
per text) and 40 filler words, and 5 topics of 6 topic words. Measures and counting as gensim
pairs them: u_mass over documents, c_uci and c_npmi over sliding windows of 10, c_v over
windows of 20 (and c_npmi also over windows of 4). gensim's window accumulator forgets a word
that leaves a window while another copy of it is still inside; a topic word appears at most
once per text here, so its counts are the exact ones, which this script checks against its own
count before writing anything.
"""
import random
import sys

from gensim.corpora import Dictionary
from gensim.models.coherencemodel import CoherenceModel


def texts_and_topics():
    rng = random.Random(20240611)
    topic_words = ["t%02d" % i for i in range(30)]
    filler = ["f%02d" % i for i in range(40)]
    # 5 groups of words that tend to appear together, so the scores spread
    groups = [topic_words[i * 6:(i + 1) * 6] for i in range(5)]
    texts = []
    for d in range(80):
        n = rng.randint(8, 40)
        words = [rng.choice(filler) for _ in range(n)]
        g = groups[d % 5]
        chosen = rng.sample(g, rng.randint(2, 5))
        if rng.random() < 0.5:
            chosen += rng.sample(groups[rng.randrange(5)], 2)
        chosen = list(dict.fromkeys(chosen))   # once per text
        for w in chosen:
            words.insert(rng.randrange(len(words) + 1), w)
        texts.append(words)
    # topics: mostly one group each, with intruders, in a fixed rank order
    topics = [
        ["t00", "t01", "t02", "t03", "t04", "t05"],
        ["t06", "t07", "t08", "t12", "t09", "t10"],
        ["t12", "t13", "t14", "t15", "t16", "t17"],
        ["t18", "t19", "t25", "t26", "t20", "t21"],
        ["t24", "t27", "t28", "t02", "t29", "t11"],
    ]
    return texts, topics


def exact_window_counts(texts, words, w):
    """(number of windows, {word: windows with it}) counted directly."""
    n, occ = 0, {x: 0 for x in words}
    for t in texts:
        wins = [t[i:i + w] for i in range(len(t) - w + 1)] if len(t) >= w else [t]
        for win in wins:
            n += 1
            s = set(win)
            for x in words:
                occ[x] += x in s
    return n, occ


def main():
    texts, topics = texts_and_topics()
    words = sorted({w for t in topics for w in t})
    for t in texts:
        rel = [w for w in t if w in words]
        assert len(rel) == len(set(rel)), "a topic word repeats within a text"
    for w in words:
        assert any(w in t for t in texts), "topic word %s never occurs" % w
    dictionary = Dictionary(texts)
    corpus = [dictionary.doc2bow(t) for t in texts]
    cases = [("umass", "u_mass", 0), ("uci", "c_uci", 10), ("npmi", "c_npmi", 10),
             ("npmi", "c_npmi", 4), ("cv", "c_v", 20)]
    out = []
    for ours, theirs, window in cases:
        kw = dict(topics=topics, texts=texts, corpus=corpus, dictionary=dictionary,
                  coherence=theirs, topn=6, processes=1)
        if window:
            kw["window_size"] = window
            n, occ = exact_window_counts(texts, words, window)
            cm = CoherenceModel(**kw)
            acc = cm.estimate_probabilities()
            assert acc.num_docs == n, (acc.num_docs, n)
            for w in words:
                assert acc[dictionary.token2id[w]] == occ[w], w
        else:
            cm = CoherenceModel(**kw)
        out.append((ours, window, cm.get_coherence_per_topic()))

    print("# tests/data/coherence_gensim.txt: gensim %s CoherenceModel figures for "
          "tests/test_eval_coherence.c," % __import__("gensim").__version__)
    print("# made by tests/data/make_coherence_fixture.py (see there); do not edit by hand.")
    print("texts %d" % len(texts))
    for t in texts:
        print(" ".join(t))
    print("topics %d %d" % (len(topics), len(topics[0])))
    for t in topics:
        print(" ".join(t))
    for ours, window, vals in out:
        print("measure %s window %d" % (ours, window))
        print(" ".join("%.17g" % v for v in vals))
    print("end")


if __name__ == "__main__":
    sys.exit(main())
