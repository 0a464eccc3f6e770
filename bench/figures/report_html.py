# SPDX-License-Identifier: MIT
"""`cuptrace report`: the HTML page over 16 rank files costs what
`cuptrace stats` costs on the same files (it runs the same driver over
fewer reports, then writes the page), and the page for 64 ranks x 1000
steps stays under 2 MB and loads in a fraction of a second.

Traces: one rank of tests/cupti_sim/nccl_harness_sim (simulator only: CUPTI
kernels from the simulator, NCCL through the real profiler-plugin ABI,
NVTX "step" ranges as steps), copied into N rank files by rewriting the
header (rank, pid), as the tests' rank_files does. Speed: CPU time
(user+sys) of the command, interleaved runs, medians. Load time: headless
Chromium, the page with one line added that logs performance.now() at
the load event (from navigation start), minus the same for a one-line
page. BENCH_REPORT_ITERS (default 6400, ~1M events per file) sets the
size of the 16 files; BENCH_BASE_TOOL=OLD_CUPTRACE adds OLD's `stats` to
the interleaved runs (A/B against another build)."""
import os
import re
import shutil
import subprocess
import sys

from benchlib import ROOT, RUNS, TOOL, median, report, run, skip, spread, tmpdir

sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from conftest import rank_files  # noqa: E402  (the header rewrite of the tests)

HARNESS = os.path.join(ROOT, "build/tests/cupti_sim/nccl_harness_sim")
ITERS = int(os.environ.get("BENCH_REPORT_ITERS", "6400"))
LIB = os.path.join(ROOT, "build/lib/libcuptrace.so")


def one_rank(d, iters):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUPTRACE_")}
    env.update(LD_PRELOAD=LIB, CUPTRACE_OUTPUT=os.path.join(d, "one", "rank%r.ctr"),
               CUPTRACE_TRACE="cuda,nvtx,nccl", CUPTRACE_STEP_RANGE="step", RANK="0",
               WORLD_SIZE="4", CUPTRACE_BUFFER_MB="256")
    subprocess.run([HARNESS, str(iters)], env=env, stdout=subprocess.DEVNULL, check=True)
    return os.path.join(d, "one", "rank0.ctr")


def events(files):
    out = subprocess.run([TOOL, "info"] + files, capture_output=True, text=True).stdout
    return sum(int(l.split()[3]) for l in out.splitlines()[1:] if re.match(r"\s*\d+\s", l))


def load_ms(path):
    """ms from navigation start to the load event in headless Chromium."""
    chrome = shutil.which("chromium") or shutil.which("chromium-browser")
    copy = path + ".timed.html"
    with open(path) as f, open(copy, "w") as g:
        g.write(f.read().replace("</body>", "<script>addEventListener('load',function(){"
                                 "setTimeout(function(){console.log('loaded '+performance.now())"
                                 "},0)})</script></body>"))
    p = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu",
                        "--enable-logging=stderr", "--v=0", "--window-size=1280,2000",
                        "--screenshot=" + copy + ".png", "file://" + copy],
                       capture_output=True, text=True, timeout=120)
    m = re.search(r"loaded ([0-9.]+)", p.stderr)
    return float(m.group(1)) if m else None


def main():
    if not os.path.exists(HARNESS):
        skip("report", "build/tests/cupti_sim/nccl_harness_sim missing (make test-progs)")
        return
    d = tmpdir("report")
    try:
        # 16 files: report vs stats, interleaved
        files = [str(p) for p in rank_files(one_rank(d, ITERS), os.path.join(d, "r16"), 16)]
        n = events(files)
        page = os.path.join(d, "r16.html")
        base = os.environ.get("BENCH_BASE_TOOL")
        cpu = {"stats": [], "report": [], "base": []}
        for _ in range(max(RUNS, 3)):
            if base:
                _, ru = run([base, "stats", "--format", "csv"] + files, stdout=subprocess.DEVNULL)
                cpu["base"].append(ru.cpu_s)
            _, ru = run([TOOL, "stats", "--format", "csv"] + files, stdout=subprocess.DEVNULL)
            cpu["stats"].append(ru.cpu_s)
            _, ru = run([TOOL, "report", "-o", page] + files, stdout=subprocess.DEVNULL)
            cpu["report"].append(ru.cpu_s)
        s, r = median(cpu["stats"]), median(cpu["report"])
        report("report", "stats, 16 files, %.1fM events" % (n / 1e6), "%.2f s CPU" % s, "-", None,
               spread(cpu["stats"]))
        if base:
            b = median(cpu["base"])
            report("report", "base build's stats, same files", "%.2f s CPU (stats/base x%.3f)" % (
                b, s / b), "-", None, spread(cpu["base"]))
        report("report", "report -o x.html, same files", "%.2f s CPU (x%.2f)" % (r, r / s),
               "<= stats", r <= s * 1.05, spread(cpu["report"]), "stats %.2f s CPU" % s)
        # 64 ranks x 1000 steps: the page's size and load time
        files = [str(p) for p in rank_files(one_rank(os.path.join(d, "k"), 1001),
                                             os.path.join(d, "r64"), 64)]
        page = os.path.join(d, "r64.html")
        subprocess.run([TOOL, "report", "-o", page] + files, check=True,
                       stderr=subprocess.DEVNULL)
        size = os.path.getsize(page)
        report("report", "page of 64 ranks x 1000 steps", "%.2f MB" % (size / 1e6), "< 2 MB",
               size < 2e6)
        if shutil.which("chromium") or shutil.which("chromium-browser"):
            tiny = os.path.join(d, "tiny.html")
            with open(tiny, "w") as f:
                f.write("<!DOCTYPE html><title>t</title><body><p>t</p></body>")
            big, small = [], []
            for _ in range(3):
                big.append(load_ms(page))
                small.append(load_ms(tiny))
            if None not in big + small:
                ms = median(big) - median(small)
                report("report", "its load in headless Chromium", "%.0f ms (+%.0f)" % (
                    median(big), ms), "< 1 s", median(big) < 1000, spread(big))
        else:
            skip("report", "the page's load time: chromium not installed")
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
