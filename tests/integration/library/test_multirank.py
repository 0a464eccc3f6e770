# SPDX-License-Identifier: MIT
"""Jobs of several ranks: real Open MPI jobs under both activation styles,
rank selection, one merged timeline, per-rank HTA-ready files, a rank
killed mid-run, and child processes (spawned Python workers, a
torchrun-like launcher)."""
import json
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import (ASAN_FORK, PROGS, PYTHON, ROOT, SAN, TOOL, base_env, convert, ctr_files,
                      launcher_env, load_json, preload, run, tool, traced_env)

MPIEXEC = shutil.which("mpiexec")
needs_mpi = pytest.mark.skipif(not MPIEXEC or not (PROGS / "mpi_ranks").exists(),
                               reason="Open MPI (mpiexec, mpicc) not installed")
ITERS = 8
SLOW = 1


def mpi_env(**extra):
    env = base_env(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1", **extra)
    return env


def mpiexec(args, env, n=4, timeout=120):
    cmd = [MPIEXEC, "--oversubscribe", "-n", str(n)] + [str(a) for a in args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def run_preload_style(out, *extra_x):
    env = mpi_env()
    xs = ["-x", f"LD_PRELOAD={preload()}", "-x", f"CUPTRACE_OUTPUT={out}/r%r.ctr"]
    for x in extra_x:
        xs += ["-x", x]
    return mpiexec(xs + [PROGS / "mpi_ranks", ITERS, SLOW], env)


def ranges(doc):
    """{pid: {name: [events sorted by ts]}} of NVTX ranges."""
    out = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "user_annotation":
            out.setdefault(e["pid"], {}).setdefault(e["name"], []).append(e)
    for per in out.values():
        for v in per.values():
            v.sort(key=lambda e: e["ts"])
    return out


def check_job(doc, nranks=4):
    procs = sorted((e["args"]["sort_index"], e["pid"]) for e in doc["traceEvents"]
                   if e.get("ph") == "M" and e["name"] == "process_sort_index")
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e.get("ph") == "M" and e["name"] == "process_name"}
    pids = [p for _, p in procs]
    assert [names[p].split(" (")[0] for p in pids] == [f"rank {r}" for r in range(nranks)]
    assert all(re.match(r"rank \d+ \(.+:\d+\)$", names[p]) for p in pids)
    rg = ranges(doc)
    for p in pids:
        for n in ("iteration", "compute", "allreduce", "barrier"):
            assert len(rg[p][n]) == ITERS, (names[p], n)
    # The slow rank computes longest (4x the work). The shortest of its
    # iterations is compared, which a busy machine's preemption cannot
    # stretch the way it can stretch a sum.
    comp = {p: min(e["dur"] for e in rg[p]["compute"]) for p in pids}
    assert max(comp, key=comp.get) == pids[SLOW]
    # Causality on the merged timeline: no rank leaves allreduce i before
    # every rank entered it. Clocks are aligned to well within 0.2 ms here.
    for i in range(ITERS):
        last_in = max(rg[p]["allreduce"][i]["ts"] for p in pids)
        for p in pids:
            e = rg[p]["allreduce"][i]
            assert e["ts"] + e["dur"] >= last_in - 200, (i, names[p])
    return pids


@needs_mpi
def test_mpi_preload_style_merged(tmp_path):
    p = run_preload_style(tmp_path / "o")
    assert p.returncode == 0, p.stderr
    assert "ranks 4 iterations" in p.stdout
    files = ctr_files(tmp_path / "o")
    assert [f.name for f in files] == ["r0.ctr", "r1.ctr", "r2.ctr", "r3.ctr"]
    info = tool("info", tmp_path / "o", check=True).stdout
    rows = [l.split() for l in info.splitlines() if re.match(r"\s+\d+\s", l)]
    assert [r[0] for r in rows] == ["0", "1", "2", "3"]
    assert all(r[5] == "clean" and r[4] == "0" for r in rows)
    assert "missing" not in info
    doc = convert([tmp_path / "o"], tmp_path / "job.json")
    assert doc["distributedInfo"]["world_size"] == 4
    check_job(doc)
    for f, want in zip(files, range(4)):
        assert f"rank:        {want} (local {want}, world size 4, from OMPI_COMM_WORLD_RANK)" in \
            tool("info", f).stdout


@needs_mpi
def test_mpi_launcher_style_and_split_ranks(tmp_path):
    env = mpi_env()
    if SAN:
        env["LD_PRELOAD"] = launcher_env()["LD_PRELOAD"]
    p = mpiexec([TOOL, "run", "-o", f"{tmp_path}/o/r%r.ctr", "--", PROGS / "mpi_ranks", ITERS, SLOW],
                env)
    assert p.returncode == 0, p.stderr
    files = ctr_files(tmp_path / "o")
    assert len(files) == 4
    merged = convert([tmp_path / "o"], tmp_path / "job.json.gz")
    pids = check_job(merged)
    split = tmp_path / "split"
    q = tool("convert", "--split-ranks", split, tmp_path / "o")
    assert q.returncode == 0, q.stderr
    outs = sorted(split.glob("*.json"))
    assert [o.name for o in outs] == ["rank0.json", "rank1.json", "rank2.json", "rank3.json"]
    mrg = ranges(merged)
    for r, o in enumerate(outs):
        text = o.read_text()
        # What HTA reads: the first "rank": match is distributedInfo's.
        assert int(re.search(r'"rank":\s+(\d+)', text).group(1)) == r
        d = json.loads(text)
        assert d["distributedInfo"] == {"rank": r, "world_size": 4, "backend": "nccl"}
        assert d["baseTimeNanoseconds"] == merged["baseTimeNanoseconds"]
        per = ranges(d)
        assert len(per) == 1
        [(pid, rg)] = per.items()
        # Kineto layout: the CPU process is the rank's OS pid.
        assert pid == d["cuptrace"]["files"][0]["os_pid"]
        # Same events, same times as in the merged trace, rank by rank.
        want = mrg[pids[r]]
        assert {k: [(e["ts"], e["dur"]) for e in v] for k, v in rg.items()} == \
               {k: [(e["ts"], e["dur"]) for e in v] for k, v in want.items()}
    q = tool("convert", "--split-ranks", tmp_path / "sz", "-z", tmp_path / "o")
    assert q.returncode == 0
    assert len(list((tmp_path / "sz").glob("rank*.json.gz"))) == 4
    assert load_json(tmp_path / "sz" / "rank2.json.gz")["distributedInfo"]["rank"] == 2


@needs_mpi
@pytest.mark.parametrize("sel,want", [("0,2", ["r0.ctr", "r2.ctr"]), ("local:0", ["r0.ctr"]),
                                      ("1-3", ["r1.ctr", "r2.ctr", "r3.ctr"])])
def test_mpi_rank_selection(tmp_path, sel, want):
    p = run_preload_style(tmp_path / "o", f"CUPTRACE_RANKS={sel}")
    assert p.returncode == 0, p.stderr
    assert [f.name for f in ctr_files(tmp_path / "o")] == want
    info = tool("info", tmp_path / "o").stdout
    # the ranks CUPTRACE_RANKS left out are not missing (it is stored in
    # each file's settings); a chosen rank whose file is gone is
    assert "missing ranks:" not in info, info
    if len(want) > 2:  # (info on one file lists no ranks)
        (tmp_path / "o" / want[1]).unlink()
        info = tool("info", tmp_path / "o").stdout
        assert f"missing ranks: {want[1][1]} (world size 4; traced: CUPTRACE_RANKS={sel})" in info


@needs_mpi
def test_mpi_rank_killed_leaves_a_readable_truncated_file(tmp_path):
    env = mpi_env()
    xs = ["-x", f"LD_PRELOAD={preload()}", "-x", f"CUPTRACE_OUTPUT={tmp_path}/o/r%r.ctr"]
    # mpi_ranks 200 iterations, rank 2 kills itself with SIGKILL at iteration 30
    p = mpiexec(xs + [PROGS / "mpi_ranks", 200, SLOW, 2], env)
    assert p.returncode != 0
    files = {f.name: f for f in ctr_files(tmp_path / "o")}
    assert "r2.ctr" in files
    out = tool("info", tmp_path / "o").stdout
    row = next(l.split() for l in out.splitlines() if re.match(r"\s+2\s", l))
    assert row[5] == "truncated"
    doc = convert([files["r2.ctr"]], tmp_path / "r2.json")
    its = [e for e in doc["traceEvents"] if e.get("name") == "iteration" and e.get("ph") == "X"]
    # The rank slept 1.5 s before SIGKILL: its first 30 iterations were on disk.
    assert len(its) >= 30


SPAWN = """
import multiprocessing as mp, os, sys
sys.path.insert(0, {shim!r})
import cuptrace

def work(i):
    for k in range(5):
        with cuptrace.range(f"child {{i}}"):
            pass
    return os.getpid()

if __name__ == "__main__":
    mp.set_start_method("spawn")
    with cuptrace.range("parent"):
        with mp.Pool(3) as pool:
            pids = pool.map(work, range(6))
    print(len(set(pids)))
"""


def run_job(tmp_path, *ranks, extra=()):
    """An MPMD job: each (n, cmd) runs `cuptrace run --stats=nccl_ranks
    --report job.html -o r%r.ctr -- cmd` on n ranks."""
    env = mpi_env()
    if SAN:
        env["LD_PRELOAD"] = launcher_env()["LD_PRELOAD"]
    cmd = [MPIEXEC, "--oversubscribe"]
    for n, prog in ranks:
        cmd += [":"] * (len(cmd) > 2) + ["-n", str(n), str(TOOL), "run", *extra,
                                          "--stats=nccl_ranks", "--report", "job.html",
                                          "-o", "t/r%r.ctr", "--", *map(str, prog)]
    return subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)


