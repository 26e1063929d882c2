"""The C runtime's layers and counters (include/pario-log-format.h) against the Python code that
names them, so that the two cannot drift apart.

The header is expanded by the C preprocessor itself (``cc -E``), so the lists compared are the
ones the runtime is compiled from: the ``PARIO_LAYERS`` manifest (the layers and their numbers),
``PARIO_LIBRARIES``, each layer's counter and fcounter lists, and ``PARIO_RANK_FIELDS``.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from pario import collective, model
from pario.trace import format as trace_format

ROOT = Path(__file__).resolve().parents[1]

#: One line of output per key line: the key, then the expanded tokens ("@" opens an entry).
SOURCE = """\
#include "pario-log-format.h"
#define X(counter, doc) counter
#define L(ID, name) @ ID name
#define LIB(name) name
#define COUNTERS(ID, name) @ name PARIO_##ID##_COUNTERS
#define FCOUNTERS(ID, name) @ name PARIO_##ID##_FCOUNTERS
manifest_layers PARIO_LAYERS(L)
manifest_libraries PARIO_LIBRARIES(LIB)
manifest_counters PARIO_LAYERS(COUNTERS)
manifest_fcounters PARIO_LAYERS(FCOUNTERS)
manifest_rank_fields PARIO_RANK_FIELDS
"""


@dataclass(frozen=True)
class Manifest:
    layers: tuple[tuple[str, str], ...]  # (ID, name), in the order of their numbers
    libraries: tuple[str, ...]
    counters: dict[str, list[str]]       # name -> counter names
    fcounters: dict[str, list[str]]
    rank_fields: tuple[str, ...]


def _entries(tokens: list[str]) -> list[list[str]]:
    """The "@ a b c @ d e" groups of a line, without the "@"."""
    groups: list[list[str]] = []
    for tok in tokens:
        if tok == "@":
            groups.append([])
        else:
            groups[-1].append(tok)
    return groups


@functools.cache
def manifest() -> Manifest:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to expand include/pario-log-format.h")
    out = subprocess.run([cc, "-E", "-P", "-I", str(ROOT / "include"), "-x", "c", "-"], input=SOURCE,
                         capture_output=True, text=True, check=True).stdout
    lines = {}
    for line in out.splitlines():
        key, _, rest = line.partition(" ")
        if key.startswith("manifest_"):
            lines[key] = rest.split()
    return Manifest(
        layers=tuple((e[0], e[1]) for e in _entries(lines["manifest_layers"])),
        libraries=tuple(lines["manifest_libraries"]),
        counters={e[0]: e[1:] for e in _entries(lines["manifest_counters"])},
        fcounters={e[0]: e[1:] for e in _entries(lines["manifest_fcounters"])},
        rank_fields=tuple(lines["manifest_rank_fields"]),
    )


def columns(layer: str) -> list[str]:
    """The model columns of a runtime layer's counters and fcounters."""
    m = manifest()
    return [model.counter_column(n) for n in (*m.counters[layer], *m.fcounters[layer])]


def test_manifest_expands_to_the_runtime_layers():
    m = manifest()
    assert m.layers == (("POSIX", "posix"), ("STDIO", "stdio"), ("MPIIO", "mpiio"), ("H5F", "h5f"),
                        ("H5D", "h5d"), ("PNETCDF_FILE", "pnetcdf_file"), ("PNETCDF_VAR", "pnetcdf_var"))
    assert m.counters["posix"][:3] == ["POSIX_OPENS", "POSIX_READS", "POSIX_WRITES"]
    assert m.fcounters["mpiio"][-1] == "MPIIO_F_VARIANCE_RANK_BYTES"
    assert m.rank_fields[0] == "wall" and m.rank_fields[-1] == "finalized"


def test_trace_layer_numbers_are_the_manifest_order():
    assert trace_format.LAYERS == tuple(name for _, name in manifest().layers)
    assert len(manifest().layers) <= (trace_format.LAYER_MASK >> trace_format.LAYER_SHIFT) + 1


def test_every_runtime_layer_is_a_model_layer_with_its_prefix():
    table = {x.name: x for x in model.LAYER_TABLE}
    for layer_id, name in manifest().layers:
        assert name in table, f"{name} is in PARIO_LAYERS but not in model.LAYER_TABLE"
        assert table[name].prefix == layer_id + "_"
        assert table[name].module == layer_id.replace("MPIIO", "MPI-IO")


def test_libraries_are_the_model_libraries():
    m = manifest()
    assert m.libraries == tuple(model.LIBRARIES)
    library_of = {x.name: x.library for x in model.LAYER_TABLE}
    assert {library_of[name] for _, name in m.layers} - {""} == set(m.libraries)


def test_counter_names_carry_their_layer_prefix_and_map_to_distinct_columns():
    m = manifest()
    for layer_id, name in m.layers:
        for counter in m.counters[name]:
            assert counter.startswith(layer_id + "_") and not counter.startswith(layer_id + "_F_"), counter
        for counter in m.fcounters[name]:
            assert counter.startswith(layer_id + "_F_"), counter
        cols = columns(name)
        assert len(cols) == len(set(cols)), f"{name}: two counters map to one model column"


def test_size_histograms_are_where_the_model_looks_for_them():
    for _, name in manifest().layers:
        cols = set(columns(name))
        if any(c.startswith("size_") for c in cols):
            for direction in ("read", "write"):
                assert set(model.size_columns(name, direction)) <= cols, (name, direction)


def test_engine_counters_the_report_reads_exist():
    cols = set(columns("mpiio"))
    named = [c for c, _ in collective.ALGORITHM_CALLS] + [c for c, _ in collective.FALLBACK_REASONS]
    named += [collective.variant_column(v, what) for v in collective.VARIANTS for what in ("calls", "time")]
    named += ["engine_algorithm", "engine_shuffle", "engine_auto_kept_one", "engine_auto_kept_many"]
    assert sorted(set(named) - cols) == []
    # and every variant the runtime counts is one the Python side knows
    runtime = {c for c in cols if c.startswith("engine_variant_calls_")}
    assert runtime == {collective.variant_column(v, "calls") for v in collective.VARIANTS}


def test_rank_time_classes_are_the_model_time_columns():
    m = manifest()
    io = {f for f in m.rank_fields if f.rsplit("_", 1)[-1] in model.IO_KINDS}
    # the runtime's storage layers and libraries; DFS and DAOS only come from Darshan logs
    recorded = [t for t in model.TIME_LAYERS if t in {name for _, name in m.layers} | set(m.libraries)]
    assert recorded == ["posix", "stdio", "mpiio", "hdf5", "pnetcdf"]
    assert io == {f"{t}_{kind}" for t in recorded for kind in model.IO_KINDS}
    assert io <= set(model.IO_TIME_COLUMNS)
    assert set(model.MPI_TIME_COLUMNS) <= set(m.rank_fields)
