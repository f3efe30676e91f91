/* The public interface of libcgprof, for programs that want to control it. */
#ifndef CGPROF_H
#define CGPROF_H

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the profile gathered so far (gmon.out, or as configured) now,
 * atomically, and goes on profiling.  Async-signal-safe.  Returns 0 on
 * success, -1 if the file could not be written or another write was
 * under way. */
int cgprof_dump(void);

#ifdef __cplusplus
}
#endif

#endif
