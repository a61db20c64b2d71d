"""The trees of a model file, checked before any kernel walks them.

The traversal kernels (``kernels.tree``, ``kernels.treeshap``) trust their
input: they follow child links without bounds checks, index bitsets by
``cat_index`` and walk a tree for as many steps as its links are deep. A
model file is user input, so what they rely on is proven here first, for
every tree at once with numpy (thousands of trees in milliseconds):

* every field of every node has its type and range (``NODE_DTYPE``'s):
  integers where integers are stored, flags 0 or 1, ``bin_threshold`` a bin
  code 0 to 255, counts and covers >= 0, finite floats;
* each tree is a tree: a leaf has no children (-1), a split has two nodes of
  its tree, every node but node 0 is the child of exactly one node and is
  reached from node 0 (no cycle), and the stored depths are the links';
* splits use the model's features as its bins say: the feature exists, a
  categorical split is on a categorical feature and has a bitset row, a
  numeric split's threshold is its feature's bin edge at ``bin_threshold``;
* bitsets are rows of four 64-bit words; leaf vectors, where a tree has
  them, are one row of finite numbers per node, as wide in every tree.

Every refusal names the file, the tree (``trees[round][index]``), the key
and the node.
"""

from __future__ import annotations

import re
from itertools import chain, pairwise
from typing import NamedTuple

import numpy as np

from ..kernels.common import N_BITSET_WORDS, NODE_DTYPE
from ..trees.tree import Tree
from .model_checker import DAMAGED, Checker, describe, short

NAMES = NODE_DTYPE.names
RANGES = {"is_leaf": (0, 1), "missing_left": (0, 1), "is_categorical": (0, 1),
          "bin_threshold": (0, 255), "count": (0, 2**63 - 1), "depth": (0, 2**31 - 1)}
"""Node fields narrower than their dtype; the others take any value of it."""
WORD = re.compile(r"[0-9]{1,20}")


class FeatureBins(NamedTuple):
    """What the trees' splits are checked against: the model's features and bins."""

    names: list  # feature_names
    is_categorical: np.ndarray  # (n_features,) bool
    edges: np.ndarray  # every numeric feature's bin edges, feature after feature, float64
    edge_start: np.ndarray  # (n_features + 1,) int64: feature j's are edges[edge_start[j]:...]


class CheckedTrees(NamedTuple):
    """A model file's trees, checked: every node of every tree in one array."""

    nodes: np.ndarray  # NODE_DTYPE, tree after tree
    start: np.ndarray  # (n_trees + 1,) int64: tree t is nodes[start[t]:start[t + 1]]
    per_round: list  # the number of trees of each round
    bitsets: list  # per tree, (n_rows, 4) uint64
    leaf_values: list  # per tree, (n_nodes, K) float64 or None

    def build(self) -> list:
        """The trees, round by round (each tree's nodes a copy of its own)."""
        trees = [Tree(self.nodes[a:b].copy(), bits, values) for a, b, bits, values
                 in zip(self.start[:-1], self.start[1:], self.bitsets, self.leaf_values)]
        ends = np.cumsum([0, *self.per_round])
        return [trees[a:b] for a, b in pairwise(ends)]

    def largest_leaf(self) -> np.ndarray:
        """Per tree, the largest |value| of its leaves, shape (n_trees,)."""
        if len(self.start) == 1:
            return np.zeros(0)
        leaf = self.nodes["is_leaf"] == 1
        return np.maximum.reduceat(np.where(leaf, np.abs(self.nodes["value"]), 0.0),
                                   self.start[:-1])

    def largest_leaf_vector(self) -> np.ndarray:
        """Per tree, the largest |entry| of its leaves' vectors (0 without), shape (n_trees,)."""
        out = np.zeros(len(self.leaf_values))
        for t, (values, a, b) in enumerate(zip(self.leaf_values, self.start[:-1], self.start[1:])):
            if values is not None and values.size:
                out[t] = np.abs(values[self.nodes["is_leaf"][a:b] == 1]).max(initial=0.0)
        return out


