# SPDX-License-Identifier: MIT
"""The analyses of `cuptrace stats` (docs/ANALYSIS.md): breakdown, gpu_gaps,
launch, nvtx_gpu_proj_sum, cuda_gpu_mem_size_sum, on `sim_train known`,
whose GPU timings are chosen (see tests/cupti_sim/sim_train.c): per
iteration, on GPU 0 after a 20 ms anchor kernel ending at T0,
  stream A: gemm [T0, +100us], HtoD copy 1 MB [+100, +130]
  stream B: memset 2 MB [T0, +50], NCCL kernel [+50, +150]
  GPU 0 idle [+150, +2150] (a 2 ms kernel on GPU 1), layernorm [+2150, +2190]
so compute = 20.14 ms, communication = 100 us, memory = 80 us (union of
[T0, +50] and [+100, +130]), busy = 20.19 ms, overlap = [+50, +100] = 50 us
= 50 % of communication, exposed = 50 us, compute beside memory = [T0, +50]
(gemm, memset) = 50 us, communication beside memory = [+100, +130] (NCCL
kernel, copy) = 30 us, one 2 ms gap during which the
main thread waits in cudaStreamSynchronize. What depends on real time
(windows, latencies) is computed by hand from the simulator's truth log."""
import csv
import io
import json
import statistics
import subprocess

import pytest

from conftest import BUILD, ctr_files, read_truth, run, tool, traced_env

SIM_TRAIN = BUILD / "tests" / "cupti_sim" / "sim_train"
HARNESS_SIM = BUILD / "tests" / "cupti_sim" / "nccl_harness_sim"
ITER = 3
COMPUTE, COMM, MEMORY, BUSY, OVERLAP = 20_140_000, 100_000, 80_000, 20_190_000, 50_000
COMP_MEM, COMM_MEM = 50_000, 30_000

BREAKDOWN_COLS = ["Rank", "GPU", "Step", "Window (ns)", "Compute (ns)", "Communication (ns)",
                  "Memory (ns)", "Idle (ns)", "Compute (%)", "Communication (%)", "Memory (%)",
                  "Idle (%)", "Overlap (%)", "Exposed Comm (ns)", "Compute-Memory Overlap (ns)",
                  "Comm-Memory Overlap (ns)"]


@pytest.fixture(scope="module")
def known(tmp_path_factory):
    d = tmp_path_factory.mktemp("known")
    env = traced_env(d / "o", CUPTRACE_TRACE="cuda,memory,nvtx", SIM_STEPS=1,
                     CUPTI_SIM_TRUTH=d / "sim.jsonl")
    p = run([SIM_TRAIN, "known", ITER], env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(d / "o")
    return f, read_truth(d / "sim.jsonl")


def stats(f, *args, fmt="json"):
    p = tool("stats", "--format", fmt, *args, str(f))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout) if fmt == "json" else p.stdout


def table(doc, prefix):
    [key] = [k for k in doc if k.startswith(prefix)]
    return doc[key]


def gpu_work(truth, dev=None):
    return [r for r in truth if r["k"] in ("kernel", "memcpy", "memset")
            and (dev is None or r["dev"] == dev)]


def union(iv):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(iv):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0)


def intersection(a, b):
    """Length of (union of a) ∩ (union of b)."""
    return union(a) + union(b) - union(a + b)


