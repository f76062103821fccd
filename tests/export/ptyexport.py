#!/usr/bin/env python3
"""dtsh's `export` on a real pseudo-terminal: the same parser and filters
as `dtreport export` (the same bytes out), its errors speaking as dtsh,
and Ctrl-C during each format: the shell lives on, no file appears under
the output's name and the user's file there stays as it was.  Prints
PASS/FAIL lines.

usage: ptyexport.py DTSH CAPTURE BIG.dtc TMPDIR DUCK.mjs
CAPTURE is filters.sh's (its reference exports are TMPDIR/ref.*); BIG
takes seconds to export under ASan, time for a Ctrl-C.
"""
import os
import re
import subprocess
import sys

# the tree is not written to: no __pycache__ beside the sources
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from ptydrv import Pty, check  # noqa: E402

DTSH, CAP, BIG, TMP, DUCK = [os.path.abspath(a) for a in sys.argv[1:6]]
W = os.path.join(TMP, "sh")
os.makedirs(W, exist_ok=True)


def shell(cap):
    return Pty(DTSH, [cap], cwd=W, env=dict(TERM="xterm", HOME=W,
                                            DTSH_HISTORY=os.path.join(W, "hist")))


def duck_count(ds):
    p = subprocess.run(["node", DUCK, "SELECT count(*) FROM read_parquet('%s/events/**/*.parquet')"
                        % ds], capture_output=True, text=True)
    return p.stdout.strip()


def sqlite_count(db):
    p = subprocess.run(["sqlite3", db, "SELECT count(*) FROM events"], capture_output=True,
                       text=True)
    return p.stdout.strip()


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        return str(e).encode()


# ---- the same parser and filters as dtreport export
sh = shell(CAP)
P = r"dt c\.dtc> "
check("dtsh-export-prompt", sh.expect(P, 30), sh.text())
sh.send("export --format chrome --comm bash --cpu 0 --since 1 -o sh.json\n")
ok = sh.expect(r"sh\.json: \d+ slices[\s\S]*" + P, 60)
check("dtsh-export-chrome", ok and read(os.path.join(W, "sh.json")) == read(
    os.path.join(TMP, "ref.json")), sh.text())
sh.send("export --probe 'syscall:read:*' -o sh.sqlite\n")
ok = sh.expect(r"sh\.sqlite: \d+ events[\s\S]*" + P, 60)
want = sqlite_count(os.path.join(TMP, "ref.sqlite"))
got = sqlite_count(os.path.join(W, "sh.sqlite"))
check("dtsh-export-sqlite", ok and got == want and want not in ("", "0"),
      "got %r want %r: %s" % (got, want, sh.text()))
sh.send("export --format pprof --cpu 1 -o sh.pb.gz\n")
ok = sh.expect(r"sh\.pb\.gz: \d+ samples[\s\S]*" + P, 60)
check("dtsh-export-pprof", ok and read(os.path.join(W, "sh.pb.gz"))[:2] == b"\x1f\x8b", sh.text())
sh.send("export --format parquet --since 2 --until 5 -o ds\n")
ok = sh.expect(r"ds: \d+ events from 1 capture[\s\S]*" + P, 60)
want = duck_count(os.path.join(TMP, "ds6"))
got = duck_count(os.path.join(W, "ds"))
check("dtsh-export-parquet", ok and got == want and want not in ("", "0"),
      "got %r want %r: %s" % (got, want, sh.text()))
# errors speak as dtsh, write nothing, and the shell goes on
sh.send("export --format chrome --comm no-such-comm -o none.json\n")
ok = sh.expect(r"dtsh export: [^\n]*no-such-comm[\s\S]*" + P, 30)
check("dtsh-export-unknown-comm", ok and not os.path.exists(os.path.join(W, "none.json")),
      sh.text())
sh.send("export --format chrome\n")
ok = sh.expect(r"dtsh export: no output[\s\S]*" + P, 30)
check("dtsh-export-no-output", ok, sh.text())
sh.send("export --format chrome -o x.json extra\n")
ok = sh.expect(r"dtsh export: unexpected argument 'extra'[\s\S]*" + P, 30)
check("dtsh-export-no-operands", ok and not os.path.exists(os.path.join(W, "x.json")), sh.text())
sh.send("help export\n")
check("dtsh-export-help", sh.expect(r"export \[--format sqlite\|parquet\|pprof\|chrome\]", 10),
      sh.text())
st = sh.close(30)
check("dtsh-export-quit", st == 0, "status %r: %s" % (st, sh.text()))

# ---- Ctrl-C during each format
sh = shell(BIG)
P = r"dt big\.dtc> "
check("dtsh-ctrl-c-prompt", sh.expect(P, 60), sh.text())
with open(os.path.join(W, "keep.sqlite"), "w") as f:
    f.write("precious\n")
for fmt, out in (("sqlite", "keep.sqlite"), ("chrome", "int.json"), ("pprof", "int.pb.gz"),
                 ("parquet", "intds")):
    sh.send("export --format %s -o %s\n" % (fmt, out))
    sh.settle(0.7)
    busy = re.search(P + r"\s*$", sh.text(sh.mark)) is None
    sh.send("\x03")
    ok = sh.expect(r"dtsh export: [^\n]*interrupted[\s\S]*" + P, 10)
    left = [f for f in os.listdir(W) if f.startswith("." + out) or f.startswith(".tmp-export")]
    if fmt == "sqlite":
        kept = read(os.path.join(W, out)) == b"precious\n"
    elif fmt == "parquet":
        d = os.path.join(W, out)
        kept = not [f for r, _, fs in os.walk(d) for f in fs if f.endswith(".parquet")] and \
            not [f for f in (os.listdir(d) if os.path.isdir(d) else []) if f.startswith(".tmp")]
    else:
        kept = not os.path.exists(os.path.join(W, out))
    check("dtsh-ctrl-c-%s-running" % fmt, busy, "ended within 0.7 s: " + sh.text())
    check("dtsh-ctrl-c-%s" % fmt, ok and kept and not left,
          "kept %r left %r: %s" % (kept, left, sh.text()))
sh.send("stats --top 1\n")
check("dtsh-alive-after-ctrl-c-export", sh.expect(r"events\s+3000000[\s\S]*" + P, 60), sh.text())
st = sh.close(30)
check("dtsh-ctrl-c-quit", st == 0, "status %r: %s" % (st, sh.text()))
