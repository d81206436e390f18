# The stand-in's version file, as PyTorch's torch/version.py (read by the tracer), whose
# __all__ names __version__ before the line that sets it.
__all__ = ['__version__', 'debug']
__version__ = '2.11.0+sim'
