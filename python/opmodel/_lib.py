"""ctypes bindings to libopmodel: the library is found once, at import.

Search order: the ``OPMODEL_LIB`` environment variable (a path to the shared
library), then ``libopmodel.so`` next to this package (where a wheel or a
copy puts it), then the system loader path (``meson install`` puts it there).
Every number the package returns comes from these C functions; nothing here
models anything.
"""
import ctypes
import ctypes.util
import os

__all__ = ["lib", "OpmodelError", "check", "Error", "Profile", "Counts", "Tensor"]


class OpmodelError(ValueError):
    """An error reported by libopmodel; ``str()`` is the library's one-line
    message (``FILE:LINE:COL: FIELD: what was expected, got what``).
    ``code`` is the opm_status value and ``field`` the dotted field path."""

    def __init__(self, message, code=1, field=""):
        super().__init__(message)
        self.code = code
        self.field = field


def _candidates():
    env = os.environ.get("OPMODEL_LIB")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("libopmodel.so", "libopmodel.dylib"):
        p = os.path.join(here, name)
        if os.path.exists(p):
            yield p
    found = ctypes.util.find_library("opmodel")
    yield found or "libopmodel.so"


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:  # try the next place
            errors.append(f"{path}: {e}")
    raise ImportError("opmodel: cannot load libopmodel (set OPMODEL_LIB to the built "
                      "build/src/../libopmodel.so): " + "; ".join(errors))


lib = _load()

OPM_MAX_RANK = 8
OPM_MAX_LEVELS = 8
OPM_MAX_DIAGS = 32
OPM_PROFILE_NAME_MAX, OPM_PROFILE_MODEL_MAX, OPM_PROFILE_HARDWARE_MAX = 128, 32, 64


class Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("field", ctypes.c_char * 96), ("message", ctypes.c_char * 512)]


class Tensor(ctypes.Structure):
    _fields_ = [("role", ctypes.c_int), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.c_int64 * OPM_MAX_RANK), ("layout", ctypes.c_char * 16)]


class LevelAccess(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 16), ("read_bytes", ctypes.c_uint64),
                ("write_bytes", ctypes.c_uint64), ("energy_j", ctypes.c_double), ("time_s", ctypes.c_double)]


class Diag(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char * 40), ("is_text", ctypes.c_int), ("number", ctypes.c_double),
                ("text", ctypes.c_char * 64)]


class GemmDetails(ctypes.Structure):
    _fields_ = [("kernel", ctypes.c_char * 64), ("kernel_family", ctypes.c_char * 16),
                ("tile_m", ctypes.c_int64), ("tile_n", ctypes.c_int64), ("tile_k", ctypes.c_int64),
                ("split_k", ctypes.c_int64), ("pipeline_stages", ctypes.c_int64), ("warps_per_cta", ctypes.c_int64),
                ("ctas_per_sm", ctypes.c_double), ("tiles", ctypes.c_double), ("waves", ctypes.c_double),
                ("wave_efficiency", ctypes.c_double), ("tile_efficiency", ctypes.c_double),
                ("raw_rates_per_s", ctypes.c_double * 4), ("effective_rates_per_s", ctypes.c_double * 4)]


class Profile(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * OPM_PROFILE_NAME_MAX), ("kind", ctypes.c_int), ("phase", ctypes.c_int),
                ("model", ctypes.c_char * OPM_PROFILE_MODEL_MAX),
                ("hardware", ctypes.c_char * OPM_PROFILE_HARDWARE_MAX), ("latency_s", ctypes.c_double),
                ("flops", ctypes.c_uint64), ("matrix_flops", ctypes.c_uint64), ("vector_flops", ctypes.c_uint64),
                ("engine", ctypes.c_int), ("bound", ctypes.c_int), ("arithmetic_intensity", ctypes.c_double),
                ("compute_time_s", ctypes.c_double), ("overhead_s", ctypes.c_double),
                ("level_count", ctypes.c_size_t), ("levels", LevelAccess * OPM_MAX_LEVELS),
                ("input_bytes", ctypes.c_uint64), ("weight_bytes", ctypes.c_uint64),
                ("output_bytes", ctypes.c_uint64), ("workspace_bytes", ctypes.c_uint64),
                ("energy_j", ctypes.c_double), ("compute_energy_j", ctypes.c_double),
                ("static_energy_j", ctypes.c_double), ("average_power_w", ctypes.c_double),
                ("diag_count", ctypes.c_size_t),
                ("diags", Diag * OPM_MAX_DIAGS), ("diags_dropped", ctypes.c_size_t),
                ("fell_back", ctypes.c_int), ("has_gemm", ctypes.c_int), ("gemm", GemmDetails)]


