#!/usr/bin/env python3
"""Ctrl-C in dtsh on a real pseudo-terminal: it stops symbol loading (a
capture with millions of kernel symbols) and queries, and what was
interrupted prints nothing that looks like a result.  PASS/FAIL lines.

usage: ptyint.py DTSH SMALL.dtc BIG.dtc ESC.dtc TMPDIR
"""
import os
import re
import sys
import time

# the tree is not written to: no __pycache__ beside the sources
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from ptydrv import Pty, check  # noqa: E402

DTSH, SMALL, BIG, ESC, TMP = [os.path.abspath(a) for a in sys.argv[1:6]]


def Shell(cap):
    return Pty(DTSH, [cap], cwd=TMP,
               env=dict(TERM="xterm", DTSH_HISTORY=os.path.join(TMP, "h"), HOME=TMP))


def prompt(cap):
    return re.escape("dt " + os.path.basename(cap) + "> ")


# Result-looking text: a table's header rule or row count, a CSV header.
RESULT = re.compile(r"-{3,}|\(\d+ rows?\)|^\s*count\(\*\)", re.M)

# ---- a query interrupted prints no header and no count (the other formats:
# run.sh, through dtreport, as dtsh reads `sql --csv ...` as a comment)
for fmt, q in (("", "table"),):
    sh = Shell(SMALL)
    P = prompt(SMALL)
    check("pty-prompt-" + q, sh.expect(P, 30), sh.text())
    sh.send("sql %sWITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
            "SELECT count(*) FROM c;\n" % fmt)
    sh.settle(1.5)
    start = len(sh.raw)
    sh.send("\x03")
    ok = sh.expect(r"interrupted[\s\S]*" + P, 10)
    after = sh.text(start)
    bad = RESULT.search(after) or (q == "json" and re.search(r"\[\s*\]", after))
    check("ctrl-c-query-no-result-" + q, ok and not bad, after)
    sh.send("sql %sSELECT 41 + 1 AS n;\n" % fmt)
    check("query-after-ctrl-c-" + q, sh.expect(r"42[\s\S]*" + P, 10), sh.text(sh.mark))
    rc = sh.close(20)
    check("exit-" + q, rc == 0, "status %s" % rc)

# ---- symbol loading (6 million kernel symbols: 2-3 s under ASan on an idle
# machine, so the Ctrl-C 0.8 s in finds it running) stops
sh = Shell(BIG)
P = prompt(BIG)
check("pty-prompt-big", sh.expect(P, 60), sh.text())
sh.send("sql SELECT count(*) FROM events;\n")
sh.settle(0.8)
start = len(sh.raw)
t0 = time.time()
sh.send("\x03")
ok = sh.expect(r"interrupted[\s\S]*" + P, 30)
dt = time.time() - t0
after = sh.text(start)
check("ctrl-c-symbol-loading", ok and "loading symbols" in after, after)
check("ctrl-c-symbol-loading-no-result", ok and not RESULT.search(after) and
      not re.search(r"^\s*16\s*$", after, re.M), after)
print("# symbol loading stopped %.2f s after Ctrl-C" % dt)
# the symbols load again, whole, when asked again
sh.send("sql SELECT count(*) AS n FROM events;\n")
check("symbols-after-ctrl-c", sh.expect(r"\b16\b[\s\S]*" + P, 120), sh.text(sh.mark))
rc = sh.close(20)
check("exit-big", rc == 0, "status %s" % rc)

# ---- a probe name with an escape sequence: probes and describe print it
# escaped, completion does not offer it (its list would print it raw)
sh = Shell(ESC)
P = prompt(ESC)
check("pty-prompt-esc", sh.expect(P, 30), sh.text())
start = len(sh.raw)
sh.send("probes\n")
ok = sh.expect(r"profile:hz:997\\033\]0;p\\007[\s\S]*" + P, 10)
sh.send("describe prof\t\t")
sh.settle(1.0)
sh.send("\x03")
ok2 = sh.expect(P, 10)
raw = sh.raw[start:]
check("pty-probe-name-escaped", ok and ok2 and b"\x1b]0;p\x07" not in raw, repr(raw[-600:]))
rc = sh.close(20)
check("exit-esc", rc == 0, "status %s" % rc)
