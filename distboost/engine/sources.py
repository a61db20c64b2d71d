"""Where a partition of a Dask DataFrame comes from: its Parquet files, read so
that a bad file, or one changed during a fit, is named.

Dask may read several small files into one partition, so "partition 1, row
250" is not where a user looks; and a read that fails inside Dask's own task
says only what pyarrow says ("Parquet magic bytes not found", "Corrupt snappy
compressed data", ``KeyError: "['f05'] not in index"``), not which file.

Where the collection's plan traces its partitions to their files
(``dask_internals.parquet_plan``: dask-expr's plan of ``read_parquet``), each
partition is read in a task of distboost's own (``read_parts``, and
``apply_to_parts`` for prediction), which runs Dask's read of that partition
and, when it fails, looks at the partition's files (footer, columns, row
groups: ``find_fault``) and raises ``SourceError`` naming the file, and the
column and row group where it can tell. A fit notes each file's identity (size
and modification time, or the checksum or ETag its file system keeps) before
it first reads it (``FileIdentities``); every later read of the partition (the
binning pass, and the re-reads that rebuild a lost worker's rows) checks it
and stops with ``SourceChangedError`` rather than train on another version.

Where the plan cannot be read (another reader, partitions moved after the
read, ``distboost.dask-internals`` off) partitions are read as Dask reads
them, errors keep their partition and row, and no identity is checked.
"""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass

from . import dask_internals


class SourceError(ValueError):
    """A source file cannot be read as the collection says (cut short, not
    Parquet, damaged, missing a column); the message names it."""


class SourceChangedError(SourceError):
    """A source file changed while a fit was using it; the message names it."""


# ------------------------------------------------------------ reading partitions
def read_parts(collection, optimize: bool, what: str, files: FileIdentities | None) -> list:
    """The partitions of a Dask DataFrame or Series as ``Delayed`` pieces, each
    read where a bad or changed file is named (``Source``), or as
    ``to_delayed(optimize_graph=optimize)`` gives them where the plan cannot
    be read.

    Parameters
    ----------
    collection : dask DataFrame or Series
    optimize : bool
        Whether the pieces are the collection's optimized partitions.
    what : str
        The data's name in messages ("training data", "eval_set[0]").
    files : FileIdentities or None
        Where a fit notes each file's identity at its first read (None: not checked).
    """
    parts = collection.to_delayed(optimize_graph=optimize)
    plan = dask_internals.parquet_plan(collection, optimize)
    if plan is None or len(plan.pieces) != len(parts):
        return parts
    name = f"distboost-read-{uuid.uuid4().hex[:12]}"
    guarded = [_guarded(_read, part, Source(what, i, pieces, plan.columns,
                                            None if files is None else files.record(pieces)),
                        (name, i))
               for i, (part, pieces) in enumerate(zip(parts, plan.pieces))]
    return [part if g is None else g for part, g in zip(parts, guarded)]


def apply_to_parts(collection, fn, what: str, key) -> list | None:
    """``fn(partition)`` for every partition of a Dask DataFrame, each in one
    task (named ``key(i)``) that reads the partition where a bad file is named
    and names the file of an error ``fn`` raises; None where the plan cannot
    be read."""
    plan = dask_internals.parquet_plan(collection, True)
    parts = collection.to_delayed() if plan is not None else []
    if plan is None or len(plan.pieces) != len(parts):
        return None
    calls = [_guarded(_read_and_apply, part, Source(what, i, pieces, plan.columns), key(i), fn)
             for i, (part, pieces) in enumerate(zip(parts, plan.pieces))]
    return None if any(c is None for c in calls) else calls


