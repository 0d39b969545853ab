"""The `extended_roofline` model of libopmodel (README, Models)."""
from . import Model


class ExtendedRooflineModel(Model):
    name = "extended_roofline"


__all__ = ["ExtendedRooflineModel"]
