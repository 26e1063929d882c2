"""The terminal report (Rich): a Performance-Reports-style summary of one run or several.

Only formats :class:`~pario.analysis.run.RunAnalysis` and
:class:`~pario.analysis.scaling.ScalingAnalysis`; every string that comes
from a log is added as plain :class:`rich.text.Text`, never as markup.
Unavailable metrics show "unavailable [n]" with the reason as footnote n.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, Any

from rich import box
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from pario.analysis.activity import MODULE_LABELS, merged, sparkline
from pario.analysis.files import application_files, mpi_library_line
from pario.analysis.io import (
    FILE_LAYER_LABELS,
    IN_DATA_ROW,
    LAYER_LABELS,
    KindIO,
    LayerIO,
    library_layers_note,
)
from pario.analysis.libraries import LIBRARY_LABELS
from pario.analysis.mpihints import FileInjection
from pario.analysis.pop import PopMetrics, efficiency_level
from pario.analysis.run import RunAnalysis
from pario.analysis.scaling import ScalingAnalysis, comparison_rows, one_rank_count
from pario.names import common_directory, relative
from pario.report import format as fmt
from pario.report.data import records
from pario.table import as_table
from pario.textfit import Fit, FittingTable, Shortened, Wrapped
from pario.units import nranks
from pario.values import Value

LEVEL_STYLE = {"good": "green", "fair": "yellow", "poor": "bold red", "unknown": "dim"}
BAR_WIDTH = 30
NO_IO = "No I/O recorded in this log: there are no file records, so there is nothing to report on I/O."


class Footnotes:
    """Collects the reasons of unavailable metrics; each cell shows its number."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def mark(self, reason: str) -> str:
        if reason not in self.reasons:
            self.reasons.append(reason)
        return f"unavailable [{self.reasons.index(reason) + 1}]"

    def render(self) -> list[RenderableType]:
        return [Wrapped(f"[{i}] {r}", style="dim", indent=4) for i, r in enumerate(self.reasons, 1)]


def _t(text: str, style: str = "") -> Text:
    return Text(text, style=style)


def _val(v: Value | None, notes: Footnotes, *, as_percent: bool = False) -> Text:
    if v is None:
        return _t("")
    if v.value is None:
        return _t(notes.mark(v.reason or "not recorded"), "dim")
    return _t(fmt.number(v, as_percent=as_percent))


def _eff(v: Value, notes: Footnotes) -> Text:
    """An efficiency coloured against POP's 0.8 rule of thumb."""
    if v.value is None:
        return _t(notes.mark(v.reason or "not recorded"), "dim")
    return _t(fmt.number(v, as_percent=True), LEVEL_STYLE[efficiency_level(v.value)])


def _table(title: str, *columns: str, right_from: int = 1) -> Table:
    table = FittingTable(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD,
                         pad_edge=False, show_edge=False, collapse_padding=True)
    for i, col in enumerate(columns):
        table.add_column(col, justify="right" if i >= right_from else "left", no_wrap=i >= right_from)
    return table


def _heading(text: str) -> Text:
    return _t(text, "bold underline")


def header(run: RunAnalysis) -> Panel:
    job = run.job
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    command = " ".join(job.argv) if job.argv else job.exe
    source = {"darshan": "Darshan log", "pario": "pario log"}.get(job.source, job.source)
    if job.format_version:
        source += f", format {job.format_version}"
    ranks = f"{job.nprocs:,}"
    if job.ranks_with_data != job.nprocs:
        ranks += f" ({job.ranks_with_data:,} with data)"
    grid.add_row("Command", Wrapped(command or "-", indent=2))
    grid.add_row("Log", Wrapped(f"{job.path} ({source})"))
    grid.add_row("Processes", Wrapped(f"{ranks}    run time {fmt.seconds(job.runtime)}    started "
                                      f"{fmt.timestamp(job.start_time)}"))
    extra = [f"job {job.jobid}" if job.jobid else "", f"host {job.hostname}" if job.hostname else "",
             job.mpi_library]
    if any(extra):
        grid.add_row("Job", Wrapped("    ".join(e for e in extra if e)))
    return Panel(grid, title="pario report", title_align="left", border_style="blue")


