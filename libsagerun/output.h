/* An instance's output memory (plugin.h section 7): where the bytes behind the address o live.
 *
 * On CUDA the output is reserved and mapped with the driver's virtual memory management: an
 * address range of whole 2 MiB pages, and pages of its own mapped at it. The plugin keeps o from
 * create on, so the address never changes; what sr_output_share changes is which pages are behind
 * it. In a cold comparison every entry's output is mapped onto the baseline's pages for the timed
 * rounds (measure.c): a microsecond call writing a few bytes after an L2 flush took up to 2%
 * longer or shorter depending on which memory partition its own pages fell in, for the whole
 * process (test/bench/RESULTS.md, issue 12), a difference between two instances that no kernel
 * made. Checked calls and hashes run on each entry's own pages (sr_output_unshare first).
 *
 * On the host backend, or a device without virtual memory management, the output is a plain
 * allocation and cannot be shared (sr_output_can_share says so). */
#ifndef SAGERUN_OUTPUT_H
#define SAGERUN_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "sagerun/sagerun.h"

#define SR_OUTPUT_PAGE_BYTES (2ull << 20) /* every output starts on a 2 MiB page of its own */

typedef struct sr_output sr_output;

/* bytes of output (at least one byte is reserved for 0). */
sagerun_status sr_output_alloc(sagerun_context *ctx, uint64_t bytes, sr_output **out,
                               sagerun_error *err);
/* The address the plugin is given; 0 for NULL. */
uint64_t sr_output_address(const sr_output *o);
/* Unshares (when shared) and frees. NULL does nothing. */
void sr_output_free(sr_output *o);

/* true when o's address can be mapped onto with's pages: both mapped, the same size. */
bool sr_output_can_share(const sr_output *o, const sr_output *with);
/* Maps o's address onto with's pages (the stream is synchronised first). Both then read and write
 * the same bytes; o's own pages keep what they held. On failure o keeps its own pages. */
sagerun_status sr_output_share(sr_output *o, const sr_output *with, sagerun_error *err);
/* Maps o's own pages back at its address (the stream is synchronised first); nothing when it is
 * not shared. */
sagerun_status sr_output_unshare(sr_output *o, sagerun_error *err);
bool sr_output_is_shared(const sr_output *o);

#endif
