#!/usr/bin/env python3
"""Line editing on a real pseudo-terminal: Ctrl-C during an incremental
history search (Ctrl-R) keeps the shell, and an SQL statement typed over
several lines is one history entry.  Prints PASS/FAIL lines.

usage: ptyedit.py DTSH CAPTURE TMPDIR
"""
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import fcntl
import time

DTSH, CAP, TMP = [os.path.abspath(a) for a in sys.argv[1:4]]
HIST = os.path.join(TMP, "edit-history")
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\x1b[=>]|\x07|\r")
PROMPT = r"dt [^ ]*\.dtc> "


class Shell:
    def __init__(self, *args):
        env = dict(os.environ, TERM="xterm", DTSH_HISTORY=HIST, HOME=TMP)
        pid, fd = pty.fork()
        if pid == 0:
            try:
                os.chdir(TMP)
                os.execve(DTSH, [DTSH] + list(args), env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        self.raw, self.mark = b"", 0

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
        end, rx = time.time() + timeout, re.compile(pattern)
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

    def alive(self):
        if self.pid is None:
            return False
        if os.waitpid(self.pid, os.WNOHANG)[0] == 0:
            return True
        self.pid = None
        return False

    def finish(self):
        if self.pid is None:
            return
        self.send("quit\n")
        end = time.time() + 10
        while time.time() < end:
            self.pump(0.1)
            if os.waitpid(self.pid, os.WNOHANG)[0]:
                return
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)


def check(name, ok, why=""):
    print(("PASS " + name) if ok else "FAIL %s: %s" % (name, why.replace("\n", "\\n")[-500:]))
    sys.stdout.flush()


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
check("ctrl-c-in-search-keeps-shell", ok and alive, sh.text())
sh.finish()

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
check("multiline-one-history-entry", ok and ok2, sh.text())
sh.finish()
lines = [l for l in open(HIST, encoding="utf-8", errors="replace").read().splitlines()
         if not l.startswith("_HiStOrY_V2_")]
# libedit's file format escapes spaces as \040
lines = [l.replace("\\040", " ") for l in lines if l != "quit"]
check("multiline-history-file", lines and all("40" in l and "AS n;" in l for l in lines)
      and not any(l.strip() in ("+ 2", "AS n;") for l in lines), repr(lines))
