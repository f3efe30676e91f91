/* cgprof record: run a program with libcgprof preloaded.
 *
 * The command sets up the environment and then becomes the program (exec),
 * so the program's exit status, its signals and its process id are its
 * own: nothing stands between it and its parent.
 */
#include "cmds.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void record_usage(FILE *f)
{
    fputs("usage: cgprof record [-F HZ] [-o FILE] [--] PROG [ARGS...]\n"
          "  -F, --freq HZ     samples per second of each thread's CPU time (default 1000;\n"
          "                    0 records call counts only)\n"
          "  -o, --output FILE write the profile to FILE (default gmon.out, or\n"
          "                    $GMON_OUT_PREFIX.PID as with glibc)\n",
          f);
}

/* libcgprof.so: $CGPROF_LIB, else beside the cgprof binary or in ../lib. */
static int find_runtime(char *out, size_t cap)
{
    const char *env = getenv("CGPROF_LIB");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return access(out, R_OK);
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    const char *rel[] = {"/libcgprof.so", "/../lib/libcgprof.so", "/../lib/cgprof/libcgprof.so"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char cand[PATH_MAX + 64];
        snprintf(cand, sizeof cand, "%s%s", self, rel[i]);
        if (access(cand, R_OK) == 0 && realpath(cand, out))
            return 0;
    }
    return -1;
}

static int parse_hz(const char *s, unsigned long *hz)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || !*s || *end || v > 100000)
        return -1;
    *hz = v;
    return 0;
}

/* FILE made absolute, so a program that changes directory still writes
 * where the user asked. */
static char *absolute(const char *file)
{
    if (file[0] == '/')
        return strdup(file);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    size_t n = strlen(cwd) + strlen(file) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", cwd, file);
    return p;
}

int cmd_record(int argc, char **argv)
{
    unsigned long hz = 1000;
    const char *output = NULL;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-')
            break;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            record_usage(stdout);
            return 0;
        }
        const char *val = NULL;
        if (strcmp(a, "-F") == 0 || strcmp(a, "--freq") == 0 || strcmp(a, "-o") == 0 ||
            strcmp(a, "--output") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "cgprof record: option %s needs a value\n", a);
                return 2;
            }
            val = argv[++i];
        } else if (strncmp(a, "--freq=", 7) == 0 || strncmp(a, "--output=", 9) == 0) {
            val = strchr(a, '=') + 1;
        } else if ((a[1] == 'F' || a[1] == 'o') && a[2]) {
            val = a + 2;
        } else {
            fprintf(stderr, "cgprof record: unknown option '%s'\n", a);
            record_usage(stderr);
            return 2;
        }
        if (a[1] == 'F' || strncmp(a, "--freq", 6) == 0) {
            if (parse_hz(val, &hz) != 0) {
                fprintf(stderr, "cgprof record: -F %s: not a rate from 0 to 100000 Hz\n", val);
                return 2;
            }
        } else {
            output = val;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "cgprof record: no program to run\n");
        record_usage(stderr);
        return 2;
    }
    char lib[PATH_MAX];
    if (find_runtime(lib, sizeof lib) != 0) {
        fprintf(stderr, "cgprof record: cannot find libcgprof.so (set CGPROF_LIB)\n");
        return 2;
    }
    const char *old = getenv("LD_PRELOAD");
    size_t n = strlen(lib) + (old ? strlen(old) : 0) + 2;
    char *preload = malloc(n);
    if (!preload)
        return 2;
    snprintf(preload, n, "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
    char freq[32];
    snprintf(freq, sizeof freq, "%lu", hz);
    if (setenv("LD_PRELOAD", preload, 1) || setenv("CGPROF_FREQ", freq, 1)) {
        perror("cgprof record: setenv");
        return 2;
    }
    if (output) {
        char *abs = absolute(output);
        if (!abs || setenv("CGPROF_OUTPUT", abs, 1)) {
            fprintf(stderr, "cgprof record: cannot use output file %s\n", output);
            return 2;
        }
        free(abs);
    }
    free(preload);
    execvp(argv[i], argv + i);
    fprintf(stderr, "cgprof record: cannot run %s: %s\n", argv[i], strerror(errno));
    return errno == ENOENT ? 127 : 126;
}
