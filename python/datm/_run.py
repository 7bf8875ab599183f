"""datm.Run (a trained model) and datm.run (training through the CLI)."""
import ctypes
import os
import shutil
import subprocess

import numpy as np

from . import _lib
from ._lib import Error, call, lib


def _ptr(a):
    return a.ctypes.data_as(ctypes.c_void_p)


class _Docs:
    """Documents held by libdatm (freed with the object)."""

    def __init__(self, X):
        self.h = ctypes.c_void_p()
        if isinstance(X, (str, os.PathLike)):
            call(lib.datm_docs_read, os.fsencode(X), ctypes.byref(self.h))
            return
        import scipy.sparse as sp
        X = sp.csr_matrix(X)
        indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
        indices = np.ascontiguousarray(X.indices, dtype=np.int32)
        data = np.ascontiguousarray(X.data, dtype=np.float32)
        call(lib.datm_docs_from_csr, X.shape[0], max(X.shape[1], 1), _ptr(indptr),
             _ptr(indices), _ptr(data), ctypes.byref(self.h))

    def __len__(self):
        return lib.datm_docs_count(self.h)

    def __del__(self):
        if getattr(self, "h", None):
            lib.datm_docs_free(self.h)
            self.h = None


class Run:
    """A trained model: a run directory made by ``datm run`` or its result.h5.

    Layers count from 1 (closest to the words). Matrices are float32 numpy arrays.
    """

    def __init__(self, path):
        self.path = os.fspath(path)
        self._h = ctypes.c_void_p()
        call(lib.datm_open, os.fsencode(self.path), ctypes.byref(self._h))
        self.variant = lib.datm_variant(self._h).decode()
        self.layers = lib.datm_layers(self._h)
        self.vocab_size = lib.datm_vocab_size(self._h)
        self.k = [lib.datm_topics(self._h, l) for l in range(1, self.layers + 1)]
        self._vocab = None

    def close(self):
        if self._h:
            lib.datm_close(self._h)
            self._h = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "datm.Run(%r: %s, layers %s, vocabulary %d)" % (
            self.path, self.variant, "-".join(map(str, self.k)), self.vocab_size)

    def _layer(self, layer):
        if not 1 <= layer <= self.layers:
            raise Error("layer %d: the model of %s has layers 1..%d"
                        % (layer, self.path, self.layers))

    @property
    def vocab(self):
        """The vocabulary (list of words; empty when the run has none)."""
        if self._vocab is None:
            words = [lib.datm_word(self._h, v) for v in range(self.vocab_size)]
            self._vocab = [w.decode() for w in words] if all(words) else []
        return self._vocab

    @property
    def spec(self):
        """The run's resolved spec (YAML text)."""
        return lib.datm_spec_text(self._h).decode()

    @property
    def metrics(self):
        """The run's scalar metrics (/metrics) as a dict."""
        out = {}
        v = ctypes.c_double()
        for i in range(lib.datm_metric_count(self._h)):
            name = lib.datm_metric_name(self._h, i)
            if lib.datm_metric(self._h, name, ctypes.byref(v)) == 0:
                out[name.decode()] = v.value
        return out

    def phi(self, layer):
        """Phi(layer), shape (K_{layer-1}, K_layer) (K_0 = vocabulary); columns sum to 1."""
        self._layer(layer)
        rows = self.vocab_size if layer == 1 else self.k[layer - 2]
        out = np.empty((rows, self.k[layer - 1]), dtype=np.float32)
        call(lib.datm_phi, self._h, layer, _ptr(out))
        return out

    def topic_words(self, layer):
        """The layer's topics on the words, Phi(1)...Phi(layer): shape (V, K_layer)."""
        self._layer(layer)
        out = np.empty((self.vocab_size, self.k[layer - 1]), dtype=np.float32)
        call(lib.datm_topic_words, self._h, layer, _ptr(out))
        return out

    def topics(self, layer, top=10):
        """For each topic of the layer, its `top` most probable (word, probability) pairs."""
        self._layer(layer)
        k = self.k[layer - 1]
        ids = np.empty((k, top), dtype=np.int32)
        w = np.empty((k, top), dtype=np.float32)
        call(lib.datm_top_words, self._h, layer, top, _ptr(ids), _ptr(w))
        vocab = self.vocab or [str(v) for v in range(self.vocab_size)]
        return [[(vocab[i], float(p)) for i, p in zip(ids[t], w[t])] for t in range(k)]

    # The per-topic diagnostics `datm topics` shows (its --help defines each).
    TOPIC_STATS = ("use", "unused", "npmi", "uci", "umass", "cv", "kl", "nearest", "cosine")

    def topic_stats(self, layer):
        """Per-topic diagnostics of the layer, as the run stored them: a dict of arrays of
        length K_layer, indexed like the topics ("use": share of the training tokens,
        "unused": 1 for a topic flagged unused, coherence "npmi" ..., "kl" from the corpus's
        word frequencies, "nearest"/"cosine": the most similar topic of the layer). Values
        the run did not compute are left out."""
        self._layer(layer)
        out = {}
        err = _lib._Error()
        for name in self.TOPIC_STATS:
            a = np.empty(self.k[layer - 1], dtype=np.float64)
            rc = lib.datm_topic_stat(self._h, layer, name.encode(), _ptr(a), ctypes.byref(err))
            if rc == 0:
                out[name] = a
            elif rc != -1:
                raise Error(err.msg.decode("utf-8", "replace"))
        return out

    def live_topics(self, layer):
        """Indices of the layer's topics not flagged unused, most used first (the order
        `datm topics` lists them in); all topics by use when the run has no flags."""
        st = self.topic_stats(layer)
        use = st.get("use", np.zeros(self.k[layer - 1]))
        idx = np.argsort(-use, kind="stable")
        if "unused" in st:
            idx = idx[st["unused"][idx] == 0]
        return [int(i) for i in idx]

    def infer(self, X, samples=0, seed=1, threads=0):
        """Per-layer theta of documents: a list of (n_docs, K_l) arrays, layer 1 first.

        X: a docword file path, or a (n_docs, V') matrix of word counts (scipy.sparse or
        dense; V' <= the model's vocabulary). samples 0: the posterior mean; S > 0: the
        average of S draws (seed). threads > 0 caps the threads of the call.
        """
        docs = X if isinstance(X, _Docs) else _Docs(X)
        n = len(docs)
        outs = [np.empty((n, k), dtype=np.float32) for k in self.k]
        ptrs = (ctypes.c_void_p * self.layers)(*[o.ctypes.data for o in outs])
        call(lib.datm_infer, self._h, docs.h, samples, seed, threads, ptrs)
        return outs


