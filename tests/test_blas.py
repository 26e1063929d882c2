"""NumPy's BLAS on one thread in pario's commands (python/pario/blas.py), the environment kept."""

from __future__ import annotations

import os
import subprocess
import sys

#: threads of a fresh interpreter after load_numpy, and the variable as the process sees it then
CODE = ("import os; from pario.blas import load_numpy; load_numpy(); "
        "print(len(os.listdir('/proc/self/task')), os.environ.get('OPENBLAS_NUM_THREADS'))")


def _run(extra: dict[str, str]) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"} | extra
    return subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True,
                          check=True, timeout=60).stdout.split()


def test_numpy_loads_with_one_blas_thread_and_the_environment_back() -> None:
    assert _run({}) == ["1", "None"]


def test_a_value_the_user_set_is_kept() -> None:
    # OpenBLAS starts as many threads as asked, up to the cores, the calling one among them
    assert _run({"OPENBLAS_NUM_THREADS": "2"}) == [str(min(2, os.cpu_count() or 1)), "2"]
