# SPDX-License-Identifier: MIT
"""`cuptrace stats --steps A-B` on the reports that are not NCCL's: NVTX
ranges, kernels, copies and CUDA calls that start between the start of
step A and the start of the step after B. Checked against the converted
trace of the same file (ProfilerStep#N slices give the step starts)."""
import json

import pytest

from conftest import BUILD, convert, ctr_files, run, tool, traced_env

SIM_TRAIN = BUILD / "tests" / "cupti_sim" / "sim_train"


@pytest.fixture(scope="module")
def stepped(tmp_path_factory):
    d = tmp_path_factory.mktemp("steps")
    env = traced_env(d / "o", CUPTRACE_TRACE="cuda,memory,nvtx", SIM_STEPS=1,
                     CUPTI_SIM_TRUTH=d / "sim.jsonl")
    p = run([SIM_TRAIN, "train", 12], env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(d / "o")
    return f, convert([f], d / "t.json")


def stats(f, *args):
    p = tool("stats", "--format", "json", *args, str(f))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def rows(doc, prefix):
    [key] = [k for k in doc if k.startswith(prefix)]
    return doc[key]


def us_to_ns(x):
    return round(x * 1000)


@pytest.mark.parametrize("lo,hi", [(3, 5), (4, 4), (1, 12), (10, 40)])
def test_steps_window_the_nvtx_gpu_and_api_reports(stepped, lo, hi):
    f, doc = stepped
    ev = doc["traceEvents"]
    starts = {int(e["name"].split("#")[1]): e["ts"] for e in ev
              if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")}
    # 12 steps began; the last is never closed, so it has no slice.
    assert sorted(starts) == list(range(1, 12))
    t0 = starts[lo]
    t1 = min([t for s, t in starts.items() if s > hi], default=float("inf"))

    def inside(e):
        return t0 <= e["ts"] < t1

    got = stats(f, "--steps", f"{lo}-{hi}")
    # NVTX: the "step i" ranges (pushed right after step i + 1 began) and steps.
    nv = {r["Range"]: r for r in rows(got, "nvtx_sum")}
    want_steps = [e for e in ev if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")
                  and inside(e)]
    # the steps themselves are the steps report's (not nvtx_sum rows, as in nsys)
    assert "ProfilerStep" not in nv and all(r["Style"] != "Step" for r in nv.values())
    [st] = rows(got, "steps: step duration")
    assert st["Steps"] == len(want_steps) == min(hi, 11) - lo + 1
    names = {f":step {s - 1}" for s in range(lo, min(hi, 12) + 1)}
    assert {k for k in nv if k.startswith(":step ")} == names
    # Kernels: instances and total time per name, from the trace.
    want = {}
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") == "kernel" and inside(e):
            n, t = want.get(e["name"], (0, 0))
            want[e["name"]] = (n + 1, t + us_to_ns(e["dur"]))
    kern = {r["Name"]: (r["Instances"], r["Total Time (ns)"]) for r in rows(got, "cuda_gpu_kern_sum")}
    assert kern == want and want
    # CUDA calls: as many as the trace has inside the window.
    calls = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")
                and inside(e))
    assert sum(r["Num Calls"] for r in rows(got, "cuda_api_sum")) == calls


def test_without_steps_everything_counts_and_an_absent_range_is_empty(stepped):
    f, doc = stepped
    everything = stats(f)
    kernels = sum(1 for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel")
    assert sum(r["Instances"] for r in rows(everything, "cuda_gpu_kern_sum")) == kernels
    every = ("nvtx_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_api_sum,nccl_sum,"
             "nccl_sizes,nccl_ranks")
    none = stats(f, "--steps", "50-60", "--report", every)
    assert none and all(not v for v in none.values())
    # and says why the tables are empty
    p = tool("stats", "--steps", "50-60", "--report", "nvtx_sum", str(f))
    assert p.returncode == 0 and p.stderr == (f"cuptrace stats: warning: --steps 50-60: {f} has "
                                              "no step in that range\n"), p.stderr
    assert tool("stats", "--steps", "3-5", "--report", "nvtx_sum", str(f)).stderr == ""


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_output_prefix_writes_a_file_per_table(stepped, tmp_path, fmt):
    """stats -o PREFIX (nsys stats --output): each table a file of its own,
    PREFIX_<report>[_k].<fmt>, that csv/json readers take as it is (no
    title or note lines: pandas.read_csv failed on them); the same cells as
    the tables on stdout."""
    import csv
    f, _ = stepped
    want = stats(f)
    p = tool("stats", "--format", fmt, "-o", tmp_path / "r", str(f))
    assert p.returncode == 0 and p.stdout == "", p.stderr
    wrote = [line.split("wrote ", 1)[1] for line in p.stderr.splitlines() if " wrote " in line]
    assert len(wrote) == len(want) and len(set(wrote)) == len(wrote), p.stderr
    assert f"{tmp_path}/r_nvtx_sum.{fmt}" in wrote and f"{tmp_path}/r_steps_2.{fmt}" in wrote
    for path, (title, rows) in zip(wrote, want.items()):
        assert path.startswith(f"{tmp_path}/r_{title.split(':')[0]}"), (path, title)
        text = open(path).read()
        if fmt == "json":
            assert json.loads(text) == rows, path
        else:
            got = list(csv.DictReader(text.splitlines()))
            assert not text.startswith("#") and len(got) == len(rows), path
            for g, w in zip(got, rows):
                assert list(g) == list(w), path
                for k, v in w.items():
                    assert (v is None and g[k] == "") or (isinstance(v, str) and g[k] == v) or \
                        float(g[k]) == v, (path, k, g[k], v)
    p = tool("stats", "-o", tmp_path / "no" / "such" / "r", str(f))
    # one line before anything is read, not one per table (18)
    assert p.returncode == 2 and p.stderr == (f"cuptrace stats: -o {tmp_path}/no/such/r: the "
                                              f"directory {tmp_path}/no/such does not exist\n")


@pytest.mark.parametrize("unit,label,div,places", [("usec", "us", 1000, 3), ("ms", "ms", 10**6, 3),
                                                   ("sec", "s", 10**9, 6)])
def test_timeunit_converts_every_time_column(stepped, unit, label, div, places):
    """--timeunit (nsys stats' option): every "(ns)" column of every table
    renamed to the unit and divided, rounded half up; other columns as
    they were."""
    from decimal import Decimal, ROUND_HALF_UP
    f, _ = stepped
    exact = dict(parse_float=Decimal, parse_int=Decimal)
    want = json.loads(tool("stats", "--format", "json", str(f)).stdout, **exact)
    p = tool("stats", "--format", "json", "--timeunit", unit, str(f))
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout, **exact)
    assert list(got) == list(want)
    q = Decimal(1).scaleb(-places)
    converted = 0
    for title, rows in want.items():
        assert len(got[title]) == len(rows), title
        for w, g in zip(rows, got[title]):
            assert len(g) == len(w), title
            for (k, v), (gk, gv) in zip(w.items(), g.items()):
                if not k.endswith(" (ns)"):
                    assert (gk, gv) == (k, v), (title, k)
                    continue
                assert gk == k[:-5] + f" ({label})", (title, gk)
                if v is None:
                    assert gv is None
                    continue
                assert gv == (v / div).quantize(q, rounding=ROUND_HALF_UP), (title, k, v, gv)
                converted += 1
    assert converted > 100
    bad = tool("stats", "--timeunit", "minutes", str(f))
    assert bad.returncode == 2 and "expected nsec, usec, msec or sec" in bad.stderr
