#!/usr/bin/python3
"""perfcmp.py PERF_SCRIPT_OUT DT_FOLDED NAME: do the ten heaviest user stacks
of `perf record --call-graph dwarf` + `perf script` agree with dtrec's?

Both sides become folded user stacks (comm;outer;...;inner).  Frames with no
symbol ([unknown] in perf, file+0xoff or 0xaddr in dt) become "?", and so
does a name only one side uses (an alias at the same address: perf says
__libc_start_main@@GLIBC_2.34 where dt says __libc_start_main_impl): what is
compared is the unwinding, not the choice among aliases.  Agreement: every
one of perf's ten heaviest stacks has a share of the samples within 3
points (or 30% of perf's share) of its share in dt, and those above 1% are
among dt's fifteen heaviest."""
import re
import sys
from collections import Counter


def perf_folded(path):
    out, comm, frames = Counter(), None, []

    def flush():
        if comm is not None and frames:
            out[";".join([comm] + frames[::-1])] += 1

    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if not line.strip():
            flush()
            comm, frames = None, []
        elif not line[0].isspace():
            flush()
            comm, frames = line.split()[0], []
        else:
            parts = line.split()
            if len(parts) < 3 or "kernel.kallsyms" in parts[-1]:
                continue
            sym = parts[1]
            frames.append("?" if sym == "[unknown]" else re.sub(r"@.*", "", sym))
    flush()
    return out


def dt_folded(path):
    out = Counter()
    for line in open(path, errors="replace"):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        fr = stack.split(";")
        fr = [fr[0]] + ["?" if re.search(r"\+0x[0-9a-f]+$|^0x[0-9a-f]+$", f) else f
                        for f in fr[1:]]
        out[";".join(fr)] += int(n)
    return out


def normalize(a, b):
    na = {f for s in a for f in s.split(";")[1:]}
    nb = {f for s in b for f in s.split(";")[1:]}
    common = na & nb

    def norm(c):
        out = Counter()
        for s, n in c.items():
            fr = s.split(";")
            out[";".join([fr[0]] + [f if f in common else "?" for f in fr[1:]])] += n
        return out
    return norm(a), norm(b)


def main():
    perf, dt = normalize(perf_folded(sys.argv[1]), dt_folded(sys.argv[2]))
    name = sys.argv[3]
    tp, td = sum(perf.values()), sum(dt.values())
    if tp < 500 or td < 500:
        print(f"FAIL {name}: too few samples (perf {tp}, dt {td})")
        return
    dtrank = {s: i for i, (s, _) in enumerate(dt.most_common())}
    bad = []
    for i, (s, n) in enumerate(perf.most_common(10)):
        sp, sd = 100.0 * n / tp, 100.0 * dt.get(s, 0) / td
        ok = (sp < 1.0 or dtrank.get(s, 99) < 15) and abs(sp - sd) <= max(3.0, 0.3 * sp)
        print(f"  #{i + 1:<2} perf {sp:5.1f}%  dt {sd:5.1f}% (rank {dtrank.get(s, -1) + 1})"
              f"  {'ok ' if ok else 'BAD'} {s[-110:]}")
        if not ok:
            bad.append(i + 1)
    if bad:
        print(f"FAIL {name}: perf's heaviest stacks {bad} are not among dtrec's with a "
              f"similar share ({tp} perf samples, {td} dt samples)")
    else:
        print(f"PASS {name}: the ten heaviest stacks of perf --call-graph dwarf are dtrec's "
              f"too, shares within 3 points ({tp} perf samples, {td} dt samples)")


main()
