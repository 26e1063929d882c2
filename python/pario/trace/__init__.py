"""Event traces (``pario run --trace``): the model, the log reader, the replay (docs/trace.md)."""
