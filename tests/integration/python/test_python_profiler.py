# SPDX-License-Identifier: MIT
"""torch.profiler's habits in the cuptrace package: cuptrace.profile's steps
named as torch.profiler names them, tensorboard_trace_handler,
export_chrome_trace and key_averages. Runs under the torch of the Python the
tests use (pyshim.py: Debian's 1.13, or PyPI's 2.x under CT_TEST_PYTHON or
an installed package)."""
import gzip
import json
import re
import socket
from pathlib import Path

import pytest

from conftest import ROOT, SAN, base_env, convert, ctr_files, run
from pyshim import env_for, program, python, user_names

pytest.importorskip("torch")

TORCH_BUILD = ROOT / "python_shim" / "cuptrace" / "_torchbuild.py"

# The same loop under cuptrace.profile and, where that torch's profiler
# takes the schedule (1.13's fails on warmup=0), under torch.profiler: the
# steps each saved window holds, by number. One profile per process: the
# steps are the process's (a second profile counts on from the first).
STEPS = """
import json, os, sys, tempfile, warnings
import torch, torch.profiler as tp
import cuptrace
warnings.simplefilter("ignore")
args = json.loads(sys.argv[2])
N = 6
m = torch.nn.Linear(4, 4)

def loop(prof):
    for i in range(N):
        with cuptrace.range(f"iter {i}"):
            m(torch.ones(2, 4)).sum().backward()
        prof.step()

def torch_steps():
    got = []
    def ready(p):
        f = tempfile.mktemp(suffix=".json")
        p.export_chrome_trace(f)
        got.append(sorted({int(e["name"].split("#")[1]) for e in json.load(open(f))["traceEvents"]
                           if e.get("name", "").startswith("ProfilerStep#")}))
    try:
        with tp.profile(activities=[tp.ProfilerActivity.CPU], schedule=tp.schedule(**args),
                        on_trace_ready=ready) as prof:
            loop(prof)
    except Exception:  # noqa: BLE001 - that torch's profiler cannot run it
        return None
    return got

sched = cuptrace.schedule(**args) if args else None
with cuptrace.profile(schedule=sched, output=sys.argv[1] + "/%p.ctr") as prof:
    loop(prof)
print(json.dumps(dict(paths=prof.paths, windows=prof.windows,
                      torch=torch_steps() if args else None)))
"""

# A schedule, and the first step of each window it saves.
SCHEDULES = {"none": (None, [0]),
             "back-to-back": (dict(wait=0, warmup=0, active=2, repeat=3), [0, 2, 4]),
             "skip-and-wait": (dict(skip_first=1, wait=1, warmup=0, active=1, repeat=2), [2, 4])}


# torch.profiler throws C++ exceptions inside torch; under ASan (its runtime
# preloaded before Python, libstdc++ loaded later by torch) ASan's
# __cxa_throw interceptor finds no real __cxa_throw and aborts the process.
CXX_THROW_UNDER_ASAN = pytest.mark.skipif(
    "address" in SAN, reason="ASan's __cxa_throw interceptor aborts on torch.profiler's C++ "
    "exceptions (libstdc++ loaded after the ASan runtime)")


@CXX_THROW_UNDER_ASAN
@pytest.mark.parametrize("schedule", SCHEDULES)
def test_profile_names_every_step_as_torch_profiler_does(tmp_path, schedule):
    """Iteration i is ProfilerStep#i in the window that records it, the
    window's first step included: step 0 of a profile without schedule or
    whose schedule records from step 0, and the first step of a window that
    opens right where the one before closed (both had no slice: a step's
    slice began at the next step's mark). Where torch.profiler runs the
    schedule too (torch 2.x), its windows hold the same steps (but the
    empty one it opens at its last step() and closes at stop())."""
    args, firsts = SCHEDULES[schedule]
    p = run([python(), "-c", STEPS, tmp_path / "o", json.dumps(args)], env=env_for(base_env()),
            timeout=300)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert all(r["paths"]), r
    steps, iters = [], []
    for path in r["paths"]:
        names = user_names(convert([path], tmp_path / (Path(path).stem + ".json")))
        steps.append(sorted(int(n.split("#")[1]) for n in names if n.startswith("ProfilerStep#")))
        iters.append(sorted(int(n.split()[1]) for n in names if n.startswith("iter ")))
    assert steps == iters, (steps, iters)
    assert iters == [list(range(lo, min(hi, 5) + 1)) for lo, hi in r["windows"]], r
    assert [lo for lo, hi in r["windows"]] == firsts, r
    if r["torch"] is not None:
        assert [[s for s in w if s < 6] for w in r["torch"]] == steps, r["torch"]


# TensorBoard's profiler plugin (torch-tb-profiler) takes the files of a
# run's folder whose names match this (its consts.WORKER_PATTERN).
TB_NAME = re.compile(r"^(.*?)(\.\d+)?\.pt\.trace\.json(?:\.gz)?$")

