"""Every example of CuTe's layout, algebra and tensor docs, as a cutemma call and a C++ call.

The examples are the ones tests/layout/test_cute_docs.py copies by hand from
``media/docs/cpp/cute/01_layout.md``, ``02_layout_algebra.md``, ``03_tensor.md`` and the older
``media/docs/cute/02_layout_operations.md``; here C++ computes each one, so the doc's printed
value is checked against CuTe itself as well as against cutemma. Ints are static (``Int<n>``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import cutemma.layout as cl
from cute_cpp.cpp_text import Shape, cpp
from cute_cpp.cpp_text import text as arg_text
from cutemma.layout import Layout
from cutemma.layout.int_tuple import crd2idx, idx2crd, shape_div

P = Layout.parse

# Tensor examples need cute/tensor.hpp; show_elems prints "<shape>\t" then every element.
TENSOR_PRELUDE = """\
#include <cstdio>
#include <cstdlib>
#include <cute/tensor.hpp>
using namespace cute;
template <class T>
struct Elems { T t; };
template <class T>
void print(Elems<T> const& e) {
  print(shape(e.t));
  for (int i = 0; i < int(size(e.t)); ++i) { printf(" "); print(e.t(i)); }
}
template <class T> Elems<T> elems(T const& t) { return {t}; }
"""


def fmt(x) -> str:
    """An int-tuple or coordinate as CuTe prints it: ``(1,(1,2))``."""
    if isinstance(x, tuple):
        return "(" + ",".join(fmt(v) for v in x) + ")"
    return str(int(x))


@dataclass(frozen=True)
class DocCase:
    """One doc example: ``py()`` in cutemma, ``expr`` in C++; ``doc`` names its source."""

    key: str
    doc: str
    expr: str
    py: Callable
    fn: str = "doc"
    args: tuple = ()

    def call(self):
        return self.py()

    def cpp_expr(self) -> str:
        return self.expr

    def __str__(self) -> str:
        if self.args:
            return f"{self.doc}: {self.fn}(" + ", ".join(arg_text(a) for a in self.args) + ")"
        return f"{self.doc}: {self.expr}"


def _L(text: str) -> str:
    return cpp(P(text))


def _s(*t) -> str:
    return cpp(Shape(t))


def layout_cases() -> list[DocCase]:
    out: list[DocCase] = []

    def add(doc, expr, py, fn="doc", args=()):
        out.append(DocCase(f"{doc}/{len(out):03d}", doc, expr, py, fn, args))

    def op(doc, fn, *args):
        """A cutemma function that C++ spells the same way, on Python values."""
        add(
            doc,
            f"{fn}(" + ", ".join(cpp(a) for a in args) + ")",
            lambda: getattr(cl, fn)(*args),
            fn,
            args,
        )

    # 01_layout: construction (default LayoutLeft strides) and printing
    add("01_layout", "make_layout(Int<8>{})", lambda: Layout(8))
    for shape in ((2, 4), (2, (2, 2))):
        add("01_layout", f"make_layout({cpp(Shape(shape))})", lambda s=shape: Layout(s))
    for text in ("(2,4):(12,1)", "(2,(2,2)):(4,(2,1))"):
        add("01_layout", _L(text), lambda t=text: P(t))
    # print2D / print1D and the vector and matrix examples: the layouts' values
    for text in (
        "(2,4):(1,2)", "(2,4):(12,1)", "(2,(2,2)):(1,(2,4))", "(2,(2,2)):(4,(2,1))", "8:1", "8:2",
        "((4,2)):((2,1))", "((4,2)):((1,4))", "(4,2):(1,4)", "(4,2):(2,1)", "((2,2),2):((4,1),2)",
        "(3,(2,3)):(3,(12,1))", "((4,5),13):((12,1),64)",
    ):  # fmt: skip
        add("01_layout", _L(text), lambda t=text: P(t))
    # coordinate table of shape (3,(2,3)): idx2crd of 1-D, 2-D and natural coordinates
    shape = (3, (2, 3))
    sh = cpp(Shape(shape))
    for i in range(18):
        add("01_layout", f"idx2crd({i}, {sh})", lambda i=i: fmt(idx2crd(i, shape)))
        c2 = (i % 3, i // 3)
        add(
            "01_layout",
            f"idx2crd(make_coord({c2[0]},{c2[1]}), {sh})",
            lambda c=c2: fmt(idx2crd(c, shape)),
        )
    st = cpp(Shape((3, (12, 1))))
    add("01_layout", f"crd2idx(16, {sh}, {st})", lambda: crd2idx(16, shape, (3, (12, 1))))
    add(
        "01_layout",
        f"crd2idx(make_coord(1,5), {sh}, {st})",
        lambda: crd2idx((1, 5), shape, (3, (12, 1))),
    )
    add(
        "01_layout",
        f"crd2idx(make_coord(1,make_coord(1,2)), {sh}, {st})",
        lambda: crd2idx((1, (1, 2)), shape, (3, (12, 1))),
    )
    # sublayouts, select, group
    a = Layout((4, (3, 6)))
    add("01_layout", cpp(a), lambda: a)
    for idx in ((0,), (1,), (1, 0), (1, 1)):
        sub = ",".join(map(str, idx))

        def get(idx=idx):
            r = a
            for k in idx:
                r = r[k]
            return r

        add("01_layout", f"layout<{sub}>({cpp(a)})", get)
    b = Layout((2, 3, 5, 7))
    for modes in ((1, 3), (0, 1, 3), (2,)):
        add(
            "01_layout",
            f"select<{','.join(map(str, modes))}>({cpp(b)})",
            lambda m=modes: cl.select(b, *m),
        )
    g = cl.group(b, 0, 2)
    add("01_layout", f"group<0,2>({cpp(b)})", lambda: cl.group(b, 0, 2))
    add("01_layout", f"group<1,3>(group<0,2>({cpp(b)}))", lambda: cl.group(g, 1, 3))
    # concatenation
    a3, b4 = Layout(3, 1), Layout(4, 3)
    row, col = cl.make_layout(a3, b4), cl.make_layout(b4, a3)
    A3, B4 = cpp(a3), cpp(b4)
    add("01_layout", f"make_layout({A3}, {B4})", lambda: row)
    add("01_layout", f"make_layout({B4}, {A3})", lambda: col)
    add(
        "01_layout",
        f"make_layout(make_layout({A3}, {B4}), make_layout({B4}, {A3}))",
        lambda: cl.make_layout(row, col),
    )
    add("01_layout", f"make_layout({A3})", lambda: cl.make_layout(a3))
    add("01_layout", f"make_layout(make_layout({A3}))", lambda: cl.make_layout(cl.make_layout(a3)))
    add(
        "01_layout",
        f"make_layout({A3}, make_layout({A3}), {A3})",
        lambda: cl.make_layout(a3, cl.make_layout(a3), a3),
    )
    add("01_layout", f"append({A3}, {B4})", lambda: cl.append(a3, b4))
    add("01_layout", f"prepend({A3}, {B4})", lambda: cl.prepend(a3, b4))
    add("01_layout", f"append(append({A3}, {B4}), append({A3}, {B4}))", lambda: cl.append(row, row))

    # 02_layout_algebra
    co = P("(2,(1,6)):(1,(6,2))")
    op("02_layout_algebra", "coalesce", co)
    op("02_layout_algebra", "coalesce", co, Shape((1, 1)))
    op("02_layout_algebra", "coalesce", P("(2,4):(1,2)"))
    for A, B in (
        ("(6,2):(8,2)", "(4,3):(3,1)"), ("20:2", "(5,4):(4,1)"), ("20:2", "(4,5):(1,4)"),
        ("20:2", "(4,5):(5,1)"), ("(10,2):(16,4)", "(5,4):(1,5)"), ("(3,6,2,8):(1,7,100,1000)", "16:9"),
    ):  # fmt: skip
        op("02_layout_algebra", "composition", P(A), P(B))
    for shp, d in (((6, 2), 2), ((6, 2), 3), ((6, 2), 6), ((6, 2), 12), ((3, 6, 2, 8), 3),
                   ((3, 6, 2, 8), 6), ((3, 6, 2, 8), 9), ((3, 6, 2, 8), 72)):  # fmt: skip
        add(
            "02_layout_algebra",
            f"shape_div({cpp(Shape(shp))}, Int<{d}>{{}})",
            lambda s=shp, d=d: fmt(shape_div(s, d)),
        )
    a12 = P("(12,(4,8)):(59,(13,1))")
    op("02_layout_algebra", "composition", a12, (P("3:4"), P("8:2")))
    add(
        "02_layout_algebra",
        f"composition({cpp(a12)}, {_s(3, 8)})",
        lambda: cl.composition(a12, (3, 8)),
        "composition",
        (a12, (3, 8)),
    )
    for A in ("4:1", "6:4", "(4,6):(1,4)", "4:2", "(2,4):(1,6)", "(2,2):(1,6)"):
        op("02_layout_algebra", "complement", P(A), 24)
    a423 = P("(4,2,3):(2,1,8)")
    op("02_layout_algebra", "complement", P("4:2"), 24)
    op("02_layout_algebra", "logical_divide", a423, P("4:2"))
    a9 = P("(9,(4,8)):(59,(13,1))")
    tiler = (P("3:3"), P("(2,4):(1,8)"))
    for fn in ("composition", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide"):
        op("02_layout_algebra", fn, a9, tiler)
    op("02_layout_algebra", "complement", P("(2,2):(4,1)"), 24)
    op("02_layout_algebra", "composition", P("(2,3):(2,8)"), P("6:1"))
    op("02_layout_algebra", "logical_product", P("(2,2):(4,1)"), P("6:1"))

    # 02_layout_operations (older guide)
    tile, mat = P("(2,2):(1,2)"), P("(3,4):(4,1)")
    for fn in ("blocked_product", "logical_product", "raked_product"):
        op("02_layout_operations", fn, tile, mat)
    raked = P("((3,2),(4,2)):((16,1),(4,2))")
    sub = (P("2:3"), P("2:4"))
    op("02_layout_operations", "logical_divide", raked, sub)
    op("02_layout_operations", "zipped_divide", raked, sub)
    for t in ("4:1", "4:4", "4:2", "(2,2):(4,1)"):
        op("02_layout_operations", "logical_divide", P("16:3"), P(t))
    for text in ("(12,32,6):(1,128,0)", "(12,(4,8),6):(1,(32,512),0)"):
        for fn in ("logical_divide", "zipped_divide"):
            add("02_layout_operations", f"{fn}({_L(text)}, {_s(4, 8)})",
                lambda fn=fn, t=text: getattr(cl, fn)(P(t), (4, 8)), fn, (P(text), (4, 8)))  # fmt: skip

    # 03_tensor: slicing (layout level)
    A = P("((3,2),(2,5,2)):((4,1),(2,13,100))")
    for crd, ccrd in (
        ((2, None), "make_coord(2,_)"),
        ((None, 5), "make_coord(_,5)"),
        (((None, None), 5), "make_coord(make_coord(_,_),5)"),
        (((None, 1), (0, None, 1)), "make_coord(make_coord(_,1),make_coord(0,_,1))"),
        (((2, None), (None, 3, None)), "make_coord(make_coord(2,_),make_coord(_,3,_))"),
    ):
        add(
            "03_tensor",
            f"get<0>(slice_and_offset({ccrd}, {cpp(A)}))",
            lambda c=crd: cl.slice_and_offset(c, A)[0],
        )
        add(
            "03_tensor",
            f"get<1>(slice_and_offset({ccrd}, {cpp(A)}))",
            lambda c=crd: cl.slice_and_offset(c, A)[1],
        )
    # TV partitioning: a (T8,V4) -> 4x8 layout composed with the row-major 4x8 tile
    tv = P("((2,4),(2,2)):((8,1),(4,16))")
    op("03_tensor", "composition", P("(4,8):(8,1)"), tv)
    return out


def tensor_cases() -> list[DocCase]:
    """03_tensor on identity tensors: coordinates, local_tile, local_partition."""
    from cutemma.tensor import local_partition, local_tile, make_identity_tensor

    def elems(t) -> str:
        return fmt(t.shape) + "".join(" " + fmt(t(i)) for i in range(t.size()))

    out: list[DocCase] = []
    shape = (3, (2, 3))
    ident = f"make_identity_tensor({cpp(Shape(shape))})"
    out.append(
        DocCase(
            "03_tensor/identity",
            "03_tensor",
            f"elems({ident})",
            lambda: elems(make_identity_tensor(shape)),
        )
    )
    big = f"make_identity_tensor({_s(8, 24)})"
    for bx in range(2):
        for by in range(3):
            out.append(DocCase(
                f"03_tensor/local_tile/{bx}{by}", "03_tensor",
                f"elems(local_tile({big}, {_s(4, 8)}, make_coord({bx},{by})))",
                lambda bx=bx, by=by: elems(local_tile(make_identity_tensor((8, 24)), (4, 8), (bx, by))),
            ))  # fmt: skip
    for t in (0, 1, 5, 17, 31):
        out.append(DocCase(
            f"03_tensor/local_partition/{t:02d}", "03_tensor",
            f"elems(local_partition({big}, {cpp(Layout((4, 8)))}, {t}))",
            lambda t=t: elems(local_partition(make_identity_tensor((8, 24)), Layout((4, 8)), t)),
        ))  # fmt: skip
    return out
