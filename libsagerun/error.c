/* Status table, error buffers and checked size arithmetic. */
#include <stdio.h>
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

sagerun_status sr_error_setv(sagerun_error *err, sagerun_status status, const char *fmt,
                             va_list ap)
{
    if (err) {
        err->status = status;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
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
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof old);
    snprintf(err->message, sizeof err->message, "%s: %s", prefix, old);
    err->status = status;
    return status;
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
