/* A variant whose texts are not UTF-8 (a byte 0xff, a character cut in half) and carry a
 * right-to-left override (U+202E, which reorders the rest of a line): `list` and the tables show
 * the bytes as \xNN and the override as \u202e, and a report holding them is still written (JSON
 * holds only UTF-8: the report was lost as "out of memory"). Output: V copied into O. */
#define FAKE_NAME "fake-bad-utf8"
#define FAKE_VERSION "1.0\xff"
#define FAKE_DESCRIPTION "desc \xe2\x80\xae" "evil \xc3"
#include "fake_plugin.h"
