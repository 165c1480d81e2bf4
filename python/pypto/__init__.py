"""pypto: a compiler and CPU runtime for task-graph programs on PTO accelerators."""

__version__ = "0.1.0"
