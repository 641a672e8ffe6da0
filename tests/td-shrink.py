#!/usr/bin/env python3
"""Cut a real trace.dat down to a small one that still decodes: for the
fuzz test, whose mutants must be small to be many.

  td-shrink.py [--skip N] [--top] IN-V6 OUT PAGES [SYSTEM...]

IN-V6 is a little-endian version-6 trace.dat (`trace-cmd convert
--file-version 6` makes one from any).  OUT keeps its header pages, the
ftrace formats, the event formats of SYSTEMs only (default: block,
exceptions, vmscan), the saved command lines and the options, with
kallsyms and printk formats emptied and each buffer's CPUs cut to their
first PAGES ring-buffer pages.  The CPUSTAT options' "read events" are set
to the events those pages hold (counted here from the page headers), so
the file stays consistent and a reader that checks them accepts it.
--skip N cuts from page N on instead of the first; --top gives the
(empty) top-level buffer a copy of the first instance buffer's first page
of each CPU, so that `trace-cmd convert` to version 7 writes a BUFFER
option for the top level too, as trace-cmd record does (swaptrace's chunk
reader takes only files whose every buffer has one).
Written from trace-cmd.dat.v6(5), apart from swaptrace's readers.

As a module: parse() splits a version-6 file into its parts and build()
lays parts out again with every offset recomputed, so a fuzzer can change
a part (a format's text, an option) and still get a consistent file.
"""
import struct
import sys

MAGIC = b"\x17\x08\x44tracing"


