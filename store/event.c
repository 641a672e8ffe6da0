/*
 * Names shared by the decoders: blktrace actions <-> tracepoint names, and
 * the read/write split blkparse uses.
 */
#include <string.h>

#include "event.h"

const char *swt_block_action_event_name(int action)
{
	switch (action) {
	case SWT_BA_QUEUE: return "block_bio_queue";
	case SWT_BA_BACKMERGE: return "block_bio_backmerge";
	case SWT_BA_FRONTMERGE: return "block_bio_frontmerge";
	case SWT_BA_GETRQ: return "block_getrq";
	case SWT_BA_SLEEPRQ: return "block_sleeprq";
	case SWT_BA_INSERT: return "block_rq_insert";
	case SWT_BA_ISSUE: return "block_rq_issue";
	case SWT_BA_COMPLETE: return "block_rq_complete";
	case SWT_BA_REQUEUE: return "block_rq_requeue";
	case SWT_BA_PLUG: return "block_plug";
	case SWT_BA_UNPLUG: return "block_unplug";
	case SWT_BA_UNPLUG_TIMER: return "block_unplug_timer";
	case SWT_BA_SPLIT: return "block_split";
	case SWT_BA_BOUNCE: return "block_bio_bounce";
	case SWT_BA_REMAP: return "block_bio_remap";
	case SWT_BA_ABORT: return "block_rq_abort";
	case SWT_BA_DRV_DATA: return "block_drv_data";
	case SWT_BA_RQ_MERGE: return "block_rq_merge";
	case SWT_BA_ZONE_PLUG: return "blk_zone_plug";
	case SWT_BA_ZONE_UNPLUG: return "blk_zone_unplug";
	default: return "block_unknown";
	}
}

/*
 * The kernel's blktrace sets the write category for operations whose op
 * code is odd (write, discard, secure erase, write zeroes...).  From a
 * tracepoint's rwbs we see: optional 'F' (preflush), then the op letter:
 * W write, D discard (DE secure erase), R read, F flush, N other.
 */
int swt_rwbs_is_write(const char *rwbs)
{
	const char *p = rwbs;

	if (*p == 'F' && p[1] && strchr("WDRN", p[1]))
		p++;	/* preflush prefix */
	return *p == 'W' || *p == 'D';
}
