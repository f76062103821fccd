#!/usr/bin/env python3
"""Drive dtsh on a real pseudo-terminal: completion, history across runs,
Ctrl-C during a query and at the prompt, Ctrl-D.  Prints PASS/FAIL lines.

usage: ptysession.py DTSH CAPTURE TMPDIR [FAKEDT.so [BIG.dtc]]
With FAKEDT.so (dtrec's LD_PRELOAD stand-in for /dev/dt), live mode too;
with BIG.dtc (opened six times over: seconds of work for a report),
Ctrl-C during flame.
"""
import os
import re
import sys
import time

# the tree is not written to: no __pycache__ beside the sources
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from ptydrv import Pty, check  # noqa: E402

DTSH, CAP, TMP = [os.path.abspath(a) for a in sys.argv[1:4]]
FAKE = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else None
BIG = os.path.abspath(sys.argv[5]) if len(sys.argv) > 5 else None
HIST = os.path.join(TMP, "pty-history")


def Shell(*args, extra=None):
    env = dict(TERM="xterm", DTSH_HISTORY=HIST, HOME=TMP)
    env.update(extra or {})
    return Pty(DTSH, args, cwd=TMP, env=env)


PROMPT = r"dt s\.dtc> "
base = os.path.basename(CAP)

# ---- completion
sh = Shell(CAP)
check("pty-prompt", sh.expect(PROMPT), sh.text())
sh.send("pro\t")
ok = sh.expect(r"probes ", 5)
sh.send("syscall:read:*\n")
ok = ok and sh.expect(r"syscall:read:entry\s+syscall:read:return\s+" + PROMPT)
check("complete-command", ok, sh.text())

sh.send("describe tracepoint:sched:s\t")
ok = sh.expect(r"tracepoint:sched:sched_", 5)
sh.send("\t")
ok2 = sh.expect(r"sched_process_exec.*\n?.*sched_switch.*sched_wakeup|"
                r"sched_switch.*sched_wakeup.*sched_process_exec|"
                r"sched_process_exec\s+tracepoint:sched:sched_switch\s+"
                r"tracepoint:sched:sched_wakeup", 5)
sh.send("sw\t\n")
ok3 = sh.expect(r"prev_comm\s+char\[16\][\s\S]*" + PROMPT)
check("complete-probe-prefix", ok, sh.text())
check("complete-probe-list", ok2, sh.text())
check("complete-probe-unique", ok3, sh.text())

sh.send("open %s/s.d\t" % TMP)
ok = sh.expect(r"s\.dtc ", 5)
sh.send("\n")
ok = ok and sh.expect(PROMPT)
check("complete-file", ok, sh.text())

sh.send("sql SELECT count(*) AS n FROM eve\t")
ok = sh.expect(r"events ", 5)
sh.send(";\n")
ok = ok and sh.expect(r"\b30000\b[\s\S]*" + PROMPT)
check("complete-sql-table", ok, sh.text())

sh.send("SELECT DISTINCT probe_na\t")
ok = sh.expect(r"probe_name ", 5)
sh.send("FROM events WHERE probe_name LIKE 'syscall:read:e%';\n")
ok = ok and sh.expect(r"syscall:read:entry[\s\S]*" + PROMPT)
check("complete-sql-column", ok, sh.text())

# table names after schema, and the capture table in SQL (from dtsql's list)
sh.send("schema sta\t")
ok = sh.expect(r"stacks ", 5)
sh.send("\n")
ok = ok and sh.expect(r"CREATE TABLE stacks\([\s\S]*" + PROMPT)
check("complete-schema-table", ok, sh.text())
sh.send("SELECT hostname FROM capt\t")
ok = sh.expect(r"capture ", 5)
sh.send(";\n")
ok = ok and sh.expect(r"hostname[\s\S]*" + PROMPT)
check("complete-sql-capture-table", ok, sh.text())

