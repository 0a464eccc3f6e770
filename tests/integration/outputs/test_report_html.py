# SPDX-License-Identifier: MIT
"""`cuptrace report`: one self-contained HTML page drawn from the tables of
`cuptrace stats`. A 4-rank job of the NCCL harness launching its kernels
on the CUPTI simulator (simulator only: no GPU; NCCL through the real
profiler-plugin ABI driven by tests/progs/nccl_harness.c), paced so that
rank 2 arrives LATE us late at every 10th collective and rank 1 marks its
odd steps STEP_LATE us late. The page must parse as HTML5, hold only
numbers that `cuptrace stats --format json` prints for the same inputs
(each table row and chart mark names the table row it shows), mark rank 2
as the slowest, reference nothing outside itself, and render in headless
Chromium with the network off, without console messages, not blank."""
import json
import re
import shutil
import subprocess
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import BUILD, ROOT, ctr_files, launcher_env, run, tool, traced_env

HARNESS_SIM = BUILD / "tests" / "cupti_sim" / "nccl_harness_sim"
WORLD, ITERS = 4, 12
# Long enough that a loaded machine waking a rank a few ms late cannot pass
# for the built-in delays (it did, at 6 and 4 ms, with load 8 on 2 cores).
PACE, LATE, EVERY, LATE_RANK = 15000, 12000, 10, 2
STEP_LATE, STEP_RANK = 8000, 1
REPORTS = "breakdown,steps,cuda_gpu_kern_sum,nvtx_sum,nccl_sum,nccl_sizes,nccl_skew,nccl_hang"


