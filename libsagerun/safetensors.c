/* safetensors: strict reader, chunked uploads, atomic writer. */
#include "safetensors.h"
#include "safe_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SR_ST_BOUNCE_BYTES (64u << 20) /* chunk of a host -> device upload */

static const struct {
    const char *name;
    int dtype;
    uint32_t size;
} st_dtypes[] = {
    {"F16", SAGERUN_DTYPE_F16, 2},      {"BF16", SAGERUN_DTYPE_BF16, 2},
    {"F32", SAGERUN_DTYPE_F32, 4},      {"I8", SAGERUN_DTYPE_I8, 1},
    {"F8_E4M3", SAGERUN_DTYPE_F8_E4M3, 1}, {"F64", SAGERUN_DTYPE_F64, 8},
    {"BOOL", -1, 1},                    {"U8", -1, 1},
    {"F8_E5M2", -1, 1},                 {"I16", -1, 2},
    {"U16", -1, 2},                     {"I32", SAGERUN_DTYPE_I32, 4},
    {"U32", -1, 4},                     {"I64", -1, 8},
    {"U64", -1, 8},
};

int sr_safetensors_dtype_from_name(const char *name, uint32_t *elem_size)
{
    for (size_t i = 0; i < SR_ARRAY_LEN(st_dtypes); i++)
        if (strcmp(name, st_dtypes[i].name) == 0) {
            if (elem_size)
                *elem_size = st_dtypes[i].size;
            return st_dtypes[i].dtype;
        }
    return -2;
}

static const char *dtype_static_name(const char *name)
{
    for (size_t i = 0; i < SR_ARRAY_LEN(st_dtypes); i++)
        if (strcmp(name, st_dtypes[i].name) == 0)
            return st_dtypes[i].name;
    return "?";
}

void sr_safetensors_close(sr_safetensors *f)
{
    if (!f)
        return;
    if (f->fd >= 0)
        close(f->fd);
    for (size_t i = 0; i < f->count; i++)
        free(f->tensors[i].name);
    free(f->tensors);
    json_decref(f->metadata);
    free(f->path);
    free(f);
}

static sagerun_status read_exact(int fd, const char *path, uint64_t offset, void *dst,
                                 uint64_t bytes, sagerun_error *err)
{
    uint8_t *p = dst;
    while (bytes > 0) {
        size_t want = bytes > (1u << 30) ? (1u << 30) : (size_t)bytes;
        ssize_t got = pread(fd, p, want, (off_t)offset);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return sr_error_set(err, SAGERUN_IO, "%s: read at offset %llu: %s", path,
                                (unsigned long long)offset, strerror(errno));
        if (got == 0)
            return sr_error_set(err, SAGERUN_FORMAT, "%s: file ends at offset %llu (truncated?)",
                                path, (unsigned long long)offset);
        p += got;
        offset += (uint64_t)got;
        bytes -= (uint64_t)got;
    }
    return SAGERUN_OK;
}