# ---- a statement without its ';' continues on the next line (sqlite3_complete)
sh.send("SELECT count(*) AS n\n")
ok = sh.expect(r"\.\.\.> ", 5)
sh.send("  FROM events\n")
ok = ok and sh.expect(r"\.\.\.> ", 5)
sh.send("  WHERE cpu >= 0;\n")
ok = ok and sh.expect(r"\b30000\b[\s\S]*" + PROMPT)
check("sql-continuation-prompt", ok, sh.text())
# Ctrl-C at the continuation prompt drops the statement
sh.send("SELECT nosuchcolumn\n")
ok = sh.expect(r"\.\.\.> ", 5)
sh.settle(0.3)   # as at the main prompt: let libedit enter its read
sh.send("\x03")
ok = ok and sh.expect(PROMPT, 5)
sh.send("probes profile:*\n")
ok = ok and sh.expect(r"profile:hz:97\s+" + PROMPT)
check("sql-continuation-ctrl-c", ok and "no such column" not in sh.text(), sh.text())

sh.send("top 2 b\t")
ok = sh.expect(r"by ", 5)
sh.send("pro\t\n")
ok = ok and sh.expect(r"probe\s[\s\S]*tracepoint:sched:sched_switch[\s\S]*" + PROMPT)
check("complete-top-by", ok, sh.text())

# top takes the filters: their options and values complete too
sh.send("top 1 by probe --pro\t")
ok = sh.expect(r"--probe ", 5)
sh.send("tracepoint:sched:sched_sw\t\n")
ok = ok and sh.expect(r"tracepoint:sched:sched_switch \r?\n[\s\S]*100\.0%\s+"
                      r"tracepoint:sched:sched_switch[\s\S]*" + PROMPT)
check("complete-top-filter", ok, sh.text())

# ---- Ctrl-C at the prompt discards the line; Ctrl-C during a query
sh.send("garbage words")
sh.settle(0.3)
sh.send("\x03")
ok = sh.expect(PROMPT, 5)
sh.send("probes profile:*\n")
ok = ok and sh.expect(r"profile:hz:97\s+" + PROMPT)
check("ctrl-c-at-prompt", ok and "unknown command 'garbage" not in sh.text(), sh.text())

sh.send("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
        "SELECT count(*) FROM c;\n")
sh.settle(1.5)
busy = re.search(PROMPT + r"\s*$", sh.text(sh.mark)) is None
t0 = time.time()
sh.send("\x03")
ok = sh.expect(r"interrupted[\s\S]*" + PROMPT, 5)
dt = time.time() - t0
check("ctrl-c-query-running", busy, "the query did not run: " + sh.text())
check("ctrl-c-query", ok and dt < 2.0, "%.2fs: %s" % (dt, sh.text()))
sh.send("probes tracepoint:sched:sched_w*\n")
ok = sh.expect(r"sched_wakeup\s+" + PROMPT)
check("alive-after-ctrl-c", ok, sh.text())

# ---- Ctrl-D leaves with status 0
sh.settle(0.3)
sh.send("\x04")
st = sh.wait()
check("ctrl-d-exits", st == 0, "status %r: %s" % (st, sh.text(sh.mark)))

# ---- history persists: the second run recalls the first run's line
try:
    # libedit stores lines vis(3)-encoded: a space is \\040
    saved = open(HIST, encoding="utf-8", errors="replace").read().replace("\\040", " ")
except OSError as e:
    saved = str(e)
check("history-saved", "probes tracepoint:sched:sched_w*" in saved, saved)
sh = Shell(CAP)
sh.expect(PROMPT)
sh.send("\x10")          # Ctrl-P: previous history line
sh.settle(0.3)
sh.send("\n")
ok = sh.expect(r"sched_wakeup\s+" + PROMPT)
sh.send("\x1b[A\x1b[A\x1b[A\n")  # Up thrice: past the query, to probes profile:*
ok2 = sh.expect(r"profile:hz:97\s+" + PROMPT)
sh.send("quit\n")
st = sh.wait()
check("history-recalled", ok, sh.text())
check("history-up-arrow", ok2, sh.text())
check("quit-exits", st == 0, "status %r: %s" % (st, sh.text(sh.mark)))

# ---- without DTSH_HISTORY the history is ~/.dtsh_history
sh = Shell(CAP, extra={"DTSH_HISTORY": ""})
sh.expect(PROMPT)
sh.send("probes syscall:openat:*\n")
sh.expect(PROMPT)
sh.send("quit\n")
sh.wait()
try:
    saved = open(os.path.join(TMP, ".dtsh_history"), errors="replace").read()
