# SPDX-License-Identifier: MIT
"""The nccl_* reports from NCCL_DEBUG=INFO logs: lines as NCCL 2.18, 2.21
(with timestamps), 2.28 and RCCL print them, one file per rank or all ranks
in one file, with cut, garbled and foreign lines in between."""
import json
import random

import pytest

from conftest import tool

# (operation, count, datatype number, root) as every rank calls them.
CALLS = [
    ("AllReduce", 262144, 7, 0), ("AllReduce", 262144, 7, 0),
    ("AllGather", 1024, 9, 0), ("ReduceScatter", 16384, 6, 0),
    ("Broadcast", 70000, 0, 0), ("Reduce", 10, 8, 1),
    ("Send", 4194304, 7, None), ("Recv", 4194304, 7, None),
    ("AllReduce", 100, 11, 0), ("AllReduce", 5, 42, 0),
]
TYPES = {7: ("ncclFloat32", 4), 9: ("ncclBfloat16", 2), 6: ("ncclFloat16", 2), 0: ("ncclInt8", 1),
         8: ("ncclFloat64", 8), 11: ("ncclFloat8e5m2", 1), 42: ("datatype 42", 0)}
N = 4


def size(op, count, dt):
    b = count * TYPES[dt][1]
    return b * N if op in ("AllGather", "ReduceScatter") else b


def prefix(version, rank, pid, ts):
    host = "gpu-node1" if rank < 2 else "gpu-node2"
    base = f"{host}:{pid}:{pid + 7} [{rank % 2}]"
    if version == "2.21":
        return f"[2024-06-03 14:22:{ts:02d}] {base}"
    if version == "2.28":
        return f"[2025-10-01 09:00:{ts:02d}.123456] {base}"
    if version == "rccl":
        return f"{base} 1558545003174{ts:03d}"
    return base


def init_lines(version, rank, pid, comm):
    p = prefix(version, rank, pid, 0)
    if version == "2.18":
        return [f"{p} NCCL INFO comm {comm} rank {rank} nranks {N} cudaDev {rank % 2} busId 1b000 "
                "commId 0x8a7f1e2d3c4b5a69 - Init COMPLETE"]
    if version == "2.21":
        return [f"{p} NCCL INFO ncclCommInitRank comm {comm} rank {rank} nranks {N} cudaDev "
                f"{rank % 2} nvmlDev {rank % 2} busId 1c000 commId 0x8a7f1e2d3c4b5a69 - Init COMPLETE",
                f"{p} NCCL INFO comm {comm} rank {rank} nRanks {N} nNodes 2 localRanks 2 "
                f"localRank {rank % 2} MNNVL 0"]
    if version == "2.28":
        return [f"{p} NCCL INFO ncclCommInitRankConfig comm {comm} rank {rank} nranks {N} cudaDev "
                f"{rank % 2} nvmlDev {rank % 2} busId 1c000 commId 0x8a7f1e2d3c4b5a69 - Init COMPLETE",
                f"{p} NCCL INFO Init timings - ncclCommInitRankConfig: rank {rank} nranks {N} total "
                "0.51 (kernels 0.20, alloc 0.10, bootstrap 0.02, allgathers 0.01, topo 0.10, "
                "graphs 0.01, connections 0.06, rest 0.01)",
                # a split communicator of 2: not the process's rank
                f"{p} NCCL INFO ncclCommSplit comm 0x51 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId "
                "1c000 parent 0x52 splitCount 1 color 1 key 0 - Init COMPLETE"]
    return []  # RCCL run with NCCL_DEBUG_SUBSYS=COLL: no INIT lines


def coll_lines(version, rank, pid, comm, calls=CALLS, op0=0):
    """The lines of calls; opCount (and RCCL's task) from op0 on."""
    out = []
    for i, (op, count, dt, root) in enumerate(calls, op0):
        if root is None:  # send to the next rank, recv from the previous
            root = (rank + 1) % N if op == "Send" else (rank + N - 1) % N
        send = "(nil)" if op == "Recv" else "0x7f3c9e000000"
        recv = "(nil)" if op == "Send" else "0x7f3c9f000000"
        line = (f"{prefix(version, rank, pid, i % 60)} NCCL INFO {op}: opCount {i:x} "
                f"sendbuff {send} recvbuff {recv} count {count} datatype {dt} op 0 root {root} "
                f"comm {comm} [nranks={N}] stream 0x55e1c89f1a60")
        if version == "rccl":
            line += f" task {i} globalrank {rank}"
        out.append(line)
    return out


