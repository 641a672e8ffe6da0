-- swaptrace database schema (see docs/schema.md for the user's guide).
-- Times are nanoseconds on the trace clock as recorded (absolute; the
-- capture row holds the first and last event times).  Sectors are 512 bytes,
-- slots are swap pages.  `dev` is the kernel dev_t, major << 20 | minor (the
-- value tracepoint filters use); device.name gives "MAJ:MIN".
-- NULL means "not traced" or "unknown", never zero.

CREATE TABLE swt_meta (
	key	TEXT PRIMARY KEY,
	value	TEXT
);

-- One row: the capture and the host facts a replay needs.
CREATE TABLE capture (
	id			INTEGER PRIMARY KEY CHECK (id = 1),
	name			TEXT,		-- capture directory or first input's name
	kernel			TEXT,		-- uname -r of the traced host
	page_size		INTEGER,	-- bytes
	ncpus			INTEGER,
	page_cluster		INTEGER,	-- /proc/sys/vm/page-cluster while tracing
	vma_ra_enabled		INTEGER,	-- /sys/kernel/mm/swap/vma_ra_enabled (0/1)
	mem_total_kib		INTEGER,	-- MemTotal
	mem_limit_bytes		INTEGER,	-- the traced cgroup's memory limit
	working_set_bytes	INTEGER,	-- workload's stated working set, when known
	workload		TEXT,		-- the workload line, verbatim
	command			TEXT,		-- command line that was traced
	clock			TEXT,		-- trace clock ("local", ...)
	probes			TEXT,		-- swap-entry probes used: "none" or their list
	layout_source		TEXT,		-- where swap_area came from: meta, cmdline, assumed
	first_ns		INTEGER,	-- first event time
	last_ns			INTEGER,	-- last event time
	lost_events		INTEGER		-- events the tracer reported lost (all sources)
);

-- Every fact line of the capture's metadata file, verbatim, for users.
CREATE TABLE capture_fact (
	seq	INTEGER PRIMARY KEY,
	section	TEXT,	-- "" for the header, else the "# section" it followed
	key	TEXT,
	value	TEXT
);

-- /proc/vmstat counters over the capture (machine-wide).
CREATE TABLE vmstat (
	name	TEXT PRIMARY KEY,	-- pswpin, pswpout, swap_ra, swap_ra_hit, pgmajfault...
	before	INTEGER,
	after	INTEGER,
	delta	INTEGER NOT NULL
);

-- Input files ingested.
CREATE TABLE source (
	id		INTEGER PRIMARY KEY,
	path		TEXT NOT NULL,
	format		TEXT NOT NULL,	-- 'trace.dat', 'blktrace'
	version		INTEGER,	-- trace.dat file version, blktrace record version
	byte_order	TEXT,		-- 'little' or 'big'
	cpus		INTEGER,
	events		INTEGER,	-- events decoded from this source
	lost_events	INTEGER
);

-- Events decoded, by name, per source: what trace-cmd report / blkparse saw.
-- Block actions from blktrace files are named after their tracepoints.
CREATE TABLE event_count (
	source_id	INTEGER NOT NULL REFERENCES source(id),
	system		TEXT NOT NULL,
	name		TEXT NOT NULL,
	count		INTEGER NOT NULL,
	PRIMARY KEY (source_id, system, name)
);

-- Block devices seen in events or metadata.
CREATE TABLE device (
	dev		INTEGER PRIMARY KEY,
	major		INTEGER NOT NULL,
	minor		INTEGER NOT NULL,
	name		TEXT NOT NULL,	-- "MAJ:MIN"
	path		TEXT,		-- /dev/... when known
	rotational	INTEGER
);

-- Swap areas (/proc/swaps rows), id = swap type (order in /proc/swaps).
CREATE TABLE swap_area (
	id		INTEGER PRIMARY KEY,
	dev		INTEGER NOT NULL,	-- block device carrying the I/O
	path		TEXT,
	type		TEXT,		-- 'partition' or 'file'
	priority	INTEGER,
	rotational	INTEGER,
	synchronous	INTEGER,	-- zram/pmem/brd: swap-in skips readahead
	start_sector	INTEGER NOT NULL,	-- sector of slot 0 on dev (partitions)
	slots		INTEGER,	-- pages incl. the header slot 0
	size_kib	INTEGER,
	used_kib	INTEGER,
	assumed		INTEGER NOT NULL DEFAULT 0	-- 1: no metadata, layout guessed
);

-- Where slots live on the device: one row for a partition, one per extent
-- for a swap file.  slot = first_slot + (sector - start_sector) / 8.
CREATE TABLE swap_extent (
	area_id		INTEGER NOT NULL REFERENCES swap_area(id),
	first_slot	INTEGER NOT NULL,
	nr_slots	INTEGER NOT NULL,
	start_sector	INTEGER NOT NULL,
	PRIMARY KEY (area_id, first_slot)
);

-- Process names by pid, from the trace (last name seen), and the process
-- (thread group) of a thread, from the capture's looks at /proc and the
-- trace's task_newtask events (CLONE_THREAD).
CREATE TABLE task (
	pid	INTEGER PRIMARY KEY,	-- the kernel's pid: a thread id
	comm	TEXT,
	tgid	INTEGER			-- its process's pid; NULL: not recorded
);

-- The traced task's memory maps as the capture recorded them (/proc/PID/maps
-- when the target started, and its last copy), one row per mapping.
CREATE TABLE vma (
	id		INTEGER PRIMARY KEY,
	pid		INTEGER NOT NULL,
	snapshot	TEXT NOT NULL,	-- 'start' or 'end'
	start		INTEGER NOT NULL,	-- first address
	end		INTEGER NOT NULL,	-- past the last address
	perms		TEXT,		-- 'rw-p', ...
	offset		INTEGER,	-- file offset
	path		TEXT		-- file, [heap], [stack]...; NULL: anonymous
);

