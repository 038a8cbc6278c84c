"""Every random case where cutemma differs from C++, grouped by function, smallest first.

``PYTHONPATH=.:tests python -m cute_cpp.survey [N]`` prints, per function, the N smallest
differing cases (fewest elements, shortest text): the minimal repros to hand to whoever fixes
the algebra. Also prints how many cases C++ computes, refuses, or gets wrong.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict

from cute_cpp import batch, cases
from cute_cpp.compare import cutemma_outcome, judge, normalise


def _weight(case) -> tuple:
    return (len(str(case)), str(case))


def main(n: int = 5) -> None:
    all_cases = cases.random_cases()
    outcomes = {c.key: cutemma_outcome(c) for c in all_cases}
    predicted = {k for k, o in outcomes.items() if o.error is not None}
    got = batch.verdicts({c.key: c.cpp_expr() for c in all_cases}, predicted_refused=predicted)
    kinds = Counter("refused" if v.refused else "computed" for v in got.values())
    print(f"{len(all_cases)} cases: {dict(kinds)}")
    by_fn: dict[str, list] = defaultdict(list)
    for c in all_cases:
        why = judge(c, got[c.key], outcomes[c.key])
        if why is not None:
            by_fn[c.fn].append((c, why))
    for fn, items in sorted(by_fn.items()):
        print(f"\n## {fn}: {len(items)} differ")
        for c, why in sorted(items, key=lambda x: _weight(x[0]))[:n]:
            v = got[c.key]
            cpp = normalise(v.text) if v.text is not None else v.refused
            print(f"- [{c.key}] {c}\n    C++: {cpp}\n    {why}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