except OSError as e:
    saved = str(e)
check("history-default-path", "syscall:openat:*" in saved, saved)

# ---- Ctrl-C during a report (dtreport's flame code) on a big capture
if BIG and os.path.exists(BIG):
    # six views of the capture, opened as one: seconds of flame even under
    # ASan (one capture's flame now takes about half a second)
    links = []
    for i in range(1, 6):
        links.append(os.path.join(TMP, "big%d.dtc" % i))
        if not os.path.exists(links[-1]):
            os.symlink(BIG, links[-1])
    sh = Shell(BIG)
    sh.expect(r"dt big\.dtc> ")
    sh.send("open %s %s\n" % (BIG, " ".join(links)))
    bp = r"dt big\.dtc\+5> "
    opened = sh.expect(bp, 30)
    check("ctrl-c-flame-open", opened, sh.text())
    sh.send("flame -o %s/big.svg\n" % TMP)
    sh.settle(0.5)
    busy = re.search(bp + r"\s*$", sh.text(sh.mark)) is None
    t0 = time.time()
    sh.send("\x03")
    ok = sh.expect(r"flame: interrupted[\s\S]*" + bp, 5)
    dt = time.time() - t0
    check("ctrl-c-flame-running", busy, "flame ended within 0.5s: " + sh.text())
    check("ctrl-c-flame", ok and dt < 1.0, "%.2fs: %s" % (dt, sh.text()))
    # stopped in-process: nothing of the graph is left behind
    left = [f for f in os.listdir(TMP) if "big.svg" in f]
    check("ctrl-c-flame-no-file", not left, "left behind: %r" % (left,))
    sh.send("SELECT count(*) FROM events;\n")
    ok = sh.expect(r"60000000[\s\S]*" + bp, 60)
    check("alive-after-ctrl-c-flame", ok, sh.text())
    sh.send("quit\n")
    st = sh.wait(30)
    check("quit-after-flame", st == 0, "status %r: %s" % (st, sh.text(sh.mark)))
else:
    check("ctrl-c-flame", False, "no big capture %r" % (BIG,))

# ---- live mode on the stand-in device: completion from the device, and
# Ctrl-C ends `record 60s` at once, keeping the events
if FAKE is None or not os.path.exists(FAKE):
    check("live-pty", False, "no stand-in device %r" % (FAKE,))
    sys.exit(0)
LIVE = r"dt live> "
sh = Shell(extra={"LD_PRELOAD": FAKE,
                  "ASAN_OPTIONS": "verify_asan_link_order=0:detect_leaks=1"})
check("live-prompt", sh.expect(LIVE), sh.text())
sh.send("describe tracepoint:sched:s\t")
steps = [sh.expect(r"tracepoint:sched:sched_", 5)]
sh.send("\t")
steps.append(sh.expect(r"sched_process_exec[\s\S]*sched_switch|"
                       r"sched_switch[\s\S]*sched_process_exec", 5))
sh.send("sw\t")
# libedit redraws only what changed: the completed tail of the word
steps.append(sh.expect(r"itch ", 5))
sh.send("\n")
steps.append(sh.expect(r"id 6[\s\S]*" + LIVE))
check("live-complete-probe", all(steps), "steps %r: %s" % (steps, sh.text()))
sh.send("enable profile:hz:97\n")
sh.expect(LIVE)
sh.send("record 60s -o live.dtc\n")
sh.settle(2.0)
running = "live.dtc>" not in sh.text(sh.mark)
t0 = time.time()
sh.send("\x03")
ok = sh.expect(r"dt live\.dtc> ", 3)
dt = time.time() - t0
check("live-record-running", running, sh.text())
check("live-ctrl-c-record", ok and dt < 1.0, "%.2fs: %s" % (dt, sh.text()))
sh.send("sql SELECT count(*) AS kept FROM events;\n")
ok = sh.expect(r"kept\s*-+\s*[1-9][0-9]*\s[\s\S]*" + r"dt live\.dtc> ", 10)
check("live-ctrl-c-kept-events", ok, sh.text())
sh.send("quit\n")
st = sh.wait()
check("live-quit", st == 0, "status %r: %s" % (st, sh.text(sh.mark)))
