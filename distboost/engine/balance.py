"""Which worker's holder keeps each binned partition: rows in proportion to threads.

A wave lasts as long as its slowest holder. Partitions are binned where Dask
ran their tasks, next to the data, and a persisted collection is often
spread unevenly: 8 partitions on 2 workers as 5 and 3 make the first worker
pace every wave with 25 % more rows than an even share. Before the holders
are made, binned partitions move (Dask carries them to the holder's worker:
their codes are a quarter of the float data) until no move makes the slower
of a pair of workers faster. When a partition went to a worker's disk (out
of core), memory is short and nothing moves (``dask.DaskExecutor._balanced``). The model does not depend on where rows
are (sums are exact), only the waves' length does.
"""

from __future__ import annotations


def balance(owners, sizes, threads) -> list:
    """Owners after moving partitions from the most loaded worker to the least.

    Parameters
    ----------
    owners : list of str
        Each partition's worker.
    sizes : list of int
        Each partition's rows.
    threads : dict str -> int
        The workers to balance among and their threads; partitions on other
        workers stay.

    Returns
    -------
    list of str
        Each partition's worker. A move is taken only when it lowers the
        larger of the two workers' rows per thread; the largest such
        partition of the most loaded worker moves first, ties broken by
        position, so the result depends on nothing else.
    """
    owners = list(owners)
    load = {w: 0 for w in threads}
    for owner, size in zip(owners, sizes):
        if owner in load:
            load[owner] += size
    per_thread = {w: 1.0 / max(1, n) for w, n in threads.items()}
    for _ in range(len(owners) * max(1, len(threads))):
        slow = max(sorted(load), key=lambda w: load[w] * per_thread[w])
        fast = min(sorted(load), key=lambda w: load[w] * per_thread[w])
        now = load[slow] * per_thread[slow]
        candidates = sorted((j for j, o in enumerate(owners) if o == slow),
                            key=lambda j: (-sizes[j], j))
        move = next((j for j in candidates
                     if max((load[slow] - sizes[j]) * per_thread[slow],
                            (load[fast] + sizes[j]) * per_thread[fast]) < now), None)
        if move is None:
            break
        owners[move] = fast
        load[slow] -= sizes[move]
        load[fast] += sizes[move]
    return owners
