#!/usr/bin/env python3
"""Locate and patch structures in blktrace and trace.dat files, for the
end-to-end tests that damage real captures on purpose.  Written from the
file format documentation (blktrace_api.h, trace-cmd.dat.v6/v7(5)), apart
from swaptrace's own readers, so the offsets the tests expect in error
messages are computed independently.

  tracefile.py blk-record FILE N           offset of record N (0-based)
  tracefile.py blk-pdu-record FILE         offset of the first record with a PDU
  tracefile.py blk-drop FILE OUT ACT EVERY  copy FILE to OUT without every EVERY-th
                                           record of action ACT (7 issue, 8 complete),
                                           as a ring buffer that overran loses them;
                                           prints how many were left out
  tracefile.py blk-write OUT [big]          write version-7 records read from stdin,
                                           one a line: "TIME ACTION RWBS SECTOR NSECT
                                           [MAJ,MIN]" (ACTION a blkparse letter, RWBS
                                           its R, W, D, F, S, M, A letters, P for a
                                           passthrough request's; device 8,0 unless
                                           given); CPU 0
  tracefile.py td-options-field FILE       offset of the v7 options-offset field
  tracefile.py td-option FILE ID [NTH]     offset of the NTH (0-based) v7 option
                                           ID's data
  tracefile.py td-options-next FILE N      offset of the next-section field of the
                                           DONE option that ends v7 options section
                                           N (0-based)
  tracefile.py td-cpu FILE BUFFER CPU      "OFFSET SIZE" of a buffer's CPU data
                                           (v6 or v7; BUFFER "" is the top level)
  tracefile.py td-cpu-entry FILE BUFFER CPU  offset of the v7 BUFFER option's
                                           (cpu, offset, size) entry for CPU
  tracefile.py td-chunk FILE BUFFER CPU N  offset of chunk N's header in
                                           compressed CPU data
  tracefile.py td-section-edit FILE ID OLD NEW [AFTER]
                                           rewrite the v7 section option ID points
                                           at with the first OLD (after the first
                                           AFTER) replaced by NEW (C escapes), as a
                                           new section at the end of the file that
                                           the option then points at, compressed as
                                           the old one was (zstd: the zstd command);
                                           prints "SECTION AT": the new section's
                                           offset and where AFTER is in its data
                                           (or, without AFTER, NEW; decompressed,
                                           or in the file)
  tracefile.py patch FILE OFFSET HEX       overwrite bytes at OFFSET
  tracefile.py patch64 FILE OFFSET VALUE   overwrite a little-endian u64
"""
import struct
import subprocess
import sys


def blk_records(data):
    """Offset and PDU length of every record."""
    off = 0
    while off < len(data):
        magic = struct.unpack_from("<I", data, off)[0]
        end = "<" if (magic & 0xffffff00) == 0x65617400 else ">"
        version = struct.unpack_from(end + "I", data, off)[0] & 0xff
        size, pdu_at = (48, 46) if version == 7 else (64, 50)
        pdu_len = struct.unpack_from(end + "H", data, off + pdu_at)[0]
        yield off, pdu_len
        off += size + pdu_len


# blkparse's action letters -> __BLK_TA_*, and the category each is traced in
BLK_ACTIONS = {"Q": (1, 0x10), "M": (2, 0x10), "F": (3, 0x10), "G": (4, 0x10), "R": (6, 0x20),
               "D": (7, 0x40), "C": (8, 0x80), "I": (12, 0x10)}
BLK_RWBS = {"R": 0x1, "W": 0x2, "F": 0x4, "S": 0x8, "A": 0x800, "M": 0x1000, "D": 0x2000}


