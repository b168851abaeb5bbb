"""precheck: catch mixed-precision misconfigurations before they burn GPU hours."""

__version__ = "0.1.0"
