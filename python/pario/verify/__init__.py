"""``pario verify``: each actionable finding's change measured against the unchanged run.

:mod:`.plan` turns a run's findings into changes (a hints file per finding), :mod:`.measure`
runs the recorded command with each change and without, in paired interleaved rounds, and
:mod:`.verdict` (pure) says per change whether it helps, has no effect or harms.  The results
are kept in ``verify.json`` of the verify directory, which :func:`.results.annotate` reads to
show the verdicts beside the findings in ``pario report`` and ``pario diagnose``.
"""
