#!/usr/bin/env python3
"""dtsh's history file on a real pseudo-terminal: never written through a
symbolic link, never chmod'ed unless dtsh created it, a FIFO never waited
on.  Prints PASS/FAIL lines.

usage: history.py DTSH CAPTURE TMPDIR   (as root: links are nobody's)
"""
import os
import pty
import select
import shutil
import stat
import sys
import time

DTSH, CAP, TMP = [os.path.abspath(a) for a in sys.argv[1:4]]
NOBODY = 65534


def check(name, cond, why=""):
    print(("PASS %s" % name) if cond else ("FAIL %s: %s" % (name, why)))
    sys.stdout.flush()


def session(hist, lines, timeout=20.0):
    """Run dtsh on a pty with DTSH_HISTORY=hist, type lines, then Ctrl-D.
    Returns (exit status or None if it had to be killed, output)."""
    env = dict(os.environ, TERM="dumb", DTSH_HISTORY=hist, HOME=TMP)
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execve(DTSH, [DTSH, CAP], env)
        finally:
            os._exit(127)
    out = b""
    end = time.time() + timeout

    def pump(t):
        nonlocal out
        r, _, _ = select.select([fd], [], [], t)
        if r:
            try:
                d = os.read(fd, 65536)
            except OSError:
                return False
            if not d:
                return False
            out += d
        return True

    def wait_prompt():
        while time.time() < end:
            if out.rstrip().endswith(b">"):
                return True
            if not pump(0.2):
                return False
        return False

    for ln in lines:
        wait_prompt()
        os.write(fd, (ln + "\n").encode())
        pump(0.3)
    wait_prompt()
    os.write(fd, b"\x04")
    while time.time() < end:
        p, st = os.waitpid(pid, os.WNOHANG)
        if p:
            try:
                while pump(0.1):
                    pass
            except OSError:
                pass
            os.close(fd)
            return os.waitstatus_to_exitcode(st), out.decode("utf-8", "replace")
        pump(0.1)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    os.close(fd)
    return None, out.decode("utf-8", "replace")


secret = os.path.join(TMP, "hsecret")
with open(secret, "w") as f:
    f.write("root's file\n")
os.chmod(secret, 0o644)
sticky = os.path.join(TMP, "hsticky")
os.mkdir(sticky)
os.chmod(sticky, 0o1777)

# a link planted by nobody: not followed, the file it names untouched
link = os.path.join(sticky, "hist")
os.symlink(secret, link)
os.lchown(link, NOBODY, -1)
st, out = session(link, ["probes xyz"])
with open(secret) as f:
    body = f.read()
mode = stat.S_IMODE(os.stat(secret).st_mode)
check("history-link-not-followed", body == "root's file\n", repr(body[:200]))
check("history-link-mode-kept", mode == 0o644, oct(mode))
check("history-link-said", "symbolic link" in out and st == 0, "status %r: %r" % (st, out[-300:]))

# the caller's own link is not followed either (O_NOFOLLOW: a history is
# a file, and the rule is simple)
own = os.path.join(TMP, "ownlink")
os.symlink(secret, own)
st, out = session(own, ["probes xyz"])
with open(secret) as f:
    body = f.read()
check("history-own-link-not-followed", body == "root's file\n", repr(body[:200]))

# an existing history of the user's keeps the mode the user gave it
mine = os.path.join(TMP, "myhist")
with open(mine, "w") as f:
    f.write("_HiStOrY_V2_\nprobes\\040abc\n")
os.chmod(mine, 0o640)
st, out = session(mine, ["probes mnop"])
mode = stat.S_IMODE(os.stat(mine).st_mode)
with open(mine) as f:
    body = f.read()
check("history-mode-not-changed", mode == 0o640, oct(mode))
check("history-still-saved", "mnop" in body and "abc" in body, repr(body[:300]))

# a history dtsh creates is 0600
new = os.path.join(TMP, "newhist")
os.umask(0o022)
st, out = session(new, ["probes qrst"])
mode = stat.S_IMODE(os.stat(new).st_mode) if os.path.exists(new) else None
check("history-created-0600", mode == 0o600, repr(mode))

# a FIFO as the history: no hang, said
fifo = os.path.join(TMP, "hfifo")
os.mkfifo(fifo)
st, out = session(fifo, ["probes xyz"], timeout=60)
check("history-fifo-no-hang", st == 0, "status %r: %r" % (st, out[-300:]))
check("history-fifo-said", "not a regular file" in out or "FIFO" in out, repr(out[-300:]))

# a history file of another user is left alone
other = os.path.join(sticky, "otherhist")
with open(other, "w") as f:
    f.write("_HiStOrY_V2_\n")
os.chown(other, NOBODY, -1)
os.chmod(other, 0o644)
st, out = session(other, ["probes xyz"])
with open(other) as f:
    body = f.read()
check("history-other-user-untouched", body == "_HiStOrY_V2_\n" and
      stat.S_IMODE(os.stat(other).st_mode) == 0o644, repr(body[:200]))
shutil.rmtree(sticky, ignore_errors=True)
