"""thread_clocks.py JSON TRUTH CLOCK: the threads of cgprof report --json
(its "threads": each thread's samples) against what tests/progs/thrclock.c
measured of each on the thread's own clocks (TRUTH: "thread|main TID
CPU_NS REAL_NS [STEAL_NS]" lines).  CLOCK is "cpu" (a CPU-time event: a
thread may not be sampled for more than its CPU time), "cpu+steal" (perf's
cpu-clock and task-clock, whose clock also runs while a virtual machine's
hypervisor holds the CPU: its CPU time and that stolen time) or "real"
(wall: for more than its real time) or "process" (itimer: ITIMER_PROF is
the process's timer, and the kernel sends its signal to the process, so
on a busy machine another thread than the one whose CPU time ran it out
may take it: the threads' CPU time in all, not each one's).

Never more, per thread and in total, beyond sampling noise: a period's
phase (each thread's sampling starts at a random point of its first
period: one sample) and 3 standard deviations of a Poisson count of the
allowed samples.  And not nothing: every thread is in the profile, the
threads' total at least a third of what their clocks allow (the CPU
events sample a busy thread; wall samples running time as cpu-clock)."""
import json
import math
import sys

js, truthf, clock = sys.argv[1:4]
r = json.load(open(js))
rate = r["rate"]
prof = {t["tid"]: t for t in r["threads"]}
bad = []
tot_s = tot_allowed = 0.0
n = 0


def allowed(seconds):
    e = seconds * rate
    return e + 1 + 3 * math.sqrt(e + 1)


for ln in open(truthf):
    w = ln.split()
    if len(w) not in (4, 5) or w[0] not in ("thread", "main"):
        continue
    tid, cpu, real = int(w[1]), int(w[2]) / 1e9, int(w[3]) / 1e9
    steal = int(w[4]) / 1e9 if len(w) == 5 else 0.0
    t = prof.get(tid)
    if t is None:
        bad.append("%s %d (%.3f s of CPU) is not among the profile's threads" % (w[0], tid, cpu))
        continue
    if w[0] == "main":
        continue  # main runs on after its line (printing, exit): no bound
    n += 1
    own = {"cpu": cpu, "process": cpu, "cpu+steal": cpu + steal}.get(clock, real)
    s = t["samples"]
    tot_s += s
    tot_allowed += own * rate
    if s > allowed(own) and clock != "process":
        bad.append("thread %d: %d samples at %g Hz, its %s clock says %.4f s (%.1f samples, at most %.1f)"
                   % (tid, s, rate, clock, own, own * rate, allowed(own)))
    if not t["ended"]:
        bad.append("thread %d ended but the profile says it runs" % tid)
print("%d threads: %d samples, their %s clocks allow %.1f (%.1f%%)"
      % (n, tot_s, clock, tot_allowed, 100 * tot_s / tot_allowed if tot_allowed else 0))
if n == 0:
    bad.append("no thread in the program's lines")
elif tot_s > tot_allowed + 1 + 3 * math.sqrt(tot_allowed + 1):
    bad.append("all threads: %d samples, more than their clocks allow (%.1f)" % (tot_s, tot_allowed))
elif tot_s < tot_allowed / 3:
    bad.append("all threads: %d samples, under a third of their %.1f" % (tot_s, tot_allowed))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
