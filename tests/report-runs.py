#!/usr/bin/env python3
"""Print SQL that stores synthetic replay results in an ingested database,
for the report tests: the replay engine is not needed to check the charts.

usage: report-runs.py [--partitions N] [--no-series] [--one-pc PC]

Three policies at page-cluster 0..8 on the traced layout (per-partition
rows, 'ra_window' and 'request_pages' histograms, per-second series), plus
the 'adaptive' policy at page-cluster 3 on simulated 1-, 2- and 4-device
layouts.  The numbers follow simple, fixed formulas, so every run of this
script prints the same SQL.
"""
import argparse

FAULTS = 75061
SECONDS = 11

# policy -> (coverage at a full window of 2^pc pages, fraction of the window used)
POLICIES = {
    "fixed": (0.030, 1.00),
    "adaptive": (0.026, 0.45),
    "vma": (0.041, 0.60),
}


def run_numbers(policy, pc, faults):
    cov_full, window_use = POLICIES[policy]
    win = 1 << pc
    coverage = 0.0 if pc == 0 else cov_full * (1 + pc) / 4
    hits = int(faults * coverage)
    misses = faults - hits
    ra_per_miss = (win - 1) * window_use
    ra_pages = int(misses * ra_per_miss)
    ra_hits = hits
    pages_read = misses + ra_pages
    # random slots: most windows break into single pages, some merge
    read_requests = misses + int(ra_pages * 0.55)
    read_merges = pages_read - read_requests
    return dict(faults=faults, misses=misses, hits=hits, pages_read=pages_read,
                ra_pages=ra_pages, ra_hits=ra_hits, ra_wasted=ra_pages - ra_hits,
                read_requests=read_requests, read_merges=read_merges)


def metrics_sql(n):
    acc = "NULL" if n["ra_pages"] == 0 else repr(n["ra_hits"] / n["ra_pages"])
    cov = "NULL" if n["faults"] == 0 else repr(n["hits"] / n["faults"])
    kib = "NULL" if n["read_requests"] == 0 else repr(n["pages_read"] * 4 / n["read_requests"])
    return acc, cov, kib


def insert_run(out, rid, policy, pc, layout, parts, series):
    n = run_numbers(policy, pc, FAULTS)
    acc, cov, kib = metrics_sql(n)
    # columns named: the replay may add columns of its own
    out.append(
        "INSERT INTO run (id, created, policy, params, page_cluster, cache_pages, layout, "
        "approximate, faults, misses, hits, pages_read, ra_pages, ra_hits, ra_wasted, "
        "read_requests, read_merges, accuracy, coverage, avg_request_kib, replay_ns) "
        "VALUES (%d, '2025-01-01T00:00:00Z', '%s', NULL, %d, 52480, '%s', 0, "
        "%d, %d, %d, %d, %d, %d, %d, %d, %d, %s, %s, %s, %d);"
        % (rid, policy, pc, layout, n["faults"], n["misses"], n["hits"], n["pages_read"],
           n["ra_pages"], n["ra_hits"], n["ra_wasted"], n["read_requests"], n["read_merges"],
           acc, cov, kib, 1000000 + rid))
    for p, dev in enumerate(parts):
        # spreading over more devices loses neighbours: fewer hits and merges
        share = FAULTS // len(parts)
        pn = run_numbers(policy, pc, share)
        loss = 1.0 / len(parts) ** 0.5
        pn["hits"] = int(pn["hits"] * loss)
        pn["ra_hits"] = pn["hits"]
        pn["misses"] = pn["faults"] - pn["hits"]
        # as replay stores them (report refuses others): the pages read that no miss read
        pn["ra_pages"] = pn["pages_read"] - pn["misses"]
        pn["read_merges"] = int(pn["read_merges"] * loss)
        pn["read_requests"] = pn["pages_read"] - pn["read_merges"]
        acc, cov, kib = metrics_sql(pn)
        out.append(
            "INSERT INTO run_partition (run_id, partition, dev, faults, misses, hits, pages_read, "
            "ra_pages, ra_hits, ra_wasted, read_requests, read_merges, accuracy, coverage, "
            "avg_request_kib) VALUES (%d, %d, '%s', %d, %d, %d, %d, %d, %d, %d, %d, %d, "
            "%s, %s, %s);"
            % (rid, p, dev, pn["faults"], pn["misses"], pn["hits"], pn["pages_read"],
               pn["ra_pages"], pn["ra_hits"], max(0, pn["ra_pages"] - pn["ra_hits"]),
               pn["read_requests"], pn["read_merges"], acc, cov, kib))
        misses = pn["misses"]
        win = 1 << pc
        # window sizes: halving ladder from the maximum, weighted by policy
        if policy == "fixed" or pc == 0:
            windows = {win: misses}
        else:
            windows = {}
            left = misses
            size = win
            while size > 1:
                take = left // 2
                windows[size] = take
                left -= take
                size //= 2
            windows[1] = left
        for size, count in sorted(windows.items()):
            out.append("INSERT INTO run_histogram (run_id, partition, kind, bucket, count) "
                       "VALUES (%d, %d, 'ra_window', %d, %d);"
                       % (rid, p, size, count))
        # request sizes: mostly single pages, a tail up to the window
        sizes = {}
        left = pn["read_requests"]
        size = 1
        while size < win and left > 0:
            take = int(left * 0.7)
            sizes[size] = take
            left -= take
            size += 1
        sizes[size] = sizes.get(size, 0) + left
        for size, count in sorted(sizes.items()):
            out.append("INSERT INTO run_histogram (run_id, partition, kind, bucket, count) "
                       "VALUES (%d, %d, 'request_pages', %d, %d);"
                       % (rid, p, size, count))
        if series:
            for s in range(SECONDS):
                # the measured phase starts after a 3-second warm-up
                f = 0 if s < 3 else pn["faults"] // (SECONDS - 3)
                h = int(f * (pn["hits"] / pn["faults"])) if pn["faults"] else 0
                out.append("INSERT INTO run_series (run_id, partition, second, faults, hits, "
                           "misses, pages_read) VALUES (%d, %d, %d, %d, %d, %d, %d);"
                           % (rid, p, s, f, h, f - h, (f - h) * (1 + int(ra_per(policy, pc)))))


def ra_per(policy, pc):
    return ((1 << pc) - 1) * POLICIES[policy][1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--partitions", type=int, default=1)
    ap.add_argument("--no-series", action="store_true")
    ap.add_argument("--one-pc", type=int, default=None)
    args = ap.parse_args()
    out = ["BEGIN;"]
    rid = 1
    traced = ["7:%d" % i for i in range(args.partitions)]
    pcs = [args.one_pc] if args.one_pc is not None else list(range(9))
    for policy in POLICIES:
        for pc in pcs:
            insert_run(out, rid, policy, pc, "traced", traced, not args.no_series)
            rid += 1
    if args.one_pc is None:
        for layout, ndev in (("spread1", 1), ("spread2", 2), ("spread4", 4)):
            insert_run(out, rid, "adaptive", 3, layout, ["sim%d" % i for i in range(ndev)],
                       False)
            rid += 1
    out.append("COMMIT;")
    print("\n".join(out))


if __name__ == "__main__":
    main()