class Reader:
    def __init__(self, data):
        self.d, self.p = data, 0

    def take(self, n):
        b = self.d[self.p:self.p + n]
        assert len(b) == n, "truncated input"
        self.p += n
        return b

    def u16(self):
        return struct.unpack("<H", self.take(2))[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def cstr(self):
        end = self.d.index(b"\0", self.p)
        s = self.d[self.p:end]
        self.p = end + 1
        return s


def page_events(page, long_size):
    """Data events in one ring-buffer page (type_len 0..28)."""
    commit = struct.unpack_from("<Q" if long_size == 8 else "<I", page, 8)[0]
    commit &= (1 << 30) - 1             # missed-events flags above
    off, end, n = 8 + long_size, 8 + long_size + commit, 0
    while off + 4 <= end:
        head = struct.unpack_from("<I", page, off)[0]
        type_len, delta = head & 31, head >> 5
        if type_len == 29:              # padding
            if delta == 0:
                break
            off += 4 + struct.unpack_from("<I", page, off + 4)[0]
        elif type_len in (30, 31):      # time extend, absolute time stamp
            off += 8
        elif type_len == 0:             # length in the next word
            off += 4 + struct.unpack_from("<I", page, off + 4)[0]
            n += 1
        else:
            off += 4 + 4 * type_len
            n += 1
    return n


def parse(data):
    """The parts of a little-endian version-6 file, as a dict."""
    r = Reader(data)
    p = {}
    assert r.take(10) == MAGIC
    assert r.cstr() == b"6", "not a version-6 file"
    endian, p["long_size"], p["page_size"] = r.take(1)[0], r.take(1)[0], r.u32()
    assert endian == 0, "big-endian files are not handled here"
    for name in ("header_page", "header_event"):
        assert r.cstr() == name.encode()
        p[name] = r.take(r.u64())
    p["ftrace"] = [r.take(r.u64()) for _ in range(r.u32())]
    p["systems"] = []
    for _ in range(r.u32()):
        name = r.cstr()
        p["systems"].append((name, [r.take(r.u64()) for _ in range(r.u32())]))
    p["kallsyms"] = r.take(r.u32())
    p["printk"] = r.take(r.u32())
    p["cmdlines"] = r.take(r.u64())
    ncpus = p["ncpus"] = r.u32()
    assert r.take(10) == b"options  \0"
    p["options"] = []
    while True:
        oid = r.u16()
        if not oid:
            break
        p["options"].append([oid, r.take(r.u32())])

    def table(off):
        """A "flyrecord" table: its CPUs' pages, and the trace clock that
        follows it (u64 length, text)."""
        assert data[off:off + 10] == b"flyrecord\0"
        cpus = []
        for i in range(ncpus):
            o, s = struct.unpack_from("<QQ", data, off + 10 + 16 * i)
            cpus.append(data[o:o + s])
        off += 10 + 16 * ncpus
        return cpus, data[off:off + 8 + struct.unpack_from("<Q", data, off)[0]]

    # buffers in file order: the top level, then each BUFFER option's
    p["buffers"] = [(b"",) + table(r.p)]
    for opt in p["options"]:
        if opt[0] == 3:
            p["buffers"].append((opt[1][8:opt[1].index(b"\0", 8)],) +
                                table(struct.unpack_from("<Q", opt[1])[0]))
    return p


def build(p):
    """A version-6 file from parts, every offset and size recomputed."""
    ncpus, page_size = p["ncpus"], p["page_size"]
    out = bytearray(MAGIC + b"6\0" + bytes([0, p["long_size"]]) + struct.pack("<I", page_size))
    for name in ("header_page", "header_event"):
        out += name.encode() + b"\0" + struct.pack("<Q", len(p[name])) + p[name]
    out += struct.pack("<I", len(p["ftrace"]))
    for f in p["ftrace"]:
        out += struct.pack("<Q", len(f)) + f
    out += struct.pack("<I", len(p["systems"]))
    for name, formats in p["systems"]:
        out += name + b"\0" + struct.pack("<I", len(formats))
        for f in formats:
            out += struct.pack("<Q", len(f)) + f
    for name in ("kallsyms", "printk"):
        out += struct.pack("<I", len(p[name])) + p[name]
    out += struct.pack("<Q", len(p["cmdlines"])) + p["cmdlines"]
    out += struct.pack("<I", ncpus)
    # options, the tables (each followed by its clock), then the pages, aligned
    head_len = len(out) + 10 + sum(6 + len(o[1]) for o in p["options"]) + 2
    tables, pos = [], head_len
    for _, _, clock in p["buffers"]:
        tables.append(pos)
        pos += 10 + 16 * ncpus + len(clock)
    placed = []
    for _, cpus, _ in p["buffers"]:
        row = []
        for blob in cpus:
            if blob:
                pos = (pos + page_size - 1) // page_size * page_size
            row.append((pos if blob else 0, len(blob)))
            pos += len(blob)
        placed.append(row)
    out += b"options  \0"
    bi = 1
    for oid, text in p["options"]:
        if oid == 3 and bi < len(tables):
            text = struct.pack("<Q", tables[bi]) + text[8:]
            bi += 1
        out += struct.pack("<HI", oid, len(text)) + text
    out += struct.pack("<H", 0)
    assert len(out) == head_len
    for row, (_, _, clock) in zip(placed, p["buffers"]):
        out += b"flyrecord\0" + b"".join(struct.pack("<QQ", o, s) for o, s in row) + clock
    for (_, cpus, _), row in zip(p["buffers"], placed):
        for blob, (o, _) in zip(cpus, row):
            if blob:
                out += b"\0" * (o - len(out)) + blob
    return bytes(out)


def shrink(p, pages, keep, skip=0, top=False):
    """Keep SYSTEMs' formats and PAGES pages of each CPU from page SKIP on;
    CPUSTATs to match."""
    page_size = p["page_size"]
    p["systems"] = [s for s in p["systems"] if s[0] in keep]
    p["kallsyms"] = p["printk"] = b""
    events = {}
    for i, (name, cpus, clock) in enumerate(p["buffers"]):
        cpus = [blob[skip * page_size:(skip + pages) * page_size] for blob in cpus]
        p["buffers"][i] = (name, cpus, clock)
    if top and len(p["buffers"]) > 1:
        name, cpus, clock = p["buffers"][0]
        p["buffers"][0] = (name, [blob[:page_size] for blob in p["buffers"][1][1]], clock)
    for name, cpus, _ in p["buffers"]:
        events[name] = [sum(page_events(blob[o:o + page_size], p["long_size"])
                            for o in range(0, len(blob), page_size)) for blob in cpus]
    # CPUSTAT options follow the buffers: the top level's, then "Buffer: NAME"
    stat_buffer = b""
    for opt in p["options"]:
        if opt[0] != 2:
            continue
        text = opt[1]
        if text.strip().startswith(b"Buffer: "):
            stat_buffer = text.strip()[8:].split(b"\n")[0]
            continue
        lines = text.split(b"\n")
        cpu = next(int(l[5:]) for l in lines if l.startswith(b"CPU: "))
        n = events[stat_buffer][cpu] if stat_buffer in events and cpu < p["ncpus"] else 0
        opt[1] = b"\n".join(b"read events: %d" % n if l.startswith(b"read events:") else l
                            for l in lines)


def main(argv):
    skip, top = 0, False
    argv = argv[1:]
    while argv and argv[0].startswith("--"):
        if argv[0] == "--skip" and len(argv) > 1:
            skip, argv = int(argv[1]), argv[2:]
        elif argv[0] == "--top":
            top, argv = True, argv[1:]
        else:
            raise SystemExit(__doc__)
    if len(argv) < 3:
        raise SystemExit(__doc__)
    keep = {s.encode() for s in argv[3:]} or {b"block", b"exceptions", b"vmscan"}
    with open(argv[0], "rb") as f:
        p = parse(f.read())
    shrink(p, int(argv[2]), keep, skip, top)
    with open(argv[1], "wb") as f:
        f.write(build(p))


if __name__ == "__main__":
    main(sys.argv)
