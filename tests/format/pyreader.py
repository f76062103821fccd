#!/usr/bin/python3
"""pyreader - a second reader of the dt capture format, written from
formats/FORMAT.md alone (it shares no code with libdtcap), to prove that the
document is enough.  It decodes every chunk and every column and prints the
tables `dtreport sql` has, as CSV, so the two can be compared row for row.

    pyreader.py FILE.dtc TABLE      TABLE: events probes stacks frames
                                    processes maps counters capture
    pyreader.py FILE.dtc --check    decode everything, print a summary
    pyreader.py FILE.dtc --kallsyms the kallsyms text (KSYM or KSYC)
    pyreader.py FILE.dtc --files    one line per FILE chunk, as dtcdump

Needs python3-zstandard and python3-xxhash (Debian packages).
"""
import csv
import struct
import sys

import xxhash
import zstandard


class Damage(Exception):
    pass


def xxh3(b):
    return xxhash.xxh3_64_intdigest(bytes(b))


def s64(v):
    """SQL integers are signed 64-bit."""
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >> 63 else v


class Cur:
    """A bounded cursor over a payload: reading past the end is damage."""

    def __init__(self, b, pos=0, end=None):
        self.b, self.p = b, pos
        self.end = len(b) if end is None else end

    def take(self, n):
        if n < 0 or self.p + n > self.end:
            raise Damage("read past end")
        v = self.b[self.p:self.p + n]
        self.p += n
        return v

    def u8(self):
        return self.take(1)[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def i64(self):
        return struct.unpack("<q", self.take(8))[0]

    def uv(self):
        v = 0
        for i in range(10):
            x = self.u8()
            if i == 9 and x > 1:
                raise Damage("varint overflow")
            v |= (x & 0x7F) << (7 * i)
            if not x & 0x80:
                return v
        raise Damage("varint too long")

    def zz(self):
        u = self.uv()
        return (u >> 1) ^ -(u & 1)

    def str(self, limit):
        n = self.uv()
        if n > limit:
            raise Damage("string too long")
        return bytes(self.take(n))

    def left(self):
        return self.end - self.p


def dec_plane(b, n, size):
    """U32 (size 4) / U64 (size 8): u8 w, base, w planes of n bytes."""
    if len(b) < 1 + size:
        raise Damage("short column")
    w = b[0]
    base = int.from_bytes(b[1:1 + size], "little")
    if w > size or len(b) != 1 + size + w * n:
        raise Damage("column length")
    mask = (1 << (8 * size)) - 1
    if w == 0:
        return [base] * n
    planes = [b[1 + size + k * n:1 + size + (k + 1) * n] for k in range(w)]
    out = []
    for i in range(n):
        v = 0
        for k in range(w):
            v |= planes[k][i] << (8 * k)
        out.append((base + v) & mask)
    return out


KNOWN = {b"HOST", b"PROB", b"KSYM", b"MODS", b"KSYC", b"FILE", b"PROC",
         b"COMM", b"STCK", b"EVNT", b"CNTR", b"FOOT", b"BSUM"}
CTX = {0: "task", 1: "softirq", 2: "hardirq", 3: "nmi"}


class Capture:
    def __init__(self, path):
        self.b = memoryview(open(path, "rb").read())
        self.host = {}
        self.probes = {}        # id -> (name, flags, args), first-seen order
        self.comms = [None]     # id 0: none
        self.stacks = [None]    # (kernel, truncated, frames)
        self.kallsyms = self.modules = None
        self.files = [None]
        self.procs = []
        self.counters = []
        self.blocks = []
        self.refs = []
        self.finished = False
        self.zd = zstandard.ZstdDecompressor()
        self.read_header()
        self.scan()

    # ------------------------------------------------------------ framing

    def read_header(self):
        b = self.b
        if bytes(b[:8]) != b"\x89DTCAP\r\n":
            raise Damage("not a dt capture")
        self.version = struct.unpack_from("<I", b, 8)[0]
        if self.version == 3:
            if struct.unpack_from("<I", b, 28)[0] != xxh3(b[:28]) & 0xFFFFFFFF:
                raise Damage("damaged file header")
            hlen, self.compat, self.incompat, res = struct.unpack_from("<IIII", b, 12)
            if hlen != 32 or res:
                raise Damage("damaged file header")
            if self.incompat:
                raise Damage("needs features %#x" % self.incompat)
            self.hdrlen = 32
        elif self.version == 2:
            if struct.unpack_from("<I", b, 12)[0]:
                raise Damage("damaged file header")
            self.hdrlen, self.compat, self.incompat = 16, 0, 0
        else:
            raise Damage("unsupported version %d" % self.version)

    def inflate(self, data, ulen):
        if ulen > 32768 * len(data) + 4096:
            raise Damage("bad size")
        params = zstandard.get_frame_parameters(bytes(data))
        if params.content_size != ulen:
            raise Damage("frame does not declare ulen")
        out = self.zd.decompress(bytes(data), max_output_size=ulen)
        if len(out) != ulen:
            raise Damage("size mismatch")
        return out

    def scan(self):
        b, off, size = self.b, self.hdrlen, len(self.b)
        while off < size:
            if size - off < 32:
                return                                  # cut
            h = b[off:off + 32]
            if struct.unpack_from("<I", h, 28)[0] != xxh3(h[:28]) & 0xFFFFFFFF:
                if not any(b[off:]):
                    return                              # zeros to the end: cut
                raise Damage("damaged chunk header at offset %d" % off)
            typ = bytes(h[:4])
            flags, xlen, clen, ulen = struct.unpack_from("<IIII", h, 4)
            psum = struct.unpack_from("<Q", h, 20)[0]
            if xlen > 4096:
                raise Damage("xlen")
            end = off + 32 + xlen + clen
            if end > size:
                return                                  # cut
            xh, pay = b[off + 32:off + 32 + xlen], b[off + 32 + xlen:end]
            if typ not in KNOWN:
                self.refs.append((typ, off))            # skipped unread
                off = end
                continue
            xsum = typ == b"EVNT" and self.version == 3
            if flags != (2 if xsum else flags & 1) or ulen > 1 << 30:
                raise Damage("flags")
            covered = xh if xsum else b[off + 32:end]
            if xxh3(covered) != psum:
                raise Damage("checksum at offset %d" % off)
            if typ == b"FOOT":
                self.check_footer(off, end, pay, ulen, flags)
                return
            self.refs.append((typ, off))
            if typ == b"EVNT":
                self.block(off, xh, pay, clen)
            else:
                data = self.inflate(pay, ulen) if flags & 1 else bytes(pay)
                if not flags & 1 and ulen != clen:
                    raise Damage("ulen")
                getattr(self, "c_" + typ.decode().lower())(Cur(data))
            off = end

    def check_footer(self, off, end, pay, ulen, flags):
        c = Cur(self.inflate(pay, ulen))
        n, prev = c.uv(), 0
        ent = []
        for _ in range(n):
            t = struct.pack("<I", c.u32())
            prev += c.uv()
            ent.append((t, prev))
        t = self.b[end:end + 32]
        if len(t) == 32 and bytes(t[:8]) == b"DTCEND01" and \
                struct.unpack_from("<Q", t, 24)[0] == xxh3(t[:24]):
            foot, cnt = struct.unpack_from("<QQ", t, 8)
            self.finished = foot == off and cnt == n and ent == self.refs

    # ------------------------------------------------------------ metadata

    def c_host(self, c):
        h = self.host
        h["kernel"] = c.str(64)
        h["hostname"] = c.str(64)
        h["ncpus"] = c.u32()
        h["clock_mono_ns"] = c.u64()
        h["clock_real_ns"] = c.i64()
        h["start_ns"] = c.u64()
        h["command"] = c.str(1023)
        if c.left():
            for k, lim in (("tool_version", 63), ("kernel_build_id", 63),
                           ("cpu_model", 127), ("boot_id", 39)):
                h[k] = c.str(lim)
        if c.left():
            h["source"] = c.str(15)

    def c_prob(self, c):
        for _ in range(c.uv()):
            pid, flags = c.uv(), c.uv()
            if not 1 <= pid < 1 << 24:
                raise Damage("probe id")
            name = c.str(199)
            na = c.uv()
            if na > 10:
                raise Damage("nargs")
            args = [(c.str(23), c.str(23), c.u8(), c.u8()) for _ in range(na)]
            self.probes[pid] = (name, flags, args)

    def c_comm(self, c):
        first, n = c.uv(), c.uv()
        if first != len(self.comms):
            raise Damage("comm ids")
        self.comms += [c.str(15) for _ in range(n)]

    def c_stck(self, c):
        first, n = c.uv(), c.uv()
        if first != len(self.stacks):
            raise Damage("stack ids")
        prev = 0
        for _ in range(n):
            v = c.uv()
            nf, kind = v >> 2, v & 3
            if nf > 127:
                raise Damage("frames")
            fr = []
            for _ in range(nf):
                prev = (prev + c.zz()) & ((1 << 64) - 1)
                fr.append(prev)
            if fr:
                prev = fr[0]
            self.stacks.append((kind & 1, kind >> 1 & 1, fr))

    def c_ksym(self, c):
        self.kallsyms = bytes(c.take(c.left()))

    def c_mods(self, c):
        self.modules = bytes(c.take(c.left()))

    def c_ksyc(self, c):
        n, alen = c.uv(), c.uv()
        a = Cur(c.take(alen))
        types = c.take(n)
        rest = bytes(c.take(c.left()))
        lines = rest.split(b"\n")
        if len(lines) != 2 * n + 1 or lines[-1] != b"":
            raise Damage("ksyc lines")
        names, mods = lines[:n], lines[n:2 * n]
        out, addr = [], 0
        for i in range(n):
            addr = (addr + a.zz()) & ((1 << 64) - 1)
            if not names[i] or types[i] == 10:
                raise Damage("ksyc")
            line = b"%016x %c %s" % (addr, types[i], names[i])
            if mods[i]:
                line += b"\t" + mods[i]
            out.append(line + b"\n")
        if a.left():
            raise Damage("ksyc addresses")
        self.kallsyms = b"".join(out)

    def c_file(self, c):
        fid = c.uv()
        if fid != len(self.files):
            raise Damage("file id")
        path = c.str(4096)
        bl = c.u8()
        if bl > 20:
            raise Damage("build id")
        bid = bytes(c.take(bl))
        bias = c.u64()
        syms, addr = [], 0
        for _ in range(c.uv()):
            addr = (addr + c.uv()) & ((1 << 64) - 1)
            syms.append((addr, c.uv(), c.str(4096)))
        self.files.append((path, bid, bias, syms))

    def c_proc(self, c):
        for _ in range(c.uv()):
            ts, pid, ppid = c.u64(), c.uv(), c.uv()
            comm, exe = c.str(15), c.str(4096)
            maps = []
            for _ in range(c.uv()):
                start = c.uv()
                end = (start + c.uv()) & ((1 << 64) - 1)
                offset, fil, prot = c.uv(), c.uv(), c.uv()
                if fil >= len(self.files) or prot > 7:
                    raise Damage("map")
                maps.append((start, end, offset, fil, prot, c.str(4096)))
            self.procs.append((pid, ppid, comm, exe, ts, maps))

    def c_cntr(self, c):
        ts, n = c.u64(), c.uv()
        groups = [[c.uv() for _ in range(6)] for _ in range(n + 1)]
        clock = (c.u64(), c.i64()) if c.left() >= 16 else None
        self.counters.append((ts, groups, clock))

    # ------------------------------------------------------------ events

    def block(self, off, xh, pay, clen):
        c = Cur(xh)
        rows, tmin, tmax, pmin, pmax, ndict, ncols = \
            c.u32(), c.u64(), c.u64(), c.u32(), c.u32(), c.u32(), c.u8()
        dl = 18 if self.version == 3 else 10
        if not 1 <= rows <= 1 << 20 or not 1 <= ndict <= rows or \
                len(xh) != 33 + dl * ncols or ncols < 11:
            raise Damage("block header at %d" % off)
        cols, pos, last = {}, 0, -1
        for i in range(ncols):
            e = c.take(dl)
            cid, meth = e[0], e[1]
            raw, stored = struct.unpack_from("<II", e, 2)
            if cid <= last or (cid <= 11 and cid != i):
                raise Damage("column ids")
            last = cid
            seg = pay[pos:pos + stored]
            pos += stored
            if cid <= 20 or cid == 32:
                if dl == 18 and xxh3(seg) != struct.unpack_from("<Q", e, 10)[0]:
                    raise Damage("column checksum at %d" % off)
                if meth == 0:
                    if raw != stored:
                        raise Damage("raw length")
                    data = bytes(seg)
                elif meth == 1:
                    data = self.inflate(seg, raw)
                else:
                    raise Damage("method")
                cols[cid] = data
        if pos != clen or any(k not in cols for k in range(11)):
            raise Damage("block layout at %d" % off)
        nslots = sum(1 for k in cols if 11 <= k <= 20)
        zz = dec_plane(cols[0], rows, 8)
        ts, t = [], tmin
        for u in zz:
            t = (t + ((u >> 1) ^ -(u & 1))) & ((1 << 64) - 1)
            ts.append(t)
        if min(ts) != tmin or max(ts) != tmax:
            raise Damage("ts range")
        cpu = dec_plane(cols[1], rows, 4)
        idx = dec_plane(cols[2], rows, 4)
        if max(cpu) >= 65536 or max(idx) >= ndict:
            raise Damage("ids")
        dic = [dec_plane(cols[3 + k], ndict, 4) for k in range(7)]
        xctx = dec_plane(cols[32], ndict, 4) if 32 in cols else None
        nargs = cols[10]
        if len(nargs) != rows or max(nargs) > nslots:
            raise Damage("nargs")
        slots = [dec_plane(cols[11 + j], sum(1 for x in nargs if x > j), 8)
                 for j in range(nslots)]
        used = [0] * nslots
        out = []
        for i in range(rows):
            d = idx[i]
            a = []
            for j in range(nargs[i]):
                a.append(slots[j][used[j]])
                used[j] += 1
            out.append((ts[i], cpu[i], dic[0][d], dic[1][d], dic[2][d], dic[3][d],
                        dic[4][d], dic[5][d], dic[6][d], nargs[i], a,
                        xctx[d] if xctx else None))
        self.blocks.append(out)
        self.last_block = (off, out)

    def c_bsum(self, c):
        """A block summary must say what the block just read holds."""
        off, rows = c.u64(), c.uv()
        last = getattr(self, "last_block", None)
        if last is None or last[0] != off or getattr(self, "summed", None) == off:
            return                                      # another block's: ignored
        blk = last[1]
        want = [{}, {}, {}, {}]
        for (ts, cpu, pid, tid, pr, comm, ks, us, fl, na, a, cx) in blk:
            for k, key in enumerate((pr, cpu, comm)):
                want[k][key] = want[k].get(key, 0) + 1
            n, nm = want[3].get(pid, (0, 0))
            want[3][pid] = (n + 1, comm or nm)
        got = [{}, {}, {}, {}]
        for k in range(4):
            prev = -1
            for _ in range(c.uv()):
                key, ev = c.uv(), c.uv()
                if key <= prev:
                    raise Damage("block summary order")
                prev = key
                got[k][key] = (ev, c.uv()) if k == 3 else ev
        if rows != len(blk) or got != want:
            raise Damage("block summary of the block at %d" % off)
        self.summed = off
        self.nsums = getattr(self, "nsums", 0) + 1

    # ------------------------------------------------------------ tables

    def t_events(self):
        yield ["ts", "cpu", "pid", "tid", "probe", "probe_name", "comm", "kstack",
               "ustack", "flags", "nargs"] + ["arg%d" % k for k in range(10)] + \
              ["retval", "errno", "ctx"]
        for blk in self.blocks:
            for (ts, cpu, pid, tid, pr, comm, ks, us, fl, na, a, cx) in blk:
                p = self.probes.get(pr)
                cm = self.comms[comm] if 0 < comm < len(self.comms) else None
                args = a + [0] * (10 - len(a))
                ret = [s64(args[0]), s64(args[1])] if fl & 1 else [None, None]
                yield [s64(ts), cpu, pid, tid, pr, p[0] if p else None, cm, ks, us, fl,
                       na] + [s64(x) for x in args] + ret + [CTX.get(cx)]

    def t_probes(self):
        yield ["id", "name", "flags", "nargs"]
        for pid, (name, flags, args) in self.probes.items():
            yield [pid, name, flags, len(args)]

    def t_stacks(self):
        yield ["id", "kernel", "depth", "truncated"]
        for i, (k, t, fr) in enumerate(self.stacks[1:], 1):
            yield [i, k, len(fr), t]

    def t_frames(self):
        yield ["stack_id", "depth", "pc", "kernel"]
        for i, (k, t, fr) in enumerate(self.stacks[1:], 1):
            for d, pc in enumerate(fr):
                yield [i, d, s64(pc), k]

    def t_processes(self):
        yield ["pid", "ppid", "comm", "exe", "ts", "nmaps"]
        for (pid, ppid, comm, exe, ts, maps) in self.procs:
            yield [pid, ppid, comm, exe, s64(ts), len(maps)]

    def t_maps(self):
        yield ["pid", "ts", "start", "end", "offset", "prot", "file", "name"]
        for (pid, ppid, comm, exe, ts, maps) in self.procs:
            for (start, end, offset, fil, prot, name) in maps:
                yield [pid, s64(ts), s64(start), s64(end), s64(offset), prot,
                       fil or None, name]

    def t_counters(self):
        yield ["snapshot", "ts", "cpu", "produced", "read", "dropped", "skipped",
               "recursive", "nested"]
        for s, (ts, groups, clock) in enumerate(self.counters):
            for k, g in enumerate(groups):
                yield [s, s64(ts), k if k < len(groups) - 1 else None] + \
                      [s64(x) for x in g]

    def t_capture(self):
        h = self.host
        yield ["kernel", "hostname", "ncpus", "start_ns", "clock_mono_ns",
               "clock_real_ns", "command", "nevents"]
        yield [h["kernel"], h["hostname"], h["ncpus"], s64(h["start_ns"]),
               s64(h["clock_mono_ns"]), h["clock_real_ns"], h["command"],
               sum(len(b) for b in self.blocks)]


def cell(v):
    if v is None:
        return ""
    if isinstance(v, bytes):
        return v.decode("utf-8", "surrogateescape")
    return str(v)


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    try:
        cap = Capture(sys.argv[1])
    except (Damage, zstandard.ZstdError) as e:
        print("pyreader: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        return 1
    if sys.argv[2] == "--kallsyms":
        sys.stdout.buffer.write(cap.kallsyms or b"")
        return 0
    if sys.argv[2] == "--files":
        for i, (path, bid, bias, syms) in enumerate(cap.files[1:], 1):
            print("file %d %s nsyms %d" % (i, cell(path), len(syms)))
        return 0
    if sys.argv[2] == "--check":
        print("version %d events %d blocks %d probes %d stacks %d files %d procs %d "
              "counters %d kallsyms %d finished %d summaries %d" % (
                  cap.version, sum(len(b) for b in cap.blocks), len(cap.blocks),
                  len(cap.probes), len(cap.stacks) - 1, len(cap.files) - 1,
                  len(cap.procs), len(cap.counters), len(cap.kallsyms or b""),
                  cap.finished, getattr(cap, "nsums", 0)))
        return 0
    w = csv.writer(sys.stdout, lineterminator="\n")  # as dtreport sql --csv
    for row in getattr(cap, "t_" + sys.argv[2])():
        w.writerow([cell(v) for v in row])
    return 0


if __name__ == "__main__":
    sys.exit(main())
