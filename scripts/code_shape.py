#!/usr/bin/env python3
"""The figures of the code-shape rules in docs/ARCHITECTURE.md, for src/.

Counts, with no Rust tooling beyond the sources themselves:

- import circles: cycles in the graph of `crate::`/`super::` paths between
  modules, at every depth: the top-level modules (`game`, `nn`, `search`,
  ...), and the sibling modules inside any module (`data::shuffle` and
  `data::window`, `train::model::blocks` and `train::model::transformer`).
  A use from `a::b::c` of `a::d::e` is an arrow `a::b -> a::d` between the
  children of their deepest common module. An edge from a module to one of
  its own descendants or ancestors is not counted (a parent re-exporting
  its children and a child using its parent's items is how Rust modules
  are built, not a circle between peers).
- upward arrows: a top-level module that uses one in the same or a higher
  layer (the layers are the table LAYERS below, as in docs/ARCHITECTURE.md).
- source files over 800 lines, not counting `#[cfg(test)]` modules at the
  end of a file and files that hold only tests (`*tests.rs`, `tests/`).
- functions over 150 lines (test functions aside).
- config reads by hand: calls of the config's getters (`cfg.get_i64(...)`,
  `get_bool_or`, `get_string`, ...) outside `src/config/`, tests aside, at
  most 15. Settings are declared once in tables (`config::Key`,
  `config::Field`, the search parameters) that read them and list them in
  `docs/configuration.md`; a getter called by hand reads a key no table
  declares. The few left read keys whose name is built at run time.

Usage: scripts/code_shape.py [--json] [SRC_DIR]   (exit 1 when a rule is broken)
"""

import json
import os
import re
import sys

# A module may use modules of lower layers only: an arrow to the same or a
# higher layer is counted (docs/ARCHITECTURE.md explains each layer).
LAYERS = [
    # 0: foundations: protocol lines, configs, the rules of Go, the run store,
    # how a command ended (exit codes)
    ["io_lines", "config", "game", "store", "exit"],
    # 1: the network, clocks, training rows, the process log
    ["nn", "timecontrol", "data", "logfile"],
    # 2: search, the trainable net
    ["search", "train"],
    # 3: start-up shared by every command
    ["setup"],
    # 4: the play layer: what the commands that play games share; tsumego
    # (framing and judging local problems, for GTP and analysis)
    ["play", "tsumego"],
    # 5: the commands
    ["gtp", "analysis", "selfplay", "matchplay", "benchmark", "tune", "learn", "solve"],
    # 6: the command line and the fuzz targets' bodies
    ["cli", "fuzz_targets"],
]
LAYER_OF = {m: i for i, layer in enumerate(LAYERS) for m in layer}

MAX_FILE_LINES = 800
MAX_FN_LINES = 150
MAX_CONFIG_READS = 15

# The getters of `config::Config` (src/config/mod.rs), with their `_or`
# forms: `get_i64`, `get_i64s`, `get_i64_or`, `get_enum`, ...
CONFIG_GETTER = re.compile(r"\.get_(?:string|bool|f64|i64|enum|enabled|parsed)s?(?:_or)?\s*(?:::<[^>]*>)?\s*\(")


