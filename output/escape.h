/* Text from a profile (function names, file and module paths) made safe
 * to print: a name holding a newline or an escape sequence must neither
 * forge lines in a file format nor drive the terminal. */
#ifndef CGPROF_ESCAPE_H
#define CGPROF_ESCAPE_H

#include <stdio.h>

/* S with each control character (below 0x20, and 0x7f) written as \xHH;
 * S itself when it has none (the usual case: no copy).  Otherwise the
 * text is in one of a few buffers reused in turn, valid until the
 * eighth call after; NULL gives "(null)"'s place, "". */
const char *esc_text(const char *s);

/* 1 if S holds a control character. */
int esc_needed(const char *s);

#endif
