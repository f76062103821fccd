"""ptydrv - run a program on a real pseudo-terminal and talk to it, for the
tests that drive dtsh the way a person does (tests/dtsh/ptysession.py,
tests/dtsh/ptyedit.py, tests/safety/ptyint.py): spawn, wait for a pattern
in what it printed, type, wait for its exit.  One copy of that code, so a
fix to how output is read or a child reaped holds for every driver.

A driver imports it with its directory's parent on sys.path (and writes no
__pycache__ into the tree):

    sys.dont_write_bytecode = True
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from ptydrv import Pty, check
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

# Terminal control sequences (libedit's redraws, bells, carriage returns):
# patterns are matched against what a reader of the screen would see.
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\x1b[=>]|\x07|\r")


class Pty:
    """prog run with argv [prog] + args in cwd, env added to ours, on a
    50x200 terminal (wide enough that no line the tests read wraps)."""

    def __init__(self, prog, args=(), cwd=None, env=None):
        full = dict(os.environ)
        full.update(env or {})
        pid, fd = pty.fork()
        if pid == 0:
            try:
                if cwd is not None:
                    os.chdir(cwd)
                os.execve(prog, [prog] + list(args), full)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        self.raw = b""
        self.mark = 0
        self.status = None	# the wait status, once reaped
        self.code = None	# its exit code (negative: the signal), once reaped
        self.reaped = False

    def text(self, since=0):
        return ANSI.sub(b"", self.raw[since:]).decode("utf-8", "replace")

    def pump(self, t):
        """Read what arrives within t seconds; False once the terminal closed."""
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
        """Wait for pattern in the output since the last mark; move the mark."""
        end, rx = time.time() + timeout, re.compile(pattern)
        while True:
            if rx.search(self.text(self.mark)):
                self.mark = len(self.raw)
                return True
            left = end - time.time()
            if left <= 0 or not self.pump(min(left, 0.2)):
                # one last look at what arrived
                if rx.search(self.text(self.mark)):
                    self.mark = len(self.raw)
                    return True
                return False

    def send(self, s):
        os.write(self.fd, s.encode())

    def settle(self, t=0.3):
        """Read for t seconds, whatever comes."""
        end = time.time() + t
        while time.time() < end:
            self.pump(0.05)

    def _reap(self, st):
        self.status, self.code, self.reaped = st, os.waitstatus_to_exitcode(st), True

    def alive(self):
        if self.reaped:
            return False
        pid, st = os.waitpid(self.pid, os.WNOHANG)
        if pid == 0:
            return True
        self._reap(st)
        return False

    def wait(self, timeout=10.0):
        """Its exit code, or None after killing it when timeout passed."""
        if self.reaped:
            return self.code
        end = time.time() + timeout
        while time.time() < end:
            self.pump(0.1)
            pid, st = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self._reap(st)
                return self.code
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        self.reaped = True
        return None

    def close(self, timeout=10.0, line="quit\n"):
        """Type line (the shell's quit) and wait() for the exit."""
        if self.reaped:
            return self.code
        self.send(line)
        return self.wait(timeout)


def check(name, ok, why="", keep=600):
    """PASS name, or FAIL name: the last keep characters of why on one line."""
    if ok:
        print("PASS " + name)
    else:
        print("FAIL %s: %s" % (name, why.replace("\n", "\\n")[-keep:]))
    sys.stdout.flush()