def _guarded(task, part, source, key, *args):
    """A ``Delayed`` running ``task(blob, *args)`` where ``blob`` holds the
    graph that computes ``part`` (pickled: Dask runs it inside the task, not
    as tasks of its own) and its ``Source``; None where that graph needs
    results from outside it (data persisted on the cluster)."""
    import cloudpickle
    from dask import delayed

    graph = part.__dask_graph__()
    if not hasattr(graph, "cull"):
        return None
    graph = graph.cull({part.key})
    needs = graph.get_all_dependencies()
    if any(k not in needs for deps in needs.values() for k in deps):
        return None
    blob = cloudpickle.dumps((dict(graph), part.key, source))
    return delayed(task, pure=False)(blob, *args, dask_key_name=key)


def _read(blob):
    """On a worker: the partition in ``blob`` (``_guarded``), read and checked."""
    import pickle

    graph, key, source = pickle.loads(blob)
    return source.read(graph, key)


def _read_and_apply(blob, fn):
    """On a worker: ``fn`` of the partition in ``blob``, an error of ``fn``'s
    naming the partition's file."""
    import pickle

    graph, key, source = pickle.loads(blob)
    frame = source.read(graph, key)
    try:
        return fn(frame)
    except (ValueError, TypeError, KeyError) as error:
        richer = source.explain(error)
        if richer is None:
            raise
        raise richer from error


@dataclass(frozen=True)
class Source:
    """One partition's files, and what a read of it checks.

    Parameters
    ----------
    what : str, the data's name in messages
    partition : int
    pieces : list of (filesystem, path, row groups or None)
    columns : list of str, the columns read from every file
    identities : dict or None, per path its identity when the fit first read it
    """

    what: str
    partition: int
    pieces: list
    columns: list
    identities: dict | None = None

    @property
    def where(self) -> str:
        return f"{self.what}, partition {self.partition}"

    def read(self, graph: dict, key):
        """Compute ``key`` of ``graph`` (Dask's read of the partition) here;
        a failure or a changed file raised as ``failure`` and ``changed`` say."""
        import dask

        try:
            frame = dask.get(graph, key)
        except Exception as error:
            fault = self.failure(error)
            if fault is None:
                raise
            raise fault from error
        changed = self.changed()
        if changed is not None:
            raise changed
        return frame

    def failure(self, error: Exception) -> Exception | None:
        """The error to raise for a failed read of the partition: a changed or
        a bad file named; None when the files look sound."""
        if isinstance(error, SourceError):
            return None
        changed = self.changed()
        if changed is not None:
            return changed
        fault = find_fault(self.pieces, self.columns)
        if fault is None:
            return None
        place, advice = fault
        return SourceError(f"{self.where}: {place} ({_brief(error)}). {advice}")

    def changed(self) -> SourceChangedError | None:
        """The error for the first file whose identity differs from the one
        noted at the fit's first read; None if none does (or none was noted)."""
        for fs, path, _ in self.pieces:
            before = (self.identities or {}).get(path)
            if before is None:
                continue
            try:
                now = identity(fs, path)
            except FileNotFoundError:
                now = None
            except OSError:
                continue  # cannot tell now: the read itself went through
            if now != before:
                return SourceChangedError(
                    f"{self.where}: file {path} changed while the fit was using it "
                    f"({_changes(before, now)}). The fit noted the file when it started, and "
                    f"reading the partition again (to bin it, or to rebuild the rows of a lost "
                    f"worker) found another one; training on two versions of the data would "
                    f"give a model of neither, so the fit stops. Leave the files a fit reads "
                    f"unchanged until it ends (write new data to a new folder), and fit again.")
        return None

    def explain(self, error: Exception) -> Exception | None:
        """``error`` (raised on the partition's rows) naming the partition and its file."""
        place = column_place(self.pieces, error) or _files(self.pieces)
        return same_type(error, f"{message(error)} [{self.where}, read from {place}]")


# ------------------------------------------------------------------ identities
CHECKSUM_KEYS = ("ETag", "etag", "md5Hash", "crc32c", "checksum", "generation", "VersionId")
"""Keys of ``fs.info`` that change with a file's content, where a file system gives them."""

TIME_KEYS = ("mtime", "LastModified", "last_modified", "updated", "modified")


