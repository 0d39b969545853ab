"""Prediction models: each class names one model of the C library's registry
(``opmodel models``); ``predict(op, hardware)`` returns an OpProfile."""
from .._core import LocalOp, OpProfile, model_names, predict


class Model:
    """A model of the C registry by name."""
    name = "roofline"

    def __init__(self, name=None):
        if name is not None:
            self.name = name

    def predict(self, op: LocalOp, hardware) -> OpProfile:
        return predict(op, hardware, self.name)

    def __repr__(self):
        return f"{type(self).__name__}()"


def get(name: str) -> Model:
    """The model called ``name``."""
    predict_check = model_names()
    if name not in predict_check:
        from .._lib import OpmodelError
        raise OpmodelError(f"model: no model named '{name}' (known: {', '.join(predict_check)})", 6, "model")
    return Model(name)


__all__ = ["Model", "get", "model_names"]