class Counts(ctypes.Structure):
    _fields_ = [("matrix_flops", ctypes.c_uint64), ("vector_flops", ctypes.c_uint64),
                ("compute_dtype", ctypes.c_int), ("read_bytes", ctypes.c_uint64),
                ("write_bytes", ctypes.c_uint64), ("input_bytes", ctypes.c_uint64),
                ("weight_bytes", ctypes.c_uint64), ("output_bytes", ctypes.c_uint64),
                ("workspace_bytes", ctypes.c_uint64)]


class Model(ctypes.Structure):
    pass


PREDICT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(Profile),
                           ctypes.POINTER(Error))
Model._fields_ = [("name", ctypes.c_char_p), ("description", ctypes.c_char_p), ("predict", ctypes.c_void_p)]


class Batch(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("phase", ctypes.c_int), ("dtype", ctypes.c_int),
                ("keys", ctypes.POINTER(ctypes.c_char_p)), ("attrs", ctypes.c_void_p),
                ("nan_on_error", ctypes.c_int)]


_P, _E = ctypes.c_void_p, ctypes.POINTER(Error)
_i, _sz, _s, _d, _i64 = ctypes.c_int, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_double, ctypes.c_int64


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


opm_version = _fn("opm_version", _s)
opm_dtype_name = _fn("opm_dtype_name", _s, _i)
opm_dtype_parse = _fn("opm_dtype_parse", _i, _s, ctypes.POINTER(_i))
opm_dtype_bits = _fn("opm_dtype_bits", ctypes.c_uint, _i)
opm_kind_name = _fn("opm_kind_name", _s, _i)
opm_phase_name = _fn("opm_phase_name", _s, _i)
opm_role_name = _fn("opm_role_name", _s, _i)
opm_engine_name = _fn("opm_engine_name", _s, _i)
opm_bound_name = _fn("opm_bound_name", _s, _i)

