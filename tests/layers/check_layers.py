# SPDX-License-Identifier: MIT
"""Checks the folder rules of docs/LAYOUT.md against the code.

The rules are the fenced ```layers block of docs/LAYOUT.md; this file holds
no list of folders of its own. Three checks:
  includes  every #include of the C/C++ files under libtrace/, tools/,
            python_shim/ and include/ is resolved as the compiler resolves it
            (the including file's folder, then the -I folders of the binary
            it belongs to, read from the Makefile), and the folder of the file
            it names must be one the including folder may use;
  symbols   file A depends on file B when A's object uses a global symbol
            that B's object defines (nm on the built objects); the same rules;
  circles   no circle between files in those dependencies.
Within a folder that has `order` lines, a file may only use files later in
its line. Prints one line per violation and exits 1, or one summary line and
exits 0. Standard library and nm only.
"""
import argparse
import fnmatch
import os
import re
import shlex
import subprocess
import sys
from collections import defaultdict

SCANNED = ("libtrace", "tools", "python_shim", "include")
C_EXT = (".c", ".h", ".cpp", ".hpp", ".cc")
# Which Makefile variable holds the preprocessor flags of the files under a
# folder (the longest prefix wins): the binary each folder is built into.
FLAG_VARS = {
    "include": "SHARED_CPPFLAGS",
    "libtrace": "LIB_CPPFLAGS",
    "libtrace/format": "SHARED_CPPFLAGS",
    "libtrace/config": "SHARED_CPPFLAGS",
    "libtrace/mpi": "MPIW_CPPFLAGS",
    "tools": "TOOL_CPPFLAGS",
    "python_shim": "PY_CPPFLAGS",
}
MAKEFILES = ("Makefile", "python_shim/python.mk")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


class Rules:
    """The ```layers block: `PATH: USES... [never <GLOB>...]` and
    `order FOLDER: A B > C > ...` lines."""

    def __init__(self, text, where, root):
        self.root = root
        self.uses = {}  # entry (folder or file) -> set of entries, or None for anything
        self.never = {}  # entry -> system header globs it and everything under it may not include
        self.orders = defaultdict(list)  # folder -> list of {name: tier}
        block = re.search(r"^```layers\n(.*?)^```", text, re.M | re.S)
        if not block:
            raise SystemExit(f"check-layers: no ```layers block in {where}")
        lines = []  # an indented line continues the one above it
        for raw in block.group(1).splitlines():
            text = raw.split("#", 1)[0]
            if text.strip() and text[0].isspace() and lines:
                lines[-1] += " " + text.strip()
            elif text.strip():
                lines.append(text.strip())
        for n, line in enumerate(lines):
            head, sep, body = line.partition(":")
            if not sep:
                raise SystemExit(f"check-layers: {where}: rule {n + 1} has no ':': {line}")
            head = head.strip().rstrip("/")
            if head.startswith("order "):
                tiers = {}
                for tier, group in enumerate(body.split(">")):
                    for name in group.split():
                        tiers[name] = tier
                self.orders[head[6:].strip().rstrip("/")].append(tiers)
                continue
            words = body.split()
            never = []
            if "never" in words:
                never = [w.strip("<>") for w in words[words.index("never") + 1:]]
                words = words[:words.index("never")]
            self.uses[head] = None if "*" in words else {w.rstrip("/") for w in words}
            self.never[head] = never

    def owner(self, path):
        """The deepest entry that holds path (a file entry beats its folder)."""
        best = None
        for e in self.uses:
            if (path == e or path.startswith(e + "/")) and (best is None or len(e) > len(best)):
                best = e
        return best

    def forbidden(self, path, header):
        """The glob of a `never` list, of path's entry or one above it, that header matches."""
        for e, globs in self.never.items():
            if path == e or path.startswith(e + "/"):
                for g in globs:
                    if fnmatch.fnmatch(header, g):
                        return g
        return None

    def folder_verdict(self, user, target):
        """None when user may use target, else the reason."""
        a, b = self.owner(user), self.owner(target)
        if a is None:
            return f"{user} is in no folder of the map"
        if b is None:
            return f"{target} is in no folder of the map"
        if a == b or self.uses[a] is None or b in self.uses[a]:
            return None
        return f"{a} may not use {b}"

    def order_verdict(self, user, target):
        """None when the order lines of their folder let user use target."""
        folder = os.path.dirname(user)
        if folder != os.path.dirname(target) or folder not in self.orders:
            return None
        u, t = unit(self.root, user), unit(self.root, target)
        if u == t:
            return None
        lines = self.orders[folder]
        if not all(any(name in tiers for tiers in lines) for name in (u, t)):
            return None  # reported once, as a file in no order line
        for tiers in lines:
            if u in tiers and t in tiers:
                if tiers[t] > tiers[u]:
                    return None
                where = "beside" if tiers[t] == tiers[u] else "above"
                return f"the order of {folder} puts {t} {where} {u}"
        return f"the order of {folder} has {u} and {t} in separate lines"

    def order_members(self):
        for folder, lines in self.orders.items():
            for tiers in lines:
                for name in tiers:
                    yield folder, name


