/* Constants of libsagerun's timer kernels (timer.cu), shared with their launcher (timer.c). */
#ifndef SAGERUN_KERNELS_TIMER_PARAMS_H
#define SAGERUN_KERNELS_TIMER_PARAMS_H

/* sr_timer_touch reads one word per page of this size of the timed call's output. */
#define SR_TOUCH_PAGE_BYTES (2ull << 20)

#endif
