"""Progress bars on stderr for long work (rounds, partitions).

Uses ``rich`` (installed with Prefect) when it imports; otherwise prints a
line now and then. Disabled bars cost nothing, so flows always call these and
pass ``enabled`` through from their ``progress`` parameter.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any


class _Bar:
    def __init__(self, progress: Any, task: Any, total: int, label: str) -> None:
        self._progress, self._task, self._total, self._label = progress, task, total, label
        self.done = 0

    def advance(self, n: int = 1, note: str = "") -> None:
        self.done += n
        if self._progress is not None:
            self._progress.update(self._task, advance=n, note=note)
        elif self._total:
            print(f"{self._label}: {self.done}/{self._total} {note}", file=sys.stderr, flush=True)

    def end(self, done: int, note: str) -> None:
        """End the bar before its total (early stopping): full at ``done``, with ``note``."""
        if self._progress is not None:
            self._progress.update(self._task, total=done, completed=done, note=note)
        elif self._total:
            print(f"{self._label}: {note}", file=sys.stderr, flush=True)


@contextmanager
def progress_bar(label: str, total: int, enabled: bool = True, start: int = 0) -> Iterator[_Bar]:
    """A progress bar for ``total`` steps of ``label`` (rounds, files...)."""
    if not enabled:
        bar = _Bar(None, None, 0, label)
        yield bar
        return
    try:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )
    except ImportError:  # pragma: no cover - rich comes with prefect
        yield _Bar(None, None, total, label)
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[note]}"),
    )
    with Progress(*columns, console=Console(stderr=True), transient=False) as progress:
        task = progress.add_task(label, total=total, completed=start, note="")
        yield _Bar(progress, task, total, label)


def gather_with_progress(
    client: Any, tasks: Sequence[Any], label: str, enabled: bool = True,
    note: Callable[[list[Any]], str] | None = None,
) -> list[Any]:
    """Compute dask delayed ``tasks`` on ``client``; results in order.

    ``note(results)``, given the results of the tasks done so far, is shown
    beside the bar (e.g. the rows written).

    On an ``InProcess`` client (``flows._in_process``) the tasks run one
    after the other in this process.
    """
    from distributed import as_completed

    if getattr(client, "in_process", False):
        with progress_bar(label, len(tasks), enabled) as bar:
            results = []
            for task in tasks:
                results.append(client.compute([task])[0])
                bar.advance(note=note(results) if note is not None and enabled else "")
        return results

    futures = client.compute(list(tasks))
    done: list[Any] = []
    with progress_bar(label, len(futures), enabled) as bar:
        for future in as_completed(futures, loop=client.loop):
            if note is not None and enabled:
                done.append(future.result())
            bar.advance(note=note(done) if note is not None and enabled else "")
    return client.gather(futures)
