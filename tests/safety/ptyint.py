#!/usr/bin/env python3
"""Ctrl-C in dtsh on a real pseudo-terminal: it stops symbol loading (a
capture with millions of kernel symbols) and queries, and what was
interrupted prints nothing that looks like a result.  PASS/FAIL lines.

usage: ptyint.py DTSH SMALL.dtc BIG.dtc ESC.dtc TMPDIR
"""
import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time

DTSH, SMALL, BIG, ESC, TMP = [os.path.abspath(a) for a in sys.argv[1:6]]
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\x1b[=>]|\x07|\r")


class Shell:
    def __init__(self, cap):
        env = dict(os.environ, TERM="xterm", DTSH_HISTORY=os.path.join(TMP, "h"), HOME=TMP)
        pid, fd = pty.fork()
        if pid == 0:
            try:
                os.chdir(TMP)
                os.execve(DTSH, [DTSH, cap], env)
            finally:
                os._exit(127)
        self.pid, self.fd, self.raw, self.mark = pid, fd, b"", 0
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))

    def text(self, since=0):
        return ANSI.sub(b"", self.raw[since:]).decode("utf-8", "replace")

    def pump(self, t):
        r, _, _ = select.select([self.fd], [], [], t)
        if r:
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                return False
            if not data:
                return False
            self.raw += data
        return True

    def expect(self, pattern, timeout=10.0):
        end = time.time() + timeout
        rx = re.compile(pattern)
        while True:
            if rx.search(self.text(self.mark)):
                self.mark = len(self.raw)
                return True
            left = end - time.time()
            if left <= 0 or not self.pump(min(left, 0.2)):
                if rx.search(self.text(self.mark)):
                    self.mark = len(self.raw)
                    return True
                return False

    def send(self, s):
        os.write(self.fd, s.encode())

    def settle(self, t):
        end = time.time() + t
        while time.time() < end:
            self.pump(0.05)

    def close(self):
        self.send("quit\n")
        end = time.time() + 20
        while time.time() < end:
            self.pump(0.1)
            pid, st = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(st)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        return None


def check(name, ok, why=""):
    print(("PASS " + name) if ok else "FAIL %s: %s" % (name, why.replace("\n", "\\n")[-600:]))
    sys.stdout.flush()


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
    rc = sh.close()
    check("exit-" + q, rc == 0, "status %s" % rc)

# ---- symbol loading (2 million kernel symbols: seconds under ASan) stops
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
rc = sh.close()
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
rc = sh.close()
check("exit-esc", rc == 0, "status %s" % rc)