#: The least idle share (ranks waiting for the slowest) the summary shows as a bar of its own.
IDLE_SHOWN = 0.0005


def summary(run: RunAnalysis) -> RenderableType:
    s = run.shares
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True)
    grid.add_column(no_wrap=True)
    grid.add_column(justify="right", no_wrap=True)
    rows: list[tuple[str, Value, str]] = []
    if s.compute.available:
        rows += [("Compute", s.compute, "green"), ("MPI", s.mpi, "blue")]
    else:
        rows += [("Compute + MPI", s.compute_and_mpi, "cyan")]
    rows.append(("I/O", s.io, "red"))
    if (s.idle.value or 0.0) >= IDLE_SHOWN:
        rows.append(("Idle", s.idle, "dim"))
    for label, v, colour in rows:
        share = v.value if v.value is not None else float("nan")
        grid.add_row(_t(label), _t(fmt.bar(share, BAR_WIDTH), colour), _t(fmt.value(v, as_percent=True)))
    parts: list[RenderableType] = [_heading("Summary"), _t(s.verdict, "bold"), grid]
    if not s.compute.available:
        parts.append(_t(f"Compute and MPI separately: {fmt.value(s.compute)}", "dim"))
    return Group(*parts)


def _time_row(label: str, k: KindIO, notes: Footnotes) -> list[Text]:
    return [_t(label), _val(k.time_mean, notes), _val(k.share_of_runtime, notes, as_percent=True),
            _val(k.time_max, notes), _eff(k.load_balance, notes), _val(k.ops, notes)]


def _volume_row(label: str, k: KindIO, notes: Footnotes) -> list[Text]:
    return [_t(label), _val(k.bytes, notes), _val(k.mean_request, notes), _val(k.rate_per_process, notes),
            _val(k.rate_aggregate, notes)]


def _layer_times(lay: LayerIO, notes: Footnotes) -> list[Text]:
    """Read, write and metadata time, then the load balances, of a by-layer row.  A dash where
    the layer has no time of that kind (no balance to measure), and for a library file's reads
    and writes: they are its datasets' or variables' (a Darshan PnetCDF file's waits excepted)."""
    times, balances = [], []
    for k in (lay.read, lay.write, lay.meta):
        none = not k.time_total.value
        mine = k.kind == "meta" or lay.layer not in IN_DATA_ROW or not none
        times.append(_val(k.time_mean, notes) if mine else _t("—", "dim"))
        if k.kind != "meta":
            balances.append(_t("—", "dim") if none else _eff(k.load_balance, notes))
    return [*times, *balances, _eff(lay.total.load_balance, notes)]


def io_section(run: RunAnalysis) -> RenderableType:
    if not run.has_io:
        return Group(_heading("I/O"), _t(NO_IO, "bold yellow"))
    notes = Footnotes()
    o = run.io.overall
    files = f"{o.files:,} file{'' if o.files == 1 else 's'}"
    times = _table(f"Time in I/O (outermost layer, {files})", "", "per rank", "of run", "slowest rank",
                   "balance", "calls")
    for label, k in (("Reads", o.read), ("Writes", o.write), ("Metadata", o.meta), ("All I/O", o.total)):
        times.add_row(*_time_row(label, k, notes))
    volume = _table("Data and rates", "", "bytes", "mean request", "rate per process", "aggregate rate")
    for label, k in (("Reads", o.read), ("Writes", o.write)):
        volume.add_row(*_volume_row(label, k, notes))
    layers = _table("By layer (nested calls included): time per rank / I/O load balance", "layer", "files",
                    "read", "write", "metadata", "LB read", "LB write", "LB all")
    for lay in run.io.layers:
        layers.add_row(_t(lay.label), _t(f"{lay.files:,}"), *_layer_times(lay, notes))
    layer_bytes = _table("By layer: bytes", "layer", "read", "written", "mean read", "mean write")
    for lay in run.io.layers:
        if lay.layer in IN_DATA_ROW:  # a library file's bytes are its datasets' or variables'
            layer_bytes.add_row(_t(lay.label), *[_t("—", "dim")] * 4)
            continue
        layer_bytes.add_row(_t(lay.label), _val(lay.read.bytes, notes), _val(lay.write.bytes, notes),
                            _val(lay.read.mean_request, notes), _val(lay.write.mean_request, notes))
    for t in (layers, layer_bytes):
        t.columns[0].no_wrap = True
        t.columns[0].min_width = max(len(lay.label) for lay in run.io.layers)
    parts: list[RenderableType] = [_heading("I/O"), times, volume]
    if run.activity is not None:
        parts.append(activity_line(run))
    parts += [layers, layer_bytes]
    note = library_layers_note(run.io.layers)
    if note:
        parts.append(Wrapped(note, style="dim"))
    return Group(*parts, histograms(run), *notes.render())


