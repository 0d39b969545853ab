"""Whole workloads (include/opmodel/workload.h): an op sequence predicted op
by op by the C library and summed, eager or graph, with idle power in the
host gaps.

    from opmodel import load_hardware, short_op
    from opmodel.workload import Workload

    w = Workload.from_file("step.jsonl")          # JSONL, EnergAIzer kernel list or trace
    w.add_op(short_op("gemm", m=4096, n=4096, k=4096), count=2)
    r = w.evaluate(load_hardware("a100_40gb_pcie").with_clock(900e6))
    print(r.latency_s, r.energy_j, r.by_kind[0].name)

Every number comes from the C library.
"""
import ctypes
from dataclasses import dataclass
from typing import Optional, Tuple

from . import _lib as L
from ._core import Hardware, LocalOp

__all__ = ["Workload", "WorkloadResult", "WorkloadEntry", "hosts"]

_P, _E, _s, _d, _sz, _i = L._P, L._E, L._s, L._d, L._sz, L._i
_u64 = ctypes.c_uint64


class _Options(ctypes.Structure):
    _fields_ = [("model", ctypes.c_char_p), ("mode", ctypes.c_int), ("launch_interval_s", ctypes.c_double)]


class _Totals(ctypes.Structure):
    _fields_ = [("kernels", _u64)] + [(k, ctypes.c_double) for k in (
        "latency_s", "device_time_s", "idle_s", "energy_j", "op_energy_j", "idle_energy_j", "idle_power_w",
        "average_power_w", "launch_interval_s", "flops", "bytes")]


class _Entry(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int), ("count", _u64)] + [
        (k, ctypes.c_double) for k in ("latency_s", "device_time_s", "energy_j", "flops", "bytes")]


class _Host(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("launch_interval_s", ctypes.c_double), ("source", ctypes.c_char_p)]


_new = L._fn("opm_workload_new", _P, _E)
_free = L._fn("opm_workload_free", None, _P)
_add_op = L._fn("opm_workload_add_op", _i, _P, _P, _s, _u64, _E)
_add_file = L._fn("opm_workload_add_file", _i, _P, _s, _E)
_add_text = L._fn("opm_workload_add_text", _i, _P, _s, _sz, _s, _E)
_kernels = L._fn("opm_workload_kernel_count", _u64, _P)
_nops = L._fn("opm_workload_op_count", _sz, _P)
_skipped = L._fn("opm_workload_skipped", _u64, _P)
_implied = L._fn("opm_workload_implied", _u64, _P)
_set_implied = L._fn("opm_workload_set_implied_kernels", None, _P, _i)
_host_count = L._fn("opm_workload_host_count", _sz)
_host_at = L._fn("opm_workload_host_at", ctypes.POINTER(_Host), _sz)
_evaluate = L._fn("opm_workload_evaluate", _P, _P, _P, ctypes.POINTER(_Options), _E)
_rfree = L._fn("opm_workload_result_free", None, _P)
_totals = L._fn("opm_workload_result_totals", ctypes.POINTER(_Totals), _P)
_nkind = L._fn("opm_workload_result_kind_count", _sz, _P)
_kind = L._fn("opm_workload_result_kind", ctypes.POINTER(_Entry), _P, _sz)
_nop = L._fn("opm_workload_result_op_count", _sz, _P)
_op = L._fn("opm_workload_result_op", ctypes.POINTER(_Entry), _P, _sz)
_kind_name = L.opm_kind_name


def hosts():
    """The measured hosts: (name, launch_interval_s, source), the default first."""
    out = []
    for i in range(_host_count()):
        h = _host_at(i).contents
        out.append((h.name.decode(), h.launch_interval_s, h.source.decode()))
    return out


@dataclass(frozen=True)
class WorkloadEntry:
    name: str
    kind: str
    count: int
    latency_s: float
    device_time_s: float
    energy_j: float
    flops: float
    bytes: float


@dataclass(frozen=True)
class WorkloadResult:
    kernels: int
    latency_s: float
    device_time_s: float
    idle_s: float
    energy_j: float
    op_energy_j: float
    idle_energy_j: float
    idle_power_w: float
    average_power_w: float
    launch_interval_s: float
    flops: float
    bytes: float
    by_kind: Tuple[WorkloadEntry, ...]
    by_op: Tuple[WorkloadEntry, ...]


def _entry(p):
    e = p.contents
    return WorkloadEntry(e.name.decode(errors="replace"), _kind_name(e.kind).decode(), e.count, e.latency_s,
                         e.device_time_s, e.energy_j, e.flops, e.bytes)


class Workload:
    """An ordered op sequence owned by the C library."""
    __slots__ = ("_ptr",)

    def __init__(self):
        err = L.Error()
        self._ptr = _new(ctypes.byref(err))
        if not self._ptr:
            L.raise_error(err)

    def __del__(self, free=_free):
        if getattr(self, "_ptr", None):
            free(self._ptr)
            self._ptr = None

    @classmethod
    def from_file(cls, path) -> "Workload":
        w = cls()
        w.add_file(path)
        return w

    def add_file(self, path) -> "Workload":
        err = L.Error()
        L.check(_add_file(self._ptr, str(path).encode(), ctypes.byref(err)), err)
        return self

    def add_text(self, text: str, source: str = "<string>") -> "Workload":
        b = text.encode()
        err = L.Error()
        L.check(_add_text(self._ptr, b, len(b), source.encode(), ctypes.byref(err)), err)
        return self

    def add_op(self, op: LocalOp, name: Optional[str] = None, count: int = 1) -> "Workload":
        err = L.Error()
        L.check(_add_op(self._ptr, op._handle().ptr, name.encode() if name else None, count, ctypes.byref(err)),
                err)
        return self

    @property
    def kernels(self) -> int:
        return _kernels(self._ptr)

    @property
    def op_count(self) -> int:
        return _nops(self._ptr)

    @property
    def skipped(self) -> int:
        return _skipped(self._ptr)

    @property
    def implied(self) -> int:
        """Kernels a named kernel list's architecture added (batch norms, pools, ...; docs/workload.md)."""
        return _implied(self._ptr)

    def set_implied_kernels(self, on: bool) -> "Workload":
        """False (before adding files): read kernel lists as they are."""
        _set_implied(self._ptr, 1 if on else 0)
        return self

    def evaluate(self, hardware: Hardware, mode: str = "eager", launch_interval_s: Optional[float] = None,
                 model: Optional[str] = None) -> WorkloadResult:
        if mode not in ("eager", "graph"):
            raise L.OpmodelError(f"mode: expected eager or graph, got '{mode}'")
        o = _Options(model.encode() if model else None, 0 if mode == "eager" else 1,
                     -1.0 if launch_interval_s is None else float(launch_interval_s))
        err = L.Error()
        r = _evaluate(self._ptr, hardware._ptr, ctypes.byref(o), ctypes.byref(err))
        if not r:
            L.raise_error(err)
        try:
            t = _totals(r).contents
            return WorkloadResult(t.kernels, t.latency_s, t.device_time_s, t.idle_s, t.energy_j, t.op_energy_j,
                                  t.idle_energy_j, t.idle_power_w, t.average_power_w, t.launch_interval_s, t.flops,
                                  t.bytes, tuple(_entry(_kind(r, i)) for i in range(_nkind(r))),
                                  tuple(_entry(_op(r, i)) for i in range(_nop(r))))
        finally:
            _rfree(r)
