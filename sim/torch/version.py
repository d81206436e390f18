# The stand-in's version file, as PyTorch's torch/version.py (read by the tracer).
__version__ = '2.11.0+sim'