TENSORBOARD = """
import json, os, sys
import torch, cuptrace
out = sys.argv[1]
handlers = [cuptrace.tensorboard_trace_handler(out + "/tb"),
            cuptrace.tensorboard_trace_handler(out + "/tbz", worker_name="rank0", use_gzip=True)]
written = []
def ready(path):
    written.append([h(path) for h in handlers])
m = torch.nn.Linear(4, 4)
with cuptrace.profile(schedule=cuptrace.schedule(wait=1, warmup=0, active=2, repeat=2),
                      on_trace_ready=ready, output=out + "/o/%p.ctr") as prof:
    for i in range(6):
        with cuptrace.range(f"iter {i}"):
            m(torch.ones(2, 4)).sum().backward()
        prof.step()
prof.export_chrome_trace(out + "/last.json")
print(json.dumps(dict(pid=os.getpid(), written=written, windows=prof.windows)))
"""

# Each file as TensorBoard's profiler plugin reads it: its steps.
TB_STEPS = """
import json, sys, tempfile
from torch_tb_profiler.profiler.data import RunProfileData
out = []
for path in sys.argv[1:]:
    data = RunProfileData.parse("w", 1, path, tempfile.mkdtemp())
    data.process()
    data.analyze()
    out.append(data.steps_names)
print(json.dumps(out))
"""


def steps_and_iters(doc):
    names = user_names(doc)
    return (sorted(int(n.split("#")[1]) for n in names if n.startswith("ProfilerStep#")),
            sorted(int(n.split()[1]) for n in names if n.startswith("iter ")))


def test_tensorboard_trace_handler_writes_what_tensorboard_opens(tmp_path):
    """cuptrace.tensorboard_trace_handler(dir) as on_trace_ready: each saved
    window in dir as WORKER.TIME.pt.trace.json (WORKER "HOST_PID" as
    torch's handler names it, or worker_name; .gz with use_gzip), holding
    that window's steps; the conversion is not traced itself (no file of
    its own beside the windows'); export_chrome_trace writes the last
    window. Where TensorBoard's profiler plugin imports (torch-tb-profiler),
    it reads each file's steps."""
    p = run([python(), "-c", TENSORBOARD, tmp_path], env=env_for(base_env()), timeout=300)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["windows"] == [[1, 2], [4, 5]]
    assert len(ctr_files(tmp_path / "o")) == 2
    plain = [Path(w[0]) for w in r["written"]]
    gz = [Path(w[1]) for w in r["written"]]
    assert sorted(plain) == sorted((tmp_path / "tb").iterdir())
    assert sorted(gz) == sorted((tmp_path / "tbz").iterdir())
    for files, worker in ((plain, f"{socket.gethostname()}_{r['pid']}"), (gz, "rank0")):
        names = [TB_NAME.match(f.name) for f in files]
        assert all(n and n[1] == worker and n[2] for n in names), files
        assert int(names[0][2][1:]) < int(names[1][2][1:])
    for f, g, (lo, hi) in zip(plain, gz, r["windows"]):
        doc = json.loads(f.read_text())
        assert steps_and_iters(doc) == (list(range(lo, hi + 1)),) * 2
        assert json.loads(gzip.decompress(g.read_bytes())) == doc
    assert json.loads((tmp_path / "last.json").read_text()) == json.loads(plain[1].read_text())
    tb = run([python(), "-c", "import torch_tb_profiler"], env=env_for(base_env()))
    if tb.returncode != 0:
        pytest.skip("TensorBoard's profiler plugin (torch-tb-profiler) does not import here: "
                    "the files are not read by it")
    p = run([python(), "-c", TB_STEPS, *plain], env=env_for(base_env()), timeout=300)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == [[str(s) for s in range(lo, hi + 1)]
                                    for lo, hi in r["windows"]]


# `cuptrace stats --report torch_op_sum --format json` as the report writes
# it: one object of tables by title, typed numbers, null for what is not
# known (no GPU work), Input Dims with --by shape.
OP_SUM = {"torch_op_sum: PyTorch operators by input shapes": [
    {"Self CPU (%)": 60.0, "Self CPU (ns)": 6000, "CPU Total (ns)": 9000, "CPU Avg (ns)": 3000,
     "Self GPU (%)": None, "Self GPU (ns)": None, "GPU Total (ns)": None, "GPU Avg (ns)": None,
     "Calls": 3, "Input Dims": "[[2, 4], [4, 4], [4]]", "Name": "aten::linear"},
    {"Self CPU (%)": 40.0, "Self CPU (ns)": 4000, "CPU Total (ns)": 4000, "CPU Avg (ns)": 400,
     "Self GPU (%)": 100.0, "Self GPU (ns)": 2500000, "GPU Total (ns)": 2500000,
     "GPU Avg (ns)": 250000, "Calls": 10, "Input Dims": "[[2, 4]]", "Name": "aten::sum"}]}