class _Where:
    """Names a node of the concatenated trees: tree, key and node."""

    def __init__(self, path: str, per_round: list, start: np.ndarray):
        self.path, self.start = path, start
        first = np.cumsum([0, *per_round], dtype=np.int64)[:-1]  # each round's first tree
        self.round = np.repeat(np.arange(len(per_round)), per_round)
        self.index = np.arange(len(self.round)) - np.repeat(first, per_round)

    def tree_of(self, g: int) -> int:
        return int(np.searchsorted(self.start, g, side="right") - 1)

    def tree(self, t: int) -> str:
        return f"{self.path}[{self.round[t]}][{self.index[t]}]"

    def node(self, g: int) -> int:
        return int(g - self.start[self.tree_of(g)])

    def key(self, g: int, name: str) -> str:
        return f"{self.tree(self.tree_of(g))}.nodes.{name}[{self.node(g)}]"


def check_trees(c: Checker, rounds: list, bins: FeatureBins, path: str) -> CheckedTrees:
    """Check a model file's ``trees`` (a list of rounds, each a list of trees).

    Parameters
    ----------
    c : Checker
    rounds : list
        The decoded ``trees`` key.
    bins : FeatureBins
    path : str
        Where ``rounds`` is in the file (``"trees"``).

    Returns
    -------
    CheckedTrees

    Raises
    ------
    ModelFileError
        The first thing wrong, naming the file, the tree, the key and the node.
    """
    columns, per_round, sizes, bit_rows, vectors = _read_trees(c, rounds, path)
    start = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).astype(np.int64)
    where = _Where(path, per_round, start)
    nodes = np.zeros(int(start[-1]), NODE_DTYPE)
    for name in NAMES:
        nodes[name] = _column(c, name, list(chain.from_iterable(columns[name])), where)
    _check_links(c, nodes, start, where)
    bitsets = _bitsets(c, bit_rows, where)
    _check_splits(c, nodes, start, where, bins, np.array([len(b) for b in bitsets], np.int64))
    return CheckedTrees(nodes, start, per_round, bitsets, _leaf_values(c, vectors, sizes, where))


def _read_trees(c: Checker, rounds: list, path: str):
    """The trees' lists, by node field, after checking the file's structure
    (rounds are lists of objects; every node field a list, one item per node)."""
    columns = {name: [] for name in NAMES}
    per_round, sizes, bit_rows, vectors = [], [], [], []
    for r, round_trees in enumerate(rounds):
        if not isinstance(round_trees, list):
            c.fail(f"{path}[{r}]", f"expected a list of trees, got {describe(round_trees)}")
        per_round.append(len(round_trees))
        for i, tree in enumerate(round_trees):
            where = f"{path}[{r}][{i}]"
            nodes = tree.get("nodes") if type(tree) is dict else None
            fields = [nodes.get(name) for name in NAMES] if type(nodes) is dict else [None]
            if not (all(type(f) is list for f in fields) and len(set(map(len, fields))) == 1):
                fields = _node_fields(c, tree, where)  # says what is wrong
            if not fields[0]:
                c.fail(f"{where}.nodes", "has no nodes; a tree has at least its root, node 0")
            for name, field in zip(NAMES, fields):
                columns[name].append(field)
            sizes.append(len(fields[0]))
            bit_rows.append(c.typed(tree, "cat_bitsets", list, where))
            vectors.append(c.typed(tree, "leaf_values", list, where, optional=True))
    return columns, per_round, sizes, bit_rows, vectors


def _node_fields(c: Checker, tree, where: str) -> list:
    """A tree's node fields, one list per field, of one length; else the refusal."""
    if not isinstance(tree, dict):
        c.fail(where, f"expected an object, got {describe(tree)}")
    nodes = c.typed(tree, "nodes", dict, where)
    fields = [c.typed(nodes, name, list, f"{where}.nodes") for name in NAMES]
    for name, field in zip(NAMES, fields):
        if len(field) != len(fields[0]):
            c.fail(f"{where}.nodes.{name}", f"has {len(field)} entries but nodes.{NAMES[0]} has "
                                            f"{len(fields[0])}; every node field has one entry "
                                            f"per node")
    return fields