-- One row per block request, its lifecycle resolved:
-- get-request -> insert -> issue -> complete.  Stages a trace lacks are NULL.
CREATE TABLE request (
	id		INTEGER PRIMARY KEY,
	source_id	INTEGER NOT NULL,
	dev		INTEGER NOT NULL,
	write		INTEGER NOT NULL,	-- blkparse's read/write split
	rwbs		TEXT,
	sector		INTEGER NOT NULL,	-- extent as issued (after merges)
	nr_sectors	INTEGER NOT NULL,
	nr_bios		INTEGER NOT NULL,	-- bios queued into it (1 + merges)
	getrq_ns	INTEGER,
	getrq_cpu	INTEGER,
	getrq_pid	INTEGER,
	insert_ns	INTEGER,
	insert_cpu	INTEGER,
	insert_pid	INTEGER,
	issue_ns	INTEGER,
	issue_cpu	INTEGER,
	issue_pid	INTEGER,
	complete_ns	INTEGER,
	complete_cpu	INTEGER,
	complete_pid	INTEGER,
	error		INTEGER,
	pc		INTEGER NOT NULL DEFAULT 0	-- passthrough request (not accounted)
);

-- One row per bio queued (block_bio_queue / Q), with the request it went to
-- and how: merge is NULL for the bio that started the request, 'M' (back)
-- or 'F' (front) for a bio merged into an existing one.
CREATE TABLE bio (
	id		INTEGER PRIMARY KEY,
	source_id	INTEGER NOT NULL,
	request_id	INTEGER,		-- NULL: never reached a request in the trace
	dev		INTEGER NOT NULL,
	write		INTEGER NOT NULL,
	rwbs		TEXT,
	sector		INTEGER NOT NULL,
	nr_sectors	INTEGER NOT NULL,
	queue_ns	INTEGER,		-- NULL when the Q was before the trace
	cpu		INTEGER,		-- of the Q (and of its M/F/G)
	pid		INTEGER,
	merge		TEXT,
	merge_ns	INTEGER
);

-- Block events outside the request lifecycle: plugs, unplugs, requeues,
-- remaps, splits, repeated stages (re-issue after requeue, partial
-- completion), request merges, a passthrough request's queue (bio holds
-- file-system I/O only).  action is blkparse's letter ('T' = UT).
-- A plug and the unplug that ended it (same device, task and CPU) share
-- the plug's row: unplug_ns is the unplug's time and arg its request
-- count; an unplug without such a plug has a row of its own.
CREATE TABLE block_misc (
	id		INTEGER PRIMARY KEY,
	source_id	INTEGER NOT NULL,
	ts		INTEGER NOT NULL,
	cpu		INTEGER,
	pid		INTEGER,
	dev		INTEGER,
	action		TEXT NOT NULL,
	write		INTEGER,
	rwbs		TEXT,
	sector		INTEGER,
	nr_sectors	INTEGER,
	arg		INTEGER,	-- unplug: requests; remap: source sector
	arg_dev		INTEGER,	-- remap: source device
	error		INTEGER,
	request_id	INTEGER,
	pc		INTEGER NOT NULL DEFAULT 0,
	unplug_ns	INTEGER		-- plug: time of the unplug that ended it
);