NOISE = [
    "NCCL version 2.28.9+cuda13.0",
    "gpu-node1:1:1 [0] NCCL INFO Channel 00/24 : 0 1 2 3",
    "gpu-node1:1:1 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1",
    "Epoch: [0][ 10/625]\tTime  1.425 ( 2.465)\tLoss 0.0000e+00",
    "gpu-node1:1:1 [0] NCCL INFO [Proxy Service] Device 0 CPU core 12",
    "",
]
BAD = [
    # cut by a crash, garbled by another process, junk numbers
    "gpu-node1:40321:40321 [0] NCCL INFO AllReduce: opCount 9 sendbuff 0x7f3c9e000000 recvbuff 0x7f3",
    "gpu-node1:40321:40321 [0] NCCL INFO AllReduce: opCount 9 sendbuff 0x1 recvbugpu-node2:1:1 [1] NC",
    "gpu-node1:40321:40321 [0] NCCL INFO Broadcast: opCount zz sendbuff 0x1 recvbuff 0x1 count 5 "
    "datatype 7 op 0 root 0 comm 0x1 [nranks=4] stream 0x1",
    "gpu-node1:40321:40321 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x1 count "
    "99999999999999999999999 datatype 7 op 0 root 0 comm 0x1 [nranks=4] stream 0x1",
]
VERSIONS = ["2.18", "2.21", "2.28", "rccl"]


def rank_lines(rank, version=None):
    version = version or VERSIONS[rank]
    pid, comm = 40321 + rank, f"0x55e1c8a4b{rank:03x}"
    return init_lines(version, rank, pid, comm) + coll_lines(version, rank, pid, comm)


def expected(calls=CALLS):
    """nccl_sum's (operation, datatype) -> (calls, bytes) of every rank
    making these calls."""
    s = {}
    for op, count, dt, root in calls:
        k = (op, TYPES[dt][0])
        c, b = s.get(k, (0, 0))
        s[k] = (c + N, b + N * size(op, count, dt))
    return s


def write(path, lines, bad=()):
    lines = list(lines)
    rnd = random.Random(str(path))
    for extra in list(NOISE) + list(bad):
        lines.insert(rnd.randrange(len(lines) + 1), extra)
    path.write_text("\n".join(lines) + "\n")


def stats(*args):
    p = tool("stats", "--format", "json", *map(str, args))
    return p, (json.loads(p.stdout) if p.returncode == 0 else None)


def table(doc, prefix):
    [k] = [k for k in doc if k.startswith(prefix)]
    return doc[k]


def check_reports(doc):
    rows = table(doc, "nccl_sum")
    got = {(r["Operation"], r["Datatype"]): (r["Calls"], r["Total Bytes"]) for r in rows}
    assert got == expected()
    for r in rows:  # logs carry no times
        assert r["Total Time (ns)"] is None and r["Algbw (GB/s)"] is None
    by_rank = table(doc, "nccl_sizes: calls per message size, by rank")
    assert [r["Rank"] for r in by_rank] == list(range(N))
    # per rank: 4 small (<64KB: 8192+80+100+0... ), see CALLS
    for r in by_rank:
        assert (r["<64KB"], r["64KB-1MB"], r["1MB-16MB"], r[">16MB"]) == (4, 2, 2, 2)
    ranks = table(doc, "nccl_ranks")
    assert {(r["Rank"], r["Operation"]) for r in ranks} == {
        (k, op) for k in range(N) for op, *_ in CALLS}
    send = [r for r in ranks if r["Operation"] == "Send"]
    assert all(r["Calls"] == 1 and r["Total Bytes"] == 16 * (1 << 20) for r in send)