def unit(root, path):
    """The name a file has in an order line: a header stands for the .c file
    of the same name when there is one, otherwise for itself."""
    base = os.path.basename(path)
    stem, ext = os.path.splitext(base)
    if ext in (".h", ".hpp") and os.path.exists(
            os.path.join(root, os.path.dirname(path), stem + ".c")):
        return stem + ".c"
    return base


def make_vars(root):
    """The simple variables of the Makefiles, expanded ($(shell ...) and the
    other functions expand to nothing: only -I folders are read from them)."""
    raw = {}
    for mk in MAKEFILES:
        path = os.path.join(root, mk)
        if not os.path.exists(path):
            continue
        for line in open(path, encoding="utf-8"):
            m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(\?=|:=|=|\+=)\s*(.*)$", line.rstrip("\n"))
            if not m:
                continue
            name, op, value = m.groups()
            if op == "?=" and (name in raw or name in os.environ):
                raw.setdefault(name, os.environ.get(name, ""))
                continue
            raw[name] = raw.get(name, "") + " " + value if op == "+=" else value

    def expand(s, depth=0):
        if depth > 20:
            return s
        return re.sub(r"\$\(([^()]*(?:\([^()]*\))*[^()]*)\)",
                      lambda m: expand(raw.get(m.group(1), ""), depth + 1)
                      if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", m.group(1)) else "", s)

    return {k: expand(v) for k, v in raw.items()}


def include_dirs(flags):
    """(quote-only dirs, -I dirs, -isystem dirs) of a flag string."""
    try:
        words = shlex.split(flags)
    except ValueError:
        words = flags.split()
    quote, user, system = [], [], []
    i = 0
    while i < len(words):
        w = words[i]
        for opt, lst in (("-iquote", quote), ("-isystem", system), ("-I", user)):
            if w.startswith(opt):
                val = w[len(opt):] or (words[i + 1] if i + 1 < len(words) else "")
                if not w[len(opt):]:
                    i += 1
                if val:
                    lst.append(val)
                break
        i += 1
    return quote, user, system


class Resolver:
    def __init__(self, root, mvars):
        self.root = root
        self.sets = {}
        for folder, var in FLAG_VARS.items():
            if var not in mvars:
                raise SystemExit(f"check-layers: no {var} in {', '.join(MAKEFILES)}")
            self.sets[folder] = include_dirs(mvars[var])
        # A header is compiled into every binary that includes it: a name
        # its own folder's flags miss is looked up in every binary's folders.
        self.any_user = []
        for q, u, _ in self.sets.values():
            for d in q + u:
                if d not in self.any_user:
                    self.any_user.append(d)

    def flags_of(self, path):
        best = max((f for f in self.sets if path.startswith(f + "/")), key=len, default=None)
        return self.sets[best] if best else ([], [], [])

    def find(self, d, name):
        """The path relative to root when d/name is a file of the repository
        ("" when it is a file outside it, None when there is none)."""
        full = os.path.normpath(os.path.join(self.root, d, name) if not os.path.isabs(d)
                                else os.path.join(d, name))
        if not os.path.isfile(full):
            return None
        rel = os.path.relpath(full, self.root)
        return "" if rel.startswith("..") else rel

    def resolve(self, path, kind, name):
        """A file of the repository, or None for a system header."""
        quote, user, system = self.flags_of(path)
        dirs = ([os.path.dirname(path)] + quote if kind == '"' else []) + user + system
        for d in dirs + [x for x in self.any_user if x not in dirs]:
            hit = self.find(d, name)
            if hit is not None:
                return hit or None
        return None


def scan_includes(root, files, rules, resolver, problems):
    n = 0
    edges = []
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                n += 1
                kind, name = m.groups()
                target = resolver.resolve(path, kind, name)
                shown = f'{kind}{name}{">" if kind == "<" else kind}'
                if target is None:
                    g = rules.forbidden(path, name)
                    if g:
                        problems.append(f"{path}:{lineno}: includes {shown}, a system header "
                                        f"that {rules.owner(path)} may never include (<{g}>)")
                    continue
                edges.append((path, target))
                why = rules.folder_verdict(path, target) or rules.order_verdict(path, target)
                if why:
                    problems.append(f"{path}:{lineno}: includes {shown} ({target}): {why}")
    return n, edges


def object_graph(root, obj, problems):
    """{(user source, defining source): symbols} from the objects under obj
    whose source file exists at the same path under root."""
    objs = {}
    for d, _, names in os.walk(obj):
        for f in names:
            if f.endswith(".o"):
                o = os.path.join(d, f)
                src = os.path.relpath(o, obj)[:-2] + ".c"
                if src.split("/")[0] in SCANNED and os.path.isfile(os.path.join(root, src)):
                    objs[o] = src
    if not objs:
        problems.append(f"{obj}: no objects (run make all first)")
        return {}
    for o, src in objs.items():
        if os.path.getmtime(o) < os.path.getmtime(os.path.join(root, src)):
            problems.append(f"{o}: older than {src} (run make all first)")
    out = subprocess.run(["nm", "-P", "-A"] + sorted(objs), capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"check-layers: nm failed: {out.stderr.strip()}")
    defs, uses = defaultdict(set), defaultdict(set)
    for line in out.stdout.splitlines():
        o, _, rest = line.partition(": ")
        parts = rest.split()
        if o not in objs or len(parts) < 2:
            continue
        sym, t = parts[0], parts[1]
        if t in "Uwv":  # undefined here, weak ones too
            uses[objs[o]].add(sym)
        elif t in "BCDGRSTVWiu":  # a global this object defines
            defs[sym].add(objs[o])
    edges = defaultdict(set)
    for src, syms in uses.items():
        for sym in syms:
            # The library and the tool are linked apart, each with the shared
            # format and configuration: a tools file never reaches a symbol of
            # the library (the library's exit, which it interposes, is libc's
            # to the tool), nor the library one of the tools.
            found = {d for d in defs.get(sym, ()) if d != src and linked_with(src, d)}
            for d in found:
                edges[(src, d)].add(sym)
    return edges


def linked_with(user, definer):
    """Whether user's object is linked into a binary that holds definer's."""
    shared = ("libtrace/format/", "libtrace/config/")
    if user.startswith(shared) or definer.startswith(shared):
        return True
    # libcuptrace-mpi.so is built from libtrace/mpi/ alone
    if user.startswith("libtrace/mpi/") != definer.startswith("libtrace/mpi/"):
        return False
    return user.split("/")[0] == definer.split("/")[0]


def circles(edges):
    """One circle, with the symbols on each step, per group of files that
    reach each other, until every file of the group is on a printed one."""
    graph = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index, low, stack, on, groups = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            g = []
            while True:
                w = stack.pop()
                on.discard(w)
                g.append(w)
                if w == v:
                    break
            if len(g) > 1:
                groups.append(set(g))

    for v in sorted(list(graph)):
        if v not in index:
            strong(v)
    found = []
    for g in groups:
        left = set(g)
        while left:
            start = min(left)
            # shortest way back to start inside the group
            prev, todo = {start: None}, [start]
            path = None
            while todo and path is None:
                nxt = []
                for v in todo:
                    for w in sorted(graph[v] & g):
                        if w == start:
                            path = [w]
                            x = v
                            while x is not None:
                                path.append(x)
                                x = prev[x]
                            path.reverse()
                            break
                        if w not in prev:
                            prev[w] = v
                            nxt.append(w)
                    if path:
                        break
                todo = nxt
            steps = [path[0]]
            for a, b in zip(path, path[1:]):
                steps.append(f"-> {b} ({', '.join(sorted(edges[(a, b)]))})")
            found.append("circle: " + " ".join(steps))
            left -= set(path)
    return found


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--root", default=os.path.join(here, "..", ".."),
                    help="the repository (default: the one holding this script)")
    ap.add_argument("--obj", default=None, help="the objects (default ROOT/build/obj/release)")
    ap.add_argument("--doc", default=None, help="the map (default ROOT/docs/LAYOUT.md)")
    ap.add_argument("--folders", action="store_true",
                    help="print which folder uses which (by include or symbol) and exit")
    args = ap.parse_args(argv)
    root = os.path.normpath(args.root)
    obj = args.obj or os.path.join(root, "build", "obj", "release")
    doc = args.doc or os.path.join(root, "docs", "LAYOUT.md")
    rel_doc = os.path.relpath(doc, root)
    rules = Rules(open(doc, encoding="utf-8").read(), rel_doc, root)
    resolver = Resolver(root, make_vars(root))
    problems = []

    files = []
    for top in SCANNED:
        for d, dirs, names in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs
                             if not x.startswith((".", "build")) and x != "__pycache__")
            files += [os.path.relpath(os.path.join(d, f), root)
                      for f in sorted(names) if f.endswith(C_EXT)]
    for folder, name in rules.order_members():
        if not os.path.isfile(os.path.join(root, folder, name)):
            problems.append(f"{rel_doc}: the order of {folder} names {name}, which is not there")
    ranked = set(rules.order_members())
    for path in files:
        folder = os.path.dirname(path)
        if folder in rules.orders and (folder, unit(root, path)) not in ranked:
            problems.append(f"{path}: in no order line of {folder} ({rel_doc})")

    n_inc, inc_edges = scan_includes(root, files, rules, resolver, problems)
    edges = object_graph(root, obj, problems)
    if args.folders:
        used = defaultdict(set)
        for a, b in inc_edges + list(edges):
            if rules.owner(a) != rules.owner(b):
                used[rules.owner(a)].add(rules.owner(b))
        for a in sorted(used, key=str):
            print(f"{a}: {' '.join(sorted(used[a], key=str))}")
        return 0
    for (a, b), syms in sorted(edges.items()):
        why = rules.folder_verdict(a, b) or rules.order_verdict(a, b)
        if why:
            problems.append(f"{a} -> {b} ({', '.join(sorted(syms))}): {why}")
    problems += circles(edges)

    for p in problems:
        print(p)
    if problems:
        n = len(problems)
        print(f"check-layers: {n} {'violation' if n == 1 else 'violations'} of {rel_doc}")
        return 1
    print(f"check-layers: {len(files)} files, {n_inc} includes, {len(edges)} dependencies "
          f"by symbol between files: every one within the rules of {rel_doc}, no circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
