# SPDX-License-Identifier: MIT
"""`cuptrace stats` reports `steps` and `nccl_skew` on 4 ranks of the NCCL
harness (profiler plugin only, no CUPTI) whose timing is known by
construction: every collective call and step mark has a slot PACE us apart
on one clock shared by the ranks; rank 2 comes LATE us after its slot at
every 10th collective slot, rank 1 marks its odd iterations' steps
STEP_LATE us late. Every figure is computed by hand (here, in Python) from
the API starts and steps of the converted trace (exact, in ns) and checked
against what was built in (rank 2 is last by about LATE at those
collectives; rank 1 is slowest by about STEP_LATE at odd steps)."""
import json
import re
import sqlite3
import statistics
import subprocess
import time
from collections import defaultdict

import pytest

from conftest import (LIB, PROGS, TOOL, convert, ctr_files, launcher_env, merge_intervals,
                      read_truth, run, tool, traced_env)

HARNESS = PROGS / "nccl_harness"
WORLD, ITERS = 4, 12
# Long enough that a loaded machine waking a rank a few ms late cannot pass
# for the built-in delays (it did, at 6 and 4 ms, with load 8 on 2 cores).
PACE, LATE, EVERY, LATE_RANK = 15000, 12000, 10, 2
STEP_LATE, STEP_RANK = 8000, 1
# Collective slots of one iteration and how many collectives each starts
# (send/recv have no sequence number; the fused group starts two).
SLOTS = [1, 1, 1, 1, 1, 1, 0, 2, 1]
US = 1000