def test_breakdown_whole_window_and_steps(known):
    f, truth = known
    doc = stats(f, "--report", "breakdown", "--by", "step")
    rows = table(doc, "breakdown: GPU time")
    assert all(list(r) == BREAKDOWN_COLS for r in rows)
    g0 = [r for r in rows if r["GPU"] == 0]
    steps = [r for r in g0 if r["Step"] is not None]
    [whole] = [r for r in g0 if r["Step"] is None]
    # steps marked by cuptrace_step() end at the next mark: the last stays open
    assert [r["Step"] for r in steps] == list(range(1, ITER))
    for r in steps:
        assert (r["Compute (ns)"], r["Communication (ns)"], r["Memory (ns)"]) == \
            (COMPUTE, COMM, MEMORY)
        assert r["Idle (ns)"] == r["Window (ns)"] - BUSY
        assert r["Overlap (%)"] == 50.0 and r["Exposed Comm (ns)"] == COMM - OVERLAP
        assert (r["Compute-Memory Overlap (ns)"], r["Comm-Memory Overlap (ns)"]) == \
            (COMP_MEM, COMM_MEM)
        assert r["Compute (%)"] == round(100 * COMPUTE / r["Window (ns)"], 1)
    work = gpu_work(truth, 0)
    window = max(r["end"] for r in work) - min(r["start"] for r in work)
    assert whole["Window (ns)"] == window
    assert whole["Compute (ns)"] == ITER * COMPUTE
    assert whole["Communication (ns)"] == ITER * COMM
    assert whole["Memory (ns)"] == ITER * MEMORY
    assert whole["Idle (ns)"] == window - union([(r["start"], r["end"]) for r in work])
    assert whole["Idle (ns)"] == window - ITER * BUSY
    assert whole["Exposed Comm (ns)"] == ITER * (COMM - OVERLAP)
    # the overlaps with copies and memsets, from the simulator's intervals
    iv = lambda rows: [(r["start"], r["end"]) for r in rows]
    kern = [r for r in work if r["k"] == "kernel"]
    comm = iv(r for r in kern if "nccl" in r["name"])
    compute = iv(r for r in kern if "nccl" not in r["name"])
    memory = iv(r for r in work if r["k"] != "kernel")
    assert whole["Compute-Memory Overlap (ns)"] == intersection(compute, memory) == ITER * COMP_MEM
    assert whole["Comm-Memory Overlap (ns)"] == intersection(comm, memory) == ITER * COMM_MEM
    assert whole["Rank"] == 0  # a process without a rank: numbered as every output does
    # GPU 1: only the 2 ms kernels, no communication: overlap unknown
    [g1] = [r for r in rows if r["GPU"] == 1 and r["Step"] is None]
    assert g1["Compute (ns)"] == ITER * 2_000_000 and g1["Overlap (%)"] is None
    assert g1["Compute-Memory Overlap (ns)"] == g1["Comm-Memory Overlap (ns)"] == 0
    summary = {r["Metric"]: r for r in table(doc, "breakdown: summary")}
    assert list(summary) == BREAKDOWN_COLS[3:]
    assert summary["Compute (ns)"]["Max"] == ITER * COMPUTE
    assert summary["Compute (ns)"]["Min"] == ITER * 2_000_000
    assert summary["Compute (ns)"]["Median"] == (ITER * COMPUTE + ITER * 2_000_000) / 2


def test_breakdown_columns_in_every_format(known):
    f, _ = known
    text = stats(f, "--report", "breakdown", fmt="csv")
    lines = text.splitlines()
    assert next(csv.reader(io.StringIO(lines[1]))) == BREAKDOWN_COLS
    text = stats(f, "--report", "breakdown", fmt="table")
    header = [c for c in text.splitlines()[2].split("  ") if c.strip()]
    assert [c.strip() for c in header] == BREAKDOWN_COLS


def test_breakdown_follows_steps(known):
    f, _ = known
    doc = stats(f, "--report", "breakdown", "--steps", "2-2")
    [whole] = [r for r in table(doc, "breakdown: GPU time") if r["GPU"] == 0]
    assert (whole["Compute (ns)"], whole["Communication (ns)"], whole["Memory (ns)"]) == \
        (COMPUTE, COMM, MEMORY)
    assert whole["Idle (ns)"] == 2_000_000


def idle_gaps(work, least):
    """Idle gaps of at least `least` ns between the union of the work, by hand."""
    iv = sorted((r["start"], r["end"]) for r in work)
    gaps, end = [], iv[0][1]
    for s, e in iv[1:]:
        if s - end >= least:
            gaps.append((end, s - end))
        end = max(end, e)
    return gaps


def test_gpu_gaps(known):
    f, truth = known
    doc = stats(f, "--report", "gpu_gaps")
    per = {r["GPU"]: r for r in table(doc, "gpu_gaps: GPU idle gaps")}
    for dev in (0, 1):
        gaps = [g for _, g in idle_gaps(gpu_work(truth, dev), 1_000_000)]
        assert per[dev]["Gaps"] == len(gaps) and per[dev]["Total (ns)"] == sum(gaps)
        assert per[dev]["Max (ns)"] == max(gaps)
    # the three 2 ms gaps by construction (between iterations the CPU may idle the GPU too,
    # more than 1 ms under a sanitizer)
    assert len([g for _, g in idle_gaps(gpu_work(truth, 0), 1_000_000) if g == 2_000_000]) == ITER
    longest = [r for r in table(doc, "gpu_gaps: the longest") if r["GPU"] == 0]
    [main_tid] = {r["tid"] for r in truth if r["k"] == "api"}
    known_gaps = [r for r in longest if r["Duration (ns)"] == 2_000_000]
    assert len(known_gaps) == ITER
    for r in known_gaps:
        assert r["CPU Range"].startswith("cudaStreamSynchronize")
        assert r["Range Kind"] == "CUDA" and r["Thread"] == main_tid
    doc2 = stats(f, "--report", "gpu_gaps", "--min-gap", "2000001ns")
    assert list(doc2) == list(doc)  # the JSON keys do not change with the option
    doc = doc2
    per = {r["GPU"]: r for r in table(doc, "gpu_gaps: GPU idle gaps")}
    gaps = idle_gaps(gpu_work(truth, 0), 2_000_001)
    assert per[0]["Gaps"] == len(gaps)
    assert len([r for r in table(doc, "gpu_gaps: the longest") if r["GPU"] == 0]) == len(gaps)


