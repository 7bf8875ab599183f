"""Loading libdatm and declaring the functions of include/datm.h for ctypes."""
import ctypes
import ctypes.util
import os

API_VERSION = 1  # the DATM_API_VERSION this package is written against


class Error(RuntimeError):
    """A failure reported by libdatm; the message names what failed."""


class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 1024)]


def _candidates():
    env = os.environ.get("DATM_LIB")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "..", "..", "build", "libdatm.so")
    found = ctypes.util.find_library("datm")
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("datm: libdatm.so not found; build it (cmake --build build) or set "
                      "DATM_LIB. Tried: " + "; ".join(tried))


# OpenMP threads sleep at barriers, as in the datm binary (engine/math/runtime_env.c): libgomp
# reads the policy once, when libdatm loads it, and spinning threads stall inference whenever
# another process holds a core. A user's OMP_WAIT_POLICY or GOMP_SPINCOUNT is left alone; a
# process that loaded libgomp before this import keeps the policy it started with.
if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
    os.environ["OMP_WAIT_POLICY"] = "passive"
lib = _load()
_P = ctypes.c_void_p
_E = ctypes.POINTER(_Error)
_sigs = {
    "datm_api_version": (ctypes.c_int, []),
    "datm_open": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_P), _E]),
    "datm_close": (None, [_P]),
    "datm_variant": (ctypes.c_char_p, [_P]),
    "datm_spec_text": (ctypes.c_char_p, [_P]),
    "datm_layers": (ctypes.c_int, [_P]),
    "datm_vocab_size": (ctypes.c_int64, [_P]),
    "datm_topics": (ctypes.c_int64, [_P, ctypes.c_int]),
    "datm_word": (ctypes.c_char_p, [_P, ctypes.c_int64]),
    "datm_phi": (ctypes.c_int, [_P, ctypes.c_int, _P, _E]),
    "datm_topic_words": (ctypes.c_int, [_P, ctypes.c_int, _P, _E]),
    "datm_top_words": (ctypes.c_int, [_P, ctypes.c_int, ctypes.c_int, _P, _P, _E]),
    "datm_metric_count": (ctypes.c_int, [_P]),
    "datm_metric_name": (ctypes.c_char_p, [_P, ctypes.c_int]),
    "datm_metric": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.POINTER(ctypes.c_double)]),
    "datm_topic_stat": (ctypes.c_int, [_P, ctypes.c_int, ctypes.c_char_p, _P, _E]),
    "datm_docs_read": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_P), _E]),
    "datm_docs_from_csr": (ctypes.c_int, [ctypes.c_int64, ctypes.c_int64, _P, _P, _P,
                                          ctypes.POINTER(_P), _E]),
    "datm_docs_count": (ctypes.c_int64, [_P]),
    "datm_docs_free": (None, [_P]),
    "datm_infer": (ctypes.c_int, [_P, _P, ctypes.c_int, ctypes.c_uint64, ctypes.c_int,
                                  ctypes.POINTER(_P), _E]),
}
for _name, (_res, _args) in _sigs.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args


def api_version():
    """DATM_API_VERSION of the loaded library."""
    return lib.datm_api_version()


if api_version() != API_VERSION:
    raise ImportError("datm: libdatm has API version %d, this package expects %d"
                      % (api_version(), API_VERSION))


def call(fn, *args):
    """Calls a fallible libdatm function; raises Error with its message."""
    err = _Error()
    if fn(*args, ctypes.byref(err)) != 0:
        raise Error(err.msg.decode("utf-8", "replace"))