def expected_calls(calls=CALLS, ranks=N):
    """nccl_calls' rows from what every rank called: (operation, datatype,
    message bytes, communicator size) -> calls."""
    rows = {}
    for op, count, dt, root in calls:
        k = (op, TYPES[dt][0], size(op, count, dt), N)
        rows[k] = rows.get(k, 0) + ranks
    return rows


def check_calls(doc, want):
    rows = table(doc, "nccl_calls")
    keys = [(r["Operation"], r["Datatype"], r["Message Bytes"], r["Comm Size"]) for r in rows]
    assert keys == sorted(want), keys  # one row each, by operation, datatype, size
    assert {k: r["Calls"] for k, r in zip(keys, rows)} == want
    for k, r in zip(keys, rows):
        assert r["Total Bytes"] == k[2] * r["Calls"]
        assert all(r[c] is None for c in ("Total Time (ns)", "Avg Time (ns)", "Min Time (ns)",
                                          "Max Time (ns)", "Algbw (GB/s)", "Busbw (GB/s)"))


def test_nccl_calls_lists_each_message_size(tmp_path):
    paths = []
    for r in range(N):
        p = tmp_path / f"nccl-{r}.txt"
        write(p, rank_lines(r), BAD if r == 1 else ())
        paths.append(p)
    p, doc = stats("--report", "nccl_calls", *paths)
    assert p.returncode == 0, p.stderr
    want = expected_calls()
    # the two 1 MiB AllReduces of every rank are one row; the 400-byte one another
    assert want[("AllReduce", "ncclFloat32", 1 << 20, N)] == 2 * N
    check_calls(doc, want)


def test_one_file_per_rank_in_four_formats(tmp_path):
    paths = []
    for r in range(N):
        p = tmp_path / f"nccl-{r}.txt"
        write(p, rank_lines(r), BAD if r == 1 else ())
        paths.append(p)
    p, doc = stats("--report", "nccl_sum,nccl_sizes,nccl_ranks", *paths)
    assert p.returncode == 0, p.stderr
    check_reports(doc)
    # Bad lines are counted, said once per file, and never fatal.
    warn = [l for l in p.stderr.splitlines() if "could not be parsed" in l]
    assert len(warn) == 1 and "nccl-1.txt: 4 NCCL collective lines" in warn[0]
    assert "note:" not in p.stderr  # every rank was known (RCCL: globalrank)


def test_all_ranks_in_one_file_and_directories(tmp_path):
    lines = [l for r in range(N) for l in rank_lines(r, "2.28")]
    init = [l for l in lines if "COMPLETE" in l or "timings" in l]
    rest = [l for l in lines if l not in init]
    random.Random(1).shuffle(rest)  # processes interleave
    d = tmp_path / "logs"
    d.mkdir()
    write(d / "job.out", init + rest)
    (d / "README").write_text("not a log\n")
    p, doc = stats("--report", "nccl_sum,nccl_sizes,nccl_ranks", d / "job.out")
    assert p.returncode == 0, p.stderr
    check_reports(doc)
    p2, doc2 = stats("--report", "nccl_sum,nccl_sizes,nccl_ranks", d)
    assert p2.returncode == 0, p2.stderr
    assert doc2 == doc


def test_ranks_without_init_lines_are_numbered(tmp_path):
    # NCCL_DEBUG_SUBSYS=COLL alone: no rank anywhere; files in rank order.
    paths = []
    for r in range(N):
        p = tmp_path / f"r{r}.log"
        p.write_text("\n".join(coll_lines("2.18", r, 500 + r, "0x1")) + "\n")
        paths.append(p)
    p, doc = stats("--report", "nccl_sizes,nccl_ranks", *paths)
    assert p.returncode == 0, p.stderr
    assert "note: 4 processes in the logs name no rank" in p.stderr
    assert [r["Rank"] for r in table(doc, "nccl_sizes: calls per message size, by rank")] == [0, 1, 2, 3]