-- exceptions:page_fault_user, every one recorded.
CREATE TABLE fault (
	id		INTEGER PRIMARY KEY,
	ts		INTEGER NOT NULL,
	cpu		INTEGER,
	pid		INTEGER,
	address		INTEGER NOT NULL,
	ip		INTEGER,
	error_code	INTEGER
);

-- vmscan:mm_vmscan_write_folio: a page handed to swap-out by reclaim.
CREATE TABLE reclaim_write (
	id	INTEGER PRIMARY KEY,
	ts	INTEGER NOT NULL,
	cpu	INTEGER,
	pid	INTEGER,
	pfn	INTEGER,
	flags	INTEGER
);

-- Swap-entry probe hits (kprobe/fprobe events), when the capture had them.
CREATE TABLE swap_probe (
	id		INTEGER PRIMARY KEY,
	ts		INTEGER NOT NULL,
	cpu		INTEGER,
	pid		INTEGER,
	kind		TEXT NOT NULL,	-- 'fault', 'read', 'ra_hit', 'swapout'
	area_id		INTEGER,
	slot		INTEGER,
	address		INTEGER
);

-- Any other event, kept with its fields as trace-cmd prints them.
CREATE TABLE event (
	id		INTEGER PRIMARY KEY,
	source_id	INTEGER NOT NULL,
	ts		INTEGER NOT NULL,
	cpu		INTEGER,
	pid		INTEGER,
	system		TEXT NOT NULL,
	name		TEXT NOT NULL,
	info		TEXT
);

-- Derived: one row per page read from a swap area (pswpin counts these):
-- each page of a read bio inside a swap extent, slot = first_slot +
-- (sector - start_sector) / 8; slot 0 (the header) is never a page.
-- demand: 1 when the read is known to be the faulting page itself
-- (page-cluster 0 at capture, or a swap-entry probe); NULL when a trace
-- cannot tell demand from readahead.
CREATE TABLE swap_in (
	id		INTEGER PRIMARY KEY,
	ts		INTEGER NOT NULL,	-- bio queue time
	area_id		INTEGER NOT NULL,
	slot		INTEGER NOT NULL,
	dev		INTEGER NOT NULL,
	pid		INTEGER,
	bio_id		INTEGER NOT NULL,
	request_id	INTEGER,
	fault_id	INTEGER,	-- the user fault that led to this read: the task's
					-- latest before the bio was queued
	address		INTEGER,	-- that fault's page-aligned virtual address (for a
					-- readahead page: the fault that started the read)
	demand		INTEGER
);

-- Derived: one row per page written to a swap area (pswpout counts these).
CREATE TABLE swap_out (
	id		INTEGER PRIMARY KEY,
	ts		INTEGER NOT NULL,
	area_id		INTEGER NOT NULL,
	slot		INTEGER NOT NULL,
	dev		INTEGER NOT NULL,
	pid		INTEGER,
	bio_id		INTEGER NOT NULL,
	request_id	INTEGER
);

-- The block_event view, every block event, is store/block-event.sql:
-- schema version 6 made it anew, and upgrading a database makes it again.

-- Per-request latencies in microseconds, as btt names them.
CREATE VIEW request_latency AS
	SELECT r.id, r.dev, r.write, r.sector, r.nr_sectors, r.nr_bios,
	       (r.issue_ns - q.first_queue_ns) / 1000.0 AS q2d_us,
	       (r.complete_ns - r.issue_ns) / 1000.0 AS d2c_us,
	       (r.complete_ns - q.first_queue_ns) / 1000.0 AS q2c_us,
	       (r.getrq_ns - q.first_queue_ns) / 1000.0 AS q2g_us,
	       (r.issue_ns - coalesce(r.insert_ns, r.getrq_ns)) / 1000.0 AS i2d_us
	  FROM request r
	  LEFT JOIN (SELECT request_id, min(queue_ns) AS first_queue_ns
		       FROM bio GROUP BY request_id) q ON q.request_id = r.id;