def _column(c: Checker, name: str, values: list, where: _Where) -> np.ndarray:
    """One node field of every tree as an array of its kind, within its range."""
    if NODE_DTYPE[name].kind == "f":
        array = c.array(values, "number", lambda g: where.key(g, name))
        c.finite(array, lambda g: where.key(g, name), f"a finite {name}")
        if name == "cover":  # sums of hessians or weights, which are >= 0
            _first_of(c, array < 0, lambda g: where.key(g, name),
                      lambda g: f"is {array[g]}; a cover (a sum of hessians or weights) is >= 0")
        return array
    info = np.iinfo(NODE_DTYPE[name])
    lo, hi = RANGES.get(name, (info.min, info.max))
    rule = f"{name} is " + {(0, 1): "0 or 1", (0, 255): "a bin code, 0 to 255"}.get(
        (lo, hi), f"{lo} to {hi}")
    array = c.array(values, "int", lambda g: where.key(g, name), f"{rule}; {DAMAGED}")
    bad = np.flatnonzero((array < lo) | (array > hi))
    if len(bad):
        c.fail(where.key(bad[0], name), f"is {array[bad[0]]}; {rule}; {DAMAGED}")
    return array


def _first_of(c: Checker, bad: np.ndarray, key_of, message) -> None:
    """Fail at the first item of ``bad`` (a mask), if any, saying ``message(i)``."""
    found = np.flatnonzero(bad)
    if len(found):
        c.fail(key_of(int(found[0])), f"{message(int(found[0]))}; {DAMAGED}")


def _first(c: Checker, bad: np.ndarray, where: _Where, name: str, message) -> None:
    """Fail at the first node of ``bad`` (a mask over every node), if any:
    ``message(node)`` says what is wrong with it."""
    found = np.flatnonzero(bad)
    if len(found):
        g = int(found[0])
        c.fail(where.key(g, name), f"{message(g, where.node(g))}; {DAMAGED}")


def _check_links(c: Checker, nodes: np.ndarray, start: np.ndarray, where: _Where) -> None:
    """Each tree is a tree of its nodes, rooted at node 0, with the stored depths."""
    sizes = np.diff(start)
    root = np.repeat(start[:-1], sizes)  # each node's tree's node 0
    local = np.arange(len(nodes)) - root
    size = np.repeat(sizes, sizes)
    leaf = nodes["is_leaf"] == 1
    links = {side: nodes[side].astype(np.int64) for side in ("left", "right")}
    for side, child in links.items():
        _first(c, leaf & (child != -1), where, side,
               lambda g, k, side=side, child=child: f"node {k} is a leaf (is_leaf 1) but has "
               f"{side} child {child[g]}; a leaf's left and right are -1")
    for side, child in links.items():
        _first(c, ~leaf & (child == local), where, side,
               lambda g, k, side=side: f"node {k} is its own {side} child; a tree has no cycles")
        _first(c, ~leaf & ((child < 1) | (child >= size)), where, side,
               lambda g, k, side=side, child=child: f"node {k}'s {side} child {child[g]} is not "
               f"a node of its tree (nodes 1 to {size[g] - 1}; node 0 is the root)")
    split = np.flatnonzero(~leaf)
    child = np.concatenate([root[split] + links["left"][split],
                            root[split] + links["right"][split]])
    parent = np.concatenate([split, split])
    _check_one_parent(c, child, parent, local, where)
    up = np.arange(len(nodes))
    up[child] = parent
    depth = (local != 0).astype(np.int64)
    for _ in range(int(sizes.max(initial=1)).bit_length()):  # pointer jumping: 2**i levels up
        depth, up = depth + depth[up], up[up]
    unreached = np.flatnonzero(up != root)
    if len(unreached):
        g = int(unreached[0])
        t = where.tree_of(g)
        ring = (unreached[unreached < where.start[t + 1]][:6] - where.start[t]).tolist()
        c.fail(f"{where.tree(t)}.nodes", f"node {where.node(g)} is not reached from node 0: "
                                         f"it is in or below a cycle of child links (nodes "
                                         f"{ring} are not reached); {DAMAGED}")
    _first(c, nodes["depth"] != depth, where, "depth",
           lambda g, k: f"node {k} has depth {nodes['depth'][g]} but is {depth[g]} level(s) "
                        f"below node 0")