def module_path(src, path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return tuple(rel)


def strip_comments_and_strings(text):
    """`text` with every comment and the contents of every string and char
    literal blanked (newlines kept, so line numbers stay): a scanner, not
    regular expressions, so strings continued with a backslash, escaped
    quotes, raw strings (`r#"..."#`), nested block comments and lifetimes
    (`'a`, which are no char literal) are all read right."""
    out = []
    i, n = 0, len(text)

    def blank(chunk):
        return "".join(c if c == "\n" else " " for c in chunk)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j]))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(blank(text[i:j]))
            i = j
        elif re.match(r'(?:b?r)(#*)"', text[i:i + 40]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'(b?r)(#*)"', text[i:])
            close = '"' + m.group(2)
            j = text.find(close, i + len(m.group(0)))
            j = n if j < 0 else j + len(close)
            out.append('""' + blank(text[i + 2:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append('""' + blank(text[i + 2:j]))
            i = j
        elif c == "'":
            # A char literal ('x', '\n', '\u{..}', '{'), or a lifetime ('a).
            m = re.match(r"'(?:\\(?:u\{[0-9a-fA-F]{1,6}\}|x[0-9a-fA-F]{2}|.)|[^\\'\n])'", text[i:i + 12])
            if m:
                out.append("''" + blank(text[i + 2:i + len(m.group(0))]))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def test_start_line(lines):
    """The line where a trailing `#[cfg(test)] mod ...` (or
    `#[cfg(all(test, ...))] mod ...`) starts, or None."""
    for i, line in enumerate(lines):
        attr = line.strip()
        is_test_cfg = attr == "#[cfg(test)]" or attr.startswith("#[cfg(all(test, ")
        if is_test_cfg and i + 1 < len(lines):
            nxt = lines[i + 1].strip()
            if nxt.startswith("mod ") and nxt.endswith("{"):
                return i
    return None


def use_targets(text, here):
    """Module paths this file's code names through `crate::` or `super::`."""
    out = set()
    # expand `use crate::a::{b, c::d}` groups one level
    for m in re.finditer(r"\b(crate|super(?:::super)*)::([A-Za-z_][\w:]*)(::\{([^}]*)\})?", text):
        root, rest, _, group = m.group(1), m.group(2), m.group(3), m.group(4)
        if root == "crate":
            base = ()
        else:
            ups = root.count("super")
            base = here[: len(here) - ups] if ups <= len(here) else ()
        parts = [p for p in rest.split("::") if p]
        if group:
            for g in group.split(","):
                g = g.strip().split(" as ")[0].strip()
                first = g.split("::")[0] if g else ""
                out.add(base + tuple(parts) + ((first,) if first and first != "self" else ()))
        out.add(base + tuple(parts))
    return out


def resolve(target, modules):
    """The longest known module that prefixes the named path."""
    for n in range(len(target), 0, -1):
        if target[:n] in modules:
            return target[:n]
    return None


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def long_functions(lines, limit):
    """(name, first line, length) of each fn whose body runs over `limit` lines."""
    out = []
    fn_re = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+\"C\"\s+)?fn\s+(\w+)")
    i = 0
    while i < len(lines):
        m = fn_re.match(lines[i])
        if m:
            is_test = any(l.strip().startswith("#[test") for l in lines[max(0, i - 3) : i])
            depth, started, j = 0, False, i
            while j < len(lines):
                code = lines[j]
                if not started and ";" in code and "{" not in code:
                    break  # a declaration without a body
                depth += code.count("{") - code.count("}")
                if "{" in code:
                    started = True
                if started and depth <= 0:
                    break
                j += 1
            length = j - i + 1
            if started and length > limit and not is_test:
                out.append((m.group(7), i + 1, length))
        i += 1
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    as_json = "--json" in sys.argv
    src = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "src")
    src = os.path.normpath(src)

    files = {}
    for root, _, names in os.walk(src):
        for n in names:
            if n.endswith(".rs"):
                p = os.path.join(root, n)
                files[module_path(src, p)] = p
    modules = set(files)
    # inline `mod name {` blocks are rare here; file modules are what we count

    top_graph, sibling_graph = {}, {}
    upward = set()
    big_files, big_fns = [], []
    config_reads = []
    for mod, path in sorted(files.items()):
        with open(path, encoding="utf-8") as f:
            raw = f.read()
        lines = raw.split("\n")
        parts = os.path.relpath(path, src).split(os.sep)
        test_only = parts[-1].endswith("tests.rs") or "tests" in parts[:-1] or mod[-1:] == ("tests",)
        cut = test_start_line(lines)
        code_lines = lines[:cut] if cut is not None else lines
        while code_lines and not code_lines[-1].strip():
            code_lines = code_lines[:-1]
        if not test_only and len(code_lines) > MAX_FILE_LINES:
            big_files.append((os.path.relpath(path, src), len(code_lines)))
        blanked = strip_comments_and_strings("\n".join(code_lines))
        if not test_only:
            for name, line, length in long_functions(blanked.split("\n"), MAX_FN_LINES):
                big_fns.append((os.path.relpath(path, src), name, line, length))
        if test_only:
            continue
        if mod[:1] != ("config",):
            for i, line in enumerate(blanked.split("\n")):
                for _ in CONFIG_GETTER.finditer(line):
                    config_reads.append((os.path.relpath(path, src), i + 1))
        for target in use_targets(blanked, mod):
            t = resolve(target, modules)
            if t is None or not mod or not t:
                continue
            a, b = mod[0], t[0]
            if a != b:
                top_graph.setdefault(a, set()).add(b)
                if a in LAYER_OF and b in LAYER_OF and LAYER_OF[b] >= LAYER_OF[a]:
                    upward.add((a, b))
                continue
            # within one top-level module: an arrow between the children of
            # the deepest module both lie in, at any depth; none when one
            # lies inside the other
            k = 0
            while k < min(len(mod), len(t)) and mod[k] == t[k]:
                k += 1
            if k == len(mod) or k == len(t):
                continue
            sibling_graph.setdefault(mod[: k + 1], set()).add(t[: k + 1])

    top_cycles = cycles(top_graph)
    sib_cycles = cycles(sibling_graph)
    unknown = sorted(m for m in top_graph if m not in LAYER_OF)
    report = {
        "top_level_cycles": top_cycles,
        "sibling_cycles": [["::".join(m) for m in c] for c in sib_cycles],
        "upward_arrows": sorted(f"{a} -> {b}" for a, b in upward),
        "modules_without_layer": unknown,
        "files_over_800_lines": sorted(big_files, key=lambda x: -x[1]),
        "functions_over_150_lines": sorted(big_fns, key=lambda x: -x[3]),
        "config_reads_outside_config": [f"{p}:{n}" for p, n in config_reads],
        "top_level_graph": {k: sorted(v) for k, v in sorted(top_graph.items())},
    }
    if as_json:
        print(json.dumps(report, indent=1))
    else:
        print(f"import circles, top-level modules: {len(top_cycles)}")
        for c in top_cycles:
            print("   ", " <-> ".join(c))
        print(f"import circles, sibling modules:   {len(sib_cycles)}")
        for c in report["sibling_cycles"]:
            print("   ", " <-> ".join(c))
        print(f"upward or sideways arrows (layers in docs/ARCHITECTURE.md): {len(upward)}")
        for a in report["upward_arrows"]:
            print("   ", a)
        if unknown:
            print(f"modules with no layer: {', '.join(unknown)}")
        print(f"source files over {MAX_FILE_LINES} lines (tests aside): {len(big_files)}")
        for p, n in report["files_over_800_lines"]:
            print(f"    {n:5d} {p}")
        print(f"functions over {MAX_FN_LINES} lines (tests aside): {len(big_fns)}")
        for p, name, line, n in report["functions_over_150_lines"]:
            print(f"    {n:5d} {p}:{line} {name}")
        print(
            f"config reads by hand outside src/config (tests aside): {len(config_reads)} "
            f"(at most {MAX_CONFIG_READS})"
        )
        if len(config_reads) > MAX_CONFIG_READS:
            for where in report["config_reads_outside_config"]:
                print(f"    {where}")
    too_many_reads = len(config_reads) > MAX_CONFIG_READS
    broken = top_cycles or sib_cycles or upward or big_files or big_fns or unknown or too_many_reads
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
