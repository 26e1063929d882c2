"""pario: measure, explain, tune and accelerate the parallel I/O of MPI applications."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
