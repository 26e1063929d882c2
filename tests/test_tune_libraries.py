"""`pario tune` over HDF5 and PnetCDF properties: the dimensions a program
linking libhdf5 / libpnetcdf gets, how a configuration sets them (PARIO_HINTS, the alignment's
tied threshold, PNETCDF_HINTS and the HDF5 calls offered without pario), and real random studies
of ``vpic --hdf5`` and ``s3d --pnetcdf`` whose trial logs show the properties in effect, as
the library reports them, equal to each trial's configuration."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from kernel_helpers import kernel_exe
from pario.errors import ParioError
from pario.log import read_log
from pario.tune import config as tune_config
from pario.tune import output
from pario.tune.objective import measure
from pario.tune.results import Sampled, Summary, TrialRow, summarise
from pario.tune.space import Detected, apply_space_file, build_space
from pario.tune.study import space_from_json
from record_helpers import one_record
from test_tune import hints_file_entries, sqlite_url, trials_of, tune

KIB, MIB = 1 << 10, 1 << 20
HDF5_LIB, PNETCDF_LIB = "libhdf5_openmpi.so.103", "libpnetcdf.so.0d"
BASE = Detected(mpi="mpich", fs_type="ext4", directory="/data", ranks=4, nodes=1)
HDF5_DIMS = ["hdf5.alignment", "hdf5.meta_block_size", "hdf5.sieve_buf_size", "hdf5.coll_metadata_ops",
             "hdf5.coll_metadata_write"]
NC_DIMS = ["nc_var_align_size", "nc_header_align_size", "nc_record_align_size"]
#: HDF5 1.10's access-list defaults as the H5F record shows them: alignment threshold, alignment,
#: metadata block size, sieve buffer size, collective metadata reads, writes
HDF5_DEFAULTS = (1, 1, 2048, 65536, 0, 0)
H5F_PROPERTIES = ("align_threshold", "alignment", "meta_block_size", "sieve_buf_size", "coll_metadata_reads",
                  "coll_metadata_writes")
#: PnetCDF 1.12's alignments in effect in a file it creates: variables, header, record variables
PNETCDF_DEFAULTS = (4, 512, 4)
VPIC = ["--hdf5", "--particles", "4k"]
S3D = ["--pnetcdf", "--nx", "16", "--ny", "16", "--nz", "8"]


def mpirun(name: str, args: list[str], np_: int = 2) -> list[str]:
    return ["mpirun", "--oversubscribe", "-np", str(np_), str(kernel_exe(name)), *args]


def choices(space, name: str) -> tuple[str, ...]:
    return space.get(name).choices


# ---- the space ----------------------------------------------------------------------------

def test_library_dimensions_follow_the_linked_libraries():
    assert not any(n.startswith(("hdf5.", "nc_")) for n in build_space(BASE).names())
    both = build_space(replace(BASE, hdf5=HDF5_LIB, pnetcdf=PNETCDF_LIB))
    names = both.names()
    assert names[-8:] == HDF5_DIMS + NC_DIMS and "hdf5.transfer" not in names
    assert {both.get(n).kind for n in HDF5_DIMS} == {"hdf5"}
    assert {both.get(n).kind for n in NC_DIMS} == {"pnetcdf"}
    assert choices(both, "hdf5.alignment") == ("default", "65536", "1048576", "4194304")
    assert choices(both, "hdf5.meta_block_size") == ("default", "65536", "1048576")
    assert choices(both, "hdf5.sieve_buf_size") == ("default", "262144", "4194304")
    assert choices(both, "hdf5.coll_metadata_ops") == ("default", "true")
    assert choices(both, "hdf5.coll_metadata_write") == ("default", "true")
    assert choices(both, "nc_var_align_size") == ("default", "65536", "1048576", "4194304")
    assert choices(both, "nc_header_align_size") == choices(both, "nc_record_align_size") == \
        ("default", "65536", "1048576")
    assert all(both.get(n).help for n in HDF5_DIMS + NC_DIMS)
    assert any("hdf5.transfer left out" in n and "deadlock" in n for n in both.notes)
    # every library dimension multiplies the space: 4 x 3 x 3 x 2 x 2 for HDF5, 4 x 3 x 3 for PnetCDF
    assert both.size() == build_space(BASE).size() * (4 * 3 * 3 * 2 * 2) * (4 * 3 * 3)
    # reads: no layout properties (they act when a file is created), PnetCDF's alignments none at all
    reads = build_space(replace(BASE, hdf5=HDF5_LIB, pnetcdf=PNETCDF_LIB), "read-bw")
    assert [n for n in reads.names() if n.startswith(("hdf5.", "nc_"))] == ["hdf5.sieve_buf_size",
                                                                            "hdf5.coll_metadata_ops"]
    assert any("PnetCDF's alignments left out" in n for n in reads.notes)


def test_lustre_stripe_size_is_an_extra_alignment():
    lustre = replace(BASE, fs_type="lustre", has_lfs=True, hdf5=HDF5_LIB, pnetcdf=PNETCDF_LIB,
                     stripe_size=2 * MIB)
    space = build_space(lustre)
    expected = ("default", "65536", "1048576", "2097152", "4194304")
    assert choices(space, "hdf5.alignment") == choices(space, "nc_var_align_size") == expected
    # a stripe size already among the choices is not repeated
    assert choices(build_space(replace(lustre, stripe_size=MIB)), "hdf5.alignment") == \
        ("default", "65536", "1048576", "4194304")


def test_space_file_adds_and_removes_library_dimensions(tmp_path: Path):
    spec = tmp_path / "space.toml"
    spec.write_text('only = ["cb_nodes", "hdf5.alignment", "hdf5.transfer", "hdf5.alignment_threshold", '
                    '"nc_var_align_size"]\n'
                    '[dimensions."hdf5.transfer"]\nkind = "hdf5"\nvalues = ["collective"]\n'
                    '[dimensions."hdf5.alignment_threshold"]\nkind = "hint"\nvalues = [0, 1048576]\n'
                    '[dimensions.nc_var_align_size]\nkind = "pnetcdf"\nvalues = [8192]\n'
                    '[dimensions.nc_header_align_size]\ndrop = true\n')
    space = apply_space_file(build_space(replace(BASE, hdf5=HDF5_LIB)), spec)
    assert [(d.name, d.kind, d.choices) for d in space.dimensions] == [
        ("cb_nodes", "hint", ("default", "1", "2", "3", "4")),
        ("hdf5.alignment", "hdf5", ("default", "65536", "1048576", "4194304")),
        ("hdf5.transfer", "hdf5", ("default", "collective")),
        ("hdf5.alignment_threshold", "hdf5", ("default", "0", "1048576")),
        ("nc_var_align_size", "pnetcdf", ("default", "8192")),  # added: the program links no PnetCDF
    ]
    # a threshold of its own replaces the one the alignment ties
    a = tune_config.applied(space, {"hdf5.alignment": "4194304", "hdf5.alignment_threshold": "0"})
    assert a.hints == {"hdf5.alignment": "4194304", "hdf5.alignment_threshold": "0"}
    tied = tune_config.applied(space, {"hdf5.alignment": "4194304", "hdf5.transfer": "collective"})
    assert tied.hints == {"hdf5.alignment": "4194304", "hdf5.transfer": "collective",
                          "hdf5.alignment_threshold": "65536"}
    bad = tmp_path / "bad.toml"
    bad.write_text('[dimensions.romio_no_indep_rw]\nkind = "hdf5"\nvalues = ["true"]\n')
    with pytest.raises(ParioError, match=r'kind = "hdf5" needs a key that starts with hdf5\.$'):
        apply_space_file(space, bad)


# ---- applying a configuration and handing it back ------------------------------------------

def test_configuration_to_hints_files_and_lines(tmp_path: Path):
    space = build_space(replace(BASE, hdf5=HDF5_LIB, pnetcdf=PNETCDF_LIB))
    best = space.normalise({"cb_nodes": "2", "hdf5.alignment": "1048576", "hdf5.sieve_buf_size": "262144",
                            "hdf5.coll_metadata_write": "true", "nc_var_align_size": "4194304",
                            "nc_header_align_size": "65536"})
    a = tune_config.applied(space, best)
    # the alignment brings its threshold, min(A, 64 KiB)
    assert a.hints == {"cb_nodes": "2", "hdf5.alignment": "1048576", "hdf5.sieve_buf_size": "262144",
                       "hdf5.coll_metadata_write": "true", "nc_var_align_size": "4194304",
                       "nc_header_align_size": "65536", "hdf5.alignment_threshold": "65536"}
    assert tune_config.hints_text({"hdf5.alignment": "65536", "nc_var_align_size": "65536"}, "*.h5") == \
        "# written by pario tune\n[*.h5]\nhdf5.alignment 65536\nnc_var_align_size 65536\n"
    assert tune_config.romio_hints_text(a.hints) == "cb_nodes 2\n"
    assert tune_config.pnetcdf_hints_value(a.hints) == "nc_var_align_size=4194304;nc_header_align_size=65536"
    assert tune_config.hdf5_code_lines({**a.hints, "hdf5.transfer": "collective"}) == [
        "H5Pset_alignment(fapl, 65536, 1048576);",
        "H5Pset_sieve_buf_size(fapl, 262144);",
        "H5Pset_coll_metadata_write(fapl, 1);",
        "H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);   /* the transfer list of H5Dread/H5Dwrite */",
    ]
    summary = Summary("s", "write-bw", ["mpiexec", "-n", "4", "./app"], "random",
                      [TrialRow(1, "search", "complete", best, 3.0, [3.0], "", [])],
                      Sampled({k: "default" for k in best}, [1.0, 1.1, 0.9]), Sampled(best, [3.0, 3.1, 2.9]),
                      3.0, 0.05, "better", 1, 0, [])
    written = output.best_files(summary, space, tmp_path, None)
    assert hints_file_entries(written["hints"]) == a.hints
    assert written["romio_hints"].read_text() == "cb_nodes 2\n"
    text = output.lines(summary, space, written, ["mpiexec", "-n", "4", "./app"])
    at = text.index("or, without pario in the job (what the MPI library and PnetCDF read themselves):")
    assert text[at + 1:at + 3] == ["  # ROMIO (MPICH, Open MPI's romio) applies it to every file:",
                                   f"  export ROMIO_HINTS={written['romio_hints']}"]
    pnetcdf = "'nc_var_align_size=4194304;nc_header_align_size=65536'"
    assert text[at + 3:at + 5] == ["  # PnetCDF applies it to every file it creates or opens:",
                                   f"  export PNETCDF_HINTS={pnetcdf}"]
    assert text[at + 5].startswith("HDF5 reads its properties from no environment variable")
    at = next(i for i, line in enumerate(text) if line.startswith("  H5Pset_alignment"))
    assert text[at:] == ["  H5Pset_alignment(fapl, 65536, 1048576);",
                             "  H5Pset_sieve_buf_size(fapl, 262144);",
                             "  H5Pset_coll_metadata_write(fapl, 1);"]


# ---- real runs ----------------------------------------------------------------------------

def show_space(pario_cmd, env, cwd: Path, command: list[str]) -> list[str]:
    proc = tune(pario_cmd, env, cwd, "--show-space", "--", *command)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


@pytest.mark.slow
def test_show_space_finds_the_libraries_in_the_program(tmp_path: Path, pario_cmd, mpi_env):
    lines = show_space(pario_cmd, mpi_env, tmp_path, mpirun("vpic", VPIC))
    library = next(ln for ln in lines if ln.startswith("I/O libraries: "))
    assert library.startswith("I/O libraries: HDF5 (libhdf5") and "PnetCDF" not in library
    assert "hdf5.alignment [hdf5]: default, 64K, 1M, 4M" in lines
    assert "hdf5.meta_block_size [hdf5]: default, 64K, 1M" in lines
    assert "hdf5.sieve_buf_size [hdf5]: default, 256K, 4M" in lines
    assert "hdf5.coll_metadata_ops [hdf5]: default, true" in lines
    assert "hdf5.coll_metadata_write [hdf5]: default, true" in lines
    assert not any(ln.startswith(("hdf5.transfer ", "nc_")) for ln in lines)
    lines = show_space(pario_cmd, mpi_env, tmp_path, mpirun("s3d", S3D))
    library = next(ln for ln in lines if ln.startswith("I/O libraries: "))
    assert library.startswith("I/O libraries: PnetCDF (libpnetcdf") and "HDF5" not in library
    assert "nc_var_align_size [pnetcdf]: default, 64K, 1M, 4M" in lines
    assert not any(ln.startswith("hdf5.") for ln in lines)
    lines = show_space(pario_cmd, mpi_env, tmp_path, mpirun("block", ["--segments", "4"]))
    assert "I/O libraries: none (the program links neither libhdf5 nor libpnetcdf)" in lines
    assert not any(ln.startswith(("hdf5.", "nc_")) for ln in lines)


def study(pario_cmd, env, cwd: Path, name: str, only: list[str], seed: int,
          command: list[str]) -> tuple[list, dict]:
    """A random study of budget 3 (no verification) over ``only``: its trials that ran and its JSON."""
    spec = cwd / f"{name}.toml"
    spec.write_text(f"only = {json.dumps(only)}\n")
    proc = tune(pario_cmd, env, cwd, "--budget", "3", "--strategy", "random", "--seed", str(seed),
                "--no-verify", "--space", str(spec), "--study", name, "--json", str(cwd / f"{name}.json"),
                "--", *command)
    assert proc.returncode == 0, proc.stderr
    trials = [t for t in trials_of(sqlite_url(cwd), name)
              if t.state == TrialState.COMPLETE and "runs" in t.user_attrs]
    return trials, json.loads((cwd / f"{name}.json").read_text())


def expected_hdf5(config: dict[str, str]) -> tuple[int, ...]:
    """The H5F record's properties a configuration puts in effect (HDF5's defaults where it says default)."""
    align = config["hdf5.alignment"]
    aligned = (1, 1) if align == "default" else (min(int(align), 64 * KIB), int(align))
    meta, sieve = config["hdf5.meta_block_size"], config["hdf5.sieve_buf_size"]
    return (*aligned, HDF5_DEFAULTS[2] if meta == "default" else int(meta),
            HDF5_DEFAULTS[3] if sieve == "default" else int(sieve),
            int(config["hdf5.coll_metadata_ops"] == "true"),
            int(config["hdf5.coll_metadata_write"] == "true"))


@pytest.mark.slow
def test_hdf5_study_applies_the_properties(tmp_path: Path, pario_cmd, mpi_env):
    h5 = tmp_path / "vpic.h5"
    trials, data = study(pario_cmd, mpi_env, tmp_path, "h5", ["cb_nodes", *HDF5_DIMS], 3,
                         mpirun("vpic", [*VPIC, "--path", str(h5)]))
    configs = [t.user_attrs["config"] for t in trials]
    assert any(c["hdf5.alignment"] != "default" for c in configs), configs  # seed 3 sets some
    for t, config in zip(trials, configs, strict=True):
        for run in t.user_attrs["runs"]:
            f = one_record(read_log(Path(run["log"])).layer("h5f"), str(h5))
            got = tuple(int(f[c]) for c in H5F_PROPERTIES)
            assert got == expected_hdf5(config), (t.number, config)
    # the JSON's configurations name the HDF5 dimensions
    assert all(set(HDF5_DIMS) <= set(row["config"]) for row in data["trials"])
    # 3 single runs declare no winner, so no best.hints; the hints file a win would get carries the
    # best's properties, and pario run --hints applies them
    best = data["best"]["config"]
    assert data["verdict"] != "better" and not (tmp_path / ".pario" / "tune" / "h5" / "best.hints").exists()
    stored = optuna.load_study(study_name="h5", storage=sqlite_url(tmp_path))
    won = replace(summarise(stored), verdict="better")
    space = space_from_json(stored.user_attrs["pario_space"])
    written = output.best_files(won, space, tmp_path / "won", None)
    hints = hints_file_entries(written["hints"])
    assert {k: v for k, v in hints.items() if k != "hdf5.alignment_threshold"} == \
        {k: v for k, v in best.items() if v != "default"}
    log = tmp_path / "again.pario"
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--hints", str(written["hints"]), "--",
                           *mpirun("vpic", [*VPIC, "--path", str(h5)])],
                          env=mpi_env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    profile = read_log(log)
    f = one_record(profile.layer("h5f"), str(h5))
    assert tuple(int(f[c]) for c in H5F_PROPERTIES) == expected_hdf5(best)
    # the objective is measured at the library: the data handed to H5Dwrite (2 ranks x 4096
    # particles x 8 variables x 4 B, not HDF5's metadata beneath) over the slowest rank's time
    # in HDF5's calls on the file
    m = measure(profile, "write-bw", "vpic.h5")
    assert m.bytes == 2 * 4096 * 8 * 4 and m.files == (str(h5),)
    datasets = profile.layer("h5d")
    slowest = datasets["slowest_rank_time"].astype(float)
    assert len(datasets) == 8 and slowest.max() <= m.seconds <= slowest.sum() + float(f["meta_time"]) + 1e-9


@pytest.mark.slow
def test_pnetcdf_study_applies_the_hints_and_pnetcdf_hints_works_without_pario(tmp_path: Path, pario_cmd,
                                                                               mpi_env):
    nc = tmp_path / "s3d.nc"
    trials, data = study(pario_cmd, mpi_env, tmp_path, "nc", NC_DIMS, 5,
                         mpirun("s3d", [*S3D, "--path", str(nc)]))
    configs = [t.user_attrs["config"] for t in trials]
    assert any(c["nc_var_align_size"] != "default" for c in configs), configs
    for t, config in zip(trials, configs, strict=True):
        for run in t.user_attrs["runs"]:
            f = one_record(read_log(Path(run["log"])).layer("pnetcdf_file"), str(nc))
            got = tuple(int(f[c]) for c in ("var_align", "header_align", "record_align"))
            expected = tuple(d if config[n] == "default" else int(config[n])
                             for n, d in zip(NC_DIMS, PNETCDF_DEFAULTS, strict=True))
            assert got == expected, (t.number, config)
    assert all(set(NC_DIMS) <= set(row["config"]) for row in data["trials"])
    # what the output offers without pario: PnetCDF reads PNETCDF_HINTS itself
    space = build_space(replace(BASE, pnetcdf=PNETCDF_LIB))
    a = tune_config.applied(space, {"nc_var_align_size": "1048576", "nc_header_align_size": "65536"})
    line = next(ln for ln in tune_config.without_pario_lines(a, tmp_path / "unused") if "PNETCDF_HINTS" in ln)
    value = line.split("=", 1)[1].split()[0].strip("'")
    proc = subprocess.run(mpirun("s3d", [*S3D, "--path", str(tmp_path / "plain.nc")]),
                          env={**mpi_env, "PNETCDF_HINTS": value}, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    hints = result["hints"]
    assert (hints["nc_var_align_size"], hints["nc_header_align_size"]) == ("1048576", "65536")


@pytest.mark.slow
def test_a_bad_library_value_fails_its_trial_not_the_study(tmp_path: Path, pario_cmd, mpi_env):
    """hdf5.alignment must be positive: pario run refuses 0 before launch, in one line."""
    spec = tmp_path / "bad.toml"
    spec.write_text('only = ["hdf5.alignment"]\n[dimensions."hdf5.alignment"]\nvalues = [0]\n')
    proc = tune(pario_cmd, mpi_env, tmp_path, "--budget", "2", "--strategy", "grid", "--no-verify",
                "--space", str(spec), "--study", "bad", "--",
                *mpirun("vpic", [*VPIC, "--path", str(tmp_path / "b.h5")]))
    trials = trials_of(sqlite_url(tmp_path), "bad")
    failed = [t for t in trials if t.state == TrialState.FAIL]
    assert len(failed) == 1 and failed[0].user_attrs["config"] == {"hdf5.alignment": "0"}, proc.stderr
    assert "hdf5.alignment must be a positive integer" in json.dumps(failed[0].user_attrs["runs"])
    assert proc.returncode == 0 and "Traceback" not in proc.stderr  # the default ran: a result
