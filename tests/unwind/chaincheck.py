#!/usr/bin/python3
"""chaincheck.py FOLDED BINARY COMM - stacks of COMM in a folded flame graph
(dtreport flame --folded --user), checked against the five-deep chain of
target.c whatever their names: frames the capture left as bare addresses
(a process gone before its symbols were read) are named here from BINARY's
symbol table (a static, non-PIE build: fixed addresses).  Prints
"total whole truncated wrong examples...": a stack is whole when it runs
from _start to its leaf in the chain's order, truncated when it is marked
so and is an unbroken piece of the chain, wrong otherwise.  Only stacks
whose leaf is main or a levelN count."""
import bisect
import subprocess
import sys

folded, binary, comm = sys.argv[1:4]
CHAIN = ["_start", "__libc_start_main_impl", "__libc_start_call_main", "main",
         "level1", "level2", "level3", "level4", "level5"]

syms = []
for line in subprocess.run(["nm", "-n", "--defined-only", binary], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    f = line.split()
    if len(f) == 3 and f[1] in "tTwW":
        syms.append((int(f[0], 16), f[2]))
addrs = [a for a, _ in syms]


def name(frame, leaf):
    if not frame.startswith("0x"):
        return frame
    a = int(frame, 16) - (0 if leaf else 1)   # a return address follows its call
    i = bisect.bisect_right(addrs, a) - 1
    return syms[i][1] if i >= 0 else frame


total = whole = trunc = wrong = 0
examples = []
for line in open(folded):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    fr = stack.split(";")
    if fr[0] != comm or len(fr) < 2:
        continue
    fr = fr[1:]
    marked = fr[0] == "[truncated]"
    if marked:
        fr = fr[1:]
    if not fr:
        continue
    fr = [name(f, i == len(fr) - 1) for i, f in enumerate(fr)]
    if fr[-1] not in CHAIN[3:]:
        continue
    n = int(n)
    total += n
    k = CHAIN.index(fr[-1])
    piece = CHAIN[k - len(fr) + 1:k + 1] if len(fr) <= k + 1 else None
    if piece == fr and (marked or fr[0] == "_start"):
        if fr[0] == "_start" and not marked:
            whole += n
        else:
            trunc += n
    else:
        wrong += n
        examples.append("[" + ";".join(fr) + (" (marked)" if marked else "") + "]")
print(total, whole, trunc, wrong, " ".join(examples[:5]))
