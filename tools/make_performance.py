#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# File: renders docs/performance.md from the measurement files docs/results/**/*.table, so that
# the figures live beside their raw data and every table says which command, machine and date
# produced it. A .table file is a header of `key: value` lines, a blank line, then one Markdown
# table copied from the measurement:
#
#   title: what was measured                    (required)
#   section: one of SECTIONS below              (required)
#   order: an integer, the place in its section (required)
#   machine: where it ran                       (required)
#   date: when                                  (required)
#   command: how (one line each; at least one)
#   note: a sentence printed under the table (any number)
#
# A newer measurement of the same thing replaces the file (the history is git's).
#
# Usage: tools/make_performance.py           rewrite docs/performance.md
#        tools/make_performance.py --check   exit 1 if docs/performance.md is not what this
#                                            script writes (ctest performance_doc)
import argparse
import difflib
import glob
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join("docs", "results")
OUTPUT = os.path.join("docs", "performance.md")

# (key, heading, one-line introduction), in the order performance.md shows them.
SECTIONS = [
    ("core", "Schedules, verification, simulation and planners' speed",
     "How long the pipeline's own steps take at scale."),
    ("planners", "Tree planners",
     "The dynamic programs behind the optimal gather/scatter, bcast and reduce trees."),
    ("selection", "Selection and planning at scale",
     "What choosing an algorithm costs, and the largest p each kind of command handles."),
    ("tuning", "Model error and selection regret",
     "How far the calibrated model's predictions are from measured times, and what that costs auto."),
    ("model", "Model features, measured",
     "Calibrated parameters, and the choices each model field changed, timed side by side."),
    ("threads", "Thread backend",
     "The thread executor against Open MPI on the same node."),
    ("mpi", "MPI backend",
     "The MPI backend (the same-node channel, the wait loop, the fixed cost of a call) against "
     "the MPI library's own collectives."),
    ("capi", "C API, PMPI library, nonblocking and persistent collectives",
     "Calls with MPI semantics, through the C API or an unmodified program's MPI calls."),
    ("cluster", "Emulated clusters",
     "Several hosts as network namespaces on one machine, links shaped by tbf "
     "(tools/cluster/emulated_cluster.sh)."),
]
REQUIRED = ("title", "section", "order", "machine", "date")


class TableError(Exception):
    pass


def cells(row):
    return row.strip().strip("|").split("|")


def parse(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    head, sep, body = text.partition("\n\n")
    if not sep:
        raise TableError(f"{path}: no blank line between the header and the table")
    fields = {"command": [], "note": []}
    for line in head.splitlines():
        key, colon, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not colon or not value:
            raise TableError(f"{path}: header line without `key: value`: {line!r}")
        if key in ("command", "note"):
            fields[key].append(value)
        elif key in REQUIRED:
            if key in fields:
                raise TableError(f"{path}: {key} given twice")
            fields[key] = value
        else:
            raise TableError(f"{path}: unknown key {key!r}")
    for key in REQUIRED:
        if key not in fields:
            raise TableError(f"{path}: missing {key}")
    if not fields["command"]:
        raise TableError(f"{path}: no command")
    if fields["section"] not in [s[0] for s in SECTIONS]:
        raise TableError(f"{path}: unknown section {fields['section']!r}")
    try:
        fields["order"] = int(fields["order"])
    except ValueError:
        raise TableError(f"{path}: order is not an integer")
    rows = [r for r in body.splitlines() if r.strip()]
    if len(rows) < 3 or any(not r.startswith("|") for r in rows):
        raise TableError(f"{path}: the body must be one Markdown table with a header and rows")
    width = len(cells(rows[0]))
    for r in rows:
        if len(cells(r)) != width:
            raise TableError(f"{path}: row has {len(cells(r))} cells, the header {width}: {r}")
    if any(c.strip().strip(":-") for c in cells(rows[1])):
        raise TableError(f"{path}: the second line must be the |---| separator")
    fields["rows"] = rows
    fields["path"] = os.path.relpath(path, ROOT)
    return fields


def render(tables):
    out = [
        "# Performance",
        "",
        "The current measured figures, one table per measurement, each with the command, the machine",
        "and the date that produced it. Generated by `tools/make_performance.py` from the files",
        "`docs/results/**/*.table` (edit those, then run the script; ctest `performance_doc` fails",
        "when this file differs from what the script writes). A newer measurement of the same thing",
        "replaces the older one; the history is in git. Why the numbers are what they are is in",
        "docs/design.md, in the section of the subsystem concerned.",
        "",
        "Machines: the *project machine* is a 2-core KVM guest (AMD EPYC, 24 GiB, Debian 12, GCC 12.2,",
        "Open MPI 4.1.4) shared with other builds unless a table says it was idle; with more ranks than",
        "its 2 cores, ranks are oversubscribed. The *16-core node* is a KVM guest (Intel Xeon) with Open",
        "MPI 4.1.6, measured through bench/node/run.sh.",
        "",
    ]
    for key, heading, intro in SECTIONS:
        mine = sorted((t for t in tables if t["section"] == key), key=lambda t: (t["order"], t["path"]))
        if not mine:
            continue
        out += [f"## {heading}", "", intro, ""]
        for t in mine:
            out += [f"### {t['title']}", ""]
            out += t["rows"]
            out.append("")
            for c in t["command"]:
                out.append(f"    {c}")
            out.append("")
            out.append(f"Machine: {t['machine']}. Date: {t['date']}. Data: `{t['path']}`.")
            for n in t["note"]:
                out.append(f"{n}")
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true",
                        help="compare docs/performance.md with the rendering instead of writing it")
    args = parser.parse_args()
    try:
        paths = sorted(glob.glob(os.path.join(ROOT, RESULTS, "**", "*.table"), recursive=True))
        tables = [parse(p) for p in paths]
    except TableError as e:
        print(f"make_performance: {e}", file=sys.stderr)
        return 1
    text = render(tables)
    target = os.path.join(ROOT, OUTPUT)
    if args.check:
        try:
            with open(target, encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            current = ""
        if current != text:
            diff = difflib.unified_diff(current.splitlines(), text.splitlines(), OUTPUT,
                                        "tools/make_performance.py", lineterm="", n=1)
            print("\n".join(list(diff)[:60]))
            print(f"{OUTPUT} is not what tools/make_performance.py writes from {RESULTS}/: "
                  "run tools/make_performance.py", file=sys.stderr)
            return 1
        return 0
    with open(target, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
