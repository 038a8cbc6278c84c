"""A model of the mainloop's shared-memory stages, run over the steps of ``mainloop_steps``.

Written from the PTX rules, not from the generator: a cp.async group is complete for this
thread after ``cp.async.wait_group n`` leaves at most n newer groups pending; other
threads' chunks are visible after the next ``bar.sync``; a stage may be overwritten only
when a barrier separates every read of it from the write (other threads may lag).
"""

from __future__ import annotations


class PipelineError(AssertionError):
    pass


def run_schedule(prologue, body, stages: int, k_blocks: int, k_tiles: int) -> list[tuple]:
    """Run the steps for ``k_tiles`` k tiles; the (tile, k block) of every mma, in order."""
    S = stages
    tile_in = [None] * S  # the k tile each stage holds (or receives)
    state = ["empty"] * S  # empty | flying | landed (this thread) | visible (every thread)
    read_since_sync = [False] * S
    groups: list[list[int]] = []  # stages written by each committed group, oldest first
    open_group: list[int] = []
    pending = 0  # groups committed and not yet waited for
    frags: dict[int, tuple] = {}
    rd = wr = 0
    done = []

    def step(s, kt):
        nonlocal rd, wr, pending, open_group
        kind = s[0]
        if kind == "copy":
            tile = s[1] if kt is None else kt + s[1]
            if tile < k_tiles:
                if read_since_sync[wr]:
                    raise PipelineError(f"tile {tile} overwrites stage {wr} before a barrier")
                if state[wr] == "flying":
                    raise PipelineError(f"stage {wr} written twice in flight")
                tile_in[wr], state[wr] = tile, "flying"
                open_group.append(wr)
            wr = (wr + 1) % S
        elif kind == "commit":
            groups.append(open_group)
            open_group = []
            pending += 1
        elif kind == "wait":
            while pending > s[1]:
                for st in groups[len(groups) - pending]:
                    state[st] = "landed"
                pending -= 1
        elif kind == "sync":
            for st in range(S):
                read_since_sync[st] = False
                if state[st] == "landed":
                    state[st] = "visible"
        elif kind == "next_read":
            rd = (rd + 1) % S
        elif kind == "ldsm":
            kb, buf = s[1], s[2]
            want = 0 if kt is None else (kt if kb > 0 else kt + 1)
            if want < k_tiles:
                if tile_in[rd] != want or state[rd] != "visible":
                    raise PipelineError(
                        f"k tile {kt}: ldmatrix of tile {want} block {kb} reads stage {rd} "
                        f"holding tile {tile_in[rd]} ({state[rd]})"
                    )
                read_since_sync[rd] = True
            frags[buf] = (want, kb)
        elif kind == "mma":
            if frags.get(s[2]) != (kt, s[1]):
                raise PipelineError(
                    f"k tile {kt}: mma of block {s[1]} found {frags.get(s[2])} in buffer {s[2]}"
                )
            done.append((kt, s[1]))
        elif kind == "move":
            frags[s[2]] = frags.get(s[1])
        else:  # pragma: no cover
            raise PipelineError(f"unknown step {s}")

    for s in prologue:
        step(s, None)
    for kt in range(k_tiles):
        for s in body:
            step(s, kt)
    return done
