# SPDX-License-Identifier: MIT
"""A plain PyTorch training script (it knows nothing of cuptrace): a small
MLP on random data, with record_function scopes around the parts of each
step, a nested one, and an evaluation under no_grad.

    python torch_mlp.py [--profile OUT.json [--shapes]] [--steps N]

With --profile the whole run is inside torch.profiler (CPU), and every
event it recorded is written to OUT.json as torch gives them before its
own tidying (the raw list of torch.profiler's results, which its
key_averages and tables merge and filter): name, scope, sequence number,
thread ids and, with --shapes (record_shapes=True), input sizes and types.
tests/integration/python/test_python_torch_ops.py runs it under `cuptrace
run -t torch` and compares cuptrace's operators with that list."""
import argparse
import json

import torch
import torch.nn.functional as F
from torch.autograd.profiler import record_function


class MLP(torch.nn.Module):
    def __init__(self, d_in=20, hidden=64, classes=5):
        super().__init__()
        self.fc1 = torch.nn.Linear(d_in, hidden)
        self.norm = torch.nn.LayerNorm(hidden)
        self.fc2 = torch.nn.Linear(hidden, hidden)
        self.drop = torch.nn.Dropout(0.1)
        self.out = torch.nn.Linear(hidden, classes)

    def forward(self, x):
        h = F.gelu(self.norm(self.fc1(x)))
        h = self.drop(torch.relu(self.fc2(h))) + h
        return self.out(h)


def train(steps):
    torch.manual_seed(1234)
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    xs, ys = torch.randn(steps, 16, 20), torch.randint(0, 5, (steps, 16))
    for i in range(steps):
        with record_function("train_step"):
            with record_function("forward"):
                logits = model(xs[i])
                with record_function("loss"):
                    loss = F.cross_entropy(logits, ys[i])
            opt.zero_grad(set_to_none=False)
            with record_function("backward"):
                loss.backward()
            with record_function("optimizer"):
                opt.step()
    model.eval()
    with torch.no_grad(), record_function("evaluate"):
        acc = (model(xs[0]).argmax(1) == ys[0]).float().mean()
    return float(loss), float(acc)


def event(e, shapes):
    out = {"name": e.name(), "scope": int(e.scope()), "seq": int(e.sequence_nr()),
           "fwd_tid": int(e.fwd_thread_id()), "rf_tid": int(e.start_thread_id())}
    if shapes:
        out["shapes"] = [list(s) for s in e.shapes()]
        out["dtypes"] = list(e.dtypes())
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile")
    ap.add_argument("--shapes", action="store_true")
    ap.add_argument("--steps", type=int, default=4)
    a = ap.parse_args()
    if not a.profile:
        print(json.dumps(train(a.steps)))
        return
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU], record_shapes=a.shapes) as prof:
        result = train(a.steps)
    events = [event(e, a.shapes) for e in prof.profiler.kineto_results.events()
              if e.device_type() == torch.autograd.DeviceType.CPU]
    with open(a.profile, "w") as f:
        json.dump(events, f)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