#: The longest sparkline of the I/O section: more bins are merged to fit.
SPARK_WIDTH = 48


def activity_line(run: RunAnalysis) -> RenderableType:
    """Bytes read and written over time, as one line (docs/metrics.md, "I/O activity over time")."""
    a = run.activity
    assert a is not None
    values, group = merged(a.volume, SPARK_WIDTH)
    width = a.bin_width * group
    peak = float(values.max(initial=0)) / width if width > 0 else 0.0
    layers = ", ".join(MODULE_LABELS.get(m, m) for m in a.layers)
    caption = (f"0 to {fmt.seconds(a.duration)}, {len(values)} bin{'s' if len(values) != 1 else ''} of "
               f"{fmt.seconds(width)}; peak {fmt.rate(peak)} ({layers})")
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column(no_wrap=True)
    grid.add_column()
    grid.add_row(_t("Over time"), _t("▕" + sparkline(values) + "▏", "red"), Wrapped(caption, style="dim"))
    return grid


def _histogram_tables(columns: list[tuple[str, Any]], parts: int) -> Group:
    """The request-size columns in ``parts`` tables of as even a share each (the first ones one
    column more), each after the first titled "(continued)"."""
    size, extra = divmod(len(columns), parts)
    tables, start = [], 0
    for k in range(parts):
        part = columns[start:start + size + (k < extra)]
        start += len(part)
        title = "Requests by size (bytes)" + (" (continued)" if k else "")
        t = _table(title, "size", *[c for c, _ in part])
        for i, label in enumerate(fmt.BUCKET_LABELS):
            t.add_row(_t(label), *[_t(fmt.count(h[i]) if h[i] else "·") for _, h in part])
        tables.append(t)
    return Group(*tables)


def histograms(run: RunAnalysis) -> RenderableType:
    columns = [(f"{lay.label} {d}", h) for lay in run.io.layers
               for d, h in (("read", lay.histogram_read), ("write", lay.histogram_write))
               if h is not None and any(h)]
    if not columns:
        return Group()
    # one table where it fits the width, else the fewest tables that do: a run through a
    # library (POSIX, MPI-IO and the library's datasets) fits 80 columns without cutting a header
    return Fit(*[_histogram_tables(columns, parts) for parts in range(1, len(columns) + 1)])


def mpi_section(run: RunAnalysis) -> RenderableType:
    m = run.mpi
    if not m.available:
        return Group(_heading("MPI"), _t(f"unavailable ({m.reason})", "dim"))
    notes = Footnotes()
    t = _table(f"Time in MPI: {fmt.number(m.share_of_runtime, as_percent=True)} of the run time", "",
               "per rank", "of run", "slowest rank", "bytes", "rate", "calls")
    t.columns[0].min_width = len("point-to-point")
    for c in m.classes:
        t.add_row(_t(c.name), _val(c.time_mean, notes),
                  _val(c.share_of_runtime, notes, as_percent=True), _val(c.time_max, notes),
                  _val(c.bytes, notes), _val(c.rate, notes), _val(c.calls, notes))
    return Group(_heading("MPI"), t, *notes.render())


def memory_section(run: RunAnalysis) -> RenderableType:
    m = run.memory
    if not m.mean_per_process.available:
        return Group(_heading("Memory"), _t(fmt.value(m.mean_per_process), "dim"))
    peak = fmt.value(m.peak_per_process) + (f" (rank {m.peak_rank})" if m.peak_rank is not None else "")
    return Group(_heading("Memory"), _t(f"Mean per process {fmt.value(m.mean_per_process)}    "
                                        f"peak per process {peak}"))


