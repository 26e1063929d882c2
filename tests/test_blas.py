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


#: NumPy's huge-page advice after load_numpy (NumPy's documented switch, numpy/_core/multiarray)
#: and the variable as the process sees it then
HUGE = ("import os, sys; from pario.blas import load_numpy; load_numpy(one_shot=sys.argv[1] == '1'); "
        "from numpy._core import multiarray; "
        "print(multiarray._get_madvise_hugepage(), os.environ.get('NUMPY_MADVISE_HUGEPAGE'))")


def _huge(one_shot: bool, extra: dict[str, str]) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"} | extra
    return subprocess.run([sys.executable, "-c", HUGE, "1" if one_shot else "0"], env=env,
                          capture_output=True, text=True, check=True, timeout=60).stdout.split()


def test_one_shot_commands_load_numpy_without_huge_page_advice() -> None:
    assert _huge(True, {}) == ["False", "None"]
    assert _huge(False, {}) == ["True", "None"]  # NumPy's default on Linux >= 4.6
    assert _huge(True, {"NUMPY_MADVISE_HUGEPAGE": "1"}) == ["True", "1"]
