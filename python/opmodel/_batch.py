"""predict_many: a table of ops of one kind predicted in one C call
(opm_predict_many, include/opmodel/batch.h), the GIL released for it."""
import ctypes

from . import _lib as L
from ._core import DType, Hardware, OpKind, OpmodelError, Phase, _COp, _enum, _predictor, _set_attr, dtype_of, load_hardware

FIELDS = ("latency_s", "flops", "matrix_flops", "vector_flops", "hbm_read_bytes", "hbm_write_bytes",
          "arithmetic_intensity", "energy_j", "compute_time_s", "overhead_s", "bound", "engine",
          "input_bytes", "weight_bytes", "output_bytes", "workspace_bytes")


def default_keys(kind):
    """The columns predict_many reads for a kind when keys is not given."""
    k = _enum(OpKind, kind, "kind")
    p = L.opm_batch_default_keys(OpKind._c[k.value])
    out, i = [], 0
    while p[i]:
        out.append(p[i].decode())
        i += 1
    return tuple(out)


def predict_many(kind, shapes, dtype="bf16", *, hardware, model="roofline", fields=None, keys=None,
                 phase=Phase.INFERENCE, attrs=None, errors="raise"):
    """Predicts one op per row of ``shapes`` in a single C call.

    ``shapes``: a NumPy integer array or a list of tuples, one row per op; the
    columns are short-form keys of ``kind`` — by default
    ``default_keys(kind)`` (gemm: m, n, k; batched_gemm: batch, m, n, k;
    attention*: batch, seq_q, seq_kv, heads, kv_heads, head_dim; softmax and
    the norms: the whole shape; see include/opmodel/batch.h for every kind),
    or ``keys=("seq_q", "seq_kv", ...)``, where "K[i]" is entry i of a list key
    and a bare list key takes the remaining columns.  ``attrs`` (a dict) is
    set on every op (e.g. ``{"causal": True}``).

    Returns a 1-D float64 array of latency_s, or with ``fields=(...)`` (names
    in ``FIELDS``) a 2-D array with one column per field.  A bad row raises
    OpmodelError("row I: ...") unless ``errors="nan"``, which fills it with NaN.
    """
    import numpy as np

    k = _enum(OpKind, kind, "kind")
    rows = np.ascontiguousarray(shapes, dtype=np.int64)
    if rows.ndim == 1:
        rows = rows.reshape(1, -1) if rows.size else rows.reshape(0, 0)
    if rows.ndim != 2:
        raise OpmodelError(f"shapes: expected one row per op (2-D), got {rows.ndim} dimensions")
    single = fields is None
    names = ("latency_s",) if single else ((fields,) if isinstance(fields, str) else tuple(fields))
    fvals = (ctypes.c_int * max(len(names), 1))()
    for j, n in enumerate(names):
        v = ctypes.c_int()
        if L.opm_batch_field_parse(str(n).encode(), v):
            raise OpmodelError(f"fields: unknown field '{n}' (known: {', '.join(FIELDS)})")
        fvals[j] = v.value
    if errors not in ("raise", "nan"):
        raise OpmodelError(f"errors: expected 'raise' or 'nan', got {errors!r}")
    hw = hardware if isinstance(hardware, Hardware) else load_hardware(hardware)
    _, m = _predictor(model)
    key_arr = None
    if keys is not None:
        keys = (keys,) if isinstance(keys, str) else tuple(keys)
        key_arr = (ctypes.c_char_p * (len(keys) + 1))(*[str(x).encode() for x in keys], None)
    err = L.Error()
    attrs_op = None
    ph = _enum(Phase, phase, "phase")
    if attrs:
        ptr = L.opm_op_new(None, OpKind._c[k.value], Phase._c[ph.value], err)
        if not ptr:
            L.raise_error(err)
        attrs_op = _COp(ptr)
        for a, v in attrs.items():
            if _set_attr(ptr, a, v, err):
                L.raise_error(err)
    spec = L.Batch(OpKind._c[k.value], Phase._c[ph.value], DType._c[dtype_of(dtype).value],
                   ctypes.cast(key_arr, ctypes.POINTER(ctypes.c_char_p)) if key_arr is not None else None,
                   attrs_op.ptr if attrs_op else None, int(errors == "nan"))
    n_rows, n_cols = rows.shape
    out = np.empty((n_rows, len(names)), dtype=np.float64)
    failed = ctypes.c_size_t()
    rc = L.opm_predict_many(m, hw._ptr, spec, rows.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), n_rows, n_cols,
                            fvals, len(names), out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
                            ctypes.byref(failed), err)
    if rc:
        L.raise_error(err)
    return out[:, 0] if single else out