-- ---------------------------------------------------------------------------
-- Replay results (swaptrace replay).  One run = one policy at one
-- page-cluster value on one swap layout with one simulated cache size.
-- Metrics (same names in run, run_partition and --json output):
--   faults      swap faults replayed (= misses + hits)
--   misses      faults that had to read their page (the kernel's pgmajfault)
--   hits        faults that found their page in the simulated swap cache
--   pages_read  pages read from swap (demand + readahead; pswpin)
--   ra_pages    pages read by readahead (swap_ra)
--   ra_hits     readahead pages used by a fault (swap_ra_hit)
--   ra_wasted   readahead pages evicted unused
--   read_requests, read_merges   block requests and bio merges the reads make
--   accuracy    ra_hits / ra_pages;  coverage  hits / faults
--   avg_request_kib              pages_read * page KiB / read_requests
-- partition is the swap area id for the traced layout, or the simulated
-- device's index for another layout; -1 in run_histogram means all.
-- A run that repeats a stored one (every run column but id, created,
-- replay_ns and loop_ns, and its rows in the tables below) is not stored.

CREATE TABLE run (
	id		INTEGER PRIMARY KEY,
	created		TEXT NOT NULL,		-- UTC, ISO 8601
	policy		TEXT NOT NULL,		-- built-in name or plugin path
	params		TEXT,			-- key=value,... as given
	page_cluster	INTEGER NOT NULL,
	cache_pages	INTEGER NOT NULL,	-- simulated memory for swapped-in pages
	layout		TEXT NOT NULL DEFAULT 'traced',
	approximate	INTEGER NOT NULL DEFAULT 0,	-- 1: demand stream approximated
	faults		INTEGER NOT NULL,
	misses		INTEGER NOT NULL,
	hits		INTEGER NOT NULL,
	pages_read	INTEGER NOT NULL,
	ra_pages	INTEGER NOT NULL,
	ra_hits		INTEGER NOT NULL,
	ra_wasted	INTEGER NOT NULL,
	read_requests	INTEGER NOT NULL,
	read_merges	INTEGER NOT NULL,
	accuracy	REAL,
	coverage	REAL,
	avg_request_kib	REAL,
	replay_ns	INTEGER,		-- wall time the replay took
	loop_ns		INTEGER,		-- of which the event loop
	inactive_fraction REAL,			-- --inactive-fraction; NULL: the kernel's share
	max_request_kib	INTEGER			-- requests split at; NULL: not recorded (before v4)
);

CREATE TABLE run_partition (
	run_id		INTEGER NOT NULL REFERENCES run(id),
	partition	INTEGER NOT NULL,
	dev		TEXT NOT NULL,		-- "7:0", or "sim0", "sim1"... for simulated layouts
	faults		INTEGER NOT NULL,
	misses		INTEGER NOT NULL,
	hits		INTEGER NOT NULL,
	pages_read	INTEGER NOT NULL,
	ra_pages	INTEGER NOT NULL,
	ra_hits		INTEGER NOT NULL,
	ra_wasted	INTEGER NOT NULL,
	read_requests	INTEGER NOT NULL,
	read_merges	INTEGER NOT NULL,
	accuracy	REAL,
	coverage	REAL,
	avg_request_kib	REAL,
	PRIMARY KEY (run_id, partition)
);

-- Histograms per run and partition (-1: all partitions):
--   kind 'ra_window'      bucket = readahead window chosen on a miss, pages
--   kind 'ra_window_vma'  the same, of the windows by virtual address (VMA readahead)
--   kind 'request_pages'  bucket = read request size, pages
CREATE TABLE run_histogram (
	run_id		INTEGER NOT NULL REFERENCES run(id),
	partition	INTEGER NOT NULL,
	kind		TEXT NOT NULL,
	bucket		INTEGER NOT NULL,
	count		INTEGER NOT NULL,
	PRIMARY KEY (run_id, partition, kind, bucket)
);

-- Per-second series per run and partition; second counts from the
-- capture's first event (capture.first_ns).
CREATE TABLE run_series (
	run_id		INTEGER NOT NULL REFERENCES run(id),
	partition	INTEGER NOT NULL,
	second		INTEGER NOT NULL,
	faults		INTEGER NOT NULL,
	hits		INTEGER NOT NULL,
	misses		INTEGER NOT NULL,
	pages_read	INTEGER NOT NULL,
	PRIMARY KEY (run_id, partition, second)
);
