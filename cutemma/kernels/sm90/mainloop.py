"""The consumers' k-tile loops of the sm90 GEMM: one wgmma batch per k tile, descriptors
from the plan, the ring's waits and releases, fp8 promotion (plain, with one batch in
flight, or by N halves), the "alternate" schedule's turns. :func:`cutemma.kernels.sm90.source.gemm_sm90_source`
places the loop text in the consumer warpgroups' tile loop.

"""

from __future__ import annotations

from cutemma.cuda.codegen import mma_asm
from cutemma.cuda.source import block, indent
from cutemma.errors import TiledMmaError
from cutemma.kernels.sm90.plan import BARRIER_BYTES as MB  # one mbarrier, the ring's stride
from cutemma.kernels.sm90.plan import Sm90Plan
from cutemma.kernels.sm90.ring import CONSUMER, ORDER_BAR
from cutemma.smem.descriptor import SMEM_WINDOW


def _wgmma_lines(plan: Sm90Plan, acc_name: str = "acc", first: str = "scale_d") -> str:
    """Every k block of one k tile: one wgmma per (im, jn, kb), descriptors from the plan,
    into the accumulators from ``plan.acc_offset(im, jn)`` (Sm90Plan.epilogue's order);
    ``first`` is the scale-d of k block 0 (0: overwrite the accumulators)."""
    op = plan.tiled.atom.op  # A's registers (RS) are the same for every N block
    _, offs_b = plan.descriptors["B"]
    out = []
    for kb in range(plan.k_blocks):
        for im in range(plan.mma_m):
            if plan.a_regs:  # RS: A is the registers a_frag[im][kb] (loaded by _a_loads)
                a = [f"a_frag[{im}][{kb}][{r}]" for r in range(op.a.count)]
            else:
                a = [f"desc_a{im}_{kb}"]
                out.append(f"const uint64_t {a[0]} = DESC_A | ((a_addr + a_off[{im}][{kb}]) >> 4);")
            for jn, (_, tiled) in enumerate(plan.columns):
                op_n = tiled.atom.op  # this N block's wgmma
                first_acc = plan.acc_offset(im, jn)
                acc = [f"{acc_name}[{first_acc + i}]" for i in range(op_n.c.count)]
                bits = plan.desc_b_bits.get(jn)
                desc = "DESC_B" if bits is None else f"{bits:#x}ull"
                db = f"{desc} | ((b_addr + {offs_b[0, jn, kb]}) >> 4)"
                scale = first if kb == 0 else "1"
                out.append(mma_asm(op_n, a=a, b=[f"({db})"], c=acc, extras={"scale_D": scale}))
    return "\n".join(out)


_LD_NARROW = {1: "ld.shared.u8", 2: "ld.shared.b16"}