class FileIdentities:
    """Each source file's identity as a fit first saw it (``identity``)."""

    def __init__(self):
        self.seen: dict[str, dict | None] = {}

    def record(self, pieces) -> dict:
        """Per path of ``pieces``, its identity, noted now unless noted before
        (None: it could not be read then; the read will say why)."""
        for fs, path, _ in pieces:
            if path not in self.seen:
                try:
                    self.seen[path] = identity(fs, path)
                except OSError:
                    self.seen[path] = None
        return {path: self.seen[path] for _, path, _ in pieces}


def identity(fs, path: str) -> dict:
    """What changes when a file is rewritten or replaced: a local file's size,
    modification time in nanoseconds and inode; elsewhere the size, time and
    checksum or ETag ``fs.info`` gives (asked afresh, not from a cache)."""
    protocol = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
    if "file" in protocol or "local" in protocol:
        st = os.stat(path.removeprefix("file://"))
        return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino}
    fs.invalidate_cache(path)
    info = fs.info(path)
    return {k: info[k] if isinstance(info[k], (int, float)) else str(info[k])
            for k in ("size", *TIME_KEYS, *CHECKSUM_KEYS) if info.get(k) is not None}


def _changes(before: dict, now: dict | None) -> str:
    if now is None:
        return "it is gone"
    return ", ".join(f"{k} was {before.get(k)}, now {now.get(k)}"
                     for k in sorted(set(before) | set(now)) if before.get(k) != now.get(k))


# ---------------------------------------------------------------------- faults
UNREADABLE = ("It may be cut short, still being written, or not Parquet at all: write it "
              "again from its source, or move it out of the folder read, and try again.")
DAMAGED = ("The file is damaged: write it again from its source, or move it out of the "
           "folder read, and try again.")
GONE = ("It was there when the collection was made: put it back, or make the collection "
        "again (dd.read_parquet) without it.")


def find_fault(pieces, columns) -> tuple[str, str] | None:
    """What is wrong with a partition's files after its read failed: (where,
    what to do), or None when every one of them reads.

    Per file: its footer, then the columns read from it, then every row group
    it gives the partition (read whole, then column by column where that
    fails). Runs on the error path only.
    """
    for fs, path, row_groups in pieces:
        fault = _file_fault(fs, path, row_groups, columns)
        if fault is not None:
            return fault
    return None


def _file_fault(fs, path, row_groups, columns):
    import pyarrow.parquet as pq

    try:
        handle = fs.open(path, "rb")
    except FileNotFoundError:
        return f"file {path} is gone", GONE
    with handle:
        try:
            parquet = pq.ParquetFile(handle)
        except Exception:  # noqa: BLE001 (any failure to read the footer is the fault)
            return f"file {path} is not a readable Parquet file", UNREADABLE
        missing = [c for c in columns if c not in parquet.schema_arrow.names]
        if missing:
            advice = (f"Every file must hold the columns read from it ({columns}): add them "
                      f"to that file, or leave the file out, and try again.")
            return f"file {path} has no column(s) {missing}", advice
        groups = range(parquet.num_row_groups) if row_groups is None else row_groups
        for group in groups:
            column = _bad_column(parquet, group, columns)
            if column is not None:
                return f"file {path}, row group {group}, column {column!r} cannot be read", DAMAGED
    return None


def _bad_column(parquet, group: int, columns) -> str | None:
    """The first of ``columns`` that row group ``group`` cannot give (None: all read)."""
    if _reads(parquet, group, list(columns)):
        return None
    return next((c for c in columns if not _reads(parquet, group, [c])), None)


def _reads(parquet, group: int, columns: list) -> bool:
    try:
        parquet.read_row_group(group, columns=columns)
    except Exception:  # noqa: BLE001 (any failure to read is the answer)
        return False
    return True


_COLUMN = re.compile(r"column '([^']+)'")


