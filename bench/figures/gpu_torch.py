# SPDX-License-Identifier: MIT
"""Benchmark on a real GPU (skipped without PyTorch on CUDA): a training
step of a small launch-bound model (16 x Linear(1024)+ReLU, batch 256, SGD)
untraced, traced by `cuptrace run` with its default sources and with
fewer (CUPTRACE_TRACE), and under torch.profiler (Kineto) with CUDA
activity only and with CPU + CUDA (its common use), in the same rounds:
median step time of 200 steps per run, median of RUNS runs, and the
change against untraced. Information only: no target is set on a
real GPU. GPU_PYTHON picks the interpreter (default python3)."""
import os
import shutil
import subprocess

from benchlib import RUNS, TOOL, median, plain_env, report, run, skip, spread, tmpdir

PY = os.environ.get("GPU_PYTHON", "python3")

CHILD = r"""
import sys, time, torch
mode = sys.argv[1]
torch.manual_seed(0)
m = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU())
                          for _ in range(16)]).to("cuda")
opt = torch.optim.SGD(m.parameters(), lr=1e-3)
x = torch.randn(256, 1024, device="cuda")
def step():
    opt.zero_grad()
    m(x).sum().backward()
    opt.step()
for _ in range(20):
    step()
torch.cuda.synchronize()
prof = None
if mode.startswith("kineto"):
    acts = [torch.profiler.ProfilerActivity.CUDA]
    if mode == "kineto_cpu":
        acts.append(torch.profiler.ProfilerActivity.CPU)
    prof = torch.profiler.profile(activities=acts)
    prof.__enter__()
t = []
for _ in range(200):
    t0 = time.perf_counter()
    step()
    torch.cuda.synchronize()
    t.append(time.perf_counter() - t0)
if prof:
    prof.__exit__(None, None, None)
t.sort()
print("step_us=%.1f" % (t[len(t) // 2] * 1e6))
"""

# name: CUPTRACE_TRACE for `cuptrace run`, or None (untraced, or Kineto)
MODES = {"untraced": None, "cuptrace (default sources)": "cuda,nvtx,nccl",
         "cuptrace without API records": "kernel,memcpy,sync,memory,nvtx",
         "cuptrace without syncs and memory": "kernel,memcpy,api,nvtx",
         "cuptrace kernels and copies only": "kernel,memcpy,nvtx",
         "kineto_cuda": None, "kineto_cpu": None}
LABEL = {"kineto_cuda": "torch.profiler, CUDA activity", "kineto_cpu": "torch.profiler, CPU + CUDA"}


def main():
    if subprocess.run([PY, "-c", "import torch; assert torch.cuda.is_available()"],
                      capture_output=True).returncode:
        skip("gpu", "no PyTorch with CUDA for %s" % PY)
        return
    d = tmpdir("gpu-torch")
    try:
        child = os.path.join(d, "child.py")
        with open(child, "w") as f:
            f.write(CHILD)
        res = {k: [] for k in MODES}
        for _ in range(RUNS):
            for mode, sources in MODES.items():
                env = plain_env()
                cmd = [PY, child, mode]
                if sources:
                    env["CUPTRACE_TRACE"] = sources
                    cmd = [TOOL, "run", "-o", os.path.join(d, "t", "%p.ctr"), "--"] + cmd
                res[mode].append(run(cmd, env)[0]["step_us"])
                shutil.rmtree(os.path.join(d, "t"), ignore_errors=True)
        base = median(res["untraced"])
        for mode, v in res.items():
            med = median(v)
            report("gpu", "torch MLP step: %s" % LABEL.get(mode, mode), "%.0f us (%+.1f %%)" %
                   (med, 100 * (med - base) / base), "(information)", None, spread(v),
                   "" if mode == "untraced" else "untraced %.0f us" % base)
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
