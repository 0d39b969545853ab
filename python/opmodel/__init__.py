"""opmodel: per-operation accelerator performance prediction, over the C
library libopmodel (loaded through ctypes: ``OPMODEL_LIB``, else next to this
package, else the system loader path).

    from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec
    from opmodel.hardware import load_hardware
    from opmodel.models.roofline import RooflineModel

    profile = RooflineModel().predict(op, load_hardware("h100_sxm"))

No number is computed in Python: ops, hardware, counts and predictions are
the C library's.  Errors from it raise :class:`OpmodelError` (a ValueError)
carrying its one-line message.
"""
from ._lib import OpmodelError, opm_version as _v
from ._core import (Bound, Counts, DType, EnergyBreakdown, Engine, Footprint, Hardware, LocalOp, MemoryAccess,
                    OpKind, OpProfile, Phase, TensorRole, TensorSpec, builtin_hardware, dtype_of, load_hardware,
                    load_op, model_names, parse_op, predict, short_op)
from ._batch import FIELDS, default_keys, predict_many

__version__ = _v().decode()

__all__ = ["OpmodelError", "Bound", "Counts", "DType", "EnergyBreakdown", "Engine", "Footprint", "Hardware",
           "LocalOp", "MemoryAccess", "OpKind", "OpProfile", "Phase", "TensorRole", "TensorSpec",
           "builtin_hardware", "dtype_of", "load_hardware", "load_op", "model_names", "parse_op", "predict",
           "short_op", "predict_many", "default_keys", "FIELDS", "__version__"]
