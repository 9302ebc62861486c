/* Status table, error buffers and checked size arithmetic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *sagerun_status_name(int status)
{
    switch (status) {
#define SR_STATUS_NAME_(name, code, msg)                                                           \
    case code:                                                                                     \
        return "SAGERUN_" #name;
        SAGERUN_STATUS_MAP(SR_STATUS_NAME_)
#undef SR_STATUS_NAME_
    }
    return "SAGERUN_UNKNOWN_STATUS";
}

const char *sagerun_status_message(int status)
{
    switch (status) {
#define SR_STATUS_MESSAGE_(name, code, msg)                                                        \
    case code:                                                                                     \
        return msg;
        SAGERUN_STATUS_MAP(SR_STATUS_MESSAGE_)
#undef SR_STATUS_MESSAGE_
    }
    return "unknown status";
}

int sagerun_version(void) { return SAGERUN_VERSION; }

const char *sagerun_version_string(void) { return SAGERUN_VERSION_STRING; }

/* text (len bytes) into dst (size bytes): whole when it fits, else its start and its end around
 * " ... ", cut at UTF-8 character boundaries, so that what a message says last (the cause, after
 * a long path) survives; truncating the end left only the path. */
static void fit_message(char *dst, size_t size, const char *text, size_t len)
{
    if (len < size) {
        memcpy(dst, text, len + 1);
        return;
    }
    static const char gap[] = " ... ";
    size_t head = (size - sizeof gap) / 2, tail = size - sizeof gap - head;
    while (head > 0 && (text[head] & 0xC0) == 0x80) /* text[head] starts a character */
        head--;
    size_t from = len - tail;
    while (from < len && (text[from] & 0xC0) == 0x80)
        from++;
    memcpy(dst, text, head);
    memcpy(dst + head, gap, sizeof gap - 1);
    memcpy(dst + head + sizeof gap - 1, text + from, len - from + 1);
}

/* printf into dst (size bytes) as fit_message keeps it */
static void format_message(char *dst, size_t size, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(dst, size, fmt, ap);
    if (n >= 0 && (size_t)n >= size) {
        char *full = malloc((size_t)n + 1);
        if (full && vsnprintf(full, (size_t)n + 1, fmt, again) == n)
            fit_message(dst, size, full, (size_t)n);
        free(full);
    }
    va_end(again);
}

sagerun_status sr_error_setv(sagerun_error *err, sagerun_status status, const char *fmt,
                             va_list ap)
{
    if (err) {
        err->status = status;
        format_message(err->message, sizeof err->message, fmt, ap);
    }
    return status;
}

sagerun_status sr_error_set(sagerun_error *err, sagerun_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sr_error_setv(err, status, fmt, ap);
    va_end(ap);
    return status;
}

sagerun_status sr_error_prefix(sagerun_status status, sagerun_error *err, const char *fmt, ...)
{
    if (!err)
        return status;
    char prefix[SAGERUN_ERROR_MESSAGE_SIZE];
    char old[SAGERUN_ERROR_MESSAGE_SIZE];
    va_list ap;
    va_start(ap, fmt);
    format_message(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof old);
    old[sizeof old - 1] = '\0';
    return sr_error_set(err, status, "%s: %s", prefix, old);
}

int sr_errbuf_set(char *buf, size_t len, int status, const char *fmt, ...)
{
    if (buf && len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, len, fmt, ap);
        va_end(ap);
    }
    return status;
}

bool sr_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

bool sr_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}
