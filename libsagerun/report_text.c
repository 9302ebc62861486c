/* Text from reports and plugins (labels, names, failure reasons, warnings) in lines of the text
 * and markdown renderings: control characters and Unicode line breaks are written visibly, so
 * that a string cannot end its line and forge the rows after it, nor drive a terminal. The one
 * rule for the library and its callers (sagerun_text_escape, sagerun.h). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* The bytes of the well-formed UTF-8 character at u (1 to 4; RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF), 0 when u does not start one. */
static size_t utf8_char_len(const unsigned char *u)
{
    if (u[0] < 0x80)
        return 1;
    size_t n = u[0] >= 0xc2 && u[0] <= 0xdf ? 2 : u[0] >= 0xe0 && u[0] <= 0xef ? 3
               : u[0] >= 0xf0 && u[0] <= 0xf4 ? 4 : 0;
    for (size_t i = 1; i < n; i++)
        if ((u[i] & 0xc0) != 0x80)
            return 0;
    if ((n == 3 && u[0] == 0xe0 && u[1] < 0xa0) || (n == 3 && u[0] == 0xed && u[1] >= 0xa0) ||
        (n == 4 && u[0] == 0xf0 && u[1] < 0x90) || (n == 4 && u[0] == 0xf4 && u[1] >= 0x90))
        return 0;
    return n;
}

/* The visible form of the character at s when it is a control character (C0, DEL, C1 as
 * UTF-8: NEL among them), a line or paragraph separator (U+2028, U+2029), a bidirectional
 * override or isolate (U+202A..U+202E, U+2066..U+2069: they reorder what follows on the line),
 * or a byte that starts no well-formed UTF-8 character: "\xNN" as the CLI's escaping stream
 * writes them, "\uNNNN"; NULL for any other. *n: the bytes it takes (a whole character). */
static const char *escape_at(const char *s, size_t *n, char buf[8])
{
    const unsigned char *u = (const unsigned char *)s;
    *n = utf8_char_len(u);
    unsigned cp = *n == 2 ? (u[0] & 0x1fu) << 6 | (u[1] & 0x3fu)
                  : *n == 3 ? (u[0] & 0x0fu) << 12 | (u[1] & 0x3fu) << 6 | (u[2] & 0x3fu) : 0;
    if (*n == 0 || u[0] < 0x20 || u[0] == 0x7f) {
        snprintf(buf, 8, "\\x%02x", u[0]);
        *n = 1;
    } else if ((cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
               (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) {
        snprintf(buf, 8, "\\u%04x", cp);
    } else {
        return NULL;
    }
    return buf;
}

/* The first len bytes of s (a string: it goes on past them), escaped; in a markdown cell '|'
 * and '\' too, so that a label cannot add columns, and '<' and '&', so that it carries no HTML
 * tag or entity (a label "<script>" went into summary.md as it was; '>' opens nothing in a cell,
 * and "yes -> yes" stays as it is). */
static void put_escaped(FILE *out, const char *s, size_t len, bool cell)
{
    char buf[8];
    for (size_t i = 0, n; i < len; i += n) {
        const char *e = escape_at(s + i, &n, buf);
        if (cell && strchr("|\\<&", s[i]))
            fputc('\\', out);
        if (e)
            fputs(e, out);
        else
            fwrite(s + i, 1, n, out);
    }
}

void sr_markdown_cell(FILE *out, const char *s)
{
    put_escaped(out, s, strlen(s), true);
}

char *sagerun_text_escape(const char *s, unsigned flags)
{
    if (!s || (flags & ~SAGERUN_TEXT_MARKDOWN_CELL))
        return NULL;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return NULL;
    put_escaped(f, s, strlen(s), flags & SAGERUN_TEXT_MARKDOWN_CELL);
    bool ok = !ferror(f);
    if (fclose(f) != 0 || !ok) {
        free(text);
        return NULL;
    }
    return text;
}

char *sr_text_utf8(const char *s)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return NULL;
    for (size_t n; *s; s += n) {
        n = utf8_char_len((const unsigned char *)s);
        if (n)
            fwrite(s, 1, n, f);
        else
            fprintf(f, "\\x%02x", (unsigned char)*s), n = 1;
    }
    bool ok = !ferror(f);
    if (fclose(f) != 0 || !ok) {
        free(text);
        return NULL;
    }
    return text;
}

void sr_text_copy(char *dst, size_t len, const char *s)
{
    char buf[8];
    size_t used = 0;
    for (size_t n; *s; s += n) {
        const char *e = escape_at(s, &n, buf);
        size_t k = e ? strlen(e) : n;
        if (used + k >= len)
            break; /* cut before an escape, not inside it */
        memcpy(dst + used, e ? e : s, k);
        used += k;
    }
    if (len)
        dst[used] = '\0';
}

void sr_line_printf(FILE *out, const char *fmt, ...)
{
    char small[512], *text = small;
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= (int)sizeof small && (text = malloc((size_t)n + 1)))
        vsnprintf(text, (size_t)n + 1, fmt, again);
    else if (n >= (int)sizeof small)
        text = small, n = (int)sizeof small - 1; /* out of memory: the line cut */
    va_end(again);
    va_end(ap);
    if (n < 0)
        return;
    /* the format's own final line break ends the line; any other is escaped */
    bool ends = fmt[0] && fmt[strlen(fmt) - 1] == '\n' && n > 0;
    put_escaped(out, text, (size_t)n - ends, false);
    if (ends)
        fputc('\n', out);
    if (text != small)
        free(text);
}

double sr_speedup_times(double percent)
{
    double ratio = 1.0 + percent / 100.0;
    return isfinite(ratio) && ratio > 0 ? ratio : NAN;
}

void sr_format_speedup_times(double percent, char *buf, size_t len)
{
    double ratio = sr_speedup_times(percent);
    double factor = ratio >= 1 ? ratio : 1 / ratio;
    const char *way = ratio > 1 ? " faster" : ratio < 1 ? " slower" : "";
    if (!isfinite(ratio))
        snprintf(buf, len, "-");
    else /* two decimals, as hyperfine's "10.06 x slower"; whole numbers past a thousand */
        snprintf(buf, len, factor < 1000 ? "%.2f\u00d7%s" : "%.0f\u00d7%s", factor, way);
}
