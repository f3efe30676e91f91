/* The public interface of libcgprof, for programs that want to control it. */
#ifndef CGPROF_H
#define CGPROF_H

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the profile gathered so far (gmon.out, or as configured) now,
 * atomically, and goes on profiling.  Async-signal-safe.  Returns 0 on
 * success, -1 if the file could not be written or another write was
 * under way.
 *
 * Declared weak, so that a program links without libcgprof and asks at
 * run time whether the runtime is there (preloaded by cgprof record):
 *     if (cgprof_dump) cgprof_dump();                                    */
#if defined(__GNUC__) && !defined(CGPROF_RUNTIME)
__attribute__((weak))
#endif
int cgprof_dump(void);

#ifdef __cplusplus
}
#endif

#endif
