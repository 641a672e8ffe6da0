#!/usr/bin/env python3
"""Damaged inputs for `swaptrace ingest`, and the rule every run must keep.

  ingest-fuzz.py cases SWAPTRACE WORK SEEDS
      the minimised cases fuzzing found (each failed before its fix)
  ingest-fuzz.py random SWAPTRACE WORK SEED COUNT FILE...
      COUNT mutants of each FILE (a blktrace file or a trace.dat), made
      from a fixed SEED: the same mutants on every run
  ingest-fuzz.py selftest WORK
      the checks against stand-ins that crash, hang or print twice: each
      must be reported

SEEDS is a directory holding blk.blktrace.0 (a little-endian blktrace
prefix), small.dat (a small version-6 trace.dat from td-shrink.py --top,
with block events), small-v7z.dat (it converted to version 7, zstd) and
meta.txt.  The rule, for every run: exit status 0 or 1, and on 1 exactly
one line on stderr naming the input, no database left behind (an existing
one unchanged, nothing beside it), never a sanitizer report, never more
than TIMEOUT seconds.  A mutant may ingest (exit 0) when what it decodes to
is plausible.  Prints one line per broken rule; exits 1 if there was any.
"""
import importlib.util
import os
import random
import re
import shutil
import struct
import subprocess
import sys

TIMEOUT = 20
HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("tdshrink", os.path.join(HERE, "td-shrink.py"))
tds = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tds)

INTS = [0, 1, 4, 7, 8, 16, 47, 48, 64, 255, 512, 4095, 4096, 65535, 65536, 0x7fffffff,
        0x80000000, 0xffffffff, 0x100000000, 0x7fffffffffffffff, 0xffffffffffffffff]


def put(d, off, width, v, be=False):
    if 0 <= off and off + width <= len(d):
        d[off:off + width] = (v % (1 << (8 * width))).to_bytes(width, "big" if be else "little")


def interesting(rng, width, extra=()):
    v = rng.choice([x for x in INTS + list(extra) if x < 1 << (8 * width)] +
                   [rng.getrandbits(8 * width)])
    return v + rng.choice([0, 0, 0, -1, 1])


# ---- mutations ----------------------------------------------------------------------
def generic(rng, d):
    n, k = len(d), rng.randrange(7)
    if not n:
        return "empty"
    a = rng.randrange(n)
    if k == 0:
        for _ in range(rng.randint(1, 8)):
            d[rng.randrange(n)] ^= 1 << rng.randrange(8)
        return "bit flips"
    if k == 1:
        d[a] = rng.choice([0, 0xff, 0x7f, 0x80, rng.randrange(256)])
        return "byte at %d" % a
    if k == 2:
        w = rng.choice([2, 4, 8])
        put(d, a, w, interesting(rng, w, [n]), rng.random() < 0.3)
        return "u%d at %d" % (8 * w, a)
    if k == 3:
        del d[a:]
        return "cut at %d" % a
    if k == 4:
        b = min(n, a + rng.choice([1, 4, 16, 48, 64, 4096]))
        del d[a:b]
        return "bytes %d-%d removed" % (a, b)
    if k == 5:
        b = min(n, a + rng.choice([4, 48, 64, 4096]))
        d[a:a] = d[a:b]
        return "bytes %d-%d repeated" % (a, b)
    d[a:a] = bytes(rng.randrange(256) for _ in range(rng.choice([1, 4, 13])))
    return "bytes inserted at %d" % a


def blk_records(d):
    off = 0
    while off + 48 <= len(d):
        be = (struct.unpack_from("<I", d, off)[0] & 0xffffff00) != 0x65617400
        e = ">" if be else "<"
        ver = struct.unpack_from(e + "I", d, off)[0] & 0xff
        size, pdu_at = (48, 46) if ver == 7 else (64, 50)
        if off + size > len(d):
            return
        yield off, be
        off += size + struct.unpack_from(e + "H", d, off + pdu_at)[0]


# v7 record fields: name -> (offset, width)
BLK_FIELDS = {"sequence": (4, 4), "time": (8, 8), "sector": (16, 8), "bytes": (24, 4),
              "action": (28, 4), "pid": (32, 4), "device": (36, 4), "cpu": (40, 4),
              "error": (44, 2), "pdu_len": (46, 2)}


