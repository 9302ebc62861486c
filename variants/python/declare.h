/* Declaration lines of Python variants: a .py file declares each of its variants in one comment
 * line, read without running any of the file's code:
 *
 *   # sagerun-variant: NAME run=FUNCTION backend=host|cuda [key=value]...
 *
 * keys (a value with spaces is "double-quoted", \" and \\ inside):
 *   run=F          the function called for each attention call (required): F(call)
 *   create=F, prepare=F, destroy=F   optional hooks, called once per instance
 *   backend=B      host (numpy arrays) or cuda (torch tensors) (required)
 *   input=K        fp16 (default: q, k, v in the problem's dtype) or sage2 (the host's sage2
 *                  quantizer's tensors)
 *   v_range=R      sage2: V's FP8 range, 448 (fp32+fp32 accumulation, default) or 2.25
 *   min_cc=N       cuda: the lowest compute capability, major*10+minor (default 0)
 *   graph=yes|no   run may be captured into a CUDA graph (default no; plugin.h section 6)
 *   version=V, description=TEXT
 *   param=KEY:int|float:DEFAULT:MIN:MAX[:DESCRIPTION], param=KEY:bool:DEFAULT[:DESCRIPTION]
 *                  a typed parameter (repeatable, at most 16), given to F as call.params[KEY]
 *   extension=PATH a file the variant loads (an extension module), hashed into the reports:
 *                  a leading $VAR or ${VAR} from the environment, the rest of the path after
 *                  it ($EXT_DIR/attn.so); relative to the .py's folder
 *   features=W,... what the variant does beyond the 1.1 problem (plugin.h section 11): kv_len,
 *                  causal-top-left, causal-bottom-right, window, softcap, varlen, paged; the host
 *                  refuses a problem needing one not declared (none declared: the 1.1 problem)
 *   dtypes=fp16,bf16  the dtypes it takes (default both)
 *   head_dims=64,128  the head dims it takes (default any) */
#ifndef SAGERUN_PYTHON_DECLARE_H
#define SAGERUN_PYTHON_DECLARE_H

#include <stddef.h>

#include "embed.h"

#define PY_DECLARE_TAG "sagerun-variant:"

/* Whether line (NUL-terminated, no line break) is a declaration line: "#", blanks, the tag. */
const char *py_declaration_text(const char *line);

/* Parses the text after the tag of the declaration on `line` of `script` (its real path) into
 * *out. Returns 0, or -1 with the reason in err ("unknown key 'x'"; the caller adds where). */
int py_declare_parse(const char *text, const char *script, int line, py_declared *out, char *err,
                     size_t errlen);

#endif
