#!/usr/bin/python3
"""dlcheck.py FOLDED MAPS - the dlprog samples of a folded user flame graph
(dtreport flame --folded --user), against MAPS (dtreport sql CSV: start,end
of every executable mapping the capture's snapshots give dlprog's
processes).  Prints "samples in_library whole bad example":
in_library: samples whose leaf is dlt_spin or dlt_inner;
whole: those with main;dlprog_loop;dlt_spin;dlt_inner at the leaf;
bad: samples with a frame of dlprog or libdlt.so left unnamed (NAME+0x...),
or a bare address inside code the process had mapped (known to the
capture, yet not when the sample was named).  A bare address in no
mapping at all is the unwinder's guess at a caller, not a naming failure.
"""
import re
import sys


def main():
    folded, maps = sys.argv[1], sys.argv[2]
    ranges = []
    with open(maps) as f:
        for line in f.read().splitlines()[1:]:
            parts = line.replace('"', '').split(',')
            if len(parts) >= 2 and parts[0].strip().isdigit():
                ranges.append((int(parts[0]), int(parts[1])))
    t = lib = whole = bad = 0
    ex = ''
    with open(folded) as f:
        for line in f:
            line = line.rstrip('\n')
            if not line.startswith('dlprog;'):
                continue
            stack, _, n = line.rpartition(' ')
            n = int(n)
            frames = stack.split(';')[1:]
            t += n
            if frames and frames[-1] in ('dlt_spin', 'dlt_inner'):
                lib += n
            if frames[-4:] == ['main', 'dlprog_loop', 'dlt_spin', 'dlt_inner']:
                whole += n
            for fr in frames:
                unnamed = re.match(r'^(dlprog|libdlt\.so)\+0x', fr)
                m = re.match(r'^0x([0-9a-f]+)$', fr)
                inside = m and any(lo <= int(m.group(1), 16) < hi for lo, hi in ranges)
                if unnamed or inside:
                    bad += n
                    ex = stack
                    break
    print(t, lib, whole, bad, ex[:300] or '-')


main()
