"""Hardware descriptions: ``load_hardware(name_or_path)`` returns a
:class:`Hardware` (a built-in entry such as "mi300x", or a YAML/JSON file in
the format of configs/hardware/, the original opmodel's files included)."""
from ._core import Hardware, builtin_hardware, load_hardware

__all__ = ["Hardware", "load_hardware", "builtin_hardware"]