static int by_offset(const void *a, const void *b)
{
    const sr_st_tensor *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

/* A JSON integer >= 0 as uint64 (jansson's integers are signed 64-bit). */
static bool json_u64(const json_t *j, uint64_t *out)
{
    if (!json_is_integer(j) || json_integer_value(j) < 0)
        return false;
    *out = (uint64_t)json_integer_value(j);
    return true;
}

static sagerun_status parse_tensor(const char *path, const char *name, json_t *obj,
                                   uint64_t data_size, sr_st_tensor *t, sagerun_error *err)
{
    if (!json_is_object(obj))
        return sr_error_set(err, SAGERUN_FORMAT, "%s: tensor '%s': entry is not a JSON object",
                            path, name);
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val)
    {
        if (strcmp(key, "dtype") && strcmp(key, "shape") && strcmp(key, "data_offsets"))
            return sr_error_set(err, SAGERUN_FORMAT, "%s: tensor '%s': unknown field '%s'", path,
                                name, key);
    }
    json_t *dt = json_object_get(obj, "dtype"), *shape = json_object_get(obj, "shape"),
           *offs = json_object_get(obj, "data_offsets");
    if (!json_is_string(dt))
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: tensor '%s': field 'dtype' is missing or not a string", path,
                            name);
    t->dtype = sr_safetensors_dtype_from_name(json_string_value(dt), &t->elem_size);
    if (t->dtype == -2)
        return sr_error_set(err, SAGERUN_FORMAT, "%s: tensor '%s': unknown dtype '%s'", path,
                            name, json_string_value(dt));
    t->dtype_name = dtype_static_name(json_string_value(dt));
    if (!json_is_array(shape))
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: tensor '%s': field 'shape' is missing or not an array", path,
                            name);
    if (json_array_size(shape) > SR_ST_MAX_RANK)
        return sr_error_set(err, SAGERUN_FORMAT, "%s: tensor '%s': shape has %zu dimensions (at most %d)",
                            path, name, json_array_size(shape), SR_ST_MAX_RANK);
    t->rank = (uint32_t)json_array_size(shape);
    uint64_t elements = 1;
    for (uint32_t i = 0; i < t->rank; i++) {
        if (!json_u64(json_array_get(shape, i), &t->shape[i]))
            return sr_error_set(err, SAGERUN_FORMAT,
                                "%s: tensor '%s': shape[%u] is not a non-negative integer", path,
                                name, i);
        if (!sr_mul_u64(elements, t->shape[i], &elements))
            return sr_error_set(err, SAGERUN_FORMAT,
                                "%s: tensor '%s': shape overflows 64-bit element counts", path,
                                name);
    }
    t->elements = elements;
    uint64_t need;
    if (!sr_mul_u64(elements, t->elem_size, &need))
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: tensor '%s': shape x dtype size overflows 64 bits", path, name);
    uint64_t begin, end;
    if (!json_is_array(offs) || json_array_size(offs) != 2 ||
        !json_u64(json_array_get(offs, 0), &begin) || !json_u64(json_array_get(offs, 1), &end))
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: tensor '%s': field 'data_offsets' must be [begin, end] of "
                            "non-negative integers",
                            path, name);
    if (end < begin)
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: tensor '%s': data_offsets [%llu, %llu] end before begin", path,
                            name, (unsigned long long)begin, (unsigned long long)end);
    if (end > data_size)
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: tensor '%s': data_offsets [%llu, %llu] out of bounds (data area "
                            "is %llu bytes)",
                            path, name, (unsigned long long)begin, (unsigned long long)end,
                            (unsigned long long)data_size);
    if (end - begin != need)
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: tensor '%s': shape mismatch: %llu elements of %s need %llu bytes, "
                            "data_offsets give %llu",
                            path, name, (unsigned long long)elements, t->dtype_name,
                            (unsigned long long)need, (unsigned long long)(end - begin));
    t->offset = begin; /* made absolute by the caller */
    t->bytes = need;
    return SAGERUN_OK;
}

static sagerun_status parse_metadata(const char *path, json_t *meta, sagerun_error *err)
{
    if (!json_is_object(meta))
        return sr_error_set(err, SAGERUN_FORMAT, "%s: __metadata__ is not a JSON object", path);
    const char *key;
    json_t *val;
    json_object_foreach(meta, key, val)
    {
        if (!json_is_string(val))
            return sr_error_set(err, SAGERUN_FORMAT,
                                "%s: __metadata__ field '%s' is not a string", path, key);
    }
    return SAGERUN_OK;
}

static sagerun_status parse_header(sr_safetensors *f, const char *buf, uint64_t len,
                                   sagerun_error *err)
{
    json_error_t jerr;
    json_t *root = json_loadb(buf, (size_t)len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return sr_error_set(err, SAGERUN_FORMAT, "%s: header is not valid JSON: %s (line %d, column %d)",
                            f->path, jerr.text, jerr.line, jerr.column);
    sagerun_status st = SAGERUN_OK;
    if (!json_is_object(root)) {
        st = sr_error_set(err, SAGERUN_FORMAT, "%s: header is not a JSON object", f->path);
        goto done;
    }
    size_t n = json_object_size(root);
    f->tensors = calloc(n ? n : 1, sizeof *f->tensors);
    if (!f->tensors) {
        st = sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: out of memory", f->path);
        goto done;
    }
    uint64_t data_size = f->file_size - f->data_start;
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val)
    {
        if (strcmp(key, "__metadata__") == 0) {
            if ((st = parse_metadata(f->path, val, err)))
                goto done;
            f->metadata = json_incref(val);
            continue;
        }
        sr_st_tensor *t = &f->tensors[f->count];
        if ((st = parse_tensor(f->path, key, val, data_size, t, err)))
            goto done;
        if (!(t->name = strdup(key))) {
            st = sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: out of memory", f->path);
            goto done;
        }
        f->count++;
    }
    qsort(f->tensors, f->count, sizeof *f->tensors, by_offset);
    for (size_t i = 1; i < f->count; i++) {
        const sr_st_tensor *a = &f->tensors[i - 1], *b = &f->tensors[i];
        if (b->offset < a->offset + a->bytes) {
            st = sr_error_set(err, SAGERUN_FORMAT,
                              "%s: tensors '%s' [%llu, %llu) and '%s' [%llu, %llu) overlap",
                              f->path, a->name, (unsigned long long)a->offset,
                              (unsigned long long)(a->offset + a->bytes), b->name,
                              (unsigned long long)b->offset,
                              (unsigned long long)(b->offset + b->bytes));
            goto done;
        }
    }
    for (size_t i = 0; i < f->count; i++)
        f->tensors[i].offset += f->data_start;
done:
    json_decref(root);
    return st;
}