def test_a_log_without_ranks_read_with_traces_gets_a_rank_of_its_own(tmp_path):
    """A log process that names no rank gets a rank that no traced file
    has either, not one counted among the log processes only (rank 0, which
    would add its calls to the traced rank 0's)."""
    from conftest import ctr_files, traced_env
    from test_nccl import WORLD, run_ranks
    out = tmp_path / "out"
    run_ranks(tmp_path, lambda r: dict(traced_env(out), CUPTRACE_OUTPUT=f"{out}/rank%r.ctr"))
    traces = [str(f) for f in ctr_files(out)]
    log = tmp_path / "other.log"
    log.write_text("\n".join(coll_lines("2.18", 0, 777, "0x1")) + "\n")
    p, alone = stats("--report", "nccl_ranks", *traces)
    p2, both = stats("--report", "nccl_ranks", *traces, log)
    assert p.returncode == 0 and p2.returncode == 0, p2.stderr
    rows = table(alone, "nccl_ranks")
    assert {r["Rank"] for r in rows} == set(range(WORLD))
    got = table(both, "nccl_ranks")
    assert [r for r in got if r["Rank"] < WORLD] == rows  # the traced ranks' rows unchanged
    assert {r["Rank"] for r in got if r["Rank"] >= WORLD} == {WORLD}
    assert sum(r["Calls"] for r in got if r["Rank"] == WORLD) == len(CALLS)
    assert "note: 1 process in the logs names no rank" in p2.stderr


def test_text_table_and_bad_uses(tmp_path):
    p1 = tmp_path / "a.log"
    write(p1, rank_lines(0))
    p = tool("stats", "--report", "nccl_sum", str(p1))
    assert p.returncode == 0
    assert "** nccl_sum" in p.stdout and "ncclFloat32" in p.stdout
    # --steps on a log without step marks: nothing to keep
    p = tool("stats", "--report", "nccl_sum", "--steps", "1-2", str(p1))
    assert p.returncode == 1 and "no line begins a step" in p.stderr, p.stderr
    assert "no input holds steps" in p.stderr and "** nccl_sum" not in p.stdout
    p = tool("stats", "--report", "nvtx_sum", str(p1))
    assert p.returncode == 2 and "nccl_" in p.stderr
    # no report named: only those that read logs (no empty trace tables)
    p = tool("stats", str(p1))
    assert p.returncode == 0 and "** nccl_sum" in p.stdout, p.stderr
    assert {t.split(":")[0] for t in p.stdout.split("** ")[1:]} <= {
        "nccl_sum", "nccl_sizes", "nccl_calls", "nccl_ranks", "nccl_skew", "nccl_hang"}, p.stdout
    other = tmp_path / "other.txt"
    other.write_text("hello\n")
    p = tool("stats", str(other))
    assert p.returncode == 1
    # Logs are not traces for the other commands.
    assert tool("info", str(p1)).returncode == 1
    assert tool("convert", "-o", str(tmp_path / "x.json"), str(p1)).returncode == 1


def test_garbage_never_crashes(tmp_path):
    rnd = random.Random(7)
    good = rank_lines(2)
    lines = []
    for l in good * 3:
        k = rnd.randrange(4)
        if k == 0:
            l = l[: rnd.randrange(len(l))]
        elif k == 1:
            i = rnd.randrange(len(l))
            l = l[:i] + chr(rnd.randrange(1, 255)) + l[i + 1:]
        lines.append(l)
    path = tmp_path / "junk.log"
    data = ("\n".join(lines)).encode("latin-1") + bytes(range(256)) + b"x" * 200000
    path.write_bytes(b"NCCL version 2.28.9\n" + data)
    p = tool("stats", "--report", "nccl_sum", str(path))
    assert p.returncode == 0, p.stderr