def test_launch(known):
    f, truth = known
    api = {r["corr"]: r for r in truth if r["k"] == "api"}
    by = {}
    for k in (r for r in truth if r["k"] == "kernel"):
        by.setdefault(k["name"], []).append(k)
    doc = stats(f, "--report", "launch")
    rows = {r["Name"]: r for r in table(doc, "launch")}
    assert len(rows) == len(by) == 5
    for raw, ks in by.items():
        [name] = [raw] if raw in rows else [n for n in rows if raw_name_matches(raw, n)]
        r = rows[name]
        lat = [k["start"] - api[k["corr"]]["end"] for k in ks]
        dur = [k["end"] - k["start"] for k in ks]
        call = [api[k["corr"]]["end"] - api[k["corr"]]["start"] for k in ks]
        assert r["Launches"] == len(ks) == ITER
        assert r["Med Launch Latency (ns)"] == statistics.median(lat)
        assert r["Med Kernel Dur (ns)"] == statistics.median(dur)
        assert r["Shorter Than Launch"] == sum(d < c for d, c in zip(dur, call))


def raw_name_matches(raw, demangled):
    stem = {"_Z10gemm_tiled": "void gemm_tiled<128>", "_Z9layernorm": "layernorm(",
            "_Z39ncclDevKernel_AllReduce": "ncclDevKernel_AllReduce"}
    return any(raw.startswith(k) and demangled.startswith(v) for k, v in stem.items())


def test_nvtx_gpu_proj_sum(known):
    f, truth = known
    doc = stats(f, "--report", "nvtx_gpu_proj_sum")
    rows = {r["Range"]: r for r in table(doc, "nvtx_gpu_proj_sum")}
    assert list(rows) == [":iteration"]  # host_wait launched nothing (nsys's "domain:name")
    r = rows[":iteration"]
    proj = 20_000_000 + 2_190_000  # anchor start to layernorm end, over both GPUs' work
    assert r["Range Instances"] == ITER and r["Style"] == "PushPop"
    assert r["Total Proj Time (ns)"] == ITER * proj
    assert r["Proj Med (ns)"] == r["Proj Min (ns)"] == r["Proj Max (ns)"] == proj
    assert r["Total GPU Ops"] == ITER * 7 and r["Avg GPU Ops"] == 7.0
    assert r["Avg Range Lvl"] == 0.0 and r["Avg Num Child"] is None
    ranges = stats(f, "--report", "nvtx_sum")
    [it] = [x for x in table(ranges, "nvtx_sum") if x["Range"] == ":iteration"]
    assert r["Total Range Time (ns)"] == it["Total Time (ns)"]


def test_cuda_gpu_mem_size_sum(known):
    f, _ = known
    doc = stats(f, "--report", "cuda_gpu_mem_size_sum")
    rows = {r["Operation"]: r for r in table(doc, "cuda_gpu_mem_size_sum")}
    assert rows["[CUDA memset]"] == {
        "Total (MB)": 6.0, "Count": ITER, "Avg (MB)": 2.0, "Med (MB)": 2.0, "Min (MB)": 2.0,
        "Max (MB)": 2.0, "StdDev (MB)": 0.0, "Operation": "[CUDA memset]"}
    assert rows["[CUDA memcpy Host-to-Device]"]["Total (MB)"] == 3.0
    assert list(rows) == ["[CUDA memset]", "[CUDA memcpy Host-to-Device]"]