sagerun_status sr_safetensors_open(const char *path, sr_safetensors **out, sagerun_error *err)
{
    *out = NULL;
    sr_safetensors *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path))) {
        free(f);
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    sagerun_status st = SAGERUN_OK;
    char *header = NULL;
    if ((f->fd = sr_open_input(path, err)) < 0) {
        st = err ? err->status : SAGERUN_IO;
        goto fail;
    }
    struct stat sb;
    if (fstat(f->fd, &sb) != 0) {
        st = sr_error_set(err, SAGERUN_IO, "%s: %s", path, strerror(errno));
        goto fail;
    }
    f->file_size = (uint64_t)sb.st_size;
    if (f->file_size < 8) {
        st = sr_error_set(err, SAGERUN_FORMAT,
                          "%s: %llu bytes is too short for a safetensors file (no header length)",
                          path, (unsigned long long)f->file_size);
        goto fail;
    }
    uint8_t lenbuf[8];
    if ((st = read_exact(f->fd, path, 0, lenbuf, 8, err)))
        goto fail;
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = (hlen << 8) | lenbuf[i];
    if (hlen > f->file_size - 8) {
        st = sr_error_set(err, SAGERUN_FORMAT,
                          "%s: header length %llu exceeds the file (%llu bytes after the length)",
                          path, (unsigned long long)hlen, (unsigned long long)(f->file_size - 8));
        goto fail;
    }
    if (hlen > SR_ST_MAX_HEADER || hlen < 2) {
        st = sr_error_set(err, SAGERUN_FORMAT, "%s: header length %llu is implausible", path,
                          (unsigned long long)hlen);
        goto fail;
    }
    f->data_start = 8 + hlen;
    if (!(header = malloc((size_t)hlen))) {
        st = sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: out of memory", path);
        goto fail;
    }
    if ((st = read_exact(f->fd, path, 8, header, hlen, err)) ||
        (st = parse_header(f, header, hlen, err)))
        goto fail;
    free(header);
    *out = f;
    return SAGERUN_OK;
fail:
    free(header);
    sr_safetensors_close(f);
    return st;
}

const sr_st_tensor *sr_safetensors_find(const sr_safetensors *f, const char *name)
{
    for (size_t i = 0; i < f->count; i++)
        if (strcmp(f->tensors[i].name, name) == 0)
            return &f->tensors[i];
    return NULL;
}

static void format_shape(char *buf, size_t len, uint32_t rank, const uint64_t *shape)
{
    size_t used = (size_t)snprintf(buf, len, "[");
    for (uint32_t i = 0; i < rank && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%llu", i ? ", " : "",
                                 (unsigned long long)shape[i]);
    if (used < len)
        snprintf(buf + used, len - used, "]");
}

sagerun_status sr_safetensors_expect(const sr_safetensors *f, const char *name, int dtype,
                                     uint32_t rank, const uint64_t *shape,
                                     const sr_st_tensor **out, sagerun_error *err)
{
    const sr_st_tensor *t = sr_safetensors_find(f, name);
    *out = NULL;
    if (!t)
        return sr_error_set(err, SAGERUN_NOT_FOUND, "%s: no tensor '%s'", f->path, name);
    if (dtype >= 0 && t->dtype != dtype)
        return sr_error_set(err, SAGERUN_FORMAT, "%s: tensor '%s' has dtype %s, expected %s",
                            f->path, name, t->dtype_name,
                            sagerun_dtype_name(dtype) ? sagerun_dtype_name(dtype) : "?");
    if (rank > 0 && (t->rank != rank || memcmp(t->shape, shape, rank * sizeof *shape) != 0)) {
        char got[160], want[160];
        format_shape(got, sizeof got, t->rank, t->shape);
        format_shape(want, sizeof want, rank, shape);
        return sr_error_set(err, SAGERUN_FORMAT, "%s: tensor '%s' has shape %s, expected %s",
                            f->path, name, got, want);
    }
    *out = t;
    return SAGERUN_OK;
}

