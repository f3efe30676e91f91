/* Control characters in profile text written as \xHH (escape.h). */
#include "escape.h"

#include <stdlib.h>
#include <string.h>

#define ESC_RING 8

static int is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

int esc_needed(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
        if (is_control(*p))
            return 1;
    return 0;
}

const char *esc_text(const char *s)
{
    static char *ring[ESC_RING];
    static unsigned next;
    if (!s)
        return "";
    if (!esc_needed(s))
        return s;
    size_t n = strlen(s);
    char *buf = realloc(ring[next % ESC_RING], 4 * n + 1);
    if (!buf)
        return "?";
    ring[next++ % ESC_RING] = buf;
    static const char hex[] = "0123456789abcdef";
    char *o = buf;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (is_control(*p)) {
            *o++ = '\\';
            *o++ = 'x';
            *o++ = hex[*p >> 4];
            *o++ = hex[*p & 15];
        } else {
            *o++ = (char)*p;
        }
    }
    *o = '\0';
    return buf;
}
