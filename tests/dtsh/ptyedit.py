#!/usr/bin/env python3
"""Line editing on a real pseudo-terminal: Ctrl-C during an incremental
history search (Ctrl-R) keeps the shell, and an SQL statement typed over
several lines is one history entry.  Prints PASS/FAIL lines.

usage: ptyedit.py DTSH CAPTURE TMPDIR
"""
import os
import sys
import time

# the tree is not written to: no __pycache__ beside the sources
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from ptydrv import Pty, check  # noqa: E402

DTSH, CAP, TMP = [os.path.abspath(a) for a in sys.argv[1:4]]
HIST = os.path.join(TMP, "edit-history")
PROMPT = r"dt [^ ]*\.dtc> "


def Shell(*args):
    return Pty(DTSH, args, cwd=TMP, env=dict(TERM="xterm", DTSH_HISTORY=HIST, HOME=TMP))


# ---- Ctrl-C during Ctrl-R: the search is abandoned, the shell stays
sh = Shell(CAP)
ok = sh.expect(PROMPT)
sh.send("sql SELECT 1234 + 1;\n")
ok = ok and sh.expect(r"1235[\s\S]*" + PROMPT)
sh.send("\x12")		# Ctrl-R
time.sleep(0.3)
sh.send("123")
time.sleep(0.3)
sh.send("\x03")		# Ctrl-C
# an exit takes a while under ASan (the leak check): give it time to show
for _ in range(20):
    sh.pump(0.1)
alive = sh.alive()
if alive:
    sh.send("sql SELECT 6 * 7 AS answer;\n")
    alive = sh.expect(r"answer\s*\n-+\s*\n\s*42\b[\s\S]*" + PROMPT)
check("ctrl-c-in-search-keeps-shell", ok and alive, sh.text(), 500)
sh.close()

# ---- a statement over three lines is one history entry, recalled whole
try:
    os.unlink(HIST)
except FileNotFoundError:
    pass
sh = Shell(CAP)
ok = sh.expect(PROMPT)
sh.send("sql SELECT 40\n")
ok = ok and sh.expect(r"\.\.\.> ")
sh.send("  + 2\n")
ok = ok and sh.expect(r"\.\.\.> ")
sh.send("  AS n;\n")
ok = ok and sh.expect(r"\b42\b[\s\S]*" + PROMPT)
sh.send("\x1b[A")	# up: the whole statement
ok2 = sh.expect(r"sql SELECT 40 +\+ 2 +AS n;", 5)
sh.send("\n")
ok2 = ok2 and sh.expect(r"\b42\b[\s\S]*" + PROMPT)
check("multiline-one-history-entry", ok and ok2, sh.text(), 500)
sh.close()
lines = [l for l in open(HIST, encoding="utf-8", errors="replace").read().splitlines()
         if not l.startswith("_HiStOrY_V2_")]
# libedit's file format escapes spaces as \040
lines = [l.replace("\\040", " ") for l in lines if l != "quit"]
check("multiline-history-file", lines and all("40" in l and "AS n;" in l for l in lines)
      and not any(l.strip() in ("+ 2", "AS n;") for l in lines), repr(lines), 500)
