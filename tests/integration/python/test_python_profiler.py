# SPDX-License-Identifier: MIT
"""torch.profiler's habits in the cuptrace package: cuptrace.profile's steps
named as torch.profiler names them, tensorboard_trace_handler and
export_chrome_trace. Runs under the torch of the Python the
tests use (pyshim.py: Debian's 1.13, or PyPI's 2.x under CT_TEST_PYTHON or
an installed package)."""
import gzip
import json
import re
import socket
from pathlib import Path

import pytest

from conftest import base_env, convert, ctr_files, run
from pyshim import env_for, python, user_names

pytest.importorskip("torch")

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