def mutate_blk(rng, d):
    recs = list(blk_records(d))
    if not recs or rng.random() < 0.4:
        return generic(rng, d)
    off, be = rng.choice(recs)
    name = rng.choice(list(BLK_FIELDS) + ["action", "pdu_len", "version", "byte order"])
    if name == "version":
        d[off + (0 if be else 3)] = rng.choice([6, 8, 9, 0xff])
    elif name == "byte order":
        d[off:off + 4] = d[off:off + 4][::-1]
    else:
        fo, w = BLK_FIELDS[name]
        if name == "action":
            v = rng.getrandbits(16) << 16 | rng.choice(list(range(22)) + [0x101, 0xffff])
        else:
            v = interesting(rng, w)
        put(d, off + fo, w, v, be)
    return "%s of the record at %d" % (name, off)


def page_walk(page, long_size=8):
    """(offset, type_len) of each event header in a ring-buffer page."""
    commit = int.from_bytes(page[8:8 + long_size], "little") & ((1 << 30) - 1)
    off, end, out = 8 + long_size, min(len(page), 8 + long_size + commit), []
    while off + 4 <= end and len(out) < 1000:
        head = struct.unpack_from("<I", page, off)[0]
        tl = head & 31
        out.append((off, tl))
        if tl == 29 or tl == 0:
            if off + 8 > end or (tl == 29 and not head >> 5):
                break
            off += 4 + max(struct.unpack_from("<I", page, off + 4)[0], 4)
        else:
            off += 8 if tl > 29 else 4 + 4 * tl
    return out


def event_id(p, name):
    for _, formats in p["systems"]:
        for f in formats:
            if re.search(rb"^name: %s$" % name, f, re.M):
                return int(re.search(rb"^ID: (\d+)", f, re.M).group(1))
    raise SystemExit("no format for " + name.decode())


def mutate_page(rng, page, ids):
    page = bytearray(page)
    evs = page_walk(page)
    k = rng.randrange(4)
    if k == 0 or not evs:
        v = rng.choice([0, 4080, 4081, 4088, 4096, 0x3fffffff, rng.randrange(4096)])
        put(page, 8, 8, v | rng.choice([0, 0, 1 << 31, 3 << 30]))
        return page, "page commit %#x" % v
    off, tl = rng.choice(evs)
    if k == 1:
        put(page, off, 4, (struct.unpack_from("<I", page, off)[0] & ~31) | rng.randrange(32))
        return page, "event header at %d" % off
    if k == 2 and tl <= 28:
        put(page, off + (8 if tl == 0 else 4), 2, rng.choice(ids + [0, 0xffff]))
        return page, "event id at %d" % off
    for _ in range(rng.randint(1, 4)):
        page[min(len(page) - 1, off + 4 + rng.randrange(16))] = rng.randrange(256)
    return page, "event data at %d" % off


def num_text(rng, text):
    ms = list(re.finditer(rb"-?\d+", text))
    if not ms:
        return text, "no number"
    m = rng.choice(ms)
    v = rng.choice([b"0", b"-1", b"2147483647", b"4294967295", b"65536", b"9223372036854775807",
                    b"18446744073709551616", b"%d" % (int(m.group()) + 1), b""])
    return text[:m.start()] + v + text[m.end():], "number %s -> %s" % (
        m.group().decode(), v.decode())


