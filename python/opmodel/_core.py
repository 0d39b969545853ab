"""The Python face of libopmodel's op, hardware and profile objects.

Everything numeric is computed by the C library; this module only moves
values across (ctypes) and names them.
"""
import ctypes
import enum
import json
import os
import types
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, Tuple

from . import _lib as L
from ._lib import OpmodelError


def _names(fn):
    """The C names of enum values 0, 1, ... up to the first '?'."""
    out, i = [], 0
    while True:
        n = fn(i).decode()
        if n == "?":
            return out
        out.append(n)
        i += 1


def _str_enum(name, values, aliases=()):
    items = [(v.upper(), v) for v in values] + list(aliases)
    e = enum.Enum(name, items, type=str, module=__name__)
    e.__str__ = lambda self: self.value
    e._c = {v: i for i, v in enumerate(values)}  # value -> C enum number
    e._by_c = {i: e(v) for i, v in enumerate(values)}
    return e


DType = _str_enum("DType", _names(L.opm_dtype_name), aliases=[("FP8", "fp8_e4m3")])
OpKind = _str_enum("OpKind", _names(L.opm_kind_name))
Phase = _str_enum("Phase", _names(L.opm_phase_name))
TensorRole = _str_enum("TensorRole", _names(L.opm_role_name))
# opm_engine and opm_bound have three values each (types.h).
Engine = _str_enum("Engine", [L.opm_engine_name(i).decode() for i in range(3)])
Bound = _str_enum("Bound", [L.opm_bound_name(i).decode() for i in range(3)])

_BPE = {8: "fp64", 4: "fp32", 2: "bf16", 1: "fp8_e4m3", 0.5: "fp4_e2m1"}