def blk_write(out, big_endian, lines):
    """struct blk_io_trace records, sequence numbers 1, 2, ..."""
    end, data = ">" if big_endian else "<", bytearray()
    for seq, line in enumerate(lines, 1):
        t, letter, rwbs, sector, nsect, *dev = line.split()
        major, minor = map(int, (dev or ["8,0"])[0].split(","))
        act, cat = BLK_ACTIONS[letter]
        for c in rwbs:
            cat |= BLK_RWBS[c] if c not in "RP" else 0
        # P: a passthrough (PC) request's event, not a file-system one's
        cat |= 0x200 if "P" in rwbs else 0x100
        data += struct.pack(end + "IIQQIIIIIHH", 0x65617407, seq, int(t), int(sector),
                            int(nsect) * 512, cat << 16 | act, 100, major << 20 | minor, 0, 0, 0)
    with open(out, "wb") as f:
        f.write(data)


def cstr(data, off):
    end = data.index(b"\0", off)
    return data[off:end].decode(), end + 1


class TraceDat:
    def __init__(self, data):
        self.d = data
        assert data[:10] == b"\x17\x08\x44tracing"
        version, off = cstr(data, 10)
        self.version = int(version)
        assert data[off] == 0, "big-endian trace.dat files are not handled here"
        self.page_size = struct.unpack_from("<I", data, off + 2)[0]
        self.hdr_end = off + 6

    def u16(self, off):
        return struct.unpack_from("<H", self.d, off)[0]

    def u32(self, off):
        return struct.unpack_from("<I", self.d, off)[0]

    def u64(self, off):
        return struct.unpack_from("<Q", self.d, off)[0]

    def options_field(self):
        _, off = cstr(self.d, self.hdr_end)     # compression name
        _, off = cstr(self.d, off)              # compression version
        return off

    def options_v7(self, dones=None):
        """(id, data offset, size) of every option, following the chain;
        dones, a list, gets the data offset of each section's DONE option."""
        sect = self.u64(self.options_field())
        while sect:
            assert self.u16(sect) == 0 and not self.u16(sect + 2) & 1
            off, end, sect = sect + 16, sect + 16 + self.u64(sect + 8), 0
            while off < end:
                oid, size = self.u16(off), self.u32(off + 2)
                if oid == 0:
                    sect = self.u64(off + 6)
                    if dones is not None:
                        dones.append(off + 6)
                    break
                yield oid, off + 6, size
                off += 6 + size

    def cpus_v7(self, buffer):
        for oid, off, _ in self.options_v7():
            if oid != 3:
                continue
            name, p = cstr(self.d, off + 8)
            _, p = cstr(self.d, p)
            if name != buffer:
                continue
            ncpus = self.u32(p + 4)
            p += 8
            for i in range(ncpus):
                e = p + 20 * i
                yield self.u32(e), self.u64(e + 4), self.u64(e + 12), e

    def cpus_v6(self, buffer):
        d = self.d
        fly = d.index(b"flyrecord\0", d.index(b"options  \0"))
        if buffer:
            opt = d.index(b"options  \0") + 10
            while True:
                oid, size = self.u16(opt), self.u32(opt + 2)
                assert oid, "no such buffer"
                if oid == 3 and cstr(d, opt + 14)[0] == buffer:
                    fly = self.u64(opt + 6)
                    break
                opt += 6 + size
        ncpus = self.u32(d.index(b"options  \0") - 4)
        for i in range(ncpus):
            e = fly + 10 + 16 * i
            yield i, self.u64(e), self.u64(e + 8), e

    def cpu(self, buffer, cpu):
        """(data offset, data size, entry offset) of a buffer's CPU."""
        cpus = self.cpus_v7(buffer) if self.version == 7 else self.cpus_v6(buffer)
        for c, off, size, entry in cpus:
            if c == cpu:
                return off, size, entry
        raise SystemExit("no data for buffer '%s' CPU %d" % (buffer, cpu))


def unescape(text):
    return text.encode().decode("unicode_escape").encode("latin-1")


