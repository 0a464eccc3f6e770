# SPDX-License-Identifier: MIT
"""The flight recorder (CUPTRACE_FLIGHT, docs/flight-recorder.md): bench_rate's
paced NVTX pairs at 1M events/s, traced to a file and in flight mode.
Figures: the writer's CPU per event in both (flight mode cuts blocks every
20 ms and copies each into its store); the bytes a healthy run writes
(none); the window a CUPTRACE_FLIGHT_SIGNAL dump writes and how long from
the signal to the file finished (trailer written); the store's size against
its budget (CUPTRACE_FLIGHT_MB=8: a dump's file holds the store)."""
import os
import shutil
import signal
import subprocess
import time

from benchlib import RUNS, TOOL, median, prog, report, run, spread, tmpdir, traced_env

RATE, SECONDS = 1000000, 3
TRAILER = b"CTND"  # CT_TRAILER_MAGIC, little-endian


def du(d):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs)


def writer_cost():
    """The writer's ns per event to a file and in flight mode, runs
    interleaved (the machine's load moves both alike); and the bytes the
    flight runs wrote."""
    per_ev, written = {"file": [], "flight": []}, 0
    for _ in range(RUNS):
        for mode, extra in (("file", {}), ("flight", {"CUPTRACE_FLIGHT": "10"})):
            d = tmpdir("flight")
            try:
                vals, _ = run([prog("bench_rate"), str(RATE), str(SECONDS)],
                              traced_env(d, 64, **extra))
                if mode == "flight":
                    written += du(d)
            finally:
                shutil.rmtree(d)
            per_ev[mode].append(vals["writer_ns_per_event"])
    return per_ev["file"], per_ev["flight"], written


def finished(path):
    try:
        with open(path, "rb") as f:
            f.seek(-16, os.SEEK_END)
            return f.read(4) == TRAILER
    except OSError:
        return False


def dump_latency(mb, window="10", at=2.5):
    """Signals a run of bench_rate in flight mode after at seconds; returns
    the ms from the signal to the file's trailer, the file's size and
    whether its header says the budget cut the window."""
    d = tmpdir("flight-dump")
    env = traced_env(d, 64, CUPTRACE_FLIGHT=window, CUPTRACE_FLIGHT_MB=str(mb),
                     CUPTRACE_FLIGHT_SIGNAL="USR2", CUPTRACE_OUTPUT=os.path.join(d, "r.ctr"))
    p = subprocess.Popen([prog("bench_rate"), str(RATE), str(at + 1.5)], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(at)
        t0 = time.monotonic()
        p.send_signal(signal.SIGUSR2)
        path = os.path.join(d, "r.ctr")
        while not finished(path) and time.monotonic() - t0 < 10:
            time.sleep(0.001)
        ms = (time.monotonic() - t0) * 1e3
        size = os.path.getsize(path) if os.path.exists(path) else 0
        cut = b"flight cut:" in subprocess.run([TOOL, "info", path], capture_output=True).stdout
        p.wait()
    finally:
        shutil.rmtree(d)
    return ms, size, cut


def main():
    if not os.path.exists(prog("bench_rate")):
        raise SystemExit("flight: build/bench/bench_rate missing (make bench-progs)")
    file_ns, fl_ns, written = writer_cost()
    report("flight", "writer CPU per event, flight mode", "%.0f ns" % median(fl_ns),
           "<= file mode", median(fl_ns) <= median(file_ns) * 1.1, spread(fl_ns),
           "%.0f ns to a file" % median(file_ns))
    report("flight", "bytes written by a healthy run", "%d" % written, "0", written == 0)
    lat, size, _ = zip(*[dump_latency(64) for _ in range(RUNS)])
    report("flight", "signal to file on disk, 2.5 s window at 1M ev/s", "%.0f ms" % median(lat),
           "< 1000 ms", median(lat) < 1000, "%s; files %.1f MB" % (spread(lat),
                                                                  median(size) / 2**20))
    # 2.5 s at 1M ev/s is about 1 MB compressed: after 4 s, a 1 MB budget
    # keeps less than the 60 s asked, and the header says so (flight cut)
    _, size, cut = zip(*[dump_latency(1, window="60", at=4) for _ in range(RUNS)])
    report("flight", "store within CUPTRACE_FLIGHT_MB=1 (dump's size)",
           "%.2f MB" % (median(size) / 2**20), "<= 1 MB", max(size) <= 2**20 + 65536,
           "sizes %s MB; header says cut: %d of %d" % (
               " ".join("%.2f" % (s / 2**20) for s in size), sum(cut), len(cut)))


if __name__ == "__main__":
    main()
