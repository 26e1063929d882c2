"""pario tune's file state: the files earlier runs created are removed before each run, those that
were there before the study never (python/pario/tune/file_state.py)."""

from __future__ import annotations

from pathlib import Path

from pario.tune import file_state


def test_created_files_are_removed_and_older_ones_kept(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.dat").write_text("before the study")
    study = tmp_path / ".pario" / "tune" / "s"
    command = ["mpirun", "-np", "2", "./app", "-o", str(out / "new.dat"), "--log=rel/x.log"]
    state = file_state.before_first_run(study, command, tmp_path)
    assert set(state.listed) == {str(tmp_path.resolve()), str(out.resolve())}
    # a run writes both files, and one in the study's own directory
    (out / "new.dat").write_text("run 1")
    study_file = study / "trial-0001" / "run-1" / "x.dat"
    written = [str(out / "new.dat"), str(out / "old.dat"), str(study_file), "/elsewhere/y.dat"]
    assert file_state.note_written(state, written, study)
    assert state.created == {str(out / "new.dat")}
    assert not file_state.note_written(state, written, study)  # nothing new the second time
    # a resumed study reads the state back, and the next run starts without the new file
    file_state.save(state, study)
    again = file_state.before_first_run(study, command, tmp_path)
    assert again == state
    assert file_state.clear(again) == [str(out / "new.dat")]
    assert not (out / "new.dat").exists() and (out / "old.dat").read_text() == "before the study"
    assert file_state.clear(again) == []  # already gone: nothing to do


def test_only_paths_with_a_directory_are_listed(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    command = ["./app", "plain", "{trial_dir}/out.dat", "-i", "in/cfg.nml", "--x=in"]
    assert file_state.directories(command, tmp_path) == [tmp_path.resolve(), (tmp_path / "in").resolve()]