def _product(a: Value, b: Value) -> float | None:
    return a.value * b.value if a.available and b.available and a.value is not None and b.value is not None \
        else None


def _replay_note(pop: PopMetrics, error: float) -> str:
    """Where SerE and TE come from, and why SerE' x TE' may differ from the profile's CommE'."""
    text = ("Serialisation and transfer efficiencies from replays of the event trace; the measured replay "
            f"is off the measured run time by {error:+.2%}.")
    with_io = _product(pop.serialisation_efficiency_io, pop.transfer_efficiency_io)
    comm_io = pop.communication_efficiency_io
    if with_io is not None and comm_io.available and comm_io.value is not None \
            and abs(with_io - comm_io.value) > 0.005:
        text += (f" SerE' x TE' = {with_io:.1%}, not CommE' = {comm_io.value:.1%}: the replay counts only "
                 "the transfer part of a collective I/O call as I/O, and its wait for the other ranks as "
                 "serialisation (docs/metrics.md).")
    return text


def pop_section(run: RunAnalysis) -> RenderableType:
    if not any(v.available for _, _, v, _ in run.pop.rows()):
        terms = [(label, v) for _, label, v, _ in run.pop.rows()]
        return _pop_unavailable(terms + [(label, v) for _, label, v in run.pop.losses()])
    notes = Footnotes()
    t = _table("Efficiencies (1 is ideal; below 0.8 needs attention)", "metric", "value")
    for _, label, v, indent in run.pop.rows():
        t.add_row(_t("  " * indent + label), _eff(v, notes))
    losses = _table("Where the parallel efficiency goes: 1 − PE =", "term", "share of T")
    for _, label, v in run.pop.losses():
        losses.add_row(_t(label), _val(v, notes, as_percent=True))
    parts: list[RenderableType] = [_heading("POP metrics"), t]
    if run.pop.mpi_note:  # where M_p comes from (Darshan's APMPI module); the sentence is a note
        parts.append(Wrapped("MPI time M_p from Darshan's APMPI module: what it times and what it does "
                             "not, in the notes on the data.", style="dim"))
    err = run.pop.replay_error
    if err.available and err.value is not None:
        parts.append(Wrapped(_replay_note(run.pop, err.value), style="dim"))
    return Group(*parts, losses, *notes.render())


def _pop_unavailable(rows: list[tuple[str, Value]]) -> RenderableType:
    """The POP section of a log whose efficiencies all are unavailable (a Darshan log without MPI
    time): why, said once, and the terms that can be computed."""
    reasons = list(dict.fromkeys(v.reason for _, v in rows if not v.available and v.reason))
    parts: list[RenderableType] = [
        _heading("POP metrics"),
        Wrapped("POP's efficiencies cannot be computed for this log: " + "; ".join(reasons) + ".",
                style="dim"),
    ]
    known = [(label, v) for label, v in rows if v.available]
    if known:
        t = _table("What can be computed", "term", "share of T")
        for label, v in known:
            t.add_row(_t(label), _t(fmt.number(v, as_percent=True)))
        parts.append(t)
    return Group(*parts)


def files_section(run: RunAnalysis, top: int) -> RenderableType:
    files, library = application_files(as_table(run.files))
    if not len(files) and not len(library):
        return Group()
    if not len(files):
        return Group(_heading("Files"), Wrapped(mpi_library_line(library), style="dim"))
    shown = files.head(top)
    directory = common_directory(str(n) for n in shown["name"])
    t = _table(f"Top {min(top, len(files))} of {len(files):,} files by I/O time (summed over ranks)", "file",
               "layer", "ranks", "I/O time", "read", "written", right_from=2)
    for c in t.columns[1:]:
        c.no_wrap = True
    for row in records(shown):
        layer = FILE_LAYER_LABELS.get(str(row["layer"]), str(row["layer"]))
        t.add_row(Wrapped(relative(str(row["name"]), directory)), _t(layer), _t(fmt.count(row["ranks"])),
                  _t(fmt.seconds(row["time"])), _t(fmt.nbytes(row["bytes_read"])),
                  _t(fmt.nbytes(row["bytes_written"])))
    caption = [Wrapped(f"in {directory}", style="dim")] if directory else []
    if len(library):
        caption.append(Wrapped(mpi_library_line(library), style="dim"))
    return Group(_heading("Files"), t, *caption, *engine_lines(run, directory))


