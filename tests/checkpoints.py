"""checkpoints.py: every checkpoint of a running program, caught and checked.

  checkpoints.py catch FILE DIR CMD...
      Runs CMD and, while it runs, copies each new version of FILE (a profile
      the runtime renames into place) to DIR/cp.N,
      and appends "N CPU_NS SPAN_NS" to DIR/cpu: the main thread's CPU time
      (/proc/PID/task/PID/schedstat) read after the copy, so no later than
      the checkpoint's own moment, and the real time since CMD began less
      the thread's waits for a CPU (the same file's), which on a virtual
      machine also holds the time the hypervisor held the CPU (steal).  FILE's "%d" is CMD's process id.
      Prints the number caught; exits with CMD's status.

  checkpoints.py check DIR RATE FINAL FMT REPORT...
      Each DIR/cp.N and the FINAL profile read by REPORT (a command given
      FMT's arguments and the file: "json" runs REPORT --json FILE, "gprof"
      runs gprof -b -p PROG FILE with PROG as REPORT).  Each must read; its
      main's self samples may not exceed the main thread's CPU at the time
      (or SPAN) times RATE (by more than 2 samples and 2%: the period's
      phase), and
      never go down from one checkpoint to the next or to the final write.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time


def thread_cpu_ns(pid, field=0):
    try:
        with open("/proc/%d/task/%d/schedstat" % (pid, pid)) as f:
            return int(f.read().split()[field])
    except (OSError, ValueError, IndexError):
        return None


def zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in "ZX"
    except OSError:
        return True


def catch(path, out, cmd):
    start = time.monotonic_ns()
    child = subprocess.Popen(cmd)
    pid = child.pid
    if "%d" in path:
        path = path % pid
    seen, n = None, 0
    cpu = open(os.path.join(out, "cpu"), "w")
    while thread_cpu_ns(pid) is not None and not zombie(pid):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            time.sleep(0.002)
            continue
        st = os.fstat(fd)
        # inode numbers are reused (the temporary of the next write may get
        # the number of the file it replaces): the inode and its times
        key = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)
        if key != seen and st.st_size > 0:
            seen = key
            with os.fdopen(fd, "rb") as src, open(os.path.join(out, "cp.%d" % n), "wb") as dst:
                shutil.copyfileobj(src, dst)
            c, w = thread_cpu_ns(pid), thread_cpu_ns(pid, 1)
            if c is None or w is None:  # ended meanwhile: its CPU is past the write anyway
                os.remove(os.path.join(out, "cp.%d" % n))
                break
            cpu.write("%d %d %d\n" % (n, c, time.monotonic_ns() - start - w))
            cpu.flush()
            n += 1
        else:
            os.close(fd)
        time.sleep(0.002)
    print(n)
    return child.wait()


def main_samples(kind, report, path, rate):
    """main's self samples in the profile at PATH (None: did not read)"""
    if kind == "json":
        p = subprocess.run(report + ["--json", path], capture_output=True, text=True)
        if p.returncode != 0:
            return None, "report --json %s: %s" % (path, p.stderr.strip())
        r = json.loads(p.stdout)
        m = [f for f in r["functions"] if f["name"] == "main"]
        s = m[0]["self_seconds"] if m else 0.0
        extra = ""
        if "stacks" not in r:
            return None, "%s: no stacks" % path
        if True:  # the stacks hold the samples the counts do, a checkpoint's to a few
            st = sum(n["count"] for n in r["stacks"]["nodes"])
            tot = round(r["total_seconds"] * r["rate"])
            if abs(st - tot) > 3:
                return None, "%s: stacks hold %d samples, the histogram %d" % (path, st, tot)
            extra = " stacks %d histogram %d" % (st, tot)
        return round(s * rate), "%s: main %.3f s%s" % (path, s, extra)
    p = subprocess.run(["gprof", "-b", "-p"] + report + [path], capture_output=True, text=True)
    if p.returncode != 0:
        return None, "gprof %s: %s" % (path, p.stderr.strip())
    s = 0.0
    for ln in p.stdout.splitlines():
        w = ln.split()
        if w and w[-1] == "main" and re.fullmatch(r"[0-9.]+", w[0]):
            s = float(w[2])
    return round(s * rate), "%s: main %.3f s (gprof)" % (path, s)


def check(d, rate, final, kind, report):
    bad = []
    cpu, span = {}, {}
    for ln in open(os.path.join(d, "cpu")):
        n, c, r = ln.split()
        cpu[int(n)], span[int(n)] = int(c), int(r)
    last = -1
    for n in sorted(cpu):
        s, what = main_samples(kind, report, os.path.join(d, "cp.%d" % n), rate)
        # (the kernel brings a running thread's schedstat up to date at
        # its scheduler ticks, so the reading lags by up to one: 4 ms at
        # HZ 250, 10 at HZ 100 -- a quiet loaded run read 17 ms for a
        # checkpoint of 20 samples; the samples' clock does not lag)
        # ... and on a virtual machine, the time the hypervisor held the
        # CPU (steal) runs the event's clock, not the thread's: the
        # thread's real time so far less its waits for a CPU bounds both
        allowed = max(cpu[n] / 1e9 + 0.010, span[n] / 1e9) * rate * 1.02 + 2
        print("%s, thread CPU %.3f s, real less waits %.3f s: %s samples, at most %.1f" %
              (what, cpu[n] / 1e9, span[n] / 1e9, s, allowed))
        if s is None:
            bad.append(what)
            continue
        if s > allowed:
            bad.append("cp.%d: main %d samples, more than its CPU %.3f s allows" % (n, s, cpu[n] / 1e9))
        if s < last:
            bad.append("cp.%d: main %d samples, fewer than the checkpoint before (%d)" % (n, s, last))
        last = s
    s, what = main_samples(kind, report, final, rate)
    print(what)
    if s is None:
        bad.append(what)
    elif s < last:
        bad.append("final: main %d samples, fewer than the last checkpoint (%d)" % (s, last))
    for b in bad:
        print("FAIL:", b)
    return 1 if bad else 0


if sys.argv[1] == "catch":
    sys.exit(catch(sys.argv[2], sys.argv[3], sys.argv[4:]))
else:
    sys.exit(check(sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6:]))
