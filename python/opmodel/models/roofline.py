"""The `roofline` model of libopmodel (README, Models)."""
from . import Model


class RooflineModel(Model):
    name = "roofline"


__all__ = ["RooflineModel"]