def run_job(d, world=WORLD, iters=ITERS, pace=PACE, late=True):
    t0 = time.clock_gettime_ns(time.CLOCK_REALTIME) + 1_500_000_000
    out = d / "out"
    procs = []
    for r in range(world):
        env = dict(traced_env(out), CUPTRACE_OUTPUT=f"{out}/rank%r.ctr",
                   CUPTRACE_TRACE="cuda,nvtx,nccl", CUPTRACE_STEP_RANGE="step", RANK=str(r),
                   WORLD_SIZE=str(world), HARNESS_PACE_US=str(pace), HARNESS_T0=str(t0))
        if late:
            env.update(HARNESS_LATE=f"{LATE_RANK}:{LATE}:{EVERY}",
                       HARNESS_STEP_LATE=f"{STEP_RANK}:{STEP_LATE}")
        procs.append(subprocess.Popen([str(HARNESS_SIM), str(iters)], env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    files = ctr_files(out)
    assert len(files) == world
    return out, files


class Page(HTMLParser):
    """The elements of the page as (tag, attrs, parent index) with their text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.el, self.stack, self.kids = [], [], {}

    def add(self, tag, attrs):
        parent = self.stack[-1] if self.stack else None
        self.el.append({"tag": tag, "a": dict(attrs), "parent": parent, "text": ""})
        self.kids.setdefault(parent, []).append(len(self.el) - 1)

    def handle_starttag(self, tag, attrs):
        self.add(tag, attrs)
        if tag not in ("meta", "br"):  # the void elements the page uses
            self.stack.append(len(self.el) - 1)

    def handle_startendtag(self, tag, attrs):
        self.add(tag, attrs)

    def handle_endtag(self, tag):
        assert self.stack and self.el[self.stack[-1]]["tag"] == tag, f"</{tag}> unbalanced"
        self.stack.pop()

    def handle_data(self, data):
        for i in self.stack:
            self.el[i]["text"] += data

    def up(self, i, attr):
        """The nearest element holding attr from element i upwards."""
        while i is not None and attr not in self.el[i]["a"]:
            i = self.el[i]["parent"]
        return None if i is None else self.el[i]

    def under(self, i, tag):
        """The elements named tag below element i, in order."""
        out, todo = [], list(reversed(self.kids.get(i, [])))
        while todo:
            k = todo.pop()
            if self.el[k]["tag"] == tag:
                out.append(k)
            todo.extend(reversed(self.kids.get(k, [])))
        return out


def parse(html):
    p = Page()
    p.feed(html)
    p.close()
    assert not p.stack, "unclosed elements"
    return p


def stats_exact(inputs, *args):
    """stats' JSON with every number kept as its exact text."""
    p = tool("stats", "--format", "json", "--by", "step,time", "--report", REPORTS, *args,
             *map(str, inputs))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout, parse_float=str, parse_int=str)


def as_text(v):
    return "n/a" if v is None else str(v)


def report(inputs, out, *args):
    p = tool("report", "-o", str(out), *args, *map(str, inputs))
    assert p.returncode == 0, p.stderr
    return out.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    out, files = run_job(d)
    html = report([out], d / "report.html")
    return d, out, files, html, parse(html), stats_exact([out])


def test_parses_as_html5(job):
    html = job[3]
    html5lib = pytest.importorskip("html5lib", reason="python3-html5lib is not installed "
                                   "(tests/install-deps.sh installs it)")
    parser = html5lib.HTMLParser(strict=True)
    parser.parse(html)  # raises on any HTML5 parse error
    assert html.startswith("<!DOCTYPE html>")


def shown(v):
    """A JSON cell as the page shows it: null empty; control characters
    and noncharacters, which HTML text cannot hold, as U+FFFD."""
    return "" if v is None else re.sub(
        "[\x00-\x08\x0b-\x1f\x7f-\x9f\ufdd0-\ufdef\ufffe\uffff]", "\ufffd", str(v))


def check_tables(page, doc):
    """Every row of every table of the page is the row of stats' table
    that it names, cell by cell, as exact text. Returns the rows checked."""
    checked = 0
    for k in (k for k, e in enumerate(page.el) if e["tag"] == "table"):
        title = page.el[k]["a"]["data-t"]
        rows = doc[title]
        cols = [page.el[i]["text"] for i in page.under(k, "th")]
        for i in page.under(k, "tr"):
            if "data-r" not in page.el[i]["a"]:
                continue
            want = rows[int(page.el[i]["a"]["data-r"])]
            assert cols == list(want)
            cells = [page.el[j]["text"] for j in page.kids[i] if page.el[j]["tag"] == "td"]
            assert cells == [shown(v) for v in want.values()], title
            checked += 1
    return checked


def test_every_table_row_is_the_stats_row(job):
    page = job[4]
    titles = {e["a"]["data-t"] for e in page.el if e["tag"] == "table"}
    # breakdown summary, steps per rank and per step, kernels, NVTX,
    # nccl_sum, nccl_sizes, both nccl_skew tables
    assert len(titles) >= 9, titles
    assert check_tables(page, job[5]) > 40


PAIR = re.compile(r"([^;:\u2014]+?): ([^;]+)")


def check_marks(page, doc):
    """Every chart mark quotes cells of the stats row it names, as exact
    text. Returns the charts' titles and the number of marks."""
    marks = 0
    charts = set()
    for i, e in enumerate(page.el):
        if "data-r" not in e["a"] or e["tag"] == "tr":
            continue
        chart = page.up(i, "data-t")
        assert chart and chart["tag"] == "svg"
        charts.add(chart["a"]["data-t"])
        row = doc[chart["a"]["data-t"]][int(e["a"]["data-r"])]
        titles = [page.el[t]["text"] for t in page.under(i, "title")]
        assert titles
        for text in titles:
            quoted = text.split("\u2014")[-1]
            pairs = PAIR.findall(quoted)
            assert pairs, text
            for col, val in pairs:
                assert as_text(row[col.strip()]) == val.strip(), (text, row)
            marks += 1
    return charts, marks


def test_every_chart_mark_quotes_its_stats_row(job):
    charts, marks = check_marks(job[4], job[5])
    assert {"breakdown: GPU time by compute, communication, memory, idle",
            "steps: duration per rank and step", "nccl_sum: NCCL operations by operation and datatype",
            "nccl_sizes: calls per message size, by operation",
            "nccl_skew: arrival at collectives per rank",
            "breakdown: GPU busy time per time bucket"} <= charts
    # 4 bars x 4 kinds, 4 x 12 step points or cells, 4 x 11 utilisation cells, ...
    assert marks > 100


def test_header_counts_are_info_s(job):
    page, files = job[4], job[2]
    p = tool("info", *map(str, files))
    assert p.returncode == 0, p.stderr
    rows = [l.split() for l in p.stdout.splitlines()[1:] if re.match(r"\s*\d+\s", l)]
    assert len(rows) == WORLD
    head = {e["a"]["data-h"]: e["text"] for e in page.el if "data-h" in e["a"]}
    assert int(head["events"]) == sum(int(r[3]) for r in rows)
    assert int(head["drops"]) == sum(int(r[4]) for r in rows) == 0
    assert head["ranks"] == head["files"] == head["world"] == str(WORLD)
    assert head["gpus"] == str(WORLD) and head["truncated"] == "0"
    assert str(HARNESS_SIM) in head["command"]


def test_late_rank_is_the_one_marked(job):
    page, doc = job[4], job[5]
    head = {e["a"]["data-h"]: e["text"] for e in page.el if "data-h" in e["a"]}
    assert head["slowest"] == str(LATE_RANK)
    marked = [(page.up(i, "data-t")["a"]["data-t"], int(e["a"]["data-r"]))
              for i, e in enumerate(page.el) if e["a"].get("data-slowest")]
    assert len(marked) == 2
    for title, r in marked:
        assert doc[title][r]["Rank"] == str(LATE_RANK), title
    # the same rank by stats' own figures: the most wait imposed, most often last
    skew = doc["nccl_skew: arrival at collectives per rank"]
    assert max(skew, key=lambda r: int(r["Wait Imposed (ns)"]))["Rank"] == str(LATE_RANK)
    # and by the built-in delay: rank 2 lost about LATE us at every 10th collective
    late = int(skew[LATE_RANK]["Total Lateness (ns)"])
    assert late > 8 * LATE * 1000 * 0.8


def test_self_contained(job):
    html = job[3]
    assert not re.search(r"""(src|href)\s*=|<link|<img|<iframe|@import|url\(""", html, re.I)
    assert "http://" not in html and "https://" not in html


def test_steps_select_and_empty_sections_say_so(job, tmp_path):
    out = job[1]
    html = report([out], tmp_path / "s.html", "--steps", "3-5")
    page = parse(html)
    doc = stats_exact([out], "--steps", "3-5")
    steps = {r["Step"] for r in doc["steps: duration per rank and step"]}
    assert steps == {"3", "4", "5"}
    shown = {doc["steps: duration per rank and step"][int(e["a"]["data-r"])]["Step"]
             for i, e in enumerate(page.el) if "data-r" in e["a"] and page.up(i, "data-t")["a"][
                 "data-t"] == "steps: duration per rank and step"}
    assert shown == steps
    # the header says the page covers those steps (it did not)
    [said] = [i for i, e in enumerate(page.el) if e["a"].get("data-h") == "steps"]
    assert page.el[said]["text"].startswith("3-5 only: the sections below cover these steps")
    assert not [e for e in parse(report([out], tmp_path / "all.html")).el
                if e["a"].get("data-h") == "steps"]


def test_nvtx_only_hostile_names(tmp_path):
    """An NVTX-only process with hostile names (quotes, <, &, control
    characters, invalid UTF-8): no GPU work, no steps, no NCCL, each said
    in one line; the names stay text, the page valid HTML5, and the NVTX
    rows are stats' rows."""
    lone = tmp_path / "lone"
    p = subprocess.run([str(BUILD / "tests" / "progs" / "hostile")], env=traced_env(lone),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    files = ctr_files(lone)
    html = report(files, tmp_path / "lone.html")
    page = parse(html)
    assert check_tables(page, stats_exact(files)) >= 5
    html5lib = pytest.importorskip("html5lib", reason="python3-html5lib is not installed")
    html5lib.HTMLParser(strict=True).parse(html)
    nones = [e["text"] for e in page.el if e["a"].get("class") == "none"]
    assert any("no GPU" in t for t in nones) and any("step" in t for t in nones)
    assert any("NCCL" in t or "collective" in t for t in nones)
    assert "<svg" not in html


def test_bad_usage_writes_nothing(tmp_path, job):
    p = tool("report", str(job[1]))
    assert p.returncode == 2 and "-o" in p.stderr
    p = tool("report", "-o", str(tmp_path / "x.html"), str(tmp_path / "missing"))
    assert p.returncode == 1 and not (tmp_path / "x.html").exists()
    p = tool("report", "--help")
    assert p.returncode == 0 and p.stdout.startswith("usage: cuptrace report")


def chromium():
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("headless Chromium is not installed (Debian package chromium; "
                "tests/install-deps.sh installs it where it can)")


def screenshot(html_path, png, width=1280, height=2400):
    """Loads the page from its file with the network off (a network
    namespace of its own where unshare works; else every host unresolvable
    and a dead proxy) and returns Chromium's console lines."""
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
           f"--window-size={width},{height}", f"--screenshot={png}", "--enable-logging=stderr",
           "--v=0", f"file://{html_path}"]
    if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0:
        cmd = ["unshare", "-n"] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    # the page's own messages (Chromium logs some of its own pages' too)
    return [l for l in p.stderr.splitlines() if "CONSOLE" in l and "source: file://" in l]


def test_chromium_renders_without_errors(job):
    d = job[0]
    png = d / "report.png"
    console = screenshot(d / "report.html", png)
    assert console == []
    from PIL import Image
    img = Image.open(png).convert("RGB")
    assert img.size == (1280, 2400)
    px = img.getdata()
    colours = {}
    for c in px:
        colours[c] = colours.get(c, 0) + 1
    white = colours.get((255, 255, 255), 0)
    assert white < 0.97 * len(px), "page is blank"
    # the charts were drawn: the four colours of the breakdown (legend
    # squares of 12 x 12 px and the bars) and the red of the marked rank
    for c in ((0x4e, 0x79, 0xa7), (0xf2, 0x8e, 0x2b), (0x59, 0xa1, 0x4f), (0xd3, 0xd3, 0xd3)):
        assert colours.get(c, 0) >= 100, c
    reds = sum(n for (r, g, b), n in colours.items() if r > 150 and g < 60 and b < 60)
    assert reds > 50
    # a console message would show: the check above is not vacuous
    bad = d / "bad.html"
    bad.write_text("<!DOCTYPE html><title>x</title><script>nosuchfn()</script>")
    assert screenshot(bad, d / "bad.png", 200, 200)


def page_width(html_path, width):
    """(the page's scroll width, the window's width) in headless Chromium at
    `width` px: a copy of the page with a line of script that writes both
    into the DOM, which --dump-dom prints after the scripts ran."""
    probe = html_path.with_name(html_path.stem + ".probe.html")
    probe.write_text(html_path.read_text(encoding="utf-8").replace(
        "</body>", "<script>document.body.setAttribute('data-probe', "
        "document.documentElement.scrollWidth + ' ' + window.innerWidth)</script></body>"),
        encoding="utf-8")
    p = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                        "--proxy-server=127.0.0.1:9", f"--window-size={width},800", "--dump-dom",
                        f"file://{probe}"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    m = re.search(r'data-probe="(\d+) (\d+)"', p.stdout)
    assert m, p.stdout[-500:]
    return int(m.group(1)), int(m.group(2))


def test_a_narrow_window_does_not_scroll_sideways(job, tmp_path):
    """At 1100 px the page fits its window: the charts (up to 1186 px
    wide) scale down with it, on a job's page and on a page of NCCL logs
    alone."""
    from test_nccl_logs import rank_lines, write
    logs = []
    for r in range(2):
        logs.append(tmp_path / f"r{r}.log")
        write(logs[-1], rank_lines(r))
    report(logs, tmp_path / "logs.html")
    for page in (job[0] / "report.html", tmp_path / "logs.html"):
        scroll, window = page_width(page, 1100)
        assert window == 1100 and scroll <= window, (page.name, scroll, window)


def test_demo_screenshot_kept_in_docs():
    shot = ROOT / "docs" / "report.png"
    assert shot.exists() and shot.stat().st_size > 10000
    readme = (ROOT / "README.md").read_text()
    assert "docs/report.png" in readme


def test_run_writes_the_report(tmp_path):
    """`cuptrace run --report OUT -- CMD`: CMD's exit status, then the page
    over the files the run wrote, as `cuptrace report` writes it."""
    out = tmp_path / "r.html"
    env = launcher_env(RANK="0", WORLD_SIZE="1")
    p = subprocess.run([str(BUILD / "bin" / "cuptrace"), "run", "-o", f"{tmp_path}/t/%p.ctr",
                        "-t", "cuda,nvtx,nccl", "--report", str(out), "--", str(HARNESS_SIM), "3"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    html = out.read_text(encoding="utf-8")
    again = report(ctr_files(tmp_path / "t"), tmp_path / "again.html")
    # the same page but for the moment the trace window is printed in
    assert html == again
    assert check_tables(parse(html), stats_exact(ctr_files(tmp_path / "t"))) > 10


def test_64_ranks_heat_map_small_page(tmp_path):
    """Past 16 ranks the step times and utilisation are heat maps of at
    most 4000 cells (steps share a column, which shows the longest or the
    idlest of them); the page stays small and every mark is stats' row."""
    from conftest import rank_files
    # One rank (no one late): the pace only needs to keep steps apart.
    out, files = run_job(tmp_path, world=1, iters=120, pace=1000)
    many = rank_files(files[0], tmp_path / "r64", 64)
    html = report(many, tmp_path / "r64.html")
    page = parse(html)
    doc = stats_exact(many)
    assert len(html.encode()) < 2_000_000  # bench/figures/report_html.py: 1000 steps, the same size
    assert "<polyline" not in html
    charts, marks = check_marks(page, doc)
    assert "steps: duration per rank and step" in charts
    cells = [e for i, e in enumerate(page.el) if e["tag"] == "rect" and "data-r" in e["a"]
             and page.up(i, "data-t")["a"]["data-t"] == "steps: duration per rank and step"]
    assert len(cells) == 64 * 60  # 120 steps (0-119), 2 per column
    steps = doc["steps: duration per rank and step"]
    for e in cells[:60]:
        r = steps[int(e["a"]["data-r"])]
        pair = [s for s in steps if s["Rank"] == r["Rank"] and
                int(s["Step"]) // 2 == int(r["Step"]) // 2]
        assert r["Duration (ns)"] == max((s["Duration (ns)"] for s in pair), key=int)
    assert check_tables(page, doc) > 64


def test_nccl_logs_alone(tmp_path):
    """NCCL_DEBUG logs without traces: the NCCL sections from them, the
    others saying in one line that there is nothing to draw."""
    from test_nccl_logs import rank_lines, write
    logs = []
    for r in range(4):
        logs.append(tmp_path / f"r{r}.log")
        write(logs[-1], rank_lines(r))
    html = report(logs, tmp_path / "logs.html")
    page = parse(html)
    doc = stats_exact(logs)
    assert check_tables(page, doc) >= 4
    charts, _ = check_marks(page, doc)
    assert "nccl_sum: NCCL operations by operation and datatype" in charts
    nones = [e["text"] for e in page.el if e["a"].get("class") == "none"]
    assert any("logs only" in t for t in nones)
    # the sections that need traces (times, GPU work, ranges) say so, the
    # skew section among them (not "give every rank's file": all were given)
    needs = [t for t in nones if "needs the trace files" in t]
    assert len(needs) >= 6, nones
    assert "give every rank" not in html
    # no section is a bare heading
    for i, e in enumerate(page.el):
        if e["tag"] == "section":
            assert len(page.kids.get(i, [])) >= 2, page.el[page.kids[i][0]]["text"]


def test_truncated_file_in_red(job, tmp_path):
    """A file cut in the middle (a killed rank): counted and named in red
    in the header, its events up to the cut still drawn."""
    files = job[2]
    cut = tmp_path / "cut"
    cut.mkdir()
    for f in files:
        data = f.read_bytes()
        (cut / f.name).write_bytes(data[:len(data) * 2 // 3] if f.name == "rank3.ctr" else data)
    html = report([cut], tmp_path / "cut.html")
    page = parse(html)
    [bad] = [e for e in page.el if e["a"].get("data-h") == "truncated"]
    assert bad["text"] == "1" and bad["a"].get("class") == "bad"
    assert "rank3.ctr: truncated" in html
    doc = stats_exact([cut])
    assert check_tables(page, doc) > 40
    # a rank whose file ends early is not one that hung: the others finished
    # every collective, which needs rank 3 (it said "rank 3 never arrived")
    [v] = doc["nccl_hang: verdict"]
    assert v["Verdict"] == "no collective left incomplete", v
    assert "NCCL hang: who never arrived" not in html


def test_busy_per_time_bucket_adds_up(job):
    """breakdown --by time (what the utilisation heat map draws): one width
    for every GPU, buckets from time 0 of the job, and each GPU's busy time
    over its buckets is its whole-window busy time (Window - Idle)."""
    doc = job[5]
    rows = doc["breakdown: GPU busy time per time bucket"]
    whole = {(r["Rank"], r["GPU"]): int(r["Window (ns)"]) - int(r["Idle (ns)"])
             for r in doc["breakdown: GPU time by compute, communication, memory, idle"]
             if r["Step"] is None}
    assert len(whole) == WORLD
    [width] = {int(r["Width (ns)"]) for r in rows}
    assert width % 1000 == 0 and (width // 1000) & (width // 1000 - 1) == 0  # 1 us x 2^k
    for key, busy in whole.items():
        mine = [r for r in rows if (r["Rank"], r["GPU"]) == key]
        assert [int(r["Start (ns)"]) for r in mine] == [k * width for k in range(len(mine))]
        assert len(mine) <= 200
        assert sum(int(r["Busy (ns)"]) for r in mine) == busy
        assert all(r["Busy (%)"] == "%.1f" % (100 * int(r["Busy (ns)"]) / width) for r in mine)


def test_a_cpu_only_run_says_what_is_missing(tmp_path):
    """A run without CUDA work: every section says in one line what it
    lacks ("Top kernels" is no bare heading), and the header calls no rank
    of one the slowest."""
    p = run([BUILD / "tests" / "progs" / "demo_train", 10], env=traced_env(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    page = parse(report(ctr_files(tmp_path / "o"), tmp_path / "r.html"))
    assert not [e for e in page.el if e["a"].get("data-h") == "slowest"]
    sections = [i for i, e in enumerate(page.el) if e["tag"] == "section"]
    for i in sections:
        assert len(page.el[i]["text"].strip()) > len(page.el[page.under(i, "h2")[0]]["text"]), \
            page.el[i]["text"]
    [top] = [i for i in sections if page.el[page.under(i, "h2")[0]]["text"] == "Top kernels"]
    assert "no GPU kernels in the inputs" in page.el[top]["text"]


def test_step_lines_start_at_zero_and_say_their_scale(job, tmp_path):
    """The step-time lines start at 0, and the plot says its ends: scaled
    from the shortest step to the longest, steps of 95 to 100 ms would draw
    as a full-height swing."""
    page = parse(report([job[1]], tmp_path / "r.html"))
    axis = {e["a"]["data-axis"]: e["text"] for e in page.el if "data-axis" in e["a"]}
    assert axis["bottom"] == "0" and re.fullmatch(r"[\d.]+ (ms|us|s)", axis["top"]), axis
    circles = [e for e in page.el if e["tag"] == "circle"]
    assert circles
    bottom = max(float(e["a"]["cy"]) for e in circles)
    # the shortest step is not drawn on the bottom line (260 + 10: the plot's foot)
    assert bottom < 270 - 1, bottom


def test_a_balanced_job_names_no_slowest_rank(tmp_path):
    """Ranks that only differ by noise (no late rank): the header named the
    largest of the noise, a rank that imposed 3 ms of wait in 1.6 s, the
    slowest, in red. A rank is named where it stands out."""
    _, files = run_job(tmp_path, late=False)
    page = parse(report(files, tmp_path / "r.html"))
    assert not [e for e in page.el if e["a"].get("data-h") == "slowest"]
