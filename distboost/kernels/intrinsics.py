"""Six operations numba does not emit by itself (in code it can cache), for the kernels.

* ``prefetch`` (LLVM's ``llvm.prefetch``): histogram passes over a node's rows
  read rows that are sorted but far apart (one node's rows are spread over
  the whole partition), so each read would wait for memory. Asking for a row
  some iterations ahead lets those waits overlap, as XGBoost's histogram
  kernels do with ``PREFETCH_READ_T0``.
* ``add_pair``: a histogram bin's (g, h) are adjacent int64s; adding a row's
  pair as one 128-bit vector (one load and one store instead of two each)
  makes the innermost histogram loop about a fifth faster. Integer addition,
  so the sums are the same to the bit.
* ``add_8``, ``add_4``, ``add_2``: a run of 8, 4 or 2 adjacent int64s added
  to another as one vector load of each, add and store: a row of many
  statistics (vector leaves' k outputs) goes into its bin in a few wide
  additions, where pairs took five loads and stores for ten statistics and
  the row's values were read again for every feature.
* ``trailing_zeros`` (LLVM's ``llvm.cttz``): the position of a word's lowest
  set bit, one instruction, for walking the bins a node's rows fill.
* ``set_threads``, ``get_threads``: ``numba.set_num_threads`` and
  ``numba.get_num_threads`` inside compiled code, which numba itself calls
  through ctypes pointers, so that no function using them can be cached; here
  the threading layer's own functions are called by name, resolved when the
  code is linked (``launch_threads`` first).
"""

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic


def _element_pointer(context, builder, signature, args):
    """LLVM pointer to ``array[index]`` (the first two arguments), no wraparound."""
    array_type = signature.args[0]
    ary = context.make_array(array_type)(context, builder, args[0])
    return cgutils.get_item_pointer(context, builder, array_type, ary, [args[1]],
                                    wraparound=False)


@intrinsic
def prefetch(typingctx, array, index):
    """Hint that ``array[index]`` (a 1-D array) will be read soon; no effect on results."""
    if not isinstance(array, types.Array) or array.ndim != 1:
        return None

    def codegen(context, builder, signature, args):
        pointer = _element_pointer(context, builder, signature, args)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
            "llvm.prefetch.p0i8",
        )
        # read (0), keep in all cache levels (3), data cache (1)
        builder.call(fn, [builder.bitcast(pointer, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(array, index), codegen


@intrinsic
def add_pair(typingctx, array, index, a, b):
    """``array[index] += a; array[index + 1] += b`` as one <2 x i64> load, add and store.

    ``array`` is a 1-D contiguous int64 array; ``index + 1`` must be in bounds.
    """
    if not (isinstance(array, types.Array) and array.ndim == 1 and array.layout == "C"
            and array.dtype == types.int64):
        return None

    def codegen(context, builder, signature, args):
        pair = ir.VectorType(ir.IntType(64), 2)
        pointer = builder.bitcast(_element_pointer(context, builder, signature, args),
                                  pair.as_pointer())
        i32 = ir.IntType(32)
        row = builder.insert_element(ir.Constant(pair, None), args[2], i32(0))
        row = builder.insert_element(row, args[3], i32(1))
        builder.store(builder.add(builder.load(pointer, align=8), row), pointer, align=8)
        return context.get_dummy_value()

    return types.void(array, index, types.int64, types.int64), codegen


def _run_add(width):
    """An intrinsic ``dst[i:i + width] += src[j:j + width]`` (1-D contiguous
    int64 arrays, bounds not checked) as one <width x i64> load of each, add
    and store."""

    @intrinsic
    def add_run(typingctx, dst, i, src, j):
        for a in (dst, src):
            if not (isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C"
                    and a.dtype == types.int64):
                return None

        def codegen(context, builder, signature, args):
            run = ir.VectorType(ir.IntType(64), width).as_pointer()
            to = builder.bitcast(_element_pointer(context, builder, signature, args), run)
            src_ptr = _element_pointer(context, builder, signature.replace(args=signature.args[2:]),
                                       args[2:])
            frm = builder.bitcast(src_ptr, run)
            total = builder.add(builder.load(to, align=8), builder.load(frm, align=8))
            builder.store(total, to, align=8)
            return context.get_dummy_value()

        return types.void(dst, i, src, j), codegen

    return add_run


add_8, add_4, add_2 = _run_add(8), _run_add(4), _run_add(2)


def launch_threads() -> None:
    """Start numba's threading layer (once): what ``set_threads`` calls must exist."""
    from numba.np.ufunc import parallel

    if not parallel._is_initialized:  # the launch itself takes a lock: every round's grower asks
        parallel._launch_threads()


@intrinsic
def set_threads(typingctx, n):
    """Parallel regions this thread starts from now on use ``n`` threads
    (1 <= n <= the pool numba started with; not checked)."""
    if not isinstance(n, types.Integer):
        return None
    launch_threads()

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i32]), "set_num_threads")
        builder.call(fn, [builder.trunc(args[0], i32)])
        return context.get_dummy_value()

    return types.void(n), codegen


@intrinsic
def get_threads(typingctx):
    """The threads parallel regions this thread starts use."""
    launch_threads()

    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(32), []), "get_num_threads")
        return builder.sext(builder.call(fn, []), ir.IntType(64))

    return types.int64(), codegen


@intrinsic
def trailing_zeros(typingctx, word):
    """The number of zero bits below the lowest set bit of a uint64 (64 for 0)."""
    if word != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        i64, i1 = ir.IntType(64), ir.IntType(1)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(i64, [i64, i1]), "llvm.cttz.i64")
        return builder.call(fn, [args[0], i1(0)])

    return types.int64(word), codegen