def mutate_v6(rng, p):
    """A change to the parts of a version-6 file, laid out again consistently."""
    ids = [int(x) for _, fs in p["systems"] for f in fs for x in re.findall(rb"^ID: (\d+)", f, re.M)]
    k = rng.randrange(5)
    if k == 0:
        si = rng.randrange(len(p["systems"]))
        name, formats = p["systems"][si]
        fi = rng.randrange(len(formats))
        formats = list(formats)
        formats[fi], what = num_text(rng, formats[fi])
        p["systems"][si] = (name, formats)
        return "format: " + what
    if k == 1:
        opt = rng.choice([o for o in p["options"] if o[0] == 2])
        opt[1], what = num_text(rng, opt[1])
        return "CPUSTAT: " + what
    cands = [(bi, ci) for bi, b in enumerate(p["buffers"]) for ci, blob in enumerate(b[1]) if blob]
    bi, ci = rng.choice(cands)
    name, cpus, clock = p["buffers"][bi]
    cpus, ps = list(cpus), p["page_size"]
    blob = bytearray(cpus[ci])
    pi = rng.randrange(len(blob) // ps)
    blob[pi * ps:(pi + 1) * ps], what = mutate_page(rng, blob[pi * ps:(pi + 1) * ps], ids)
    cpus[ci] = bytes(blob)
    p["buffers"][bi] = (name, cpus, clock)
    return "buffer %d CPU %d page %d: %s" % (bi, ci, pi, what)


def convert_v7(src, dst):
    subprocess.run(["trace-cmd", "convert", "-i", src, "-o", dst, "--file-version", "7",
                    "--compression", "zstd"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)


# ---- the rule ---------------------------------------------------------------------------
def check_run(cmd, work, name, named, existing=None, expect=None, timeout=TIMEOUT, env=None):
    """Run cmd (its output database is work/out/cap.db) and check the rule.
    expect: (status, regex for the one stderr line) a case must give.
    Returns the broken rules as strings."""
    out = os.path.join(work, "out")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    db = os.path.join(out, "cap.db")
    if existing:
        shutil.copy(existing, db)
    try:
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout,
                           env=dict(os.environ, **(env or {})))
        rc, err = r.returncode, r.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        rc, err = "timeout", (e.stderr or b"").decode("utf-8", "replace")
    lines = err.splitlines()
    broken = []
    if rc not in (0, 1):
        broken.append("exit status %s" % rc)
    if re.search(r"runtime error|Sanitizer|LeakSanitizer", err):
        broken.append("a sanitizer report")
    # the trace.dat decoder child's stderr is thrown away: a sanitizer report
    # there ends it without the error it would send, which the parent calls
    # stopping unexpectedly (a crash of libtracecmd is a signal, named as such,
    # when the sanitizers leave signals alone: see test-ingest-fuzz.sh)
    if "the decoder stopped unexpectedly" in err:
        broken.append("the decoder child died without an error")
    if rc == 1:
        if len(lines) != 1:
            broken.append("%d lines on stderr" % len(lines))
        elif not lines[0].startswith("swaptrace: ingest: ") or named not in lines[0]:
            broken.append("the error does not name '%s'" % named)
        left = sorted(os.listdir(out))
        if existing:
            if left != ["cap.db"]:
                broken.append("files beside the database: %s" % left)
            elif open(db, "rb").read() != open(existing, "rb").read():
                broken.append("the existing database was changed")
        elif left:
            broken.append("files left behind: %s" % left)
    elif rc == 0 and any(not l.startswith("swaptrace: ingest: warning: ") for l in lines):
        broken.append("stderr beyond warnings")
    if expect:
        if rc != expect[0]:
            broken.append("exit status %s, expected %d" % (rc, expect[0]))
        elif expect[1] and not (lines and re.search(expect[1], lines[0])):
            broken.append("stderr does not match /%s/" % expect[1])
    return ["%s: %s (stderr: %s)" % (name, b, " | ".join(lines)[:300]) for b in broken]


def ingest_cmd(swaptrace, work, args):
    return [swaptrace, "ingest", "-q", "-o", os.path.join(work, "out", "cap.db")] + args


# ---- the minimised cases ------------------------------------------------------------------
def cases(swaptrace, work, seeds):
    os.makedirs(work, exist_ok=True)
    small = open(os.path.join(seeds, "small.dat"), "rb").read()
    broken = []

    def v6(name, change):
        p = tds.parse(small)
        change(p)
        path = os.path.join(work, name)
        with open(path, "wb") as f:
            f.write(tds.build(p))
        return path

    def fmt(p, name, old, new):
        for si, (sn, fs) in enumerate(p["systems"]):
            for fi, f in enumerate(fs):
                if re.search(rb"^name: %s$" % name, f, re.M):
                    assert old in f
                    fs = list(fs)
                    fs[fi] = f.replace(old, new)
                    p["systems"][si] = (sn, fs)

    def swt_cpu(p, cpu, change):
        name, cpus, clock = p["buffers"][1]
        cpus = list(cpus)
        cpus[cpu] = change(bytearray(cpus[cpu]))
        p["buffers"][1] = (name, cpus, clock)

    def run(name, args, expect, named, env=None):
        broken.extend(check_run(ingest_cmd(swaptrace, work, args), work, name, named,
                                expect=expect, env=env))

    # libtracecmd reads compressed data when swaptrace's chunk reader does not
    # take the file: both readers, where they differ
    libtracecmd = {"SWT_TRACEDAT_READER": "libtracecmd"}

    # meta.txt page_size 100: sectors per page 0, a division by zero (SIGFPE)
    # (in a folder of its own: ingest takes a meta.txt beside its input)
    os.makedirs(os.path.join(work, "meta"), exist_ok=True)
    meta = os.path.join(work, "meta", "meta.txt")
    with open(meta, "wb") as f:
        f.write(b"page_size 100\n" + open(os.path.join(seeds, "meta.txt"), "rb").read())
    run("meta-page-size", ["--meta", meta, os.path.join(seeds, "blk.blktrace.0")],
        (1, r"'%s': line \d+: bad value '100' for page_size$" % re.escape(meta)), meta)

    # an extent line repeated: the database's key failed, naming no line
    with open(meta, "wb") as f:
        ext = b"extent area=0 first_slot=0 nr_slots=8 start_sector=0\n"
        f.write(b"swap_device path=/f dev=7:0\n" + ext + ext)
    run("meta-extent-repeated", ["--meta", meta, os.path.join(seeds, "blk.blktrace.0")],
        (1, r"'%s': line 3: extent slots 0-7 overlap an earlier extent's of area 0$" %
         re.escape(meta)), meta)

    # a CPUSTAT overrun of INT64_MAX: the loss total overflowed (UBSan)
    def overrun(p):
        opt = [o for o in p["options"] if o[0] == 2][-1]
        opt[1] = re.sub(rb"overrun: \d+\n", b"overrun: 9223372036854775807\n", opt[1], 1)
        opt[1] = re.sub(rb"dropped events: \d+", b"dropped events: 5", opt[1])
    f = v6("overrun.dat", overrun)
    run("cpustat-overrun", [f], (0, None), f)

    # a field offset near INT_MAX: offset + size overflowed (UBSan)
    f = v6("offset.dat", lambda p: fmt(p, b"page_fault_user", b"address;\toffset:8;",
                                       b"address;\toffset:2147483647;"))
    # ... is a format no record holds: an error (every fault's address read
    # as 0, exit 0), naming the format (not the record, as once)
    run("format-offset", [f], (1, r"the format of event exceptions:page_fault_user at offset \d+ "
                                  r"lists its field 'address' \(offset 2147483647\) before its "
                                  r"field 'ip' \(offset 16\): the format is damaged$"), f)
    # a modelled field of no number's size: an error (read as 0, exit 0)
    f = v6("size3.dat", lambda p: fmt(p, b"page_fault_user", b"address;\toffset:8;\tsize:8;",
                                      b"address;\toffset:8;\tsize:3;"))
    run("format-size", [f], (1, r"the format of event exceptions:page_fault_user at offset \d+ "
                                r"gives its field 'address' 3 bytes, not a number's 1, 2, 4 or 8: "
                                r"the format is damaged$"), f)
    # a modelled field moved onto its neighbour, the record long enough: an
    # error (every fault's address read from the ip's bytes, exit 0)
    f = v6("overlap.dat", lambda p: fmt(p, b"page_fault_user", b"address;\toffset:8;",
                                        b"address;\toffset:12;"))
    run("format-overlap", [f], (1, r"the format of event exceptions:page_fault_user at offset "
                                   r"\d+ puts its field '(address|ip)' over its field "
                                   r"'(address|ip)': the format is damaged$"), f)

    # the last event of a page runs past it: read past the page (ASan, in the
    # chunk reader of version 7; garbage from the next page in version 6)
    pf = event_id(tds.parse(small), b"page_fault_user")

    def overrun_page(blob):
        last = len(blob) - 4096
        struct.pack_into("<Q", blob, last + 8, 4080)
        # whole page_fault_user records (32 bytes: the common fields, address,
        # ip, error_code), the 114th across the page's end (a shorter one
        # is refused first, as shorter than its format)
        fill = (struct.pack("<IHBBi", 8, pf, 0, 0, 1) + bytes(24)) * 120
        blob[last + 16:last + 4096] = fill[:4080]
        return bytes(blob)
    f = v6("past-page.dat", lambda p: swt_cpu(p, 0, overrun_page))
    run("record-past-page", [f], (1, r"the record at offset \d+ runs past the end of its page"), f)
    f7 = os.path.join(work, "past-page-v7z.dat")
    convert_v7(f, f7)
    run("record-past-page-v7z", [f7],
        (1, r"the record at offset \d+ of the decompressed data runs past the end of its page"), f7)
    run("record-past-page-v7z-libtracecmd", [f7],
        (1, r"the record at offset \d+ of the decompressed data runs past the end of its page"), f7,
        libtracecmd)

    # a compressed chunk of a page and a half: libtracecmd read past it
    f = v6("partial.dat", lambda p: swt_cpu(p, 0, lambda b: bytes(b[:4096 + 2048])))
    f7 = os.path.join(work, "partial-v7z.dat")
    convert_v7(f, f7)
    for how, env in (("", None), ("-libtracecmd", libtracecmd)):
        run("partial-chunk" + how, [f7],
            (1, r"declares 6144 decompressed bytes, not whole pages of 4096$"), f7, env)

    # an option damaged into CPUCOUNT: libtracecmd walked 775 million CPUs (hang)
    def cpucount(p):
        opt = next(o for o in p["options"] if o[1].startswith(b"3.1"))
        opt[0] = 8
    f = v6("cpucount.dat", cpucount)
    run("cpucount", [f], (1, r"implausible CPU count \d+ in the CPUCOUNT option at offset \d+$"), f)

    # a BUFFER option's page size 0: libtracecmd divided by it (SIGFPE)
    d = bytearray(open(os.path.join(seeds, "small-v7z.dat"), "rb").read())
    entry = int(subprocess.run([sys.executable, os.path.join(HERE, "tracefile.py"), "td-cpu-entry",
                                os.path.join(seeds, "small-v7z.dat"), "swt", "0"],
                               stdout=subprocess.PIPE, check=True).stdout)
    put(d, entry - 8, 4, 0)
    f = os.path.join(work, "page-size.dat")
    with open(f, "wb") as out:
        out.write(d)
    run("buffer-page-size", [f], (1, r"BUFFER option at offset \d+: implausible page size 0$"), f)

    # a bio of 4294967295 sectors: half a billion swap rows (hang)
    bq = event_id(tds.parse(small), b"block_bio_queue")

    def huge_bio(p):
        name, cpus, clock = p["buffers"][1]
        for cpu, blob in enumerate(cpus):
            blob = bytearray(blob)
            for pg in range(0, len(blob), 4096):
                for off, tl in page_walk(blob[pg:pg + 4096]):
                    at = pg + off + (8 if tl == 0 else 4)
                    if tl <= 28 and struct.unpack_from("<H", blob, at)[0] == bq:
                        struct.pack_into("<I", blob, at + 24, 0xffffffff)
                        swt_cpu(p, cpu, lambda _: bytes(blob))
                        return
        raise SystemExit("no block_bio_queue event in small.dat")
    f = v6("huge-bio.dat", huge_bio)
    run("huge-bio", ["--swap", "7:0", f], (1, r"declares 4294967295 sectors, more than 4 GiB$"), f)

    # an event id damaged into a larger event's (block_io_start, 64 bytes) on
    # a shorter record at the end of a page: libtraceevent printed the
    # larger event's last fields from past the page (ASan, now and then)
    io_start = event_id(tds.parse(small), b"block_io_start")

    def short_record(blob):
        evs = [(off, tl) for off, tl in page_walk(blob[:4096]) if 1 <= tl < 16]
        struct.pack_into("<H", blob, evs[-1][0] + 4, io_start)
        return bytes(blob)
    f = v6("short-record.dat", lambda p: swt_cpu(p, 0, short_record))
    short = r"holds \d+ bytes, fewer than the 64 of its event block:block_io_start"
    run("record-shorter-than-format", [f], (1, r"the record at offset \d+ " + short + "$"), f)
    f7 = os.path.join(work, "short-record-v7z.dat")
    convert_v7(f, f7)
    for how, env in (("", None), ("-libtracecmd", libtracecmd)):
        run("record-shorter-than-format-v7z" + how, [f7],
            (1, r"the record at offset \d+ of the decompressed data " + short), f7, env)

    # printk formats whose line has no ':': libtraceevent took the format
    # from past the end of the text (ASan, in the decoder child)
    bad_line = r"the line at offset %d%s is not 'ADDRESS : \"FORMAT\"'$"
    f = v6("printk-no-colon.dat", lambda p: p.update(printk=b"ffffffff81000000 x"))
    at = open(f, "rb").read().index(b"ffffffff81000000 x")
    run("printk-no-colon", [f], (1, "printk formats: " + bad_line % (at, "")), f)
    # one of under 3 characters is legal, and libtraceevent 1.7 read before
    # it (ASan): refused until printk-guard.c, now read -- as it is, and
    # compressed in version 7 (checked decompressed)
    f = v6("printk-short.dat", lambda p: p.update(printk=b'ffffffff81000000 : "x"\n'))
    run("printk-short", [f], (0, None), f)
    f7 = os.path.join(work, "printk-v7z.dat")
    convert_v7(f, f7)
    run("printk-short-v7z", [f7], (0, None), f7)
    # version 7, the printk section's compressed flag cleared: its
    # compressed bytes were read as the text
    d = bytearray(open(os.path.join(seeds, "small-v7z.dat"), "rb").read())
    sect = int(subprocess.run([sys.executable, os.path.join(HERE, "tracefile.py"), "td-option",
                               os.path.join(seeds, "small-v7z.dat"), "20"],
                              stdout=subprocess.PIPE, check=True).stdout)
    sect = struct.unpack_from("<Q", d, sect)[0]
    put(d, sect + 2, 2, 0)
    f = os.path.join(work, "printk-flags.dat")
    with open(f, "wb") as out:
        out.write(d)
    run("printk-section-flags", [f], (1, "printk formats: " + bad_line % (sect + 20, "")), f)
    return broken


# ---- random mutants -----------------------------------------------------------------------
def random_mutants(swaptrace, work, seed, count, files):
    os.makedirs(work, exist_ok=True)
    keep = os.path.join(work, "keep.db")
    broken = check_run(ingest_cmd(swaptrace, work, ["--swap", "7:0", files[0]]), work,
                       "the undamaged " + files[0], files[0], expect=(0, None))
    if broken:
        return broken
    shutil.copy(os.path.join(work, "out", "cap.db"), keep)
    for src in files:
        base = os.path.basename(src)
        rng = random.Random("%d %s" % (seed, base))
        data = open(src, "rb").read()
        parts = tds.parse(data) if data[10:12] == b"6\0" else None
        for i in range(count):
            ext = ".dat" if data[:3] == b"\x17\x08\x44" else ".blktrace.0"
            path = os.path.join(work, "m%d%s" % (i, ext))
            if parts and rng.random() < 0.6:
                p = tds.parse(data)
                what = mutate_v6(rng, p)
                with open(path, "wb") as f:
                    f.write(tds.build(p))
            else:
                d = bytearray(data)
                what = mutate_blk(rng, d) if ext != ".dat" else generic(rng, d)
                with open(path, "wb") as f:
                    f.write(d)
            args = (["--swap", "7:0"] if rng.random() < 0.5 else []) + [path]
            existing = keep if rng.random() < 0.25 else None
            broken += check_run(ingest_cmd(swaptrace, work, args), work,
                                "%s mutant %d (%s)" % (base, i, what), path, existing)
    return broken


def selftest(work):
    """The checks must catch a crash, a hang, a second line and a leftover."""
    os.makedirs(work, exist_ok=True)
    named = os.path.join(work, "x.dat")
    stand_ins = {
        "a crash": "kill -SEGV $$",
        "exit status 139": "exit 139",
        "a hang": "sleep 5",
        "two lines": "echo 'swaptrace: ingest: %s: bad' >&2; echo more >&2; exit 1" % named,
        "a leftover": "echo 'swaptrace: ingest: %s: bad' >&2; : > %s/out/cap.db.tmp-x; exit 1"
                      % (named, work),
        "a sanitizer report": "echo '==1==ERROR: AddressSanitizer: SEGV' >&2; exit 0",
    }
    missed = []
    for what, script in stand_ins.items():
        if not check_run(["sh", "-c", script], work, what, named, timeout=1):
            missed.append("selftest: %s was not reported" % what)
    return missed


def main(argv):
    if len(argv) >= 5 and argv[1] == "cases":
        broken = cases(argv[2], argv[3], argv[4])
    elif len(argv) >= 7 and argv[1] == "random":
        broken = random_mutants(argv[2], argv[3], int(argv[4]), int(argv[5]), argv[6:])
    elif len(argv) == 3 and argv[1] == "selftest":
        broken = selftest(argv[2])
    else:
        raise SystemExit(__doc__)
    for b in broken:
        print("FAIL: " + b)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
