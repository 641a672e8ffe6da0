-- block_event (store.c makes the view of this query): every block event,
-- reconstructed from the lifecycle tables, the stream blkparse prints
-- (action letters as blkparse's, 'T' for UT).  A request completed in
-- parts (its partial completions in block_misc) has its last completion
-- with what the parts left, as the event carried it, not its whole
-- extent again.
	SELECT queue_ns AS ts, cpu, pid, dev, 'Q' AS action, write, rwbs,
	       sector, nr_sectors, request_id, id AS bio_id, source_id, 0 AS pc
	  FROM bio WHERE queue_ns IS NOT NULL
	UNION ALL
	SELECT merge_ns, cpu, pid, dev, merge, write, rwbs,
	       sector, nr_sectors, request_id, id, source_id, 0
	  FROM bio WHERE merge IS NOT NULL
	UNION ALL
	SELECT r.getrq_ns, r.getrq_cpu, r.getrq_pid, r.dev, 'G', r.write, r.rwbs,
	       coalesce(b.sector, r.sector), coalesce(b.nr_sectors, r.nr_sectors),
	       r.id, b.id, r.source_id, r.pc
	  FROM request r LEFT JOIN bio b ON b.request_id = r.id AND b.merge IS NULL
	 WHERE r.getrq_ns IS NOT NULL
	UNION ALL
	SELECT insert_ns, insert_cpu, insert_pid, dev, 'I', write, rwbs,
	       sector, nr_sectors, id, NULL, source_id, pc
	  FROM request WHERE insert_ns IS NOT NULL
	UNION ALL
	SELECT issue_ns, issue_cpu, issue_pid, dev, 'D', write, rwbs,
	       sector, nr_sectors, id, NULL, source_id, pc
	  FROM request WHERE issue_ns IS NOT NULL
	UNION ALL
	SELECT r.complete_ns, r.complete_cpu, r.complete_pid, r.dev, 'C', r.write, r.rwbs,
	       r.sector + coalesce(p.done, 0), r.nr_sectors - coalesce(p.done, 0),
	       r.id, NULL, r.source_id, r.pc
	  FROM request r
	  LEFT JOIN (SELECT request_id, sum(nr_sectors) AS done FROM block_misc
		      WHERE action = 'C' AND request_id IS NOT NULL GROUP BY request_id) p
	    ON p.request_id = r.id
	 WHERE r.complete_ns IS NOT NULL
	UNION ALL
	SELECT ts, cpu, pid, dev, action, write, rwbs,
	       sector, nr_sectors, request_id, NULL, source_id, pc
	  FROM block_misc
	UNION ALL
	SELECT unplug_ns, cpu, pid, dev, 'U', write, rwbs,
	       sector, nr_sectors, request_id, NULL, source_id, pc
	  FROM block_misc WHERE unplug_ns IS NOT NULL;