def column_place(pieces, error: Exception) -> str | None:
    """For an error naming a column ("column 'c' ... has dtype string"): the
    file(s) where that column is neither numbers nor categories, with its
    type there; None if the error names none, or no file says."""
    match = _COLUMN.search(str(error))
    if match is None or not pieces:
        return None
    import pyarrow as pa

    column, found = match.group(1), []
    for fs, path, _ in pieces:
        schema = _schema(fs, path)
        kind = schema.field(column).type if schema and column in schema.names else None
        if kind is not None and not (pa.types.is_integer(kind) or pa.types.is_floating(kind)
                                     or pa.types.is_boolean(kind)
                                     or pa.types.is_dictionary(kind)):
            found.append(f"file {path}, where column {column!r} is {kind}")
    return "; ".join(found) or None


def _schema(fs, path):
    """A Parquet file's arrow schema, or None where it cannot be read."""
    import pyarrow.parquet as pq

    try:
        with fs.open(path, "rb") as handle:
            return pq.ParquetFile(handle).schema_arrow
    except Exception:  # noqa: BLE001 (a file that cannot say is left out)
        return None


def _files(pieces) -> str:
    paths = list(dict.fromkeys(path for _, path, _ in pieces))
    return f"file {paths[0]}" if len(paths) == 1 else f"files {', '.join(paths)}"


def _brief(error: Exception) -> str:
    """``Type: message`` on one line (pyarrow's messages run over several)."""
    return f"{type(error).__name__}: {' '.join(str(error).split())}"


def message(error: Exception) -> str:
    """An error's own message (a ``KeyError``'s without the quotes ``str`` adds)."""
    return error.args[0] if isinstance(error, KeyError) and error.args else str(error)


def same_type(error: Exception, message: str) -> Exception | None:
    """An error of ``error``'s type saying ``message``; None where that type
    cannot be made so."""
    try:
        return type(error)(message)
    except Exception:  # noqa: BLE001
        return None


# ------------------------------------------------ rows and columns in errors
_WHERE = re.compile(r"partition (\d+)\b.*?\brow (\d+)\b", re.DOTALL)
_COLUMN_IN = re.compile(r"column '[^']+' in partition (\d+)\b")


def file_and_row(collection, partition: int, row: int, optimize: bool = True) -> str | None:
    """``"file F, row r"`` (0-based rows) for row ``row`` of ``partition``, or None.

    ``optimize`` says whether the partitions are the collection's optimized ones
    (``to_delayed()``) or its partitions as given.
    """
    pieces = dask_internals.parquet_pieces(collection, partition, optimize)
    if pieces is None:
        return None
    try:
        for fs, path, row_groups in pieces:
            n_rows, first = _rows(fs, path, row_groups)
            if row < n_rows:
                return f"file {path}, row {first + row}"
            row -= n_rows
    except Exception:  # noqa: BLE001 (a file changed or gone since it was read: keep the message)
        return None
    return None


def _rows(fs, path: str, row_groups) -> tuple[int, int]:
    """Rows read from ``path`` and the first one's row number in the file."""
    import pyarrow.parquet as pq

    with fs.open(path, "rb") as fh:
        meta = pq.ParquetFile(fh).metadata
    if row_groups is None:
        return meta.num_rows, 0
    groups = sorted(row_groups)
    first = sum(meta.row_group(g).num_rows for g in range(groups[0]))
    return sum(meta.row_group(g).num_rows for g in groups), first


def with_source(exc: Exception, collection, optimize: bool = True) -> Exception | None:
    """``exc`` with the file its message's "partition P ... row R" came from
    (and the row in it), or, for "column 'c' in partition P" without a row,
    the file where that column has another type."""
    text = str(exc)
    if isinstance(exc, SourceError) or collection is None or text.startswith("eval_set"):
        return None
    match = _WHERE.search(text)
    if match is not None:
        where = file_and_row(collection, int(match.group(1)), int(match.group(2)), optimize)
    elif (match := _COLUMN_IN.search(text)) is not None:
        pieces = dask_internals.parquet_pieces(collection, int(match.group(1)), optimize)
        where = column_place(pieces, exc)
    else:
        return None
    return None if where is None else same_type(exc, f"{text} [read from {where}]")
