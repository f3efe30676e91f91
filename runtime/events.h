/* The sampling events cgprof knows: names, kinds and perf_event codes.
 * Shared by the runtime and the cgprof command (compiled into both). */
#ifndef CGPROF_EVENTS_H
#define CGPROF_EVENTS_H

#include <stdint.h>

enum cg_event_kind {
    CG_EV_CPU,    /* per-thread CPU-time timers (POSIX timers, SIGPROF) */
    CG_EV_WALL,   /* real time: cpu-clock ring buffers + blocked threads from /proc */
    CG_EV_ITIMER, /* ITIMER_PROF, process-wide, as glibc's profil */
    CG_EV_PERF,   /* a perf_event_open event, read from ring buffers */
};

struct cg_event {
    const char *name;
    enum cg_event_kind kind;
    uint32_t type;    /* perf_event_attr.type (CG_EV_PERF) */
    uint64_t config;  /* perf_event_attr.config */
    int is_time;      /* counts nanoseconds: -F HZ gives its period */
    uint64_t period;  /* default period of a counting event */
    const char *what; /* one line for `cgprof record -e list` */
};

/* The event named NAME, or NULL. */
const struct cg_event *cg_event_find(const char *name);
/* The default event: cpu-clock where perf_event_open is permitted, else
 * cpu (the first call probes, and may change errno). */
const struct cg_event *cg_event_default(void);
/* All events, ending with a NULL name. */
const struct cg_event *cg_event_all(void);

#endif
