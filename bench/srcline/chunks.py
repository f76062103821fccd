#!/usr/bin/env python3
"""chunks.py CAPTURE: bytes of the capture's chunks by type, one "TYPE BYTES"
line each (header, extra header and payload: what the file holds), read
off the chunk headers (formats/FORMAT.md), independently of libdtcap."""
import struct
import sys

data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89DTCAP\r\n":
    sys.exit("not a capture")
off = struct.unpack_from("<I", data, 12)[0]   # version 3: header length
sizes = {}
while off + 32 <= len(data):
    if data[off:off + 8] == b"DTCEND01":
        break
    typ, _flags, xlen, clen = struct.unpack_from("<4sIII", data, off)
    n = 32 + xlen + clen
    key = typ.decode("ascii", "replace")
    sizes[key] = sizes.get(key, 0) + n
    off += n
for k in sorted(sizes):
    print(k, sizes[k])