opm_op_new = _fn("opm_op_new", _P, _s, _i, _i, _E)
opm_op_free = _fn("opm_op_free", None, _P)
opm_op_add_tensor = _fn("opm_op_add_tensor", _i, _P, _i, ctypes.POINTER(_i64), _i, _i, _s, _E)
opm_op_set_bool = _fn("opm_op_set_bool", _i, _P, _s, _i, _E)
opm_op_set_int = _fn("opm_op_set_int", _i, _P, _s, _i64, _E)
opm_op_set_double = _fn("opm_op_set_double", _i, _P, _s, _d, _E)
opm_op_set_string = _fn("opm_op_set_string", _i, _P, _s, _s, _E)
opm_op_set_ints = _fn("opm_op_set_ints", _i, _P, _s, ctypes.POINTER(_i64), _sz, _E)
opm_op_validate = _fn("opm_op_validate", _i, _P, _E)
opm_op_count = _fn("opm_op_count", _i, _P, ctypes.POINTER(Counts), _E)
opm_op_name = _fn("opm_op_name", _s, _P)
opm_op_kind = _fn("opm_op_kind", _i, _P)
opm_op_phase = _fn("opm_op_phase", _i, _P)
opm_op_tensor_count = _fn("opm_op_tensor_count", _sz, _P)
opm_op_tensor = _fn("opm_op_tensor", ctypes.POINTER(Tensor), _P, _sz)
opm_op_attr_count = _fn("opm_op_attr_count", _sz, _P)
opm_op_attr_key = _fn("opm_op_attr_key", _s, _P, _sz)
opm_op_attr_type = _fn("opm_op_attr_type", _i, _P, _sz)
opm_op_attr_bool_at = _fn("opm_op_attr_bool_at", _i, _P, _sz, _i)
opm_op_attr_int_at = _fn("opm_op_attr_int_at", _i64, _P, _sz, _i64)
opm_op_attr_string_at = _fn("opm_op_attr_string_at", _s, _P, _sz, _s)
opm_op_attr_ints_at = _fn("opm_op_attr_ints_at", _sz, _P, _sz, ctypes.POINTER(ctypes.POINTER(_i64)))
opm_op_get_double = _fn("opm_op_get_double", _d, _P, _s, _d)
opm_op_parse_string = _fn("opm_op_parse_string", _P, _s, _sz, _i, _s, _i, _E)
opm_op_parse_file = _fn("opm_op_parse_file", _P, _s, _E)
opm_op_to_text = _fn("opm_op_to_text", ctypes.c_void_p, _P, _i, _E)
opm_profile_to_json = _fn("opm_profile_to_json", ctypes.c_void_p, ctypes.POINTER(Profile), _E)
opm_profile_size = _fn("opm_profile_size", _sz)
if opm_profile_size() != ctypes.sizeof(Profile):
    raise ImportError(f"opmodel: libopmodel's opm_profile is {opm_profile_size()} bytes, these bindings "
                      f"describe {ctypes.sizeof(Profile)}: the library and the package are of different versions")

opm_hardware_open = _fn("opm_hardware_open", _P, _s, _E)
opm_hardware_load_string = _fn("opm_hardware_load_string", _P, _s, _sz, _s, _E)
opm_hardware_free = _fn("opm_hardware_free", None, _P)
opm_hardware_with_clock = _fn("opm_hardware_with_clock", _P, _P, _d, _E)
opm_hardware_name = _fn("opm_hardware_name", _s, _P)
opm_hardware_kind = _fn("opm_hardware_kind", _s, _P)
opm_hardware_clock_hz = _fn("opm_hardware_clock_hz", _d, _P)
opm_hardware_peak_flops = _fn("opm_hardware_peak_flops", _d, _P, _i, _i)
opm_hardware_to_yaml = _fn("opm_hardware_to_yaml", ctypes.c_void_p, _P, _E)
opm_hardware_builtin_count = _fn("opm_hardware_builtin_count", _sz)
opm_hardware_builtin_name = _fn("opm_hardware_builtin_name", _s, _sz)

opm_model_find = _fn("opm_model_find", ctypes.POINTER(Model), _s)
opm_model_count = _fn("opm_model_count", _sz)
opm_model_at = _fn("opm_model_at", ctypes.POINTER(Model), _sz)

opm_batch_field_parse = _fn("opm_batch_field_parse", _i, _s, ctypes.POINTER(_i))
opm_batch_default_keys = _fn("opm_batch_default_keys", ctypes.POINTER(_s), _i)
opm_predict_many = _fn("opm_predict_many", _i, ctypes.POINTER(Model), _P, ctypes.POINTER(Batch),
                       ctypes.POINTER(_i64), _sz, _sz, ctypes.POINTER(_i), _sz, ctypes.POINTER(_d),
                       ctypes.POINTER(_sz), _E)

_libc = ctypes.CDLL(None)
_free = _libc.free
_free.argtypes = [ctypes.c_void_p]
_free.restype = None


def take_string(ptr):
    """The text of a malloc'ed C string, which is then freed."""
    if not ptr:
        return None
    try:
        return ctypes.string_at(ptr).decode()
    finally:
        _free(ptr)


def raise_error(err):
    raise OpmodelError(err.message.decode(errors="replace"), err.code, err.field.decode(errors="replace"))


def check(rc, err):
    if rc:
        raise_error(err)