sagerun_status sr_safetensors_read_range(const sr_safetensors *f, const sr_st_tensor *t,
                                         uint64_t offset, void *dst, uint64_t bytes,
                                         sagerun_error *err)
{
    uint64_t end;
    if (!sr_add_u64(offset, bytes, &end) || end > t->bytes)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "%s: tensor '%s': range [%llu, +%llu) beyond its %llu bytes", f->path,
                            t->name, (unsigned long long)offset, (unsigned long long)bytes,
                            (unsigned long long)t->bytes);
    sagerun_status st = read_exact(f->fd, f->path, t->offset + offset, dst, bytes, err);
    if (st != SAGERUN_OK)
        return sr_error_prefix(st, err, "tensor '%s'", t->name);
    return st;
}

sagerun_status sr_safetensors_read_tensor(const sr_safetensors *f, const char *name, void *dst,
                                          uint64_t bytes, sagerun_error *err)
{
    const sr_st_tensor *t = sr_safetensors_find(f, name);
    if (!t)
        return sr_error_set(err, SAGERUN_NOT_FOUND, "%s: no tensor '%s'", f->path, name);
    if (bytes != t->bytes)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "%s: tensor '%s' has %llu bytes, the buffer %llu", f->path, name,
                            (unsigned long long)t->bytes, (unsigned long long)bytes);
    return sr_safetensors_read_range(f, t, 0, dst, bytes, err);
}

sagerun_status sr_safetensors_upload_tensor(const sr_safetensors *f, const sr_st_tensor *t,
                                            sagerun_context *ctx, uint64_t dst,
                                            sagerun_error *err)
{
    if (sagerun_context_backend(ctx) == SAGERUN_BACKEND_HOST)
        return sr_safetensors_read_range(f, t, 0, (void *)(uintptr_t)dst, t->bytes, err);
    uint64_t chunk = t->bytes < SR_ST_BOUNCE_BYTES ? t->bytes : SR_ST_BOUNCE_BYTES;
    void *bounce = malloc(chunk ? (size_t)chunk : 1);
    if (!bounce)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: out of memory", f->path);
    sagerun_status st = SAGERUN_OK;
    for (uint64_t off = 0; off < t->bytes && st == SAGERUN_OK; off += chunk) {
        uint64_t n = t->bytes - off < chunk ? t->bytes - off : chunk;
        st = sr_safetensors_read_range(f, t, off, bounce, n, err);
        if (st == SAGERUN_OK)
            st = sagerun_mem_upload(ctx, dst + off, bounce, n, err);
    }
    free(bounce);
    return st;
}

/* ---- writing ---- */

static sagerun_status write_all(int fd, const char *path, const void *buf, uint64_t bytes,
                                sagerun_error *err)
{
    const uint8_t *p = buf;
    while (bytes > 0) {
        size_t want = bytes > (1u << 30) ? (1u << 30) : (size_t)bytes;
        ssize_t put = write(fd, p, want);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return sr_error_set(err, SAGERUN_IO, "%s: write: %s", path,
                                put < 0 ? strerror(errno) : "no progress");
        p += put;
        bytes -= (uint64_t)put;
    }
    return SAGERUN_OK;
}

static sagerun_status write_tensor_data(int fd, const char *tmp, const sr_st_write_tensor *t,
                                        uint64_t bytes, sagerun_error *err)
{
    if (!t->ctx || sagerun_context_backend(t->ctx) == SAGERUN_BACKEND_HOST) {
        const void *src = t->ctx ? (const void *)(uintptr_t)t->addr : t->data;
        return write_all(fd, tmp, src, bytes, err);
    }
    uint64_t chunk = bytes < SR_ST_BOUNCE_BYTES ? bytes : SR_ST_BOUNCE_BYTES;
    void *bounce = malloc(chunk ? (size_t)chunk : 1);
    if (!bounce)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: out of memory", tmp);
    sagerun_status st = SAGERUN_OK;
    for (uint64_t off = 0; off < bytes && st == SAGERUN_OK; off += chunk) {
        uint64_t n = bytes - off < chunk ? bytes - off : chunk;
        st = sagerun_mem_download(t->ctx, bounce, t->addr + off, n, err);
        if (st == SAGERUN_OK)
            st = write_all(fd, tmp, bounce, n, err);
    }
    free(bounce);
    return st;
}