def a_regs_wide(plan: Sm90Plan) -> tuple[bool, ...]:
    """Per A register (constant order / values per register): True when its values are
    consecutive and 4-byte aligned in the stage for every consumer thread (one 32-bit load)."""
    split, vpr = plan.a_regload, 4 // plan.elem_bytes
    threads = len(split.thread.table)
    full = []
    for t in range(threads):
        b = split.thread(t)
        full.append([b + c if split.op == "+" else b ^ c for c in split.consts])
    return tuple(
        all(
            row[r * vpr] % vpr == 0
            and row[r * vpr : (r + 1) * vpr] == list(range(row[r * vpr], row[r * vpr] + vpr))
            for row in full
        )
        for r in range(len(split.consts) // vpr)
    )


def _a_loads(plan: Sm90Plan) -> str:
    """RS: this k tile's A fragments from the stage into a_frag (plain shared loads at the
    offsets the RS atom's A TV layout and the stage layout give; low bytes first)."""
    eb, vpr = plan.elem_bytes, 4 // plan.elem_bytes
    _, parts = plan.a_regload.parts()
    regs = plan.tiled.atom.op.a.count
    wide = a_regs_wide(plan)
    out = [f"const uint32_t a_lds = smem + stage * {plan.stage_bytes};  // the stage's A"]

    def addr(i: int) -> str:
        j, add = parts[i]
        return f"a_lds + A_ld{j}" + (f" + {eb * add}" if add else "")

    for im in range(plan.mma_m):
        for kb in range(plan.k_blocks):
            for r in range(regs):
                dst = f"a_frag[{im}][{kb}][{r}]"
                first = ((im * plan.k_blocks + kb) * regs + r) * vpr
                if wide[first // vpr]:
                    out.append(
                        f'asm volatile("ld.shared.b32 %0, [%1];\\n" : "=r"({dst}) : "r"({addr(first)}));'
                    )
                    continue
                mask = (1 << (8 * eb)) - 1
                loads = " ".join(
                    f'asm volatile("{_LD_NARROW[eb]} %0, [%1];\\n" : "=h"(h[{h}]) : "r"({addr(first + h)}));'
                    for h in range(vpr)
                )
                pack = " | ".join(
                    f"((uint32_t)(h[{h}] & {mask:#x}) << {8 * eb * h})" for h in range(vpr)
                )
                out.append(f"{{ uint16_t h[{vpr}]; {loads} {dst} = {pack}; }}")
    return "\n".join(out)


def _fence(name: str, n: int) -> str:
    if name == "acch":  # f16x2 accumulator registers (acc_f16)
        return (
            f"#pragma unroll\nfor (int i = 0; i < {n // 2}; ++i) "
            'asm volatile("" : "+r"(acch[i]) :: "memory");'
        )
    return f"#pragma unroll\nfor (int i = 0; i < {n}; ++i) fence_acc({name}[i]);"


def _unpack_f16(n: int) -> str:
    """acc_f16: the tile's f16x2 sums into the f32 ``acc`` the epilogues read; value 2i is
    the low half of register i (PTX ISA wgmma D fragment for .f16: each .f16x2 register
    holds two adjacent columns, the lower one in the lower half)."""
    return (
        f"#pragma unroll\nfor (int i = 0; i < {n // 2}; ++i) {{ "
        "acc[2 * i] = f16_to_f32((uint16_t)(acch[i] & 0xffffu)); "
        "acc[2 * i + 1] = f16_to_f32((uint16_t)(acch[i] >> 16)); }"
    )


def _turns(plan: Sm90Plan) -> tuple[str, str]:
    """Schedule "alternate": (before, after) a k tile's wgmma batch. Warpgroup w waits for
    its turn on named barrier ORDER_BAR + w (warpgroup 0 not before its first batch) and
    then hands it to w + 1 (the last to 0, except after the CTA's last batch): arrivals
    and waits pair one to one (ring.alternate_consumer_ops, run by the ring model)."""
    if plan.config.schedule != "alternate":
        return "", ""
    C = plan.config.consumers
    before = (
        f"if (wg > 0 || turned) named_sync({ORDER_BAR} + wg, 256);  // my turn to issue\n"
        "turned = true;"
    )
    after = (
        f"if (wg < {C - 1} || kt + 1 < k_tiles || tile + gridDim.x < tiles)"
        f" named_arrive({ORDER_BAR} + (wg + 1) % {C}, 256);  // the next warpgroup's turn"
    )
    return before, after


def by_warpgroup(values: list[int] | tuple[int, ...]) -> str:
    """An unsigned C expression of consumer warpgroup ``wg``'s value: a chain of selects, no
    table in memory.

    >>> by_warpgroup([0, 12288])
    '(wg == 1 ? 12288u : 0u)'
    """
    pick = f"{values[0]}u"
    for w in range(1, len(values)):
        pick = f"(wg == {w} ? {values[w]}u : {pick})"
    return pick


def _b_warpgroup(plan: Sm90Plan) -> str:
    """This warpgroup's B columns past warpgroup 0's (``consumers_n``), in bytes; nothing when
    every warpgroup reads the same B."""
    offs = plan.b_warpgroup_offsets
    return f" + {by_warpgroup(offs)}" if any(offs) else ""


def mainloop(plan: Sm90Plan, release_stmt: str, after_issue: str = "") -> str:
    """The consumers' k-tile loop of one tile, ending with every wgmma retired.

    Plain: one accumulator set, ``scale_d = kt > 0``, one batch in flight. Promoted (fp8):
    each k tile's batch starts from zero and, once retired (``wait_group 0``), is added
    into the f32 set ``accf``, so wgmma's reduced-precision fp8 accumulation spans one k
    tile only. (Two sets chosen at run time with ``wait_group 1`` make ptxas serialise
    every wgmma, C7514; ``promote="overlap"`` keeps a batch in flight with the loop
    unrolled by two over static sets, :func:`_overlap_loop`; ``promote="split"`` issues
    each k tile as two half-width batches, one in flight while the other is added,
    :func:`_split_loop`.) The other consumer warpgroup
    keeps the tensor cores busy while one waits. Promoted, a stage is released as soon as ``wait_group 0`` retires its reads
    (ring release lag 0, before the FADDs): one stage more of the ring is free for the
    producer than with the plain loop's lag of 1 (run 14: 3 stages instead of 4 cost a
    fifth of the speed of 3-consumer 192x128). ``after_issue``: what runs once the tile's
    last wgmma is issued (pingpong: the order barrier's arrival, handing the tensor cores
    to the other warpgroup).

    >>> from cutemma.kernels.sm90.plan import Sm90Config, Sm90Plan
    >>> plan = Sm90Plan(Sm90Config(128, 256), "bf16", "K", "N", "bf16")
    >>> text = mainloop(plan, "release();")
    >>> text.count("wgmma.mma_async") == plan.mma_m * plan.k_blocks, "mbar_wait(full" in text
    (True, True)
    >>> wide = Sm90Plan(Sm90Config(128, 320, wgmma_n=64), "bf16", "K", "N", "bf16")
    >>> mainloop(wide, "release();").count("m64n64k16"), wide.mma_n * wide.k_blocks
    (20, 20)
    """
    S, n = plan.stages, plan.acc_per_thread
    head = [
        f"const uint32_t full = bars + {MB} * stage, empty = bars + {MB * S} + {MB} * stage;",
        f"mbar_wait(full, phase ^ {CONSUMER.wait_flip});  // the stage's bytes landed",
        # descriptor start addresses keep only address bits [4, 18) (PTX ISA
        # matrix-descriptor-encode): mask the window-relative part, since in a cluster the
        # shared::cta address carries the CTA's rank at bit 24 (SASS: SR_CgaCtaId << 24),
        # which an unmasked OR would add to LBO (the N-major-B cluster bug, notes/kernels-journal.md)
        f"const uint32_t a_addr = (smem & {SMEM_WINDOW - 1:#x}u) + stage * {plan.stage_bytes}, "
        f"b_addr = a_addr + {plan.bytes_A}{_b_warpgroup(plan)};  // window-relative, for descriptors only",
    ]
    tail = [f"prev_empty = empty;\nif (++stage == {S}) {{ stage = 0; phase ^= 1; }}"]
    turn_wait, turn_pass = _turns(plan)
    head += [turn_wait] if turn_wait else []
    issued = [turn_pass] if turn_pass else []
    if not plan.promote:
        # RS: wgmma reads A's registers until it retires, and the next k tile reloads them:
        # retire each batch before the loop goes on (wait_group 0), A loaded before the fence
        wait = (
            "wgmma_wait<0>();  // RS: this batch retired (its A registers are reloaded next)"
            if plan.a_regs
            else "wgmma_wait<1>();  // the previous k tile's batch is done: release its stage"
        )
        acc = "acch" if plan.acc_f16 else "acc"
        body = head + [
            "const int scale_d = kt > 0;  // the first k block of a tile overwrites acc",
            *([_a_loads(plan)] if plan.a_regs else []),
            _fence(acc, n),
            "wgmma_fence();",
            _wgmma_lines(plan, acc),
            "wgmma_commit();",
            *issued,
            wait,
            _fence(acc, n),
            f"if (kt > 0 && signals) {release_stmt}",
            *tail,
        ]
        return "\n".join(
            [
                "uint32_t prev_empty = 0;",
                block("for (int kt = 0; kt < k_tiles; ++kt)", "\n".join(body)),
                *([after_issue] if after_issue else []),
                "wgmma_wait<0>();",
                _fence(acc, n),
                f"if (signals) {release_stmt}  // k_tiles >= 1: the tile's last stage",
                *([_unpack_f16(n)] if plan.acc_f16 else []),
            ]  # fmt: skip
        )

    if plan.overlap:
        return _overlap_loop(plan, head, release_stmt, after_issue)
    if plan.split_n:
        return _split_loop(plan, release_stmt, after_issue)
    body = head + [
        _fence("acc", n),
        "wgmma_fence();",
        _wgmma_lines(plan, "acc", "0"),
        "wgmma_commit();",
        *issued,
        "wgmma_wait<0>();  // this k tile's sums are final: promote them into f32",
        f"if (signals) {release_stmt.replace('prev_empty', 'empty')}  // lag 0",
        _fence("acc", n),
        f"#pragma unroll\nfor (int i = 0; i < {n}; ++i) accf[i] += acc[i];",
        f"if (++stage == {S}) {{ stage = 0; phase ^= 1; }}",
    ]
    return "\n".join(
        [
            f"#pragma unroll\nfor (int i = 0; i < {n}; ++i) accf[i] = 0.f;",
            block("for (int kt = 0; kt < k_tiles; ++kt)", "\n".join(body)),
            *([after_issue] if after_issue else []),
        ]  # fmt: skip
    )


def _overlap_loop(plan: Sm90Plan, head: list[str], release_stmt: str, after_issue: str) -> str:
    """Promoted fp8 with one batch in flight (``Sm90Config(promote="overlap")``): k tiles
    alternate between wgmma sets ``acc0`` and ``acc1``; after issuing k tile kt into one
    set, ``wait_group 1`` retires kt - 1's batch, its stage is released (lag 1, the plain
    loop's ring) and that set is added into ``accf`` while kt's batch runs.

    The k-tile loop is unrolled by 2 by hand, so each wgmma and each FADD names one static
    set, with an exit (drain: ``wait_group 0``, release, add) after each half. ptxas keeps
    this shape pipelined; a rolled loop choosing the set at run time (a branch per parity
    of kt, or a ternary in the FADDs) makes it serialise every wgmma (C7514: non-wgmma
    instructions reading accumulators inside the pipeline stage) and spill
    (notes/kernels-journal.md, "fp8 promotion with one batch in flight").
    """
    S, n = plan.stages, plan.acc_per_thread

    def add(s: str) -> str:
        return _fence(s, n) + f"\n#pragma unroll\nfor (int i = 0; i < {n}; ++i) accf[i] += {s}[i];"

    def issue(s: str) -> list[str]:  # k tile kt into set s (scale-d 0: a fresh sum)
        return [
            "{",
            indent("\n".join(head)),
            indent(_fence(s, n)),
            "  wgmma_fence();",
            indent(_wgmma_lines(plan, s, "0")),
            "  wgmma_commit();",
            "  cur_empty = empty;",
            "}",
            f"if (++stage == {S}) {{ stage = 0; phase ^= 1; }}",
        ]

    def step(cur: str, prev: str) -> list[str]:  # issue kt into cur, retire and add prev
        return [
            f"if (kt == k_tiles) {{  // drain: {prev} holds the tile's last k tile",
            "  wgmma_wait<0>();",
            f"  if (signals) {release_stmt.replace('prev_empty', 'cur_empty')}",
            indent(add(prev)),
            "  break;",
            "}",
            "prev_empty = cur_empty;",
            *issue(cur),
            f"wgmma_wait<1>();  // k tile kt - 1's batch ({prev}) retired; kt's runs",
            f"if (signals) {release_stmt}  // lag 1",
            add(prev),
            "++kt;",
        ]

    return "\n".join(
        [
            f"#pragma unroll\nfor (int i = 0; i < {n}; ++i) accf[i] = 0.f;",
            "uint32_t prev_empty, cur_empty;",
            *issue("acc0"),  # k tile 0 (k_tiles >= 1)
            "int kt = 1;",
            block("for (;;)", "\n".join(step("acc1", "acc0") + step("acc0", "acc1"))),
            *([after_issue] if after_issue else []),
        ]  # fmt: skip
    )


def _k_steps(plan: Sm90Plan) -> tuple[int, ...]:
    """A's k-block offsets past k block 0, the same for every warpgroup (so a warpgroup
    holds one offset register, not one per k block)."""
    offs = plan.desc_offsets("A")
    steps = {tuple(o - row[0] for o in row) for row in offs.values()}
    if len(steps) != 1:  # pragma: no cover - the slices of every warpgroup are alike
        raise TiledMmaError(f"A's k-block steps differ by warpgroup: {offs}")
    return steps.pop()


def _half_lines(plan: Sm90Plan, h: int) -> str:
    """Part ``h`` of one k tile: a 64-row wgmma per k block on B's rows of that part
    (config.split_widths: halves where N is a multiple of 16), into ``accL`` (h = 0) or
    ``accH``, from zero (Sm90Plan.split_halves). B's stage
    follows A's (``a_addr + bytes_A``), folded into the offset."""
    ops, offs_b = plan.split_halves
    op = ops[h]
    steps = _k_steps(plan)
    out = []
    for kb in range(plan.k_blocks):
        acc = [f"acc{'LH'[h]}[{i}]" for i in range(op.c.count)]
        da = f"DESC_A | ((a_addr + a_off[0][0] + {steps[kb]}) >> 4)"
        db = f"DESC_B | ((a_addr + {plan.bytes_A + offs_b[h, kb]}) >> 4)"
        scale = "0" if kb == 0 else "1"
        out.append(mma_asm(op, a=[f"({da})"], b=[f"({db})"], c=acc, extras={"scale_D": scale}))
    return "\n".join(out)


def _split_loop(plan: Sm90Plan, release_stmt: str, after_issue: str) -> str:
    """Promoted fp8 by N halves (``Sm90Config(promote="split")``): each k tile is two
    half-width batches (config.split_widths: lo the wider by 8 columns where N is an odd
    multiple of 8), lo (B's first rows, into ``accL``) then hi (``accH``). After
    issuing hi(kt), ``wait_group 1`` retires lo(kt), whose sums are added into ``accf``
    while hi(kt) runs; then lo(kt+1) is issued and ``wait_group 1`` retires hi(kt): stage
    kt is read, so it is released (the plain loop's lag 1: after the next stage's wait),
    and hi's sums are added while lo(kt+1) runs. A half batch is always queued behind the
    FADDs, with the registers of ``promote=True`` (2 x N/2 wgmma values + the f32 set).

    The k loop is unrolled by two k tiles: rolled, ptxas serialises every wgmma (C7514)
    although each FADD names a static half (notes/kernels-journal.md, run 22).
    """
    S, n = plan.stages, plan.acc_per_thread
    counts = [op.c.count for op in plan.split_halves[0]]  # (lo's values come first in accf)

    def add(h: int) -> str:
        name, count = ("accL", "accH")[h], counts[h]
        return (
            _fence(name, count) + f"\n#pragma unroll\nfor (int i = 0; i < {count}; ++i)"
            f" accf[{h * counts[0]} + i] += {name}[i];"
        )

    def issue(h: int) -> list[str]:
        name = ("accL", "accH")[h]
        return [_fence(name, counts[h]), "wgmma_fence();", _half_lines(plan, h), "wgmma_commit();"]

    at_stage = [  # wait for the stage's bytes; its window-relative address (mainloop)
        f"mbar_wait(bars + {MB} * stage, phase ^ {CONSUMER.wait_flip});  // the bytes landed",
        f"a_addr = (smem & {SMEM_WINDOW - 1:#x}u) + stage * {plan.stage_bytes};",
    ]
    release = release_stmt.replace("prev_empty", "empty_kt")
    step_hi = [  # hi(kt) from lo(kt)'s stage; add lo(kt)
        *issue(1),
        "wgmma_wait<1>();  // lo(kt) retired; hi(kt) runs",
        add(0),
        f"empty_kt = bars + {MB * S} + {MB} * stage;",
        f"if (++stage == {S}) {{ stage = 0; phase ^= 1; }}",
        "++kt;",
    ]
    drain = ["wgmma_wait<0>();", f"if (signals) {release}  // the tile's last stage", add(1)]
    step_lo = [  # lo(kt) from the next stage; release kt - 1's stage, add its hi
        block("if (kt == k_tiles)", "\n".join([*drain, "break;"])),
        *at_stage,
        *issue(0),
        "wgmma_wait<1>();  // hi(kt - 1) retired: its stage is read; lo(kt) runs",
        f"if (signals) {release}",
        add(1),
    ]
    return "\n".join(
        [
            f"#pragma unroll\nfor (int i = 0; i < {n}; ++i) accf[i] = 0.f;",
            "uint32_t a_addr, empty_kt;",
            "int kt = 0;",
            *at_stage,
            *issue(0),  # lo(0) (k_tiles >= 1)
            block("for (;;)", "\n".join(step_hi + step_lo + step_hi + step_lo)),
            *([after_issue] if after_issue else []),
        ]  # fmt: skip
    )