LIBRARY_COLUMNS_NOTE = (
    "asked: bytes of the datasets' or variables' reads and writes; moved: bytes of the file's MPI-IO "
    "calls beneath the library (POSIX calls when it used no MPI-IO); ratio: moved / asked; time: in the "
    "library's calls on the file and its datasets or variables; beneath: in the MPI-IO (or POSIX) "
    "calls under them; overhead: time - beneath.")


def libraries_section(run: RunAnalysis, top: int) -> RenderableType:
    """The I/O libraries (HDF5, PnetCDF): per file, bytes asked vs moved beneath and the library's
    overhead; then their datasets and variables, listed like files."""
    lib = run.libraries
    if not lib.present:
        return Group()
    notes = Footnotes()
    directory = common_directory(f.name for f in lib.files[:top])
    t = _table("Libraries: bytes asked by the application vs moved beneath it; time summed over ranks",
               "file", "library", "asked", "moved", "ratio", "time", "beneath", "overhead", right_from=2)
    t.columns[0].min_width = min(max(len(relative(f.name, directory)) for f in lib.files[:top]), 16)
    for c in t.columns[1:]:
        c.no_wrap = True
    for f in lib.files[:top]:
        # the layer beneath is said when it is not MPI-IO (HDF5's sec2 driver: POSIX)
        beneath = LAYER_LABELS.get(f.beneath_layer, f.beneath_layer) if f.beneath_layer != "mpiio" else ""
        asked = Value.of((f.asked_read.value or 0.0) + (f.asked_written.value or 0.0), "B")
        moved = (Value.of((f.moved_read.value or 0.0) + (f.moved_written.value or 0.0), "B")
                 if f.beneath_layer else f.moved_read)
        amp = _val(f.amplification, notes)
        if f.amplification.value is not None:
            amp.append("x")
        t.add_row(Wrapped(relative(f.name, directory)), _t(LIBRARY_LABELS.get(f.library, f.library)),
                  _val(asked, notes), _val(moved, notes) + _t(f" ({beneath})" if beneath else ""), amp,
                  _val(f.library_time, notes), _val(f.beneath_time, notes), _val(f.overhead, notes))
    parts: list[RenderableType] = [_heading("I/O libraries"), t]
    if directory:
        parts.append(Wrapped(f"in {directory}", style="dim"))
    parts.append(Wrapped(LIBRARY_COLUMNS_NOTE, style="dim"))
    data = as_table(lib.datasets) if lib.datasets is not None else None
    if data is not None and len(data):
        shown = data.head(top)
        names, where = _dataset_names([str(n) for n in shown["name"]], [str(f) for f in shown["file"] if f])
        d = _table(f"Top {min(top, len(data))} of {len(data):,} datasets and variables by time (summed over "
                   "ranks)", "dataset / variable", "library", "ranks", "time", "read", "written", "reads",
                   "writes", right_from=2)
        # at most 20 columns reserved for the names: the numbers must fit 80 columns; a longer
        # name is shortened in the middle, never broken across lines (the JSON has it whole)
        d.columns[0].min_width = min(max(len(n) for n in names), 20)
        for c in d.columns[1:]:
            c.no_wrap = True
        for name, row in zip(names, records(shown), strict=True):
            label = LIBRARY_LABELS.get(str(row["library"]), str(row["library"]))
            d.add_row(Shortened(name), _t(label),
                      _t(fmt.count(row["ranks"])), _t(fmt.seconds(row["time"])),
                      _t(fmt.nbytes(row["bytes_read"])), _t(fmt.nbytes(row["bytes_written"])),
                      _t(fmt.count(row["reads"])), _t(fmt.count(row["writes"])))
        parts.append(d)
        if where:
            parts.append(Wrapped(f"in {where}", style="dim"))
    return Group(*parts, *notes.render())