def test_reports_without_data_print_an_empty_table(tmp_path):
    env = traced_env(tmp_path / "o", CUPTRACE_TRACE="nvtx")
    p = run([SIM_TRAIN, "known", 1], env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(tmp_path / "o")
    names = "breakdown,gpu_gaps,launch,nvtx_gpu_proj_sum,cuda_gpu_mem_size_sum"
    doc = stats(f, "--report", names)
    assert doc and all(v == [] for v in doc.values())
    text = stats(f, "--report", names, fmt="table")
    assert text.count("(no rows)") == len(doc) and "(no GPU kernels" in text
    # not asked for by name: the reports do not apply and say nothing
    assert "breakdown" not in stats(f, fmt="table")


def test_bad_options():
    for args in (["--by", "rank"], ["--min-gap", "soon"]):
        p = tool("stats", *args, "x.ctr")
        assert p.returncode == 2 and "cuptrace stats: --" in p.stderr


def test_a_process_without_a_rank_is_one_rank_everywhere(known, tmp_path):
    """The file of a process started without a launcher: every output gives
    it the same rank (0): breakdown, steps, the JSON's process, and the HTML
    report's header, which counts one rank and names no slowest rank of
    one."""
    f, _ = known
    doc = stats(f, "--report", "breakdown,steps")
    assert {r["Rank"] for r in table(doc, "breakdown: GPU time")} == {0}
    assert {r["Rank"] for r in table(doc, "steps: step duration per rank")} == {0}
    out = tmp_path / "t.json"
    p = tool("convert", "-o", str(out), str(f))
    assert p.returncode == 0, p.stderr
    trace = json.loads(out.read_text())
    assert trace["distributedInfo"]["rank"] == 0
    names = {e["args"]["name"] for e in trace["traceEvents"]
             if e.get("ph") == "M" and e["name"] == "process_name"}
    assert any(n.startswith("rank 0 (") for n in names)
    assert all(n.startswith("rank 0 ") for n in names), names
    page = tmp_path / "r.html"
    p = tool("report", "-o", str(page), str(f))
    assert p.returncode == 0, p.stderr
    html = page.read_text()
    assert '<dd data-h="ranks">1</dd>' in html
    assert 'data-h="slowest"' not in html  # one rank is the slowest of nothing
    assert "no GPU work of its own" not in html



@pytest.mark.parametrize("iters", [12, 15, 40])
def test_nvtx_gpu_proj_sum_whatever_the_file_order(tmp_path, iters):
    """Every forward and backward range of `sim_train train N` launches GPU
    work, and each is projected: its GPU ops are the launches (flows) that
    leave its thread inside it, as `cuptrace events` lists them. CUPTI's
    buffers may lie in the file before the thread's NVTX chunks: such calls
    wait for their thread's ranges rather than being dropped as launched
    from a thread without any (dropped, 15 iterations would project 0 of 15
    forward ranges, 12: all)."""
    env = traced_env(tmp_path / "o", CUPTRACE_TRACE="cuda,nvtx")
    p = run([SIM_TRAIN, "train", iters], env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(tmp_path / "o")
    p = tool("events", str(f))
    assert p.returncode == 0, p.stderr
    rows = [line.split("\t") for line in p.stdout.splitlines()[1:]]
    ranges = [(r[3], int(r[6]), int(r[7]), r[8]) for r in rows if r[1] == "slice" and r[2] == "nvtx"]
    flows = [(r[3], int(r[6])) for r in rows if r[1] == "flow" and r[2] == "launch"]
    want = {}
    for name in ("forward", "backward"):
        mine = [x for x in ranges if x[3] == name]
        ops = [sum(ft == t and s <= at <= e for ft, at in flows) for t, s, e, _ in mine]
        assert len(mine) == iters and all(ops), (name, ops)
        want[":" + name] = (iters, sum(ops))
    doc = stats(f, "--report", "nvtx_gpu_proj_sum")
    got = {r["Range"]: (r["Range Instances"], r["Total GPU Ops"])
           for r in table(doc, "nvtx_gpu_proj_sum") if r["Range"] in want}
    assert got == want


@pytest.fixture(scope="module", params=["one_rank", "four_ranks_steps"])
def late_stream(request, tmp_path_factory):
    """The NCCL harness on the simulated GPU, 20 iterations paced 2 ms: one
    CUPTI buffer holds most of the run, and the tracer writes its kernels
    stream by stream, so the pair communicator's stream (10) comes after
    the later kernels of streams 8 and 9. Two jobs: rank 0 of 2 alone,
    and 4 ranks marking steps."""
    world, ranks, extra = ((2, [0], {}) if request.param == "one_rank"
                           else (4, range(4), {"HARNESS_STEPS": 1}))
    d = tmp_path_factory.mktemp("late")
    procs = []
    for r in ranks:
        env = dict(traced_env(d / "o", CUPTRACE_TRACE="cuda,nvtx,nccl", RANK=r,
                              WORLD_SIZE=world, HARNESS_PACE_US=2000,
                              CUPTI_SIM_TRUTH=d / f"sim{r}.jsonl", **extra),
                   CUPTRACE_OUTPUT=f"{d}/o/r%r.ctr")
        procs.append(subprocess.Popen([str(HARNESS_SIM), "20"], env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    return [(r, d / "o" / f"r{r}.ctr", read_truth(d / f"sim{r}.jsonl")) for r in ranks]


def clip(iv, a, b):
    return [(max(s, a), min(e, b)) for s, e in iv if min(e, b) > max(s, a)]


def expect_breakdown(row, comm, compute, a, b):
    """A breakdown row against the unions over [a, b] (no copies or memsets
    here: busy = communication or compute)."""
    comm, compute = clip(comm, a, b), clip(compute, a, b)
    busy = union(comm + compute)
    assert row["Window (ns)"] == b - a
    assert (row["Compute (ns)"], row["Communication (ns)"], row["Memory (ns)"]) == \
        (union(compute), union(comm), 0)
    assert row["Idle (ns)"] == b - a - busy
    assert row["Exposed Comm (ns)"] == busy - union(compute)
    overlap = union(comm) - (busy - union(compute))
    assert row["Overlap (%)"] == round(100 * overlap / union(comm), 1)
    assert row["Compute-Memory Overlap (ns)"] == row["Comm-Memory Overlap (ns)"] == 0


def test_breakdown_and_gaps_count_a_stream_that_comes_late(late_stream):
    """breakdown and gpu_gaps hold each kernel until every stream of its
    CUPTI buffer has come: the unions are those of the simulator's kernels
    (truth), whole window and per step, as in `cuptrace events`. A sweep
    that passed stream 10's kernels before they came would cut them: 18 of
    its 20 would not count (6,114,920 ns of communication for 6,294,920),
    and Idle and the gaps would grow by as much."""
    for rank, f, truth in late_stream:
        p = tool("events", str(f))
        assert p.returncode == 0, p.stderr
        rows = [x.split("\t") for x in p.stdout.splitlines()[1:]]
        kern = [(int(x[6]), int(x[7]), x[5], x[8]) for x in rows
                if x[1] == "slice" and x[2] == "kernel"]
        # the order that the sweep must wait for: kernels after later-starting ones
        late = [k for i, k in enumerate(kern) if any(o[0] > k[0] for o in kern[:i])]
        assert "stream 10" in {k[2] for k in late}, late
        work = [r for r in truth if r["k"] == "kernel"]
        assert len(work) == len(kern) == 220 and not gpu_work(truth, 1)
        assert sorted(e - s for s, e, _, _ in kern) == sorted(r["end"] - r["start"] for r in work)
        comm = [(r["start"], r["end"]) for r in work if "ncclDevKernel" in r["name"]]
        compute = [(r["start"], r["end"]) for r in work if "ncclDevKernel" not in r["name"]]
        lo, hi = min(r["start"] for r in work), max(r["end"] for r in work)
        doc = stats(f, "--report", "breakdown,gpu_gaps", "--by", "step")
        bd = table(doc, "breakdown: GPU time")
        [whole] = [r for r in bd if r["Step"] is None]
        assert whole["Rank"] == rank
        expect_breakdown(whole, comm, compute, lo, hi)
        # steps: on the timeline of `cuptrace events`, as its kernels
        steps = {int(x[8].split("#")[1]): (int(x[6]), int(x[7])) for x in rows
                 if x[1] == "slice" and x[2] == "step"}
        by_step = {r["Step"]: r for r in bd if r["Step"] is not None}
        assert sorted(by_step) == sorted(steps)
        assert len(steps) == (20 if len(late_stream) == 4 else 0)  # HARNESS_STEPS
        ecomm = [(s, e) for s, e, _, n in kern if n.startswith("ncclDevKernel")]
        ecomp = [(s, e) for s, e, _, n in kern if not n.startswith("ncclDevKernel")]
        for n, (a, b) in steps.items():
            expect_breakdown(by_step[n], ecomm, ecomp, a, b)
        [gaps] = table(doc, "gpu_gaps: GPU idle gaps")
        want = [g for _, g in idle_gaps(work, 1_000_000)]
        assert (gaps["Gaps"], gaps["Total (ns)"], gaps["Max (ns)"]) == \
            (len(want), sum(want), max(want))
        longest = sorted((r["Duration (ns)"] for r in table(doc, "gpu_gaps: the longest")),
                         reverse=True)
        assert longest == sorted(want, reverse=True)[:10]
        text = stats(f, "--report", "breakdown,gpu_gaps", fmt="csv")
        assert "not counted" not in text  # nothing came too late to count