def test_the_log_of_a_traced_process_is_not_counted_twice(tmp_path):
    """NCCL_DEBUG logs of the traced job read with its traces: the traced
    processes' lines are left out (their traces hold the calls), the lines
    of a process without a trace still count."""
    import re
    from conftest import ctr_files, traced_env
    from test_nccl import WORLD, run_ranks
    out = tmp_path / "out"
    run_ranks(tmp_path, lambda r: dict(traced_env(out), CUPTRACE_OUTPUT=f"{out}/rank%r.ctr"))
    traces = [str(f) for f in ctr_files(out)]
    logs = tmp_path / "logs"
    logs.mkdir()
    for r, f in enumerate(sorted(traces)):
        head = tool("info", f).stdout
        host = re.search(r"^host:\s+(\S+)", head, re.M).group(1)
        pid = int(re.search(r"^pid:\s+(\d+)", head, re.M).group(1))
        lines = [re.sub(r"^gpu-node\d:\d+:", f"{host}:{pid}:", l) for l in rank_lines(r, "2.18")]
        (logs / f"nccl.{r}.log").write_text("\n".join(lines) + "\n")
    (logs / "untraced.log").write_text("\n".join(coll_lines("2.18", 0, 777, "0x1")) + "\n")
    p, alone = stats("--report", "nccl_ranks", *traces)
    p2, both = stats("--report", "nccl_ranks", *traces, logs)
    assert p.returncode == 0 and p2.returncode == 0, p2.stderr
    rows = table(alone, "nccl_ranks")
    got = table(both, "nccl_ranks")
    assert [r for r in got if r["Rank"] < WORLD] == rows  # not doubled
    assert sum(r["Calls"] for r in got if r["Rank"] >= WORLD) == len(CALLS)  # the untraced one
    notes = [l for l in p2.stderr.splitlines() if "left out" in l]
    assert len(notes) == WORLD and all(f"{len(CALLS)} NCCL collective lines left out" in l
                                       for l in notes), p2.stderr


def test_logs_beside_traces_do_not_stop_other_reports(tmp_path):
    """An NCCL_DEBUG_FILE written into the trace directory: reports that
    read no logs (nccl_hang, steps) leave the logs out with a note, rather
    than exit 2 ("only the nccl_* reports read NCCL logs"); --steps reads
    the log's own step marks, and a log without any gives no call."""
    from conftest import traced_env
    from test_nccl import WORLD, run_ranks
    out = tmp_path / "out"
    run_ranks(tmp_path, lambda r: dict(traced_env(out), CUPTRACE_OUTPUT=f"{out}/rank%r.ctr",
                                       HARNESS_STEPS="1"))
    write(out / "nccl.h.1.log", rank_lines(0, "2.18"))
    for args in (["--report", "nccl_hang"], ["--report", "steps"]):
        p, doc = stats(*args, out)
        assert p.returncode == 0 and doc, (args, p.stderr)
        assert "1 NCCL log (" in p.stderr and "left out" in p.stderr, (args, p.stderr)
    p, doc = stats("--steps", "0-1", "--report", "nccl_ranks", out)
    _, traces = stats("--steps", "0-1", "--report", "nccl_ranks", *sorted(out.glob("*.ctr")))
    assert p.returncode == 0 and doc == traces, p.stderr
    assert f"no line begins a step (the default step pattern); its {len(CALLS)} NCCL " \
        "collective lines are left out" in p.stderr, p.stderr
    # logs alone still say what is wrong
    alone = tmp_path / "alone"
    alone.mkdir()
    write(alone / "a.log", rank_lines(0, "2.18"))
    p, _ = stats("--report", "steps", alone)
    assert p.returncode == 2 and "only nccl_sum, nccl_sizes, nccl_calls and nccl_ranks read" in p.stderr


def test_a_log_given_twice_or_copied_counts_once(tmp_path):
    paths = []
    for r in range(N):
        p = tmp_path / f"nccl-{r}.txt"
        write(p, rank_lines(r))
        paths.append(p)
    (tmp_path / "copy.txt").write_bytes(paths[1].read_bytes())
    p, doc = stats("--report", "nccl_sum,nccl_sizes,nccl_ranks", *paths, paths[1],
                   tmp_path / "copy.txt")
    assert p.returncode == 0, p.stderr
    check_reports(doc)  # the four ranks' calls, once each
    assert "duplicate of" in p.stderr and "read from an earlier log already" in p.stderr, p.stderr


# --steps on logs: each rank runs ITERS iterations of these calls, one
# AllReduce's size changing with the iteration (so that nccl_calls tells
# the iterations apart).
ITERS = 8


def iter_calls(i):
    return CALLS + [("AllReduce", 1000 * (i + 1), 7, 0)]


