#!/usr/bin/env python3
"""dtsh on a pseudo-terminal completes user-space probe names: the file,
then its functions.  usage: ptycomplete.py DTSH UTARGET; PASS/FAIL lines."""
import os
import pty
import re
import select
import sys
import time

DTSH, U = sys.argv[1:3]
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\x1b[=>]|\x07|\r")
pid, fd = pty.fork()
if pid == 0:
    env = dict(os.environ, TERM="xterm", HOME="/tmp", DTSH_HISTORY="/dev/null")
    os.execve(DTSH, [DTSH], env)
out = b""


def pump(t):
    global out
    end = time.time() + t
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                out += os.read(fd, 65536)
            except OSError:
                return


pump(1.0)
# the file name completes to "uprobe:PATH:", then the function's common prefix
os.write(fd, ("probes uprobe:%s\t" % U[:-3]).encode())
pump(0.5)
os.write(fd, b"up_c\t")
pump(0.5)
os.write(fd, b"*\n")
pump(2.0)
text = ANSI.sub(b"", out).decode("utf-8", "replace")
want = ["uprobe:%s:up_count:entry" % U, "uprobe:%s:up_count:return" % U]
lines = [l.strip() for l in text.split("\n")]
if all(w in lines for w in want):
    print("PASS dtsh-complete-uprobe")
else:
    print("FAIL dtsh-complete-uprobe: %r" % text[-400:])
os.write(fd, b"quit\n")
pump(0.5)
try:
    os.kill(pid, 9)
except OSError:
    pass
