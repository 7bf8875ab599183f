"""pytest suite of the datm Python package (python/datm), on a small WHAI trained on the
Brown corpus that ci/setup.sh builds (.cache/data/brown). Run by tests/test_python.sh."""
import os
import re
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp

import datm

SRC = os.environ.get("DATM_SOURCE_DIR",
                     os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BROWN = os.path.join(SRC, ".cache", "data", "brown")


def read_docword(path):
    import gzip
    with gzip.open(path, "rt") as f:
        n, v, _ = (int(f.readline()) for _ in range(3))
        rows, cols, vals = [], [], []
        for line in f:
            d, w, c = line.split()
            rows.append(int(d) - 1)
            cols.append(int(w) - 1)
            vals.append(float(c))
    return sp.csr_matrix((vals, (rows, cols)), shape=(n, v), dtype=np.float32)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "whai"
    return datm.run(os.path.join(SRC, "experiments", "brown", "whai.yaml"), out, threads=2,
                    overrides={"model.layers": [16, 8], "model.kl_weight": [0.1, 0.01],
                               "model.eta": [], "model.aug_gibbs_burn": 0,
                               "model.aug_gibbs_collect": 0},
                    train__epochs=1, train__eval_every=0, evaluate__samples=2,
                    evaluate__classify=False, output__figures=False, output__report=False)


def test_structure(run):
    assert run.variant == "whai" and run.layers == 2 and run.k == [16, 8]
    assert run.vocab_size == 5000 and len(run.vocab) == 5000
    assert "variant: whai" in run.spec
    m = run.metrics
    assert m["perplexity"] > 1 and np.isfinite(m["perplexity"])


def test_phi_and_topics(run):
    p1, p2 = run.phi(1), run.phi(2)
    assert p1.shape == (5000, 16) and p2.shape == (16, 8)
    assert np.allclose(p1.sum(0), 1, atol=1e-4) and np.allclose(p2.sum(0), 1, atol=1e-4)
    tw = run.topic_words(2)
    assert np.allclose(tw, p1.astype(np.float64) @ p2, atol=1e-5)
    tops = run.topics(1, top=5)
    assert len(tops) == 16 and all(len(t) == 5 for t in tops)
    k0 = [w for w, _ in tops[0]]
    assert k0 == [run.vocab[i] for i in np.argsort(-p1[:, 0], kind="stable")[:5]]
    assert all(a[1] >= b[1] for a, b in zip(tops[0], tops[0][1:]))


def test_topic_stats_match_cli(run):
    st = run.topic_stats(1)
    assert {"use", "unused", "npmi", "kl"} <= set(st)
    assert all(a.shape == (16,) for a in st.values())
    assert abs(st["use"].sum() - 1) < 1e-6 and np.isfinite(st["npmi"]).all()
    # the values of `datm topics --format csv` (every topic, index order)
    p = subprocess.run([datm._run._datm_bin(), "topics", run.path, "--layer", "1",
                        "--format", "csv"], check=True, capture_output=True, text=True)
    for r in (r.split(",") for r in p.stdout.splitlines()[1:]):
        k = int(r[1])
        assert abs(float(r[2]) - st["use"][k]) < 1e-8 and int(r[3]) == st["unused"][k]
        assert abs(float(r[4]) - st["npmi"][k]) < 1e-8
    # and the order of its text listing: live topics, most used first
    p = subprocess.run([datm._run._datm_bin(), "topics", run.path, "--layer", "1"],
                       check=True, capture_output=True, text=True)
    shown = [int(l.split()[0][1:]) for l in p.stdout.splitlines() if re.match(r"t\d+ ", l)]
    assert shown and shown == run.live_topics(1)
    assert sorted(shown + [k for k in range(16) if st["unused"][k]]) == list(range(16))


def test_infer_matches_cli(run, tmp_path):
    docs = os.path.join(BROWN, "test.docword.gz")
    theta = run.infer(docs, threads=2)
    assert [t.shape for t in theta] == [(521, 16), (521, 8)]
    assert all(np.isfinite(t).all() and (t >= 0).all() for t in theta)
    out = tmp_path / "theta.csv"
    subprocess.run([datm._run._datm_bin(), "infer", run.path, docs, "-o", str(out),
                    "--quiet", "--threads", "2"], check=True)
    cli = np.loadtxt(out, delimiter=",", skiprows=1)[:, 1:]
    assert np.array_equal(cli[:, :16].astype(np.float32), theta[0])
    # the same documents as a sparse matrix, and thread counts, give the same numbers
    X = read_docword(docs)
    theta2 = run.infer(X, threads=1)
    assert all(np.array_equal(a, b) for a, b in zip(theta, theta2))
    # a matrix over fewer words is fine; draws average to near the mean
    theta3 = run.infer(X[:, :4000], samples=50, seed=3)
    assert theta3[0].shape == (521, 16)


def test_errors(run, tmp_path):
    with pytest.raises(datm.Error, match="no-such-run"):
        datm.Run(tmp_path / "no-such-run")
    with pytest.raises(datm.Error, match="layer 3"):
        run.phi(3)
    with pytest.raises(datm.Error, match="vocabulary of 5000"):
        run.infer(sp.csr_matrix((2, 6000), dtype=np.float32))
    with pytest.raises(datm.Error, match="train.epochs"):
        datm.run(os.path.join(SRC, "experiments", "brown", "whai.yaml"), tmp_path / "x",
                 train__epochs=-1)