def dtype_of(x) -> "DType":
    """A DType from a DType, its name ("bf16", "fp8") or bytes per element
    (8, 4, 2, 1, 0.5: fp64, fp32, bf16, fp8_e4m3, fp4_e2m1)."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        try:
            return DType(x)
        except ValueError:
            raise OpmodelError(f"dtype: expected a dtype name ({', '.join(DType._c)}), got '{x}'") from None
    if isinstance(x, (int, float)) and not isinstance(x, bool) and x in _BPE:
        return DType(_BPE[x])
    raise OpmodelError(f"dtype: expected a DType, a dtype name or bytes per element (8, 4, 2, 1, 0.5), got {x!r}")


def _enum(e, x, what):
    try:
        return x if isinstance(x, e) else e(x)
    except ValueError:
        raise OpmodelError(f"{what}: expected one of {', '.join(m.value for m in e)}, got {x!r}") from None


@dataclass(frozen=True)
class TensorSpec:
    """One tensor of an op: ``TensorSpec(role, shape, dtype, layout=None)``."""
    role: TensorRole
    shape: Tuple[int, ...]
    dtype: DType
    layout: Optional[str] = None

    def __post_init__(self):
        object.__setattr__(self, "role", _enum(TensorRole, self.role, "role"))
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        object.__setattr__(self, "dtype", dtype_of(self.dtype))


class _COp:
    """Owns one C opm_op."""
    __slots__ = ("ptr",)

    def __init__(self, ptr):
        self.ptr = ptr

    def __del__(self, free=L.opm_op_free):
        if self.ptr:
            free(self.ptr)
            self.ptr = None


def _set_attr(ptr, key, v, err):
    k = key.encode()
    if isinstance(v, bool):
        return L.opm_op_set_bool(ptr, k, int(v), err)
    if isinstance(v, enum.Enum):
        v = v.value
    if isinstance(v, int):
        return L.opm_op_set_int(ptr, k, v, err)
    if isinstance(v, float):
        return L.opm_op_set_double(ptr, k, v, err)
    if isinstance(v, str):
        return L.opm_op_set_string(ptr, k, v.encode(), err)
    if hasattr(v, "tolist"):  # numpy scalars and arrays
        return _set_attr(ptr, key, v.tolist(), err)
    if isinstance(v, (list, tuple)):
        if v and all(isinstance(e, (list, tuple)) for e in v):  # a list of lists: key[0], key[1], ...
            for i, e in enumerate(v):
                rc = _set_attr(ptr, f"{key}[{i}]", list(e), err)
                if rc:
                    return rc
            return 0
        vals = (ctypes.c_int64 * max(len(v), 1))(*[int(e) for e in v])
        return L.opm_op_set_ints(ptr, k, vals, len(v), err)
    raise OpmodelError(f"attrs.{key}: expected a bool, int, float, string or list of ints, got {type(v).__name__}")


@dataclass(frozen=True)
class LocalOp:
    """One already-partitioned local operation (contract §1):
    ``LocalOp(name, kind, phase, tensors, attrs)``.  Validated by the C
    library when first predicted or counted (``validate()`` checks at once)."""
    name: str
    kind: OpKind
    phase: Phase = Phase.INFERENCE
    tensors: Tuple[TensorSpec, ...] = ()
    attrs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "kind", _enum(OpKind, self.kind, "kind"))
        object.__setattr__(self, "phase", _enum(Phase, self.phase, "phase"))
        object.__setattr__(self, "tensors", tuple(self.tensors))
        object.__setattr__(self, "attrs", types.MappingProxyType(dict(self.attrs)))

    def _handle(self):
        h = self.__dict__.get("_c")
        if h is None:
            h = _build(self)
            object.__setattr__(self, "_c", h)
        return h

    def validate(self):
        """Raises OpmodelError unless the op is well formed; returns self."""
        self._handle()
        return self

    def counts(self) -> "Counts":
        """FLOPs and bytes of the op, independent of hardware (opm_op_count)."""
        return _counts(self._handle().ptr)

    def to_yaml(self) -> str:
        return _to_text(self._handle().ptr, 1)

    def to_json(self) -> str:
        return _to_text(self._handle().ptr, 2)

    def __hash__(self):
        return hash((self.name, self.kind, self.phase, self.tensors, tuple(sorted(self.attrs.items(), key=str))))


def _build(op: LocalOp) -> _COp:
    err = L.Error()
    ptr = L.opm_op_new(op.name.encode(), OpKind._c[op.kind.value], Phase._c[op.phase.value], err)
    if not ptr:
        L.raise_error(err)
    h = _COp(ptr)
    for i, t in enumerate(op.tensors):
        if not isinstance(t, TensorSpec):
            t = TensorSpec(*t)
        shape = (ctypes.c_int64 * max(len(t.shape), 1))(*t.shape)
        if L.opm_op_add_tensor(ptr, TensorRole._c[t.role.value], shape, len(t.shape), DType._c[t.dtype.value],
                               t.layout.encode() if t.layout else None, err):
            raise OpmodelError(f"tensors[{i}].{err.message.decode()}", err.code)
    for k, v in op.attrs.items():
        if _set_attr(ptr, k, v, err):
            L.raise_error(err)
    L.check(L.opm_op_validate(ptr, err), err)
    return h


def _from_c(ptr) -> LocalOp:
    """A LocalOp with the tensors and attributes of a C op."""
    tensors = []
    for i in range(L.opm_op_tensor_count(ptr)):
        t = L.opm_op_tensor(ptr, i).contents
        tensors.append(TensorSpec(TensorRole._by_c[t.role], tuple(t.shape[:t.rank]), DType._by_c[t.dtype],
                                  t.layout.decode() or None))
    attrs = {}
    p = ctypes.POINTER(ctypes.c_int64)()
    for i in range(L.opm_op_attr_count(ptr)):
        key = L.opm_op_attr_key(ptr, i).decode()
        ty = L.opm_op_attr_type(ptr, i)
        if ty == 0:
            attrs[key] = bool(L.opm_op_attr_bool_at(ptr, i, 0))
        elif ty == 1:
            attrs[key] = L.opm_op_attr_int_at(ptr, i, 0)
        elif ty == 2:
            attrs[key] = L.opm_op_get_double(ptr, key.encode(), 0.0)
        elif ty == 3:
            attrs[key] = L.opm_op_attr_string_at(ptr, i, b"").decode()
        else:
            n = L.opm_op_attr_ints_at(ptr, i, ctypes.byref(p))
            attrs[key] = [p[j] for j in range(n)]
    op = LocalOp(L.opm_op_name(ptr).decode(), OpKind._by_c[L.opm_op_kind(ptr)], Phase._by_c[L.opm_op_phase(ptr)],
                 tuple(tensors), attrs)
    object.__setattr__(op, "_c", _COp(ptr))
    return op


def parse_op(text: str, source: str = "<string>") -> LocalOp:
    """An op from YAML or JSON text, full or short form (contract §1)."""
    err = L.Error()
    b = text.encode()
    ptr = L.opm_op_parse_string(b, len(b), 0, source.encode(), 1, err)
    if not ptr:
        L.raise_error(err)
    return _from_c(ptr)


def load_op(path) -> LocalOp:
    """An op from a YAML or JSON file."""
    err = L.Error()
    ptr = L.opm_op_parse_file(os.fsencode(path), err)
    if not ptr:
        L.raise_error(err)
    return _from_c(ptr)


def short_op(kind, dtype="bf16", *, name=None, phase=None, **keys) -> LocalOp:
    """An op from its short form: ``short_op("gemm", "bf16", m=1, n=8192, k=8192)``
    is the file ``{kind: gemm, m: 1, n: 8192, k: 8192, dtype: bf16}``."""
    doc = {"kind": _enum(OpKind, kind, "kind").value, "dtype": dtype_of(dtype).value}
    if name is not None:
        doc["name"] = name
    if phase is not None:
        doc["phase"] = _enum(Phase, phase, "phase").value
    for k, v in keys.items():
        if isinstance(v, enum.Enum):
            v = v.value
        elif hasattr(v, "tolist"):
            v = v.tolist()
        elif isinstance(v, tuple):
            v = list(v)
        doc[k] = v
    return parse_op(json.dumps(doc), "<short_op>")


def _emitted(fn, *args):
    """The text a C emitter returns (malloc'ed, freed here), or its error raised."""
    err = L.Error()
    s = L.take_string(fn(*args, err))
    if s is None:
        L.raise_error(err)
    return s


def _to_text(ptr, fmt):
    return _emitted(L.opm_op_to_text, ptr, fmt)


@dataclass(frozen=True)
class Counts:
    """What an op costs independent of hardware (opm_counts)."""
    matrix_flops: int
    vector_flops: int
    compute_dtype: DType
    read_bytes: int
    write_bytes: int
    input_bytes: int
    weight_bytes: int
    output_bytes: int
    workspace_bytes: int

    @property
    def flops(self) -> int:
        return self.matrix_flops + self.vector_flops

    @property
    def bytes(self) -> int:
        return self.read_bytes + self.write_bytes


def _counts(ptr) -> Counts:
    c, err = L.Counts(), L.Error()
    L.check(L.opm_op_count(ptr, c, err), err)
    return Counts(c.matrix_flops, c.vector_flops, DType._by_c[c.compute_dtype], c.read_bytes, c.write_bytes,
                  c.input_bytes, c.weight_bytes, c.output_bytes, c.workspace_bytes)


class Hardware:
    """An accelerator description owned by the C library (immutable; share
    it between threads freely).  Build with ``load_hardware``."""
    __slots__ = ("_ptr", "__weakref__")

    def __init__(self, ptr):
        self._ptr = ptr

    def __del__(self, free=L.opm_hardware_free):
        if getattr(self, "_ptr", None):
            free(self._ptr)
            self._ptr = None

    @classmethod
    def from_yaml(cls, text: str, source: str = "<string>") -> "Hardware":
        err = L.Error()
        b = text.encode()
        ptr = L.opm_hardware_load_string(b, len(b), source.encode(), err)
        if not ptr:
            L.raise_error(err)
        return cls(ptr)

    @property
    def name(self) -> str:
        return L.opm_hardware_name(self._ptr).decode()

    @property
    def kind(self) -> str:
        return L.opm_hardware_kind(self._ptr).decode()

    @property
    def clock_hz(self) -> float:
        return L.opm_hardware_clock_hz(self._ptr)

    def peak_flops(self, engine="tensor", dtype="bf16") -> float:
        """Dense peak FLOP/s of an engine for a dtype (0 when it lacks it)."""
        return L.opm_hardware_peak_flops(self._ptr, Engine._c[_enum(Engine, engine, "engine").value],
                                         DType._c[dtype_of(dtype).value])

    def with_clock(self, clock_hz: float) -> "Hardware":
        err = L.Error()
        ptr = L.opm_hardware_with_clock(self._ptr, float(clock_hz), err)
        if not ptr:
            L.raise_error(err)
        return Hardware(ptr)

    def to_yaml(self) -> str:
        return _emitted(L.opm_hardware_to_yaml, self._ptr)

    def __repr__(self):
        return f"<opmodel.Hardware {self.name}>"


def load_hardware(name_or_path) -> Hardware:
    """A built-in entry by name ("h100_sxm") or a YAML/JSON file."""
    if isinstance(name_or_path, Hardware):
        return name_or_path
    err = L.Error()
    ptr = L.opm_hardware_open(os.fsencode(name_or_path), err)
    if not ptr:
        L.raise_error(err)
    return Hardware(ptr)


def builtin_hardware() -> Tuple[str, ...]:
    return tuple(L.opm_hardware_builtin_name(i).decode() for i in range(L.opm_hardware_builtin_count()))


@dataclass(frozen=True)
class Footprint:
    input_bytes: int
    weight_bytes: int
    output_bytes: int
    workspace_bytes: int


@dataclass(frozen=True)
class MemoryAccess:
    """Bytes at the levels the original package named; None where the
    hardware has no such level.  ``levels`` has every level by name."""
    hbm_read_bytes: Optional[int]
    hbm_write_bytes: Optional[int]
    l2_read_bytes: Optional[int]
    l2_write_bytes: Optional[int]
    sram_read_bytes: Optional[int]
    sram_write_bytes: Optional[int]
    levels: Mapping[str, Tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class EnergyBreakdown:
    """Joules by part; a level the hardware lacks is None."""
    compute_j: float
    hbm_j: Optional[float]
    l2_j: Optional[float]
    sram_j: Optional[float]
    static_j: float
    levels: Mapping[str, float] = field(default_factory=dict)


class OpProfile:
    """A prediction (contract §3), read from the C profile on access."""
    __slots__ = ("_p", "_op", "_hw")

    def __init__(self, p, op_handle, hw):
        self._p, self._op, self._hw = p, op_handle, hw  # p owns its strings (copies since 0.2)

    name = property(lambda s: s._p.name.decode())
    kind = property(lambda s: OpKind._by_c[s._p.kind])
    phase = property(lambda s: Phase._by_c[s._p.phase])
    model = property(lambda s: s._p.model.decode())
    implementation = model
    hardware = property(lambda s: s._p.hardware.decode())
    latency_s = property(lambda s: s._p.latency_s)
    energy_j = property(lambda s: s._p.energy_j)
    average_power_w = property(lambda s: s._p.average_power_w)
    flops = property(lambda s: s._p.flops)
    matrix_flops = property(lambda s: s._p.matrix_flops)
    vector_flops = property(lambda s: s._p.vector_flops)
    engine = property(lambda s: Engine._by_c[s._p.engine])
    bound = property(lambda s: Bound._by_c[s._p.bound])
    arithmetic_intensity = property(lambda s: s._p.arithmetic_intensity)
    compute_time_s = property(lambda s: s._p.compute_time_s)
    overhead_s = property(lambda s: s._p.overhead_s)
    fell_back = property(lambda s: bool(s._p.fell_back))
    diagnostics_dropped = property(lambda s: s._p.diags_dropped)

    @property
    def footprint(self) -> Footprint:
        p = self._p
        return Footprint(p.input_bytes, p.weight_bytes, p.output_bytes, p.workspace_bytes)

    def _levels(self):
        p = self._p
        return [p.levels[i] for i in range(p.level_count)]

    @property
    def memory_access(self) -> MemoryAccess:
        lv = {a.name.decode(): (a.read_bytes, a.write_bytes) for a in self._levels()}
        g = lambda n, i: lv[n][i] if n in lv else None  # noqa: E731
        return MemoryAccess(g("hbm", 0), g("hbm", 1), g("l2", 0), g("l2", 1), g("sram", 0), g("sram", 1), lv)

    @property
    def energy_breakdown(self) -> EnergyBreakdown:
        lv = {a.name.decode(): a.energy_j for a in self._levels()}
        p = self._p
        return EnergyBreakdown(p.compute_energy_j, lv.get("hbm"), lv.get("l2"), lv.get("sram"), p.static_energy_j, lv)

    @property
    def diagnostics(self) -> dict:
        p = self._p
        out = {}
        for i in range(p.diag_count):
            d = p.diags[i]
            out[d.key.decode()] = d.text.decode() if d.is_text else d.number
        return out

    def to_json(self) -> str:
        """The C library's JSON for this profile (contract §3)."""
        return _emitted(L.opm_profile_to_json, self._p)

    def to_dict(self) -> dict:
        return json.loads(self.to_json())

    def __repr__(self):
        return (f"OpProfile(name={self.name!r}, model={self.model!r}, hardware={self.hardware!r}, "
                f"latency_s={self.latency_s:.6g}, flops={self.flops}, bound={self.bound.value!r})")


def model_names() -> Tuple[str, ...]:
    return tuple(L.opm_model_at(i).contents.name.decode() for i in range(L.opm_model_count()))


_PREDICTORS = {}


def _predictor(name):
    f = _PREDICTORS.get(name)
    if f is None:
        m = L.opm_model_find(name.encode())
        if not m:
            raise OpmodelError(f"model: no model named '{name}' (known: {', '.join(model_names())})", 6, "model")
        f = L.PREDICT(m.contents.predict)
        _PREDICTORS[name] = (f, m)
        return f, m
    return f


def predict(op: LocalOp, hardware, model: str = "roofline") -> OpProfile:
    """Predicts one op (a LocalOp, or text / a path for load_op) on hardware
    (a Hardware, a built-in name or a file) with a named model."""
    if not isinstance(op, LocalOp):
        op = load_op(op) if os.path.exists(str(op)) else parse_op(str(op))
    hw = hardware if isinstance(hardware, Hardware) else load_hardware(hardware)
    fn, _ = _predictor(model)
    h = op.__dict__.get("_c") or op._handle()
    p, err = L.Profile(), L.Error()
    if fn(h.ptr, hw._ptr, p, err):
        L.raise_error(err)
    return OpProfile(p, h, hw)
