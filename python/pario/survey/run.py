"""``pario survey PATH... --store DIR``: every new or changed log analysed on Dask into the store."""

from __future__ import annotations

import datetime as dt
import itertools
import sys
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pario import units
from pario.survey.cluster import ClusterSpec, client_for
from pario.survey.discover import LogFile, find_logs, in_window
from pario.survey.row import error_row, survey_batch, worker_rank_limit
from pario.survey.store import compact, make_store, surveyed, write_rows

#: Logs per task: large enough that scheduling costs little next to reading, small enough that a
#: worker holds few rows and the progress bar moves.
DEFAULT_BATCH = 64


@dataclass(frozen=True)
class SurveyPlan:
    paths: tuple[str, ...]
    store: str
    manifests: tuple[str, ...] = ()
    limit: int | None = None
    since: dt.date | None = None
    until: dt.date | None = None
    batch: int = DEFAULT_BATCH
    cluster: ClusterSpec = field(default_factory=ClusterSpec)
    #: compact the store when the logs are read (store.compact): each month one file again
    compact: bool = True


#: The shortest survey whose logs per second are said (the cluster's start takes seconds).
RATE_AFTER_S = 60.0


@dataclass
class SurveyResult:
    found: int = 0        # logs under the paths, in the date window
    unchanged: int = 0    # already in the store, same size and modification time
    read: int = 0         # rows written this run
    errors: int = 0       # of which error rows
    seconds: float = 0.0
    workers: int = 0

    def text(self) -> str:
        """What the survey did, in words: the logs found, read and unreadable, on how many
        workers, in how long; the rate only for a run long enough to give one (a short run's is
        mostly the cluster's start)."""
        head = (f"{units.plural(self.found, 'log')} found, {self.unchanged:,} already in the store, "
                f"{self.read:,} read")
        if not self.read:
            return head
        text = (f"{head} ({self.errors:,} unreadable) on {units.plural(self.workers, 'Dask worker')} "
                f"in {units.seconds(self.seconds)}")
        if self.seconds >= RATE_AFTER_S:
            rate = units.plain(self.read / self.seconds)
            text += f", {rate} {'log' if rate == '1' else 'logs'}/s"
        return text


def to_read(logs: Iterable[LogFile], seen: dict[str, tuple[int, int]], result: SurveyResult,
            plan: SurveyPlan) -> Iterator[LogFile]:
    """The logs of the window that the store lacks or holds an older version of."""
    n = 0
    for log in logs:
        if not in_window(log, plan.since, plan.until):
            continue
        result.found += 1
        if seen.get(log.path) == (log.size, log.mtime_ns):
            result.unchanged += 1
            continue
        if plan.limit is not None and n >= plan.limit:
            continue
        n += 1
        yield log


def survey_part(store: str, logs: Sequence[LogFile], name: str, surveyed_at: float,
                resurveyed: Sequence[str] = ()) -> tuple[int, int]:
    """A worker's task: read a batch of logs and write their rows as one part of the store
    (``resurveyed``: the paths of the batch the store holds an older row of); returns (rows,
    error rows)."""
    rows = survey_batch(logs, surveyed_at, worker_rank_limit())
    write_rows(store, rows, name, resurveyed)
    return len(rows), sum(r["status"] == "error" for r in rows)


def _batches(logs: Iterator[LogFile], size: int) -> Iterator[list[LogFile]]:
    while chunk := list(itertools.islice(logs, size)):
        yield chunk


def run_survey(plan: SurveyPlan, *, progress: bool | None = None) -> SurveyResult:
    """Survey the plan's logs; rows go to the store as each batch completes."""
    from distributed import as_completed

    result = SurveyResult()
    started = time.monotonic()
    surveyed_at = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(surveyed_at)) + "-" + uuid.uuid4().hex[:8]
    make_store(plan.store)
    # discovery streams: the client holds the paths found, the store's list of surveyed logs and
    # the batches in flight, not a list of the logs to read (millions, from a manifest)
    seen = surveyed(plan.store)
    logs = to_read(find_logs(plan.paths, plan.manifests), seen, result, plan)
    first = next(logs, None)
    if first is None:  # nothing new: no cluster started
        if plan.compact:  # a compaction killed last time is finished
            compact(plan.store)
        result.seconds = time.monotonic() - started
        return result
    names = (f"part-{stamp}-{i:06d}" for i in itertools.count())
    show = sys.stderr.isatty() if progress is None else progress
    with client_for(plan.cluster) as client, _Progress(show) as bar:
        result.workers = len(client.scheduler_info().get("workers", {}))
        window = max(4, 4 * max(result.workers, 1))  # tasks in flight: the scheduler holds few
        pending = _batches(itertools.chain([first], logs), plan.batch)
        running: Any = as_completed()
        batch_of: dict[Any, list[LogFile]] = {}

        def submit(batch: list[LogFile]) -> None:
            again = [log.path for log in batch if log.path in seen]
            fut = client.submit(survey_part, plan.store, batch, next(names), surveyed_at, again, pure=False)
            batch_of[fut] = batch
            running.add(fut)

        for batch in itertools.islice(pending, window):
            submit(batch)
        for fut in running:
            batch = batch_of.pop(fut)
            try:
                n, bad = fut.result()
            except Exception as exc:  # noqa: BLE001 - a worker that died on a log: find which
                if len(batch) > 1:
                    for log in batch:  # one task per log, so the others still get read
                        submit([log])
                    continue
                reason = f"the reader stopped the worker ({type(exc).__name__}: {exc})"
                n, bad = write_rows(plan.store, [error_row(batch[0], reason, surveyed_at)], next(names),
                                    [batch[0].path] if batch[0].path in seen else []), 1
            result.read += n
            result.errors += bad
            bar.advance(n)
            nxt = next(pending, None)
            if nxt is not None:
                submit(nxt)
    if plan.compact:  # the parts of this run and the month's compacted file, one file again
        compact(plan.store)
    result.seconds = time.monotonic() - started
    return result


class _Progress:
    """A Rich progress bar on standard error (or nothing): logs read, with no total (the logs
    are found while they are read)."""

    def __init__(self, show: bool) -> None:
        self.show = show
        self.bar: Any = None

    def __enter__(self) -> _Progress:
        if self.show:
            from rich.console import Console
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self.bar = Progress(SpinnerColumn(), TextColumn("{task.description}: {task.completed} logs read"),
                                TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("surveying", total=None)
        return self

    def advance(self, n: int) -> None:
        if self.bar is not None:
            self.bar.advance(self.task, n)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
