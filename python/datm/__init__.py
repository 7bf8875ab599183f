"""datm: deep autoencoding topic models, from Python.

A trained model is a run directory made by ``datm run`` (or ``datm.run`` below). ``Run``
opens one through libdatm (the C library of include/datm.h, loaded with ctypes: no compiler
is needed) and gives its topics, topic matrices, metrics and inference as numpy arrays::

    import datm
    r = datm.Run("results/brown_whai")
    r.topics(1, top=5)[:3]        # [[("government", 0.021), ...], ...]
    theta = r.infer("docs.docword.gz")   # one (n_docs, K_l) array per layer

The library is found through $DATM_LIB (a path to libdatm.so), then the build tree of this
checkout (build/libdatm.so), then the system's library path.
"""
from ._lib import Error, api_version
from ._run import Run, run

__all__ = ["Run", "run", "Error", "api_version"]
