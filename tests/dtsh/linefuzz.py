#!/usr/bin/env python3
"""linefuzz.py DTSH CAPTURE WORKDIR SEED - mutation fuzzing of dtsh's line
parser and commands (the ASan/UBSan build): sessions of lines mutated from
valid ones (tokens swapped, dropped and repeated, quotes and separators
inserted, numbers replaced by edge values, bytes flipped) on stdin, each
session ended by a line whose answer is known.  A sanitizer report, a
signal, a hang or a session that stops answering is a FAIL.  Lines that record, leave or return to
live mode are not generated: they would trace this machine, not parse."""
import os
import random
import subprocess
import sys

SEEDS = [
    "probes", "probes syscall:*", "describe profile:hz:997", "stats", "stats --top 3",
    "stats --all --comm dtgen", "top", "top 5 by pid", "top 3 by stack", "top by syscall",
    "top 2 by probe", "flame -o f.svg", "flame -o f.svg --comm x --since 1ms",
    "sql SELECT count(*) FROM events", "sql --csv SELECT comm, count(*) FROM events GROUP BY 1",
    "sql --json SELECT * FROM probes LIMIT 2", "SELECT pid FROM events LIMIT 1",
    "tables", "schema", "schema events", "help", "help top", "help sql",
    "top 4; stats --top 1", "describe nosuch:probe:x", "open --partial nosuch.dtc",
    "flame --until 2ms -o g.svg", "sql SELECT 'a;b', \"x\" FROM capture",
]
EDGE = ["0", "-1", "1e309", "18446744073709551616", "9" * 40, "-9223372036854775808", "0x", "1.5s",
        "", "''", "\"", "\\", ";", ";;", "*", "[", "%s%n", "\x00", "\t", "1h", "nan"]


def mutate(rnd, line):
    toks = line.split(" ")
    for _ in range(rnd.randint(1, 4)):
        k = rnd.randrange(8)
        i = rnd.randrange(len(toks))
        if k == 0:
            toks[i] = rnd.choice(EDGE)
        elif k == 1 and len(toks) > 1:
            del toks[i]
        elif k == 2:
            toks.insert(i, toks[rnd.randrange(len(toks))])
        elif k == 3:
            toks.insert(i, rnd.choice(["'", '"', ";", "--all", "-o", "--top", "by", "\\"]))
        elif k == 4 and toks[i]:
            j = rnd.randrange(len(toks[i]))
            c = chr(rnd.choice([0x01, 0x7f, 0xe9, 0x22, 0x27, 0x3b, 0x20, 0x5c]))
            toks[i] = toks[i][:j] + c + toks[i][j + 1:]
        elif k == 5:
            toks[i] = toks[i] * rnd.randint(2, 200)
        elif k == 6:
            toks = rnd.choice(SEEDS).split(" ") + toks
        else:
            toks.append(rnd.choice(EDGE))
    out = " ".join(toks).replace("\n", " ")
    # nothing that records, leaves or goes live, wherever a ';' put it
    for bad in ("record", "enable", "disable", "close", "quit", "exit"):
        if bad in out:
            return None
    return out


def main():
    dtsh, cap, work = (os.path.abspath(a) for a in sys.argv[1:4])
    seed = int(sys.argv[4])
    rnd = random.Random(seed)
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1", UBSAN_OPTIONS="print_stacktrace=1")
    fails = 0
    sessions, lines_per = 6, 60
    for s in range(sessions):
        lines = []
        while len(lines) < lines_per:
            m = mutate(rnd, rnd.choice(SEEDS))
            if m is not None:
                lines.append(m)
        lines.append("sql --csv SELECT 6*7 AS answer")
        data = ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")
        try:
            p = subprocess.run([dtsh, cap], input=data, cwd=work, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
        except subprocess.TimeoutExpired:
            print(f"FAIL linefuzz-session{s}: no answer in 240 s (hang); lines in {work}/s{s}.in")
            open(f"{work}/s{s}.in", "wb").write(data)
            fails += 1
            continue
        err = p.stderr.decode("utf-8", "replace")
        out = p.stdout.decode("utf-8", "replace")
        why = None
        if "Sanitizer" in err or "runtime error" in err:
            why = "sanitizer: " + next(l for l in err.splitlines()
                                       if "Sanitizer" in l or "runtime error" in l)
        elif p.returncode < 0 or p.returncode > 2:
            why = f"exit status {p.returncode}"
        elif "42" not in out.splitlines()[-1:] and "42\r" not in out.splitlines()[-1:]:
            why = "the session stopped answering (last line: %r)" % out.splitlines()[-1:]
        if why:
            open(f"{work}/s{s}.in", "wb").write(data)
            print(f"FAIL linefuzz-session{s}: {why} (lines in {work}/s{s}.in)")
            fails += 1
    if fails == 0:
        print(f"PASS linefuzz ({sessions} sessions of {lines_per} mutated lines)")


main()