def _datm_bin():
    env = os.environ.get("DATM_BIN")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    local = os.path.join(here, "..", "..", "build", "datm")
    if os.path.exists(local):
        return local
    found = shutil.which("datm")
    if not found:
        raise Error("datm: the datm program was not found (set DATM_BIN)")
    return found


def run(spec, out, overrides=None, threads=None, quiet=True, **settings):
    """Trains a spec with ``datm run`` into the directory ``out`` and returns its ``Run``.

    Settings are overrides of the spec, given as a dict (``{"train.epochs": 5}``) or as
    keywords with ``__`` for the dots (``train__epochs=5``). Raises Error with datm's
    message when the run fails.
    """
    args = [_datm_bin(), "run", os.fspath(spec)]
    items = dict(overrides or {})
    items.update({k.replace("__", "."): v for k, v in settings.items()})
    for k, v in items.items():
        if isinstance(v, (list, tuple)):
            v = "[" + ",".join(map(str, v)) + "]"
        elif isinstance(v, bool):
            v = "true" if v else "false"
        args.append("%s=%s" % (k, v))
    args += ["-o", os.fspath(out)]
    if threads:
        args += ["--threads", str(threads)]
    if quiet:
        args.append("--quiet")
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        msg = (p.stderr.strip() or p.stdout.strip()).splitlines()
        raise Error(msg[-1] if msg else "datm run failed (exit %d)" % p.returncode)
    return Run(out)