@needs_mpi
def test_run_stats_in_a_job_summarises_the_job_once(tmp_path):
    """`cuptrace run --stats --report` on every rank of an mpiexec job: the
    lowest traced rank waits for the others' files and prints the job's
    tables and writes the page once (every rank printed its own from the
    files that happened to exist, some still being written and called cut
    short, and all wrote the same page)."""
    harness = PROGS / "nccl_harness"
    p = run_job(tmp_path, (1, [harness, 2]), (3, [harness, 4000]))
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("** nccl_ranks") == 1, p.stdout
    ranks = {int(line.split()[0]) for line in p.stdout.splitlines()
             if line.strip() and line.split()[0].isdigit()}
    assert ranks == {0, 1, 2, 3}
    assert p.stderr.count("cuptrace run --stats, --report: 4 trace files") == 1, p.stderr
    assert p.stderr.count("wrote job.html") == 1 and "truncated" not in p.stderr, p.stderr
    assert (tmp_path / "job.html").stat().st_size > 0
    # ranks 1-3 ran longer than the 2 s every rank gives the others to say
    # they trace: rank 0 waited for them
    assert "rank 0 waits for the other ranks' files" in p.stderr, p.stderr
    # CUPTRACE_RANKS=1,3: rank 1, the lowest traced, summarises ranks 1 and 3
    (tmp_path / "sel").mkdir()
    p = run_job(tmp_path / "sel", (4, [harness, 2]), extra=("--ranks", "1,3"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("** nccl_ranks") == 1 and "2 trace files" in p.stderr, p.stderr


@needs_mpi
@pytest.mark.parametrize("traced", [[0], [2], [1, 3]])
def test_run_stats_when_a_wrapper_chose_the_ranks(tmp_path, traced):
    """A batch script that runs `cuptrace run --stats` on some ranks only
    (`if [ $RANK = 0 ]; then cuptrace run ...; else ./app; fi`): the ranks
    that run it say so, the lowest of them summarises the ranks that said
    so, at once. (Rank 0 waited 10 s for files that never came; with rank
    2 alone, nobody summarised; a traced rank that started a second late,
    after the lowest one's short program had ended, summarised again.)"""
    harness = PROGS / "nccl_harness"
    run = f"{TOOL} run --stats=nccl_ranks -o t/r%r.ctr -- {harness} 2"
    late = "|".join(str(r) for r in traced[1:]) or "none"
    script = (f'case $OMPI_COMM_WORLD_RANK in {traced[0]}) exec {run};; '
              f'{late}) sleep 1; exec {run};; *) exec {harness} 2;; esac')
    env = mpi_env()
    if SAN:
        env["LD_PRELOAD"] = launcher_env()["LD_PRELOAD"]
    t = time.monotonic()
    p = subprocess.run([MPIEXEC, "--oversubscribe", "-n", "4", "sh", "-c", script], env=env,
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    took = time.monotonic() - t
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("** nccl_ranks") == 1, (p.stdout, p.stderr)
    n = len(traced)
    assert p.stderr.count(f"cuptrace run --stats: {n} trace file") == 1, p.stderr
    assert "no trace file changed" not in p.stderr and took < 9, (took, p.stderr)
    assert not [f for f in (tmp_path / "t").iterdir() if f.name.startswith(".")]


@needs_mpi
def test_run_stats_in_a_job_does_not_wait_for_a_killed_rank(tmp_path):
    """A rank killed on this host leaves a file without a footer: the
    summarising rank sees its process gone and goes on, without waiting for
    the files to stay unchanged for 10 s."""
    harness = PROGS / "nccl_harness"
    die = ["sh", "-c", f"{harness} 200000 & p=$!; sleep 1; kill -9 $p; wait $p; exit 0"]
    p = run_job(tmp_path, (3, [harness, 300]), (1, die))
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("** nccl_ranks") == 1, p.stdout
    assert "t/r3.ctr: truncated" in p.stderr and "no trace file changed" not in p.stderr, p.stderr


@needs_mpi
def test_files_of_two_jobs_read_together_are_warned_about(tmp_path):
    """Two mpiexec jobs' files in one directory: their ranks would be read
    as one job (two rank 0s, collectives of both matched); every command
    says so once, from the job ids (PMIX_NAMESPACE under Open MPI), and the
    files of one job alone draw no warning."""
    for d in ("a", "b"):
        assert run_preload_style(tmp_path / d).returncode == 0
    for cmd in (["info"], ["stats", "--report", "nvtx_sum"]):
        p = tool(*cmd, str(tmp_path))
        assert p.returncode == 0, p.stderr
        assert p.stderr.count("warning: the files come from more than one job (job ids") == 1, \
            p.stderr
        p = tool(*cmd, str(tmp_path / "a"))
        assert p.returncode == 0 and "warning" not in p.stderr, p.stderr


# (skipped under ASan: the allocator's fork deadlock of conftest's
# ASAN_FORK, in the forker program; the release run keeps the test)
@ASAN_FORK
def test_one_rank_in_two_unrelated_processes_is_warned_about(tmp_path):
    """Without job ids (RANK set by hand, twice), a rank written by two
    processes that are not parent and child is said; a forked child of a
    rank (its DataLoader workers) is not."""
    for d in ("a", "b"):
        p = run([PROGS / "forker"], env=traced_env(tmp_path / d, RANK=0, WORLD_SIZE=1))
        assert p.returncode == 0, p.stderr
    assert len(ctr_files(tmp_path / "a")) == 2  # the parent's and its child's
    p = tool("info", str(tmp_path / "a"))
    assert p.returncode == 0 and "warning" not in p.stderr, p.stderr
    p = tool("info", str(tmp_path))
    assert re.search(r"warning: rank 0 was written by two processes that are not parent and "
                     r"child \(\S+:\d+ and \S+:\d+\): files of more than one run\?", p.stderr), \
        p.stderr


def test_python_multiprocessing_spawn_children_are_traced(tmp_path):
    script = tmp_path / "spawn.py"
    script.write_text(SPAWN.format(shim=str(ROOT / "python_shim")))
    p = run([PYTHON, script], env=traced_env(tmp_path / "o"), timeout=120)
    assert p.returncode == 0, p.stderr
    nworkers = int(p.stdout)
    files = ctr_files(tmp_path / "o")
    seen = {}
    for i, f in enumerate(files):
        d = convert([f], tmp_path / f"{i}.json")
        for e in d["traceEvents"]:
            if e.get("ph") == "X":
                seen.setdefault(e["name"], set()).add(f.name)
    assert seen["parent"] and len(seen["parent"]) == 1
    children = set().union(*(seen[f"child {i}"] for i in range(6)))
    assert len(children) == nworkers and not (children & seen["parent"])
    total = sum(len([e for e in convert([f], tmp_path / "x.json")["traceEvents"]
                     if e.get("name", "").startswith("child ") and e.get("ph") == "X"])
                for f in files)
    assert total == 30


LAUNCHER = """
import os, subprocess, sys
procs = []
for r in range(4):
    env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r % 2), WORLD_SIZE="4",
               LOCAL_WORLD_SIZE="2", TORCHELASTIC_RUN_ID="job42",
               SLURM_PROCID="7", SLURM_NTASKS="2")
    procs.append(subprocess.Popen([sys.argv[1], "5"], env=env))
sys.exit(max(p.wait() for p in procs))
"""


def test_torchrun_like_launcher(tmp_path):
    script = tmp_path / "launch.py"
    script.write_text(LAUNCHER)
    env = launcher_env()
    p = run([TOOL, "run", "-o", f"{tmp_path}/o/r%r-l%l-w%w.ctr", "--", PYTHON, script,
             PROGS / "demo_train"], env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    names = sorted(f.name for f in ctr_files(tmp_path / "o"))
    # The launcher itself records nothing and writes nothing; each worker
    # took its rank from RANK (torchrun), not from the srun variables.
    assert names == ["r0-l0-w4.ctr", "r1-l1-w4.ctr", "r2-l0-w4.ctr", "r3-l1-w4.ctr"]
    out = tool("info", tmp_path / "o").stdout
    assert "missing" not in out
    assert "from RANK" in tool("info", tmp_path / "o" / "r3-l1-w4.ctr").stdout
