/* Text from reports and plugins (labels, names, failure reasons, warnings) in lines of the text
 * and markdown renderings: control characters and Unicode line breaks are written visibly, so
 * that a string cannot end its line and forge the rows after it, nor drive a terminal. The one
 * rule for the library and its callers (sagerun_text_escape, sagerun.h). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* The visible form of the character at s when it is a control character (C0, DEL, C1 as
 * UTF-8: NEL among them) or a line or paragraph separator (U+2028, U+2029): "\xNN" as the CLI's
 * escaping stream writes them, "\uNNNN"; NULL for any other. *n: the bytes it takes. */
static const char *escape_at(const char *s, size_t *n, char buf[8])
{
    const unsigned char *u = (const unsigned char *)s;
    *n = 1;
    if (u[0] < 0x20 || u[0] == 0x7f) {
        snprintf(buf, 8, "\\x%02x", u[0]);
    } else if (u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f) {
        snprintf(buf, 8, "\\u%04x", u[1]);
        *n = 2;
    } else if (u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9)) {
        snprintf(buf, 8, "\\u%04x", 0x2000 + u[2] - 0x80);
        *n = 3;
    } else {
        return NULL;
    }
    return buf;
}

/* The first len bytes of s (a string: it goes on past them), escaped; in a markdown cell '|'
 * and '\' too, so that a label cannot add columns. */
static void put_escaped(FILE *out, const char *s, size_t len, bool cell)
{
    char buf[8];
    for (size_t i = 0, n; i < len; i += n) {
        const char *e = escape_at(s + i, &n, buf);
        if (cell && (s[i] == '|' || s[i] == '\\'))
            fputc('\\', out);
        if (e)
            fputs(e, out);
        else
            fputc(s[i], out);
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
