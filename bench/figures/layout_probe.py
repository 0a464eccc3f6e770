# SPDX-License-Identifier: MIT
"""What another block layout would give on a real trace (not run by make
bench; a tool for the size diagnosis in bench/JOURNAL.md).

    python3 bench/figures/layout_probe.py TRACE.ctr

Decodes every block (zstd CLI), splits the items into columns (event
kinds and other fields / timestamp deltas) and compresses each column
with zstd -3 as a block-level columnar layout would. Prints bytes per
event: as stored now, columnar with varint timestamps, and columnar with
timestamps split into byte planes. Field layouts follow schema.c."""
import os
import struct
import subprocess
import sys

# kind -> field types: T timestamp, S string ref (STR: inline bytes follow 1), other varint
SCHEMA = {16: "TSUUUUSR", 17: "TS", 18: "TUSUUUUSR", 19: "TUS", 20: "TSUUUUSR",
          21: "TURU", 22: "TSUR", 23: "TU", 24: "TU", 25: "T"}


def blocks(path):
    d = open(path, "rb").read()
    off = 16 + struct.unpack_from("<I", d, 12)[0]
    while off + 12 <= len(d):
        _, z, _ = struct.unpack_from("<III", d, off)
        yield subprocess.run(["zstd", "-dcq"], input=d[off + 12:off + 12 + z],
                             capture_output=True, check=True).stdout
        off += 12 + z


def zsize(b):
    return len(subprocess.run(["zstd", "-3cq"], input=bytes(b), capture_output=True).stdout)


def put(x, out):
    while x >= 0x80:
        out.append((x & 0x7F) | 0x80)
        x >>= 7
    out.append(x)


def main(path):
    items, ts, events = bytearray(), bytearray(), 0
    planes = [bytearray(), bytearray(), bytearray()]
    for b in blocks(path):
        p = 0

        def v():
            nonlocal p
            r = s = 0
            while True:
                c = b[p]
                p += 1
                r |= (c & 0x7F) << s
                s += 7
                if c < 0x80:
                    return r
        while p < len(b):
            k = v()
            put(k, items)
            if k in (1, 3):  # string, footer: length and bytes
                n = v()
                put(n, items)
                items += b[p:p + n]
                p += n
                continue
            if k in (2, 4):  # thread, drops: two varints
                put(v(), items)
                put(v(), items)
                continue
            events += 1
            for t in SCHEMA[k]:
                x = v()
                if t == "T":
                    put(x, ts)
                    x = min(x, (1 << 24) - 1)  # an escape would carry the rest
                    for i in range(3):
                        planes[i].append((x >> (8 * i)) & 255)
                    continue
                put(x, items)
                if t == "R" and x == 1:
                    n = v()
                    put(n, items)
                    items += b[p:p + n]
                    p += n
    zi, zt = zsize(items), zsize(ts)
    zp = sum(zsize(pl) for pl in planes)
    print("events %d" % events)
    print("as stored:                      %.2f B/event" % (os.path.getsize(path) / events))
    print("columnar, varint timestamps:    %.2f B/event (other columns %.3f)" % ((zi + zt) / events, zi / events))
    print("columnar, timestamp byte planes: %.2f B/event" % ((zi + zp) / events))


if __name__ == "__main__":
    main(sys.argv[1])