def run_ranks(d, iters=ITERS, world=WORLD, extra=None):
    t0 = time.clock_gettime_ns(time.CLOCK_REALTIME) + 1_500_000_000
    procs = []
    for r in range(world):
        env = dict(traced_env(d / "out"), CUPTRACE_OUTPUT=f"{d}/out/rank%r.ctr", RANK=str(r),
                   WORLD_SIZE=str(world), HARNESS_STEPS="1", HARNESS_PACE_US=str(PACE),
                   HARNESS_T0=str(t0), HARNESS_LATE=f"{LATE_RANK}:{LATE}:{EVERY}",
                   HARNESS_STEP_LATE=f"{STEP_RANK}:{STEP_LATE}",
                   CT_TEST_TRUTH=str(d / f"truth{r}.jsonl"), **(extra or {}))
        procs.append(subprocess.Popen([str(HARNESS), str(iters)], env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    return [t for r in range(world) for t in read_truth(d / f"truth{r}.jsonl")]


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    d = tmp_path_factory.mktemp("skew")
    truth = run_ranks(d)
    files = ctr_files(d / "out")
    assert len(files) == WORLD
    doc = convert(files, d / "t.json")
    return d, files, doc, truth


def stats(inputs, *args, fmt="json"):
    p = tool("stats", "--format", fmt, *args, *map(str, inputs))
    assert p.returncode == 0, p.stderr
    return (json.loads(p.stdout) if fmt == "json" else p.stdout), p.stderr


def table(doc, prefix):
    [key] = [k for k in doc if k.startswith(prefix)]
    return doc[key]


def rank_of_pid(doc):
    return {e["pid"]: int(e["args"]["name"].split()[1]) for e in doc["traceEvents"]
            if e.get("ph") == "M" and e["name"] == "process_name"
            and e["args"]["name"].startswith("rank ")}


def ns(us_):
    return round(us_ * 1000)


def arrivals(doc, steps=None):
    """(comm, op, seq) -> {world rank: (API start ns, comm rank, step)} from the
    NCCL calls on the communicators' CPU tracks (tid 10^9 + 2i; + 1: GPU time)."""
    ranks = rank_of_pid(doc)
    out = defaultdict(dict)
    for e in doc["traceEvents"]:
        a = e.get("args", {})
        if (e.get("ph") != "X" or e.get("cat") != "nccl" or e["pid"] not in ranks
                or e["tid"] % 2 or "seq" not in a or e["name"] in ("Send", "Recv")):
            continue
        if steps and not steps[0] <= a.get("step", -1) <= steps[1]:
            continue
        out[(int(a["comm"], 16), a["comm_name"], e["name"], a["seq"])][ranks[e["pid"]]] = (
            ns(e["ts"]), a["rank"], a.get("step"))
    return out


def median(v):
    return float(statistics.median(v))


def expected_skew(arr):
    per = defaultdict(lambda: dict(n=0, last=0, total=0, late=[], imposed=0))
    worst = []
    for (comm, name, op, seq), by in arr.items():
        lo = min(t for t, _, _ in by.values())
        hi = max(t for t, _, _ in by.values())
        # last: the latest; of equals, the lowest communicator rank
        last = min((cr, r) for r, (t, cr, _) in by.items() if t == hi)[1]
        for r, (t, _, _) in by.items():
            per[r]["n"] += 1
            per[r]["total"] += t - lo
            per[r]["late"].append(t - lo)
        per[last]["last"] += 1
        per[last]["imposed"] += sum(hi - t for t, _, _ in by.values())
        step = by[min(by)][2]  # the step as the lowest rank (read first) had it
        worst.append(((-(hi - lo), comm, seq, op),
                      {"Communicator": f"{name} {comm:016x}", "Seq": seq, "Operation": op,
                       "Step": step, "Spread (ns)": hi - lo, "Last Rank": last}))
    rows = [{"Rank": r, "Collectives": p["n"], "Times Last": p["last"],
             "Total Lateness (ns)": p["total"], "Median Lateness (ns)": median(p["late"]),
             "Wait Imposed (ns)": p["imposed"]} for r, p in sorted(per.items())]
    return rows, [w for _, w in sorted(worst, key=lambda x: x[0])[:20]]


def delayed_collectives(iters=ITERS):
    return sum(SLOTS[k % len(SLOTS)] for k in range(iters * len(SLOTS)) if k % EVERY == 0)


def test_skew_every_figure(job):
    d, files, doc, truth = job
    got, _ = stats(files, "--report", "nccl_skew")
    arr = arrivals(doc)
    # every collective of the job was matched on all the ranks of its communicator
    ncoll = len([t for t in truth if t["kind"] == "op" and t["seq"] >= 0])
    assert sum(len(v) for v in arr.values()) == ncoll
    rows, worst = expected_skew(arr)
    assert table(got, "nccl_skew: arrival") == rows
    assert table(got, "nccl_skew: worst") == worst


def test_skew_known_straggler(job):
    """What was built in: rank 2 is last, by about LATE, at the delayed
    collectives, and those are the worst ones. (A process that the machine
    did not wake in time for its slot can spoil one of them: 80% must hold.)"""
    d, files, doc, truth = job
    got, _ = stats(files, "--report", "nccl_skew")
    k = delayed_collectives()
    assert 0 < k < 20
    worst = table(got, "nccl_skew: worst")
    ok = [w for w in worst[:k] if w["Last Rank"] == LATE_RANK
          and abs(w["Spread (ns)"] - LATE * US) < 4000 * US]
    assert len(ok) >= 0.8 * k, worst
    per = {r["Rank"]: r for r in table(got, "nccl_skew: arrival")}
    assert per[LATE_RANK]["Times Last"] >= 0.8 * k
    assert per[LATE_RANK]["Wait Imposed (ns)"] == max(r["Wait Imposed (ns)"] for r in per.values())
    # rank 2: in every world collective (9 or 10 per iteration) and its pair's
    assert per[LATE_RANK]["Collectives"] == ITERS * sum(SLOTS)


def test_steps_every_figure(job):
    d, files, doc, truth = job
    flops = 3.5e12
    got, _ = stats(files, "--report", "steps", "--flops-per-step", str(flops))
    ranks = rank_of_pid(doc)
    steps = defaultdict(dict)
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#") and e["pid"] in ranks:
            steps[int(e["name"].split("#")[1])][ranks[e["pid"]]] = ns(e["ts"] + e["dur"]) - ns(e["ts"])
    assert sorted(steps) == list(range(1, ITERS + 1))
    per = defaultdict(list)
    for s, by in steps.items():
        for r, v in by.items():
            per[r].append(v)
    want = []
    for r, v in sorted(per.items()):
        want.append({"Rank": r, "Steps": len(v), "Total Time (ns)": sum(v),
                     "Avg (ns)": round(sum(v) / len(v), 1), "Med (ns)": median(v),
                     "Min (ns)": min(v), "Max (ns)": max(v),
                     "StdDev (ns)": round(statistics.stdev(v), 1),
                     "TFLOP/s": round(flops * len(v) / sum(v) / 1e3, 3)})
    assert table(got, "steps: step duration per rank") == pytest.approx(want)
    want2 = []
    for s, by in sorted(steps.items()):
        mx = max(by.values())
        slow = min(r for r, v in by.items() if v == mx)
        med = median(list(by.values()))
        want2.append({"Step": s, "Ranks": len(by), "Med (ns)": med, "Max (ns)": mx,
                      "Slowest Rank": slow, "Lead (ns)": round(mx - med, 1),
                      "TFLOP/s": round(flops / mx / 1e3, 3)})
    assert table(got, "steps: slowest rank per step") == want2
    # what was built in: steps of 10 slots; rank 1's odd steps STEP_LATE
    # longer (80% of them: a late wake-up can spoil one)
    odd = [r for r in want2 if r["Step"] % 2]
    ok = [r for r in odd if r["Slowest Rank"] == STEP_RANK
          and abs(r["Lead (ns)"] - STEP_LATE * US) < 4000 * US]
    assert len(ok) >= 0.8 * len(odd), want2
    for row in table(got, "steps: step duration per rank"):
        assert abs(row["Med (ns)"] - 10 * PACE * US) < 2 * STEP_LATE * US, row
    # against the marks the harness wrote down (its clock read before and
    # after each cuptrace_step())
    marks = defaultdict(dict)
    for t in truth:
        if t["kind"] == "step":
            marks[t["rank"]][t["step"]] = (t["t0"], t["t1"])
    for s, by in steps.items():
        for r, v in by.items():
            a, b = marks[r][s], marks[r][s + 1]
            assert b[0] - a[1] <= v <= b[1] - a[0], (r, s)


def test_steps_option_applies(job):
    d, files, doc, truth = job
    got, _ = stats(files, "--report", "steps,nccl_skew", "--steps", "3-5")
    assert [r["Step"] for r in table(got, "steps: slowest rank per step")] == [3, 4, 5]
    assert all(r["Steps"] == 3 for r in table(got, "steps: step duration per rank"))
    rows, worst = expected_skew(arrivals(doc, (3, 5)))
    assert table(got, "nccl_skew: arrival") == rows
    assert table(got, "nccl_skew: worst") == worst
    assert all(3 <= w["Step"] <= 5 for w in worst)


def test_no_data_empty_tables_with_note(job, tmp_path):
    d, files, doc, truth = job
    # one rank alone: nothing to match; a trace without steps
    got, _ = stats(files[:1], "--report", "nccl_skew,steps", "--steps", "1-2")
    assert table(got, "nccl_skew: arrival") == [] and table(got, "nccl_skew: worst") == []
    text, _ = stats(files[:1], "--report", "nccl_skew", fmt="table")
    assert "(no rows)" in text and "note: no collective was seen by two ranks" in text
    csv, _ = stats(files[:1], "--report", "nccl_skew", fmt="csv")
    assert "# note: no collective" in csv
    # a trace of NVTX alone: no NCCL, no steps
    p = subprocess.run([str(PROGS / "nvtx_threads")], env=traced_env(tmp_path / "o"),
                       capture_output=True)
    assert p.returncode == 0
    empty = ctr_files(tmp_path / "o")
    assert empty
    got, _ = stats(empty, "--report", "steps,nccl_skew", "--flops-per-step", "1e12")
    assert all(v == [] for v in got.values()) and len(got) == 4
    text, _ = stats(empty, "--report", "steps", fmt="table")
    assert text.count("note: no complete step") == 2
    # inf and 1e308 would give "TFLOP/s": inf, which no JSON reader takes
    for bad in ("-3", "inf", "1e308", "nan"):
        p = tool("stats", "--flops-per-step", bad, str(empty[0]))
        assert p.returncode == 2 and "--flops-per-step" in p.stderr, bad


def test_skew_partial_ranks(job):
    """Ranks 0, 1 and 3 only: collectives are matched on the ranks present
    (the pair communicator of ranks 2 and 3 has only rank 3: left out)."""
    d, files, doc, truth = job
    got, _ = stats([files[0], files[1], files[3]], "--report", "nccl_skew", fmt="table")
    assert "lacked some ranks' arrival" in got
    gj, _ = stats([files[0], files[1], files[3]], "--report", "nccl_skew")
    arr = {k: {r: v for r, v in by.items() if r != 2} for k, by in arrivals(doc).items()}
    arr = {k: v for k, v in arr.items() if len(v) >= 2}
    rows, worst = expected_skew(arr)
    assert table(gj, "nccl_skew: arrival") == rows
    assert table(gj, "nccl_skew: worst") == worst


def test_run_stats(tmp_path):
    """`cuptrace run --stats LIST` prints the reports of the files it wrote
    and keeps the program's exit status."""
    out = tmp_path / "o"
    env = launcher_env(RANK=0, WORLD_SIZE=4, HARNESS_STEPS=1, NCCL_PROFILER_PLUGIN=LIB)
    p = run([TOOL, "run", "--stats", "steps,nccl_sum", "-o", f"{out}/r%r.ctr", "--",
             HARNESS, "3"], env=env)
    assert p.returncode == 0, p.stderr
    assert "** steps: step duration per rank" in p.stdout
    assert "** nccl_sum:" in p.stdout and "nccl_skew" not in p.stdout
    assert "rank 0 done" in p.stdout
    [f] = ctr_files(out)
    want, _ = stats([f], "--report", "steps,nccl_sum", fmt="table")
    assert p.stdout.endswith(want)
    # rank 0 does not trace (--ranks 5): nothing written; CMD's status kept
    p = run([TOOL, "run", "--stats=nccl_skew", "--ranks", "5", "-o", f"{out}2/r%r.ctr", "--",
             "sh", "-c", "exit 3"], env=launcher_env(RANK=0))
    assert p.returncode == 3 and "no trace file was written" in p.stderr
    p = run([TOOL, "run", "--stats=bogus", "--", "true"], env=launcher_env())
    assert p.returncode == 2 and "unknown report" in p.stderr


def test_skew_window_flat(tmp_path):
    """The matcher's high-water mark (stats --verbose) stays flat when the
    trace grows threefold: the files are read in lockstep, so it holds the
    collectives in flight across ranks, not one rank's whole run (read one
    file after another, it held every collective of the first file: the
    figure grew with the trace). Traces longer than what the NCCL join
    holds per file before handing operations out (model/nccl_ops_int.h,
    HOLD_NODES: some 1,200 iterations), which bounds the window from below.
    The same with -j 1 and -j 3."""
    seen = {}
    for iters in (1500, 4500):
        d = tmp_path / str(iters)
        procs = [subprocess.Popen([str(HARNESS), str(iters)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True,
                                  env=dict(traced_env(d), CUPTRACE_OUTPUT=f"{d}/rank%r.ctr",
                                           RANK=str(r), WORLD_SIZE="2"))
                 for r in range(2)]
        for p in procs:
            _, err = p.communicate(timeout=300)
            assert p.returncode == 0, err
        files = ctr_files(d)
        assert len(files) == 2
        for jobs in ("1", "3"):
            p = tool("stats", "-v", "-j", jobs, "--report", "nccl_skew", *map(str, files))
            assert p.returncode == 0, p.stderr
            m = re.search(r"nccl_skew: (\d+) collectives matched; the matcher held at most "
                          r"(\d+) at once", p.stderr)
            assert m, p.stderr
            seen[iters, jobs] = int(m[1]), int(m[2])
    for jobs in ("1", "3"):
        (short, short_peak), (long, long_peak) = seen[1500, jobs], seen[4500, jobs]
        assert long == 3 * short == 3 * 1500 * 9, seen  # every collective matched
        assert long_peak <= 1.5 * short_peak + 500, seen
        assert long_peak < long / 2, seen


def unranked_job(d, ranks, world, iters=3, **extra):
    """Harness processes that no launcher numbered, started in the order of
    ranks; returns their pids by their NCCL world rank."""
    d.mkdir(parents=True, exist_ok=True)
    procs = {}
    for r in ranks:
        env = traced_env(d, HARNESS_RANK=str(r), HARNESS_WORLD=str(world),
                         CT_TEST_TRUTH=str(d / f"truth{r}.jsonl"), **extra)
        for k in ("RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"):
            env.pop(k, None)
        procs[r] = subprocess.Popen([str(HARNESS), str(iters)], env=env, text=True,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(0.05)  # started in the order given, not the ranks'
    for p in procs.values():
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    return {r: p.pid for r, p in procs.items()}


def shown_ranks(files, out):
    """pid -> the rank the JSON's process names show."""
    return {int(m[2]): int(m[1]) for m in (
        re.fullmatch(r"rank (\d+) \(.*:(\d+)\)", e["args"]["name"])
        for e in convert(files, out)["traceEvents"]
        if e.get("ph") == "M" and e["name"] == "process_name") if m}


def test_unranked_processes_are_one_rank_in_nccl_reports(tmp_path):
    """A job started without launcher variables (torch.multiprocessing.spawn,
    a launcher of one's own): the tracer sees no rank, only the
    communicators' (world rank 0-3, pair rank 0 or 1). Each process is shown
    as its rank in its largest communicator, whatever order the processes
    started in (the footer names it), and nccl_ranks and nccl_skew file all
    its operations under that rank (each operation's communicator rank would
    put a process's pair operations under another process's rank)."""
    pids = unranked_job(tmp_path / "out", [3, 1, 2, 0], WORLD)
    files = ctr_files(tmp_path / "out")
    assert len(files) == WORLD
    shown = shown_ranks(files, tmp_path / "t.json")
    assert shown == {pid: r for r, pid in pids.items()}
    calls, colls = defaultdict(int), defaultdict(int)
    for r in pids:
        ops = [t for t in read_truth(tmp_path / "out" / f"truth{r}.jsonl") if t["kind"] == "op"]
        assert {t["comm_name"] for t in ops} == {"world", "pair"}
        for t in ops:
            calls[r, t["func"]] += 1
            colls[r] += t["seq"] >= 0
    doc, _ = stats(files, "--report", "nccl_ranks,nccl_skew")
    assert {(r["Rank"], r["Operation"]): r["Calls"] for r in table(doc, "nccl_ranks")} == calls
    assert {r["Rank"]: r["Collectives"] for r in table(doc, "nccl_skew: arrival")} == colls
    p = tool("info", *map(str, files))
    assert p.returncode == 0, p.stderr
    for r, pid in pids.items():
        assert re.search(rf"^ +{r}\* +\S+ +{pid} ", p.stdout, re.M), p.stdout
    assert "* no launcher rank: its rank in its largest NCCL communicator" in p.stdout
    p = tool("export", "-o", str(tmp_path / "t.sqlite"), *map(str, files))
    assert p.returncode == 0, p.stderr
    with sqlite3.connect(tmp_path / "t.sqlite") as db:
        assert db.execute("SELECT pid, rank, rankSource FROM CUPTRACE_RANKS").fetchall() \
            == sorted(((pid, r, "NCCL") for r, pid in pids.items()), key=lambda x: x[1])
        got = db.execute("SELECT rank, s.value, count(*) FROM CUPTRACE_NCCL_OPERATIONS "
                         "JOIN StringIds s ON s.id = nameId GROUP BY 1, 2").fetchall()
    assert {(r, f): n for r, f, n in got} == calls
    p = tool("info", str(next(f for f in files if f"-{pids[2]}." in f.name)))
    assert "rank:        none from a launcher; 2 of 4 in its largest NCCL communicator, " \
           "shown as rank 2" in p.stdout, p.stdout


def test_workers_spawned_inside_one_slurm_task_show_their_nccl_ranks(tmp_path):
    """torch.multiprocessing.spawn in an sbatch script: every worker
    inherits the batch step's SLURM_PROCID=0 and SLURM_NTASKS=1, which
    would make all four rank 0 (one nccl_skew row; the late rank 2 unseen).
    A one-task launcher's rank that processes with different NCCL ranks
    share is set aside for their NCCL ranks."""
    pids = unranked_job(tmp_path / "out", [3, 1, 2, 0], WORLD, SLURM_PROCID="0",
                        SLURM_NTASKS="1", SLURM_JOB_ID="4242")
    files = ctr_files(tmp_path / "out")
    assert len(files) == WORLD
    assert shown_ranks(files, tmp_path / "t.json") == {pid: r for r, pid in pids.items()}
    doc, err = stats(files, "--report", "nccl_skew")
    assert {r["Rank"] for r in table(doc, "nccl_skew: arrival")} == set(range(WORLD))
    assert "more than one run" not in err
    p = tool("info", *map(str, files))
    assert "missing ranks" not in p.stdout and "more than one run" not in p.stderr, p.stdout
    # the script that started them traces too (its rank 0 took NCCL rank
    # 0's claim): it is numbered after them, the workers keep their ranks
    d = tmp_path / "parent"
    script = ("import ctypes, os, subprocess, sys\n"
              "lib = ctypes.CDLL(None)\n"
              "lib.cuptrace_range_push(b'spawn')\n"
              "ps = [subprocess.Popen([sys.argv[1], '2'], env=dict(os.environ, HARNESS_RANK=str(r),"
              " HARNESS_WORLD='4'), stdout=subprocess.DEVNULL) for r in range(4)]\n"
              "assert all(p.wait() == 0 for p in ps)\n"
              "lib.cuptrace_range_pop()\n")
    env = traced_env(d, SLURM_PROCID="0", SLURM_NTASKS="1", SLURM_JOB_ID="4243")
    for k in ("RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"):
        env.pop(k, None)
    p = subprocess.run(["/usr/bin/python3", "-c", script, str(HARNESS)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    files = ctr_files(d)
    assert len(files) == WORLD + 1
    shown = shown_ranks(files, tmp_path / "p.json")
    parent = next(f for f in files if "nccl_comm" not in tool("info", str(f)).stdout)
    ppid = int(re.search(r"^pid:\s+(\d+)", tool("info", str(parent)).stdout, re.M).group(1))
    assert shown.pop(ppid) == WORLD and sorted(shown.values()) == list(range(WORLD)), shown
    # one process alone in its task keeps the task's rank
    solo = unranked_job(tmp_path / "solo", [0, 1], 2, SLURM_PROCID="5", SLURM_NTASKS="1")
    mine = [f for f in ctr_files(tmp_path / "solo") if f"-{solo[1]}." in f.name]
    assert shown_ranks(mine, tmp_path / "s.json") == {solo[1]: 5}


def test_two_unranked_jobs_claiming_one_rank_are_numbered(tmp_path):
    """Files of two jobs without launcher ranks mixed: where both claim an
    NCCL rank, neither process gets it; they are numbered after the ranks
    that stand (a number is never shown for two processes)."""
    a = unranked_job(tmp_path / "a", [0, 1, 2, 3], WORLD, iters=1)
    b = unranked_job(tmp_path / "b", [0, 1], 2, iters=1)
    files = ctr_files(tmp_path / "a") + ctr_files(tmp_path / "b")
    shown = shown_ranks(files, tmp_path / "t.json")
    assert shown[a[2]] == 2 and shown[a[3]] == 3
    numbered = [shown[a[0]], shown[a[1]], shown[b[0]], shown[b[1]]]
    assert sorted(numbered) == [4, 5, 6, 7], shown
    p = tool("info", *map(str, files))
    assert p.stdout.count("~  ") == 4 and p.stdout.count("*  ") == 2, p.stdout
    p = tool("export", "-o", str(tmp_path / "t.sqlite"), *map(str, files))
    assert p.returncode == 0, p.stderr
    with sqlite3.connect(tmp_path / "t.sqlite") as db:
        got = dict(db.execute("SELECT pid, rank || ' ' || rankSource FROM CUPTRACE_RANKS"))
    assert got == {pid: f"{r} {'NCCL' if r in (2, 3) else 'none'}" for pid, r in shown.items()}


def test_breakdown_without_cupti_takes_the_plugins_gpu_time(job):
    """Without CUPTI (no kernels in the files) breakdown's Communication is
    the union of the profiler plugin's GPU time (the nccl_gpu slices), as
    `cuptrace events` gives them (with kernels it is the NCCL kernels':
    test_hta.py)."""
    d, files, doc, truth = job
    p = tool("events", *map(str, files))
    assert p.returncode == 0, p.stderr
    rank, slices = {}, defaultdict(list)
    for r in (line.split("\t") for line in p.stdout.splitlines()[1:]):
        if r[1] == "process" and r[8].startswith("rank "):
            rank[int(r[0])] = int(r[8].split()[1])
        assert r[2] != "kernel"
        if r[1] == "slice" and r[2] == "nccl_gpu":
            slices[rank[int(r[0])]].append((int(r[6]), int(r[7])))
    doc, _ = stats(files, "--report", "breakdown")
    rows = {r["Rank"]: r for r in table(doc, "breakdown: GPU time") if r["Step"] is None}
    assert sorted(rows) == sorted(slices) == list(range(WORLD))
    for r, iv in slices.items():
        merged = merge_intervals(iv)
        assert rows[r]["Communication (ns)"] == sum(b - a for a, b in merged) > 0, r
