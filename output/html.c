#include "export.h"
int ex_write_html(FILE *out, const struct ex_model *m, const struct ex_opts *o)
{
    return -1;
}