def _check_one_parent(c: Checker, child: np.ndarray, parent: np.ndarray, local: np.ndarray,
                      where: _Where) -> None:
    """Every node but node 0 is the child of exactly one split (``child[i]`` of
    ``parent[i]``, global ids; the first half are left children)."""
    count = np.bincount(child, minlength=len(local))
    twice = np.flatnonzero(count > 1)
    if len(twice):
        j = twice[0]
        links = sorted((int(parent[i]), "left" if i < len(child) // 2 else "right")
                       for i in np.flatnonzero(child == j)[:2])
        (first, first_side), (g, side) = links
        c.fail(where.key(g, side), f"node {where.node(j)} is the {side} child of node "
                                   f"{where.node(g)} and the {first_side} child of node "
                                   f"{where.node(first)}; in a tree each node has one parent; "
                                   f"{DAMAGED}")
    orphan = np.flatnonzero((count == 0) & (local != 0))
    if len(orphan):
        g = int(orphan[0])
        c.fail(f"{where.tree(where.tree_of(g))}.nodes",
               f"node {where.node(g)} is no node's child, so node 0 does not reach it; {DAMAGED}")


def _check_splits(c: Checker, nodes: np.ndarray, start: np.ndarray, where: _Where,
                  bins: FeatureBins, n_bitset_rows: np.ndarray) -> None:
    """Split nodes use the model's features, bins and bitsets."""
    split = nodes["is_leaf"] == 0
    n_features = len(bins.names)
    feature = nodes["feature"].astype(np.int64)
    _first(c, split & ((feature < 0) | (feature >= n_features)), where, "feature",
           lambda g, k: f"node {k} uses feature index {feature[g]} but the model has "
                        f"{n_features} features (feature_names)")
    f = np.where(split, feature, 0)
    categorical = nodes["is_categorical"] == 1
    kinds = ("numeric", "categorical")
    _first(c, split & (categorical != bins.is_categorical[f]), where, "is_categorical",
           lambda g, k: f"node {k} is a {kinds[int(categorical[g])]} split on feature {f[g]} "
                        f"({short(bins.names[f[g]])}), which is {kinds[1 - int(categorical[g])]}")
    rows = np.repeat(n_bitset_rows, np.diff(start))
    cat_index = nodes["cat_index"].astype(np.int64)
    _first(c, split & categorical & ((cat_index < 0) | (cat_index >= rows)), where, "cat_index",
           lambda g, k: f"node {k} is a categorical split with cat_index {cat_index[g]}, but its "
                        f"tree has {rows[g]} bitset row(s) (cat_bitsets)")
    numeric = split & ~categorical
    b = nodes["bin_threshold"].astype(np.int64)
    n_edges = np.diff(bins.edge_start)[f]
    _first(c, numeric & (b >= n_edges), where, "bin_threshold",
           lambda g, k: f"node {k} splits feature {f[g]} at bin {b[g]}, but the feature has "
                        f"{n_edges[g]} bin edge(s) (bins 0 to {n_edges[g] - 1} can split)")
    edge = bins.edges[np.where(numeric, bins.edge_start[f] + b, 0)] if len(bins.edges) else 0.0
    _first(c, numeric & (nodes["threshold"] != edge), where, "threshold",
           lambda g, k: f"node {k}'s threshold {float(nodes['threshold'][g])!r} is not the bin "
                        f"edge of its bin_threshold, bin_edges[{f[g]}][{b[g]}] = "
                        f"{float(edge[g])!r}: the trees and the bins disagree")


def _bitsets(c: Checker, per_tree: list, where: _Where) -> list:
    """Each tree's ``cat_bitsets`` as a (n_rows, 4) uint64 array: rows of four
    words, each a whole number 0 to 2**64 - 1 (written as text, or as a number)."""
    rows = list(chain.from_iterable(per_tree))
    if not (all(t is list for t in set(map(type, rows))) and set(map(len, rows)) <= {4}):
        _bad_bitset(c, per_tree, where, lambda row: not (isinstance(row, list)
                                                         and len(row) == N_BITSET_WORDS),
                    f"expected a list of {N_BITSET_WORDS} words")
    bits = _words(list(chain.from_iterable(rows)))
    if bits is None:
        _bad_bitset(c, per_tree, where, lambda row: not all(map(_is_word, row)),
                    "expected four whole numbers 0 to 2**64 - 1 (as text)")
    bits = bits.reshape(-1, N_BITSET_WORDS)
    ends = np.cumsum([0, *map(len, per_tree)])
    return [bits[a:b] for a, b in pairwise(ends)]


def _words(words: list) -> np.ndarray | None:
    """The words as uint64, or None if one is not a whole number 0 to 2**64 - 1.

    Texts of ASCII digits (as files hold them) are recognised at once from
    their concatenation; anything else word by word.
    """
    if all(t is str for t in set(map(type, words))):
        joined = "".join(words)
        lengths = set(map(len, words))
        simple = joined.isascii() and joined.isdigit() and not lengths - set(range(1, 21))
    else:
        simple = False
    if simple or all(map(_is_word, words)):
        try:
            return np.fromiter(map(int, words), np.uint64, len(words))
        except OverflowError:  # 20 digits, 2**64 or more
            return None
    return None


def _is_word(w) -> bool:
    if isinstance(w, str):
        return WORD.fullmatch(w) is not None and int(w) < 2**64
    return isinstance(w, int) and not isinstance(w, bool) and 0 <= w < 2**64


def _bad_bitset(c: Checker, per_tree: list, where: _Where, bad, expected: str) -> None:
    """Fail at the first bitset row that is ``bad``."""
    for t, rows in enumerate(per_tree):
        for i, row in enumerate(rows):
            if bad(row):
                c.fail(f"{where.tree(t)}.cat_bitsets[{i}]", f"{expected}, got {describe(row)}; "
                                                           f"{DAMAGED}")


def _leaf_values(c: Checker, per_tree: list, sizes: list, where: _Where) -> list:
    """Each tree's ``leaf_values`` (None where absent) as an (n_nodes, K) float64
    array: one row per node, every row of every tree K finite numbers."""
    present = [t for t, v in enumerate(per_tree) if v is not None]
    for t in present:
        if len(per_tree[t]) != sizes[t]:
            c.fail(f"{where.tree(t)}.leaf_values", f"has {len(per_tree[t])} rows for "
                                                   f"{sizes[t]} nodes; {DAMAGED}")
    rows = list(chain.from_iterable(per_tree[t] for t in present))
    tree = np.repeat(np.array(present, np.int64), [sizes[t] for t in present])
    row_start = np.cumsum([0, *[sizes[t] for t in present]])

    def row_key(i: int) -> str:
        t = np.searchsorted(row_start, i, side="right") - 1
        return f"{where.tree(tree[i])}.leaf_values[{i - row_start[t]}]"

    if not all(t is list for t in set(map(type, rows))):
        i = next(i for i, row in enumerate(rows) if not isinstance(row, list))
        c.fail(row_key(i), f"expected a list of numbers, got {describe(rows[i])}")
    widths = np.fromiter(map(len, rows), np.int64, len(rows))
    width = int(np.bincount(widths).argmax()) if len(rows) else 1  # the rows' usual width
    if width == 0:
        c.fail(row_key(int(np.argmin(widths))), f"is empty; a leaf_values row holds a value per "
                                                f"class or output; {DAMAGED}")
    odd = np.flatnonzero(widths != width)
    if len(odd):
        c.fail(row_key(odd[0]), f"has {widths[odd[0]]} values but leaf_values rows have "
                                f"{width}, one per class or output; {DAMAGED}")
    values = c.array(list(chain.from_iterable(rows)), "number",
                     lambda i: f"{row_key(i // width)}[{i % width}]")
    c.finite(values, lambda i: f"{row_key(i // width)}[{i % width}]", "a finite leaf value")
    out: list = [None] * len(per_tree)
    for t, a, b in zip(present, row_start[:-1], row_start[1:]):
        out[t] = values[a * width:b * width].reshape(-1, width)
    return out
