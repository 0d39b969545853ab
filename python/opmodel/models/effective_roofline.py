"""The `effective_roofline` model of libopmodel (README, Models)."""
from . import Model


class EffectiveRooflineModel(Model):
    name = "effective_roofline"


__all__ = ["EffectiveRooflineModel"]