def _dataset_names(names: list[str], files: list[str]) -> tuple[list[str], str]:
    """The datasets' and variables' names as the table shows them, and where they are: in one
    file, their names inside it ("/Timestep_0/x") and the file; else their names below the
    directory their files share, and the directory."""
    if len(set(files)) == 1 and all(n.startswith(files[0] + ":") for n in names):
        return [n[len(files[0]) + 1:] for n in names], files[0]
    directory = common_directory(files)
    return [relative(n, directory) for n in names], directory


def engine_lines(run: RunAnalysis, directory: str = "") -> list[RenderableType]:
    """One paragraph per MPI-IO file pario's collective-write engine served or gave back to the
    MPI library (``pario run --collective``): what it did, and the calls it did not serve."""
    lines: list[RenderableType] = []
    for e in run.engine:
        what = "; ".join(t for t in (e.served_text(), e.fallback_text()) if t)
        lines.append(Wrapped(f"{relative(e.name, directory)}: {what}", indent=4))
    return lines


def hint_text(hints: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{k} {v}" for k, v in hints) if hints else "none reported by the MPI library"


def hints_section(run: RunAnalysis, shown_files: int = 3, shown_injected: int = 10) -> RenderableType:
    """The MPI-IO hints in effect after open, one line per group of files with the same hints."""
    h = run.hints
    if h.empty:
        return Group()
    parts: list[RenderableType] = [_heading("MPI-IO hints in effect")]
    for g in h.groups:
        files = ", ".join(g.files[:shown_files])
        if len(g.files) > shown_files:
            files += f" and {len(g.files) - shown_files:,} more"
        parts.append(Wrapped(f"{files}: {hint_text(g.hints)}", indent=4))
    if h.injected:
        injected = hint_text(h.injected)
        parts.append(Wrapped(f"Injected at every open (pario run --hints): {injected}", indent=4))
    for glob, hints in h.sections:
        parts.append(Wrapped(f"Injected at the open of [{glob}]: {hint_text(hints)}", indent=4))
    if h.per_file:
        parts.append(_t("Per file, injected and ignored by the MPI library:"))
    for f in h.per_file[:shown_injected]:
        parts.append(Wrapped(f"{f.file}: {injection_text(f)}", indent=4))
    if len(h.per_file) > shown_injected:
        parts.append(Wrapped(f"and {len(h.per_file) - shown_injected:,} more files (pario report --json)",
                             indent=4))
    return Group(*parts, _t(""))


def injection_text(f: FileInjection) -> str:
    """``injected: k=v ...; ignored by the MPI library: k (asked v, in effect w|not reported)``."""
    text = "injected: " + " ".join(f"{k}={v}" for k, v in f.injected)
    if f.ignored:
        text += "; ignored by the MPI library: " + ", ".join(i.text for i in f.ignored)
    return text


def notes_section(notes: Sequence[str]) -> RenderableType:
    if not notes:
        return Group()
    return Group(_heading("Notes on the data"), *[_t("• " + n, "dim") for n in notes])


#: What stands where the findings would, when the diagnosis was not run.
NOT_DIAGNOSED = "Diagnosis: not run (--no-diagnosis)."


def diagnosis_section(findings: Sequence[Any], title: str = "Diagnosis",
                      diagnosed: bool = True) -> RenderableType:
    """The findings, most costly first (pario.diagnosis renders them)."""
    if not diagnosed:
        return _t(NOT_DIAGNOSED, "dim")
    from pario.report.findings import findings_renderable

    return findings_renderable(findings, title=title)


def run_report(run: RunAnalysis, *, top: int = 10) -> Group:
    if not run.has_io:
        return Group(header(run), _t(NO_IO, "bold yellow"), _t(""),
                     diagnosis_section(run.findings, diagnosed=run.diagnosed), _t(""),
                     notes_section(run.notes))
    parts: list[RenderableType] = [header(run), summary(run), _t("")]
    parts += [io_section(run), _t(""), mpi_section(run), _t(""), memory_section(run), _t(""),
              pop_section(run), _t(""), files_section(run, top), _t("")]
    if run.libraries.present:
        parts += [libraries_section(run, top), _t("")]
    parts += [hints_section(run),
              diagnosis_section(run.findings, diagnosed=run.diagnosed),
              _t(""), notes_section(run.notes)]
    return Group(*parts)


SCALING_EFFICIENCIES: tuple[tuple[str, str], ...] = (
    ("PE", "parallel_efficiency"), ("LB", "load_balance"), ("CommE", "communication_efficiency"),
    ("IOE", "io_efficiency"), ("comp. scal.", "computation_scalability"), ("global", "global_efficiency"),
)


LABEL_WIDTH = 24


def run_labels(rows: Sequence[Any]) -> tuple[list[str], list[str]]:
    """Short labels of the runs of a table (their log names, or 'run 1'... when a name is
    longer than LABEL_WIDTH) and the legend lines that name the logs behind 'run N'."""
    names = [str(r.label) for r in rows]
    if all(len(n) <= LABEL_WIDTH for n in names):
        return names, []
    legend = [f"run {i}: {r.path}" for i, r in enumerate(rows, 1)]
    return [f"run {i}" for i in range(1, len(rows) + 1)], legend


def scaling_report(scaling: ScalingAnalysis) -> Group:
    notes = Footnotes()
    rows = scaling.rows
    labels, legend = run_labels(rows)
    speed = _table("Speedup", "log", "ranks", "run time", "speedup", "ideal", "scaling eff.")
    speed.columns[0].no_wrap = True
    for label, r in zip(labels, rows, strict=True):
        speed.add_row(_t(label), _t(f"{r.nprocs:,}"), _t(fmt.seconds(r.runtime)),
                      _val(r.speedup, notes), _t(f"{r.ideal_speedup:.2f}"), _eff(r.scaling_efficiency, notes))
    shown = [(h, a) for h, a in SCALING_EFFICIENCIES if any(getattr(r, a).available for r in rows)]
    hidden = [(h, a) for h, a in SCALING_EFFICIENCIES if (h, a) not in shown]
    parts: list[RenderableType] = [Wrapped(scaling.warning, style="bold yellow")] if scaling.warning else []
    parts += [
        _heading(f"Scaling: {scaling.mode}"),
        Wrapped(f"Mode {scaling.mode_reason}; reference run: {nranks(scaling.reference_nprocs)}.",
                style="dim"),
        *[Wrapped(line, style="dim", indent=2) for line in legend], speed]
    if shown:
        eff = _table("POP metrics per run", "log", "ranks", *[h for h, _ in shown])
        eff.columns[0].no_wrap = True
        for label, r in zip(labels, rows, strict=True):
            eff.add_row(_t(label), _t(f"{r.nprocs:,}"), *[_eff(getattr(r, a), notes) for _, a in shown])
        parts.append(eff)
    if hidden:
        reason = getattr(rows[0], hidden[0][1]).reason or "not recorded"
        parts.append(Wrapped(f"{', '.join(h for h, _ in hidden)} per run: {notes.mark(reason)}", style="dim"))
    # two-line headers: the numbers, not the words, set the widths (a long rate such as
    # "11.8 MiB/s" must not be cut to fit 80 columns)
    io = _table("I/O per run", "log", "ranks", "I/O time\nper rank", "of run", "slowest\nrank", "bytes",
                "bandwidth")
    io.columns[0].no_wrap = True
    for label, r in zip(labels, rows, strict=True):
        io.add_row(_t(label), _t(f"{r.nprocs:,}"), _val(r.io_time_mean, notes),
                   _val(r.io_share, notes, as_percent=True), _val(r.io_time_max, notes),
                   _val(r.io_bytes, notes), _val(r.io_bandwidth, notes))
    parts.append(io)
    parts += notes.render() + [Wrapped("• " + n, style="dim", indent=2) for n in scaling.notes]
    return Group(*parts)


#: The comparison of runs at one rank count: (row label, ScalingRow attribute, as a percentage).
COMPARED = (("run time", "runtime", False), ("I/O time per rank", "io_time_mean", False),
            ("slowest rank's I/O", "io_time_max", False), ("I/O share of run", "io_share", True),
            ("bytes", "io_bytes", False), ("I/O bandwidth", "io_bandwidth", False),
            ("parallel efficiency", "parallel_efficiency", True), ("I/O efficiency", "io_efficiency", True))


def comparison_report(runs: Sequence[RunAnalysis]) -> Group:
    """Runs at one rank count side by side: each metric per run, and its ratio to the first run's."""
    notes = Footnotes()
    rows = comparison_rows(runs)
    labels, legend = run_labels(rows)
    heads = [labels[0]] + [h for label in labels[1:] for h in (label, f"/ {labels[0]}")]
    table = _table("Comparison", "metric", *heads)
    for name, attr, pct in COMPARED:
        values = [getattr(r, attr) for r in rows]
        values = [v if isinstance(v, Value) else Value.of(v, "s") for v in values]
        cells = [_val(values[0], notes, as_percent=pct)]
        for v in values[1:]:
            ok = v.value is not None and values[0].value not in (None, 0)
            cells += [_val(v, notes, as_percent=pct),
                      _t(f"{v.value / values[0].value:.2f}x" if ok else "-", "" if ok else "dim")]
        table.add_row(_t(name), *cells)
    return Group(*[Wrapped(line, style="dim", indent=2) for line in legend], table, *notes.render())


def render(runs: Sequence[RunAnalysis], scaling: ScalingAnalysis | None = None, *, top: int = 10,
           details: bool = False, file: IO[str] | None = None, width: int | None = None,
           color: bool | None = None) -> None:
    """Print the report of one run, or the scaling table and a summary of each of several."""
    console = Console(file=file, width=width, no_color=color is False, force_terminal=color or None,
                      highlight=False)
    if len(runs) == 1 and scaling is None:
        console.print(run_report(runs[0], top=top))
        return
    if scaling is None:
        from pario.report import side_by_side_reason

        reason = side_by_side_reason(runs)
        if reason:
            console.print(Wrapped(reason, style="bold yellow"))
            console.print()
        if one_rank_count(runs) is not None:
            console.print(comparison_report(runs))
            console.print()
    if scaling is not None:
        console.print(scaling_report(scaling))
        console.print()
        console.print(diagnosis_section(scaling.findings, "Diagnosis across the runs",
                                        diagnosed=all(r.diagnosed for r in runs)))
        console.print()
    for run in runs:
        if details:
            console.print(run_report(run, top=top))
        else:
            console.print(header(run))
            console.print(summary(run) if run.has_io else _t(NO_IO, "bold yellow"))
            console.print(diagnosis_section(run.findings, diagnosed=run.diagnosed))
        console.print()


def render_to_string(runs: Sequence[RunAnalysis], scaling: ScalingAnalysis | None = None, *,
                     width: int = 120, top: int = 10, details: bool = False) -> str:
    """The terminal report as plain text (for tests and logs)."""
    import io

    buf = io.StringIO()
    render(runs, scaling, file=buf, width=width, color=False, top=top, details=details)
    return buf.getvalue()


def replay_report(title: str, m: Any) -> Group:
    """``pario replay``: the four replays of a trace and the POP factors they give.

    ``m`` is a :class:`pario.trace.metrics.TraceMetrics`.
    """
    notes = Footnotes()
    times = _table("Replays (docs/trace.md)", "replay", "run time", "of measured")
    T = m.runtime
    for key, label, v in m.runtimes():
        share = (Value.of(v.value / T.value) if v.value is not None and T.value
                 else Value.unavailable(v.reason or T.reason))
        times.add_row(_t(label), _val(v, notes),
                      _t("") if key == "runtime" else _val(share, notes, as_percent=True))
    err = m.replay_error
    error = _t("Measured replay's error (T_replay - T) / T: ") + (
        _t(f"{err.value:+.2%}") if err.value is not None else _val(err, notes))
    factors = _table("POP factors from the replays (1 is ideal; below 0.8 needs attention)", "metric",
                     "value")
    for _, label, v in m.factors():
        factors.add_row(_t(label), _eff(v, notes))
    return Group(_heading(title), times, error, _t(""), factors, *notes.render())