static sagerun_status build_header(const char *path, const sr_st_write_tensor *tensors,
                                   size_t count, const json_t *metadata, uint64_t *sizes,
                                   char **out, size_t *out_len, sagerun_error *err)
{
    json_t *root = json_object();
    sagerun_status st = SAGERUN_OK;
    if (!root)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: out of memory", path);
    if (metadata) {
        if ((st = parse_metadata(path, (json_t *)metadata, err)))
            goto done;
        json_object_set_new(root, "__metadata__", json_deep_copy(metadata));
    }
    uint64_t offset = 0;
    for (size_t i = 0; i < count; i++) {
        const sr_st_write_tensor *t = &tensors[i];
        const char *dt = sagerun_dtype_name(t->dtype);
        uint64_t n = sagerun_dtype_size(t->dtype);
        if (!t->name || !dt || t->rank > SR_ST_MAX_RANK || strcmp(t->name, "__metadata__") == 0 ||
            json_object_get(root, t->name)) {
            st = sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                              "%s: tensor %zu ('%s'): bad or duplicate name, dtype or rank", path,
                              i, t->name ? t->name : "(null)");
            goto done;
        }
        json_t *shape = json_array();
        for (uint32_t d = 0; d < t->rank; d++) {
            if (!sr_mul_u64(n, t->shape[d], &n) || t->shape[d] > INT64_MAX) {
                json_decref(shape);
                st = sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                  "%s: tensor '%s': size overflows", path, t->name);
                goto done;
            }
            json_array_append_new(shape, json_integer((json_int_t)t->shape[d]));
        }
        uint64_t end;
        if (!sr_add_u64(offset, n, &end) || end > INT64_MAX) {
            json_decref(shape);
            st = sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "%s: file too large", path);
            goto done;
        }
        json_t *entry = json_pack("{s:s, s:o, s:[I, I]}", "dtype", dt, "shape", shape,
                                  "data_offsets", (json_int_t)offset, (json_int_t)end);
        sizes[i] = n;
        offset = end;
        json_object_set_new(root, t->name, entry);
    }
    char *text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!text) {
        st = sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: out of memory", path);
        goto done;
    }
    /* pad with spaces to a multiple of 8 so the data area starts aligned */
    size_t len = strlen(text), padded = (len + 7) & ~(size_t)7;
    char *buf = realloc(text, padded + 1);
    if (!buf) {
        free(text);
        st = sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: out of memory", path);
        goto done;
    }
    memset(buf + len, ' ', padded - len);
    buf[padded] = '\0';
    *out = buf;
    *out_len = padded;
done:
    json_decref(root);
    return st;
}

sagerun_status sr_safetensors_write(const char *path, const sr_st_write_tensor *tensors,
                                    size_t count, const json_t *metadata, sagerun_error *err)
{
    uint64_t *sizes = calloc(count ? count : 1, sizeof *sizes);
    char *header = NULL;
    size_t header_len = 0;
    sr_output o = {.fd = -1};
    sagerun_status st;
    if (!sizes)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: out of memory", path);
    if ((st = build_header(path, tensors, count, metadata, sizes, &header, &header_len, err)) ||
        (st = sr_output_open(path, &o, err)))
        goto done;
    uint8_t lenbuf[8];
    for (int i = 0; i < 8; i++)
        lenbuf[i] = (uint8_t)((uint64_t)header_len >> (8 * i));
    if ((st = write_all(o.fd, path, lenbuf, 8, err)) ||
        (st = write_all(o.fd, path, header, header_len, err)))
        goto done;
    for (size_t i = 0; i < count; i++)
        if ((st = write_tensor_data(o.fd, path, &tensors[i], sizes[i], err))) {
            sr_error_prefix(st, err, "tensor '%s'", tensors[i].name);
            goto done;
        }
    st = sr_output_commit(&o, path, err);
done:
    if (st != SAGERUN_OK)
        sr_output_abort(&o);
    free(header);
    free(sizes);
    return st;
}
