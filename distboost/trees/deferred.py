"""Deferred counts: a last level routed by the next wave, not a wave of its own.

With statistics that hold no row count, the waves count the rows of each
child, and a depth-wise tree's last level would need a wave only for that
(no child is built there). Its routing can ride on the next wave the fit
makes anyway, the next round's start, which routes the rows through the
level first, as its own wave would have, and counts them (or a level wave
of its own after the last round). Until then the trees' last-level counts
are -1 and those splits' missing direction is unsettled; that is only
allowed where every row takes part in the round (weights > 0, no row
sampling) and no evaluation rows are added, since then the unsettled
direction sends no row elsewhere than the final one would.

``PendingCounts`` is that level: the training loop passes ``splits`` to
the next wave and its counts back to ``complete``, for the final trees.
"""

from __future__ import annotations

from ..kernels.histogram import LevelSplits
from .nodes import wave_splits


class PendingCounts:
    """The last level of a round's trees, whose children's rows a later
    wave counts.

    Parameters
    ----------
    wave : list of tuple
        The level's splits as the grower routes them (``nodes.wave_splits``).
    grower : TreeGrower
        The grower of the trees, which makes them again once counted.
    """

    def __init__(self, wave, grower):
        self._wave, self._grower = wave, grower

    @property
    def splits(self) -> LevelSplits:
        """The level, for the wave that routes it (no child is built)."""
        return wave_splits(self._wave)[0]

    def complete(self, counts) -> list:
        """The trees, final: ``counts`` (n_splits, 2) are the rows of the
        level's (left, right) children, as the wave that routed it counts them."""
        book = self._grower.book
        for s, (t, parent, *_) in enumerate(self._wave):
            book.set_child_counts(t, parent, counts[s])
        self._grower.pending = None
        return self._grower.trees()
