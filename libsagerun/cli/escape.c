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

json_t *sr_cli_json_text(const char *s)
{
    json_t *j = json_string(s);
    if (j || !s)
        return j;
    char *text = sagerun_text_escape(s, 0); /* a byte of no UTF-8 character as \xNN */
    j = text ? json_string(text) : NULL;
    free(text);
    return j;
}