def section_edit(path, data, sid, old, new, after):
    """A section's data edited, appended as a new section (header: u16 id,
    u16 flags, u32 string id, u64 size; compressed: u32 compressed size,
    u32 decompressed size, zstd frame); the option that named the old one
    names the new one."""
    td = TraceDat(data)
    opt = next(off for oid, off, _ in td.options_v7() if oid == sid)
    sect = td.u64(opt)
    _, flags, _, size = struct.unpack_from("<HHIQ", data, sect)
    body = data[sect + 16:sect + 16 + size]
    if flags & 1:
        csize, _ = struct.unpack_from("<II", body)
        body = subprocess.run(["zstd", "-dcq"], input=body[8:8 + csize], stdout=subprocess.PIPE,
                              check=True).stdout
    start = body.index(after) if after else 0
    at = body.index(old, start)
    body = body[:at] + new + body[at + len(old):]
    where = start if after else at
    if flags & 1:
        frame = subprocess.run(["zstd", "-cq"], input=body, stdout=subprocess.PIPE,
                               check=True).stdout
        body = struct.pack("<II", len(frame), len(body)) + frame
    else:
        where += len(data) + 16
    out = bytearray(data)
    new_sect = len(out)
    out += struct.pack("<HHIQ", sid, flags, struct.unpack_from("<I", data, sect + 4)[0],
                       len(body)) + body
    struct.pack_into("<Q", out, opt, new_sect)
    with open(path, "wb") as f:
        f.write(out)
    print(new_sect, where)


def main(argv):
    cmd, path = argv[1], argv[2]
    if cmd == "blk-write":
        blk_write(path, argv[3:] == ["big"], [l for l in sys.stdin if l.strip()])
        return
    if cmd in ("patch", "patch64"):
        value = bytes.fromhex(argv[4]) if cmd == "patch" else struct.pack("<Q", int(argv[4], 0))
        with open(path, "r+b") as f:
            f.seek(int(argv[3], 0))
            f.write(value)
        return
    with open(path, "rb") as f:
        data = f.read()
    if cmd == "blk-record":
        n = int(argv[3])
        print(next(off for i, (off, _) in enumerate(blk_records(data)) if i == n))
        return
    if cmd == "blk-drop":
        act, every, seen, dropped, out = int(argv[4]), int(argv[5]), 0, 0, bytearray()
        for off, pdu_len in blk_records(data):
            magic = struct.unpack_from("<I", data, off)[0]
            end = "<" if (magic & 0xffffff00) == 0x65617400 else ">"
            assert struct.unpack_from(end + "I", data, off)[0] & 0xff == 7, "version 7 records only"
            size = 48
            # struct blk_io_trace: magic, sequence, time, sector, bytes, action...
            action = struct.unpack_from(end + "I", data, off + 28)[0]
            if action & 0xffff == act and pdu_len == 0:
                seen += 1
                if seen % every == 0:
                    dropped += 1
                    continue
            out += data[off:off + size + pdu_len]
        with open(argv[3], "wb") as f:
            f.write(out)
        print(dropped)
        return
    if cmd == "blk-pdu-record":
        print(next(off for off, pdu_len in blk_records(data) if pdu_len))
        return
    td = TraceDat(data)
    if cmd == "td-options-field":
        print(td.options_field())
    elif cmd == "td-option":
        want, nth = int(argv[3]), int(argv[4]) if len(argv) > 4 else 0
        print([off for oid, off, _ in td.options_v7() if oid == want][nth])
    elif cmd == "td-options-next":
        dones = []
        for _ in td.options_v7(dones):
            pass
        print(dones[int(argv[3])])
    elif cmd == "td-section-edit":
        section_edit(path, data, int(argv[3]), unescape(argv[4]), unescape(argv[5]),
                     unescape(argv[6]) if len(argv) > 6 else b"")
    elif cmd == "td-cpu":
        print("%d %d" % td.cpu(argv[3], int(argv[4]))[:2])
    elif cmd == "td-cpu-entry":
        print(td.cpu(argv[3], int(argv[4]))[2])
    elif cmd == "td-chunk":
        off = td.cpu(argv[3], int(argv[4]))[0]
        off += 4
        for _ in range(int(argv[5])):
            off += 8 + td.u32(off)
        print(off)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