# What training scripts print after iteration n (counted from 1): the calls
# after it are those of step n (counted from 0), as cuptrace_step() at each
# optimizer step numbers them.
MARKS = [
    lambda rank, n: f" [2024-06-03 14:22:02] iteration {n:8d}/{ITERS:8d} | consumed samples: "
                    f"{64 * n:12d} | elapsed time per iteration (ms): 812.4 |",  # Megatron-LM
    lambda rank, n: f"[rank{rank}]:[titan] 2025-01-01 00:00:00,000 - root - INFO - step: {n:2d}  "
                    "loss: 10.9  memory: 31.2GiB(39.4%)",  # torchtitan
    lambda rank, n: f"[2025-10-01 09:00:00,000] [INFO] [logging.py:96:log_dist] [Rank {rank}] "
                    f"step={n}, skipped=0, lr=[0.0001], mom=[(0.9, 0.95)]",  # DeepSpeed
    lambda rank, n: f"iter {n}: loss 4.2123, time 51.20ms, mfu 38.5%",  # nanoGPT
]


def iterations(rank, version, mark=None, op0=0):
    """A rank's log: INIT lines, then each iteration's calls followed by
    its mark (MARKS[rank] unless mark is given; None from mark: no line)."""
    pid, comm = 40321 + rank, f"0x55e1c8a4b{rank:03x}"
    lines = init_lines(version, rank, pid, comm)
    for i in range(ITERS):
        calls = iter_calls(i)
        lines += coll_lines(version, rank, pid, comm, calls, op0 + i * len(calls))
        m = (mark or MARKS[rank])(rank, i + 1)
        if m is not None:
            lines.append(m)
    return lines


def kept(lo, hi, ranks=N):
    """The calls of steps lo..hi: iteration i is step i."""
    return [c for i in range(ITERS) if lo <= i <= hi for c in iter_calls(i)]


def check_steps(doc, calls):
    got = {(r["Operation"], r["Datatype"]): (r["Calls"], r["Total Bytes"])
           for r in table(doc, "nccl_sum")}
    assert got == expected(calls)
    check_calls(doc, expected_calls(calls))
    ranks = {r["Rank"]: 0 for r in table(doc, "nccl_ranks")}
    for r in table(doc, "nccl_ranks"):
        ranks[r["Rank"]] += r["Calls"]
    assert ranks == {k: len(calls) for k in range(N)}


@pytest.mark.parametrize("steps,lo,hi", [("3-5", 3, 5), ("0", 0, 0), ("6-100", 6, 7)])
def test_steps_of_logs_from_the_lines_training_loops_print(tmp_path, steps, lo, hi):
    """One log per rank, NCCL 2.18, 2.21, 2.28 and RCCL lines, each rank's
    script printing its iterations as another framework does, with noise
    and bad lines in between: --steps keeps the calls of those iterations."""
    paths = []
    for r in range(N):
        p = tmp_path / f"rank{r}.out"
        write(p, iterations(r, VERSIONS[r]), BAD if r == 1 else ())
        paths.append(p)
    p, doc = stats("--report", "nccl_sum,nccl_calls,nccl_ranks", "--steps", steps, "-v", *paths)
    assert p.returncode == 0, p.stderr
    check_steps(doc, kept(lo, hi))
    colls = ITERS * len(iter_calls(0))
    for path in paths:
        assert (f"{path}: {ITERS} step marks; {len(kept(lo, hi))} of {colls} NCCL collective "
                f"lines in steps {steps}") in p.stderr, p.stderr


