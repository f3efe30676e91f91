/* What the subcommands say when getopt_long refuses an option: the option
 * as the user wrote it, long or short, and what is wrong with it. */
#include "cmds.h"

#include <stdio.h>
#include <string.h>

void cli_bad_option(const char *cmd, const char *cur, int optopt, const char *needs_value)
{
    if (cur && strncmp(cur, "--", 2) == 0 && cur[2]) {
        /* a long option: getopt_long sets optopt to its value when it
         * knows the name (a missing or unwanted value), else 0 */
        const char *eq = strchr(cur, '=');
        int len = eq ? (int)(eq - cur) : (int)strlen(cur);
        if (!optopt)
            fprintf(stderr, "%s: unknown option '%.*s' (try '%s -h')\n", cmd, len, cur, cmd);
        else if (eq)
            fprintf(stderr, "%s: option '%.*s' takes no value\n", cmd, len, cur);
        else
            fprintf(stderr, "%s: option '%s' needs a value\n", cmd, cur);
        return;
    }
    if (optopt > 0 && optopt < 256 && strchr(needs_value, optopt))
        fprintf(stderr, "%s: option '-%c' needs a value\n", cmd, optopt);
    else if (optopt > 0 && optopt < 256)
        fprintf(stderr, "%s: unknown option '-%c' (try '%s -h')\n", cmd, optopt, cmd);
    else
        fprintf(stderr, "%s: unknown option '%s' (try '%s -h')\n", cmd, cur ? cur : "?", cmd);
}