ROWS = """
import json, sys
from cuptrace import _export
rows = _export.op_rows(sys.argv[1])
lin, s = rows
out = dict(n=len(rows), lin=[lin.name, lin.calls, lin.self_cpu_ns, lin.cpu_total_ns, lin.avg_ns,
                         lin.gpu_ns, lin.input_shapes, lin.key, lin.count, lin.cpu_time_total,
                         lin.self_cpu_time_total, lin.cpu_time, lin.device_time_total],
           sum=[s.gpu_ns, s.self_gpu_ns, s.gpu_avg_ns, s.cuda_time_total],
           table=rows.table(), by_gpu=rows.table(sort_by="cuda_time_total", row_limit=1),
           by_calls=rows.table(sort_by="calls"))
try:
    rows.table(sort_by="flops")
except ValueError as e:
    out["bad"] = str(e)
try:
    _export.op_rows(json.dumps({"steps: step duration per rank": []}))
except RuntimeError as e:
    out["none"] = str(e)
print(json.dumps(out))
"""


def test_key_averages_rows_and_table():
    """prof.key_averages()'s rows from the torch_op_sum report's JSON: each
    column as an attribute, torch's names for them too (microseconds), no
    GPU figure as None, and torch's table(sort_by=..., row_limit=...)."""
    p = run([python(), "-c", ROWS, json.dumps(OP_SUM)], env=env_for(base_env()), timeout=120)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["n"] == 2
    assert r["lin"] == ["aten::linear", 3, 6000, 9000, 3000, None, "[[2, 4], [4, 4], [4]]",
                        "aten::linear", 3, 9.0, 6.0, 3.0, None]
    assert r["sum"] == [2500000, 2500000, 250000, 2500.0]
    head, rule, first, second = r["table"].splitlines()
    assert head.split()[:3] == ["Name", "Input", "Dims"] and set(rule) <= {"-", " "}
    assert first.startswith("aten::linear") and "9.000 us" in first and first.endswith("-")
    assert second.startswith("aten::sum") and second.endswith("2.500 ms")
    assert [l.split()[0] for l in r["by_gpu"].splitlines()[2:]] == ["aten::sum"]
    assert [l.split()[0] for l in r["by_calls"].splitlines()[2:]] == ["aten::sum", "aten::linear"]
    assert "sort_by='flops'" in r["bad"] and "cuda_time_total" in r["bad"]
    assert "no torch_op_sum table" in r["none"]


KEY_AVERAGES = """
import json, sys
import torch, cuptrace
m = torch.nn.Linear(4, 4)
with cuptrace.profile(schedule=cuptrace.schedule(wait=1, warmup=0, active=2, repeat=1)) as prof:
    for i in range(4):
        m(torch.ones(2, 4)).sum().backward()
        prof.step()
try:
    rows = prof.key_averages()
except RuntimeError as e:
    print(json.dumps(dict(error=str(e))))
    sys.exit(0)
shapes = prof.key_averages(group_by_input_shape=True)
print(json.dumps(dict(rows=[[r.name, r.calls, r.self_cpu_ns, r.cpu_total_ns, r.avg_ns]
                            for r in rows],
                      shapes=[[r.name, r.input_shapes] for r in shapes], table=rows.table())))
"""


def test_key_averages_of_a_window(tmp_path):
    """prof.key_averages() on the window just saved: the operators the torch
    source recorded in it (aten::linear once an iteration, two iterations),
    CPU times that add up, input shapes by shape. The package's operator
    observer (cuptrace._torchops, installed as torch is imported) records
    them; only where it cannot be had for this torch (no C++ headers) does
    the test say it is skipped."""
    if run([python(), TORCH_BUILD, "--check"], env=env_for(base_env()),
           timeout=120).returncode != 0:
        pytest.skip(f"no torch C++ headers for {python()}: no operator observer to record "
                    "what key_averages reports")
    p = run([program(), "run", "-t", "nvtx,torch", "--torch", "shapes", "--capture", "api",
             "--capture-repeat", "0", "-o", f"{tmp_path}/o/%p.ctr", "--", python(), "-c",
             KEY_AVERAGES], env=env_for(base_env()), timeout=300)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout.splitlines()[-1])
    assert "error" not in r, r["error"]
    assert r["rows"], p.stderr
    rows = {name: rest for name, *rest in r["rows"]}
    calls, self_cpu, total, avg = rows["aten::linear"]
    assert calls == 2 and 0 <= self_cpu <= total and avg == total // calls, rows
    assert "aten::linear" in r["table"]
    assert any(name == "aten::linear" and dims for name, dims in r["shapes"]), r["shapes"]
