/* The table of sampling events: built-in clocks and perf_event_open events. */
#include "events.h"

#include <linux/perf_event.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef sigev_notify_thread_id /* glibc before 2.35 does not name it */
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define SW(c) PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##c
#define HW(c) PERF_TYPE_HARDWARE, PERF_COUNT_HW_##c

static const struct cg_event events[] = {
    {"cpu", CG_EV_CPU, 0, 0, 1, 0,
     "CPU time of each thread by POSIX CPU-time timers (the default without perf events)"},
    {"wall", CG_EV_WALL, 0, 0, 1, 0,
     "real time of each thread, blocked time included (no signals to blocked threads)"},
    {"itimer", CG_EV_ITIMER, 0, 0, 1, 0, "process CPU time by ITIMER_PROF, as glibc's profil"},
    {"cpu-clock", CG_EV_PERF, SW(CPU_CLOCK), 1, 0,
     "CPU time of each thread by perf's high-resolution clock (the default)"},
    {"task-clock", CG_EV_PERF, SW(TASK_CLOCK), 1, 0, "perf task clock of each thread"},
    {"page-faults", CG_EV_PERF, SW(PAGE_FAULTS), 0, 1, "page faults"},
    {"minor-faults", CG_EV_PERF, SW(PAGE_FAULTS_MIN), 0, 1, "minor page faults"},
    {"major-faults", CG_EV_PERF, SW(PAGE_FAULTS_MAJ), 0, 1, "major page faults"},
    {"context-switches", CG_EV_PERF, SW(CONTEXT_SWITCHES), 0, 1, "context switches"},
    {"cpu-migrations", CG_EV_PERF, SW(CPU_MIGRATIONS), 0, 1, "migrations to another CPU"},
    {"alignment-faults", CG_EV_PERF, SW(ALIGNMENT_FAULTS), 0, 1, "alignment faults"},
    {"emulation-faults", CG_EV_PERF, SW(EMULATION_FAULTS), 0, 1, "emulation faults"},
    {"cycles", CG_EV_PERF, HW(CPU_CYCLES), 0, 1000000, "CPU cycles (hardware counter)"},
    {"instructions", CG_EV_PERF, HW(INSTRUCTIONS), 0, 1000000, "instructions retired (hardware)"},
    {"cache-references", CG_EV_PERF, HW(CACHE_REFERENCES), 0, 100000, "cache accesses (hardware)"},
    {"cache-misses", CG_EV_PERF, HW(CACHE_MISSES), 0, 10000, "cache misses (hardware)"},
    {"branches", CG_EV_PERF, HW(BRANCH_INSTRUCTIONS), 0, 1000000, "branches (hardware)"},
    {"branch-misses", CG_EV_PERF, HW(BRANCH_MISSES), 0, 10000, "mispredicted branches (hardware)"},
    {"bus-cycles", CG_EV_PERF, HW(BUS_CYCLES), 0, 100000, "bus cycles (hardware)"},
    {"ref-cycles", CG_EV_PERF, HW(REF_CPU_CYCLES), 0, 1000000, "reference cycles (hardware)"},
    {"stalled-cycles-frontend", CG_EV_PERF, HW(STALLED_CYCLES_FRONTEND), 0, 1000000,
     "cycles stalled in the front end (hardware)"},
    {"stalled-cycles-backend", CG_EV_PERF, HW(STALLED_CYCLES_BACKEND), 0, 1000000,
     "cycles stalled in the back end (hardware)"},
    {NULL, 0, 0, 0, 0, 0, NULL},
};

const struct cg_event *cg_event_find(const char *name)
{
    for (const struct cg_event *e = events; e->name; e++)
        if (strcmp(e->name, name) == 0)
            return e;
    if (strcmp(name, "branch-instructions") == 0)
        return cg_event_find("branches");
    if (strcmp(name, "faults") == 0)
        return cg_event_find("page-faults");
    if (strcmp(name, "cs") == 0)
        return cg_event_find("context-switches");
    return NULL;
}

const struct cg_event *cg_event_all(void)
{
    return events;
}

/* The default: cpu-clock, a high-resolution timer that runs at the rate
 * asked for, where this process may open perf events; else cpu, whose
 * POSIX timers the kernel checks only on its tick (docs/events.md). */
const struct cg_event *cg_event_default(void)
{
    static const struct cg_event *chosen;
    if (chosen)
        return chosen;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = 1000000;
    a.sample_type = PERF_SAMPLE_IP;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.disabled = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        chosen = cg_event_find("cpu-clock");
        return chosen;
    }
    /* no perf events (an old or locked-down kernel, qemu-user): a CPU-time
     * timer per thread; where threads cannot have one either (qemu-user
     * has no SIGEV_THREAD_ID timers), the process's ITIMER_PROF, as
     * glibc's runtime samples */
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
    timer_t id;
    int timers = timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &id) == 0;
    if (timers)
        timer_delete(id);
    chosen = cg_event_find(timers ? "cpu" : "itimer");
    return chosen;
}
