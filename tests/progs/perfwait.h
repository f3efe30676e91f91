/* perfwait.h: for test programs sampled through a perf ring buffer
 * (touch.c, faults.c).  The event counts from the moment it is opened,
 * but its samples have nowhere to go until its ring is mapped: wait for
 * a "perf_event" mapping in /proc/self/maps, up to 10 s, before the work
 * whose events are counted. */
#include <stdio.h>
#include <string.h>
#include <time.h>

static int perf_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, "perf_event") != NULL;
    if (f)
        fclose(f);
    return found;
}

static void wait_perf_mapped(void)
{
    struct timespec pause = {0, 10000000L};
    for (int i = 0; i < 1000 && !perf_mapped(); i++)
        nanosleep(&pause, NULL);
}
