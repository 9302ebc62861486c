/* Terminal output of text that came from files or plugins (labels, names, failure reasons): a
 * stream that writes control characters as \xNN, so that a report cannot move the cursor,
 * rewrite earlier rows or change the terminal's state. Newlines (sagerun's own) pass: the
 * renderings of reports write those within a report's strings visibly (report_text.c). And one
 * string at a time, for output that is not a report's (sr_cli_text). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static ssize_t escaping_write(void *cookie, const char *buf, size_t size)
{
    FILE *out = cookie;
    for (size_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)buf[i];
        bool control = (c < 0x20 && c != '\n') || c == 0x7f;
        if (control ? fprintf(out, "\\x%02x", c) < 0 : fputc(c, out) == EOF)
            return i ? (ssize_t)i : -1;
    }
    return (ssize_t)size;
}

FILE *sr_cli_escaping_stream(FILE *out)
{
    cookie_io_functions_t io = {.write = escaping_write};
    FILE *f = fopencookie(out, "w", io);
    return f ? f : out;
}

bool sr_cli_escaping_close(FILE *f, FILE *out)
{
    if (f == out)
        return !ferror(out);
    bool ok = fflush(f) == 0 && !ferror(f);
    return fclose(f) == 0 && ok && !ferror(out);
}

const char *sr_cli_text(const char *s)
{
    static char *ring[8];
    static unsigned next;
    char **slot = &ring[next++ % 8];
    free(*slot);
    *slot = sagerun_text_escape(s ? s : "", 0);
    return *slot ? *slot : "?";
}

/* Bytes of the UTF-8 character at s (a well-formed one: no overlong form, surrogate or code point
 * past U+10FFFF), 0 when there is none. */
static size_t utf8_at(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    size_t n = s[0] >= 0xC2 && s[0] <= 0xDF ? 2 : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
             : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if ((n == 3 && ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] > 0x9F))) ||
        (n == 4 && ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] > 0x8F))))
        return 0;
    return n;
}

json_t *sr_cli_json_text(const char *s)
{
    json_t *j = json_string(s);
    if (j || !s)
        return j;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return NULL;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_at(p);
        if (n)
            fwrite(p, 1, n, f);
        else
            fprintf(f, "\\x%02x", *p);
        p += n ? n : 1;
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    j = json_string(text);
    free(text);
    return j;
}