def test_steps_of_one_log_of_every_rank_from_a_pattern_of_the_users(tmp_path):
    """All ranks in one file (NCCL 2.28), processes interleaved inside each
    iteration; the script prints one line before each iteration, without a
    number: --log-step-pattern marks are counted, the first begins step 1,
    the lines before it (a warm-up call of each rank) are step 0."""
    warm = [("AllReduce", 1, 7, 0)]
    lines = [l for r in range(N) for l in init_lines("2.28", r, 40321 + r, f"0x{r + 1:x}")]
    lines += [l for r in range(N) for l in coll_lines("2.28", r, 40321 + r, f"0x{r + 1:x}", warm)]
    rnd = random.Random(3)
    for i in range(ITERS):
        lines.append(f"=== begin batch, lr 0.0001, {1000 + i} tokens/s")
        part = [l for r in range(N) for l in coll_lines("2.28", r, 40321 + r, f"0x{r + 1:x}",
                                                        iter_calls(i), 1 + i * 11)]
        rnd.shuffle(part)
        lines += part
    path = tmp_path / "job.out"
    write(path, lines)
    pattern = "^=== begin batch"
    p, doc = stats("--report", "nccl_sum,nccl_calls,nccl_ranks", "--steps", "2-3",
                   "--log-step-pattern", pattern, path)
    assert p.returncode == 0, p.stderr
    check_steps(doc, [c for i in (1, 2) for c in iter_calls(i)])  # iterations 1, 2: steps 2, 3
    p, doc = stats("--report", "nccl_sum,nccl_calls,nccl_ranks", "--steps", "0",
                   "--log-step-pattern", pattern, path)
    assert p.returncode == 0, p.stderr
    check_steps(doc, warm)
    # the default pattern finds no iteration there: nothing to keep
    p, _ = stats("--report", "nccl_sum", "--steps", "0-100", path)
    assert p.returncode == 1 and "no line begins a step (the default step pattern)" in p.stderr


def test_steps_from_an_nccl_line_mark_each_process_alone(tmp_path):
    """No script lines at all (NCCL_DEBUG_FILE): a pattern that matches the
    call each rank makes first in an iteration (a Broadcast of count 1)
    begins that rank's step only, so the ranks' lines may interleave
    anywhere; the number comes from the pattern's group (the task RCCL
    logs, here the iteration)."""
    first = ("Broadcast", 1, 0, 0)
    per_rank = []
    for r in range(N):
        pid, comm = 40321 + r, f"0x{r + 1:x}"
        out = init_lines("2.21", r, pid, comm)
        for i in range(ITERS):
            calls = [first] + iter_calls(i)
            out += coll_lines("2.21", r, pid, comm, calls, i * len(calls))
        per_rank.append(out)
    # a random merge of the ranks' lines, each rank's in its order
    rnd = random.Random(5)
    lines, heads = [], [0] * N
    while any(heads[r] < len(per_rank[r]) for r in range(N)):
        r = rnd.choice([r for r in range(N) if heads[r] < len(per_rank[r])])
        lines.append(per_rank[r][heads[r]])
        heads[r] += 1
    path = tmp_path / "nccl.log"
    write(path, lines)
    p, doc = stats("--report", "nccl_sum,nccl_calls,nccl_ranks", "--steps", "4-6",
                   "--log-step-pattern", r"Broadcast: opCount [0-9a-f]+ .* count 1 ", path)
    assert p.returncode == 0, p.stderr
    # the i-th Broadcast (from 0) begins step i + 1
    check_steps(doc, [c for i in (3, 4, 5) for c in [first] + iter_calls(i)])


def test_steps_of_logs_usage(tmp_path):
    path = tmp_path / "rank0.out"
    write(path, iterations(0, "2.18"))
    p = tool("stats", "--log-step-pattern", "step", str(path))
    assert p.returncode == 2 and "--log-step-pattern needs --steps" in p.stderr
    for bad in ("step (", ""):
        p = tool("stats", "--steps", "1", "--log-step-pattern", bad, str(path))
        assert p.returncode == 2 and "--log-step-pattern" in p.stderr, p.stderr
    # marks, but none of them in the range: empty tables, said why
    p, doc = stats("--report", "nccl_sum", "--steps", "50-60", path)
    assert p.returncode == 0 and table(doc, "nccl_sum") == [], p.stderr
    assert f"none of its {ITERS * len(iter_calls(0))} NCCL collective lines is in steps 50-60 " \
        f"({ITERS} step marks)" in p.stderr, p.stderr
    # a log without marks beside one with: the other's calls alone
    other = tmp_path / "rank1.out"
    write(other, rank_lines(1, "2.21"))
    p, doc = stats("--report", "nccl_ranks", "--steps", "0-100", path, other)
    assert p.returncode == 0, p.stderr
    assert {r["Rank"] for r in table(doc, "nccl_ranks")} == {0}
    assert f"{other}: no line begins a step" in p.stderr
