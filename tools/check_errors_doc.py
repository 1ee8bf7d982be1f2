#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# File: keeps docs/errors.md complete. Finds every error throw site in optcoll/ and cli/
# (throw_invalid(...), the parsers' fail(...), throw Error/TransportError/InternalError(...),
# Error(ErrorCode::...), and the schedule validator's issues.add(...)), extracts the message
# format string, splits it at its {} placeholders and requires every distinctive literal piece
# to appear in docs/errors.md. Exits 1 naming each site whose text is missing.
#
# A site whose message is a variable built just above (`text = fmt::format("...")`) is checked
# against that format string. A site that only forwards a message built elsewhere (no string
# literal in reach) is listed with --list and not checked. An internal check may opt out with
# a trailing comment `// errors.md: <reason>` on its line. OPTCOLL_CHECK sites are internal
# checks, catalogued in the doc as a class, and are not scanned.
#
# Usage: tools/check_errors_doc.py [--list] [--tests] [--self-test]
#   --list       print every site with its extracted fragments (and forwarding sites)
#   --tests      also print, per site, the test files that mention its longest fragment
#   --self-test  check the checker on a small synthetic tree (ctest errors_doc_selftest)
import argparse
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_DIRS = ("optcoll", "cli")
DOC = os.path.join("docs", "errors.md")

# A call that throws (or records) an error message; group 1 is the callee.
SITE = re.compile(
    r"(?<![\w.:>])(throw_invalid|throw_call|fail|issues\.add)\s*\(|"
    r"\b(?:throw\s+)?(Error|TransportError|InternalError|CallError)\s*\(")
# Function definitions/declarations of the helpers themselves are not sites.
DEFINITION = re.compile(r"(void|auto|\]\])\s+(\w+::)?$")
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
PLACEHOLDER = re.compile(r"\{[^{}]*\}")
OPT_OUT = re.compile(r"//\s*errors\.md:\s*\S")
# Literal pieces shorter than this (after stripping) carry no distinctive text.
MIN_PIECE = 4


def strip_comments(text):
    """Blanks // and /* */ comments (keeping line numbers and string literals intact)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif c == "'" and i + 2 < n:
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def call_arguments(code, open_paren):
    """The text between the parenthesis at open_paren and its match."""
    depth, i = 0, open_paren
    while i < len(code):
        c = code[i]
        if c == '"':
            i += 1
            while i < len(code) and code[i] != '"':
                i += 2 if code[i] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return code[open_paren + 1:i]
        i += 1
    return code[open_paren + 1:]


def first_format(arguments):
    """The call's message text: its string literals (adjacent ones concatenated, as C++ does;
    separate ones, e.g. the JSON parser's `where` and `what`, joined by a placeholder)."""
    runs, current, last_end = [], [], None
    for match in STRING.finditer(arguments):
        if current and not arguments[last_end:match.start()].strip() == "":
            runs.append("".join(current))
            current = []
        current.append(match.group(1))
        last_end = match.end()
    if current:
        runs.append("".join(current))
    if not runs:
        return None
    text = " {} ".join(runs)
    return text.replace('\\"', '"').replace("\\n", " ").replace("\\\\", "\\")


def built_above(code, site_offset, arguments):
    """For `throw X(name)` or `Error(code, name)`: the format string of
    `name = fmt::format("...")` above the site."""
    name = arguments.split(",")[-1].strip()
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        return None
    window = code[max(0, site_offset - 1500):site_offset]
    found = None
    for match in re.finditer(r"\b" + name + r"\s*=\s*fmt::format\s*\(", window):
        found = match
    if not found:
        return None
    return first_format(call_arguments(window, found.end() - 1))


def pieces(message):
    """The distinctive literal pieces of a format string, placeholders removed."""
    out = []
    for piece in PLACEHOLDER.split(message):
        piece = " ".join(piece.split())
        if len(piece.strip(" :;,.()'\"")) >= MIN_PIECE:
            out.append(piece.strip())
    return out


def find_sites(root):
    for top in SOURCE_DIRS:
        for dirpath, _, files in sorted(os.walk(os.path.join(root, top))):
            for name in sorted(files):
                if not name.endswith((".cc", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    raw = f.read()
                yield from sites_in(os.path.relpath(path, root), raw)


def sites_in(relpath, raw):
    code = strip_comments(raw)
    raw_lines = raw.split("\n")
    for match in SITE.finditer(code):
        callee = match.group(1) or match.group(2)
        before = code[max(0, match.start() - 40):match.start()]
        if DEFINITION.search(before.rstrip() + " ") or re.search(r"(class|public)\s+$", before):
            continue
        if callee == "Error" and not re.match(r"Error\s*\(\s*(ErrorCode::|code\b)",
                                              code[match.start(2):]) and "throw" not in \
                match.group(0):
            continue
        line = code.count("\n", 0, match.start()) + 1
        arguments = call_arguments(code, match.end() - 1)
        message = first_format(arguments)
        if message is None:
            message = built_above(code, match.start(), arguments)
        opted_out = bool(OPT_OUT.search(raw_lines[line - 1]))
        yield {"site": f"{relpath}:{line}", "callee": callee, "message": message,
               "opted_out": opted_out}


def normalise_doc(text):
    text = text.replace("\\|", "|").replace("`", "")
    return " ".join(text.split())


def tests_mentioning(root, fragment):
    hits = []
    for dirpath, _, files in sorted(os.walk(os.path.join(root, "tests"))):
        for name in sorted(files):
            if name.endswith((".cc", ".h")):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    if fragment in f.read():
                        hits.append(os.path.relpath(path, root))
    return hits


SELF_TEST_SOURCE = r"""
void f(int n) {
  if (n < 0) throw_invalid("widget count must be non-negative, got {}", n);
  if (n > 9)
    throw Error(ErrorCode::kParse,
                fmt::format("widget file line {}: "
                            "too many widgets", n));
  // throw_invalid("a commented-out site is not a site {}", n);
  const std::string text = fmt::format("{} gadgets jammed", n);
  if (n == 5) throw TransportError(text);
  if (n == 6) fail(where, "\"gizmo\" must be a string");
  if (n == 7) throw InternalError("a broken gadget invariant");  // errors.md: internal check
  if (n == 8) throw TransportError(message);
  if (n == 4) throw Error(code, text);
}
[[noreturn]] void fail(const std::string& where, const std::string& what) {}
"""

# (doc text, the sites expected to be reported missing)
SELF_TEST_CASES = [
    ("`widget count must be non-negative, got {n}` `widget file line {l}: too many widgets` "
     "`{n} gadgets jammed` `schedule JSON {where}: \"gizmo\" must be a string`", []),
    ("`widget count must be non-negative` `widget file line {l}: too many widgets` "
     "`{n} gadgets jammed` `\"gizmo\" must be a string`", ["x.cc:2"]),
    ("`widget count must be non-negative, got {n}` `{n} gadgets jammed` "
     "`\"gizmo\" must be a string`", ["x.cc:4"]),
    ("`widget count must be non-negative, got {n}` `widget file line {l}: too many widgets` "
     "`\"gizmo\" must be a string`", ["x.cc:9", "x.cc:13"]),
    ("`widget count must be non-negative, got {n}` `widget file line {l}: too many widgets` "
     "`{n} gadgets jammed`", ["x.cc:10"]),
    ("`expected \"a\" \\| \"b\"` `widget count must be non-negative, got {n}` "
     "`widget file line {l}: too many widgets` `{n} gadgets jammed` `\"gizmo\" must be a string`",
     []),
]


def self_test():
    failures = 0
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "optcoll"))
        os.makedirs(os.path.join(root, "docs"))
        with open(os.path.join(root, "optcoll", "x.cc"), "w", encoding="utf-8") as f:
            f.write(SELF_TEST_SOURCE.lstrip("\n"))
        sites = list(find_sites(root))
        for doc, expected in SELF_TEST_CASES:
            normalised = normalise_doc(doc)
            missing = sorted(s["site"].replace("optcoll/", "") for s in sites
                             if not s["opted_out"] and s["message"] is not None
                             and any(p not in normalised for p in pieces(s["message"])))
            if missing != sorted(expected):
                failures += 1
                print(f"self-test: doc {doc!r}: reported {missing}, expected {expected}")
        forwarding = [s["site"] for s in sites if s["message"] is None and not s["opted_out"]]
        if forwarding != ["optcoll/x.cc:12"]:
            failures += 1
            print(f"self-test: forwarding sites {forwarding}, expected ['optcoll/x.cc:12']")
    print("check_errors_doc self-test:", "FAILED" if failures else "ok")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--tests", action="store_true")
    parser.add_argument("--self-test", action="store_true")
    parser.add_argument("--root", default=ROOT)
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    doc_path = os.path.join(args.root, DOC)
    if not os.path.exists(doc_path):
        print(f"check_errors_doc: {DOC} is missing")
        return 1
    with open(doc_path, encoding="utf-8") as f:
        doc = normalise_doc(f.read())
    missing, checked = [], 0
    for site in find_sites(args.root):
        if site["opted_out"]:
            continue
        if site["message"] is None:
            if args.list:
                print(f"{site['site']}: forwards a message built elsewhere")
            continue
        frags = pieces(site["message"])
        checked += 1
        absent = [p for p in frags if p not in doc]
        if args.list or args.tests:
            line = f"{site['site']}: {site['message']!r}"
            if args.tests and frags:
                longest = max(frags, key=len)
                line += f"\n    tests: {tests_mentioning(args.root, longest) or 'NONE'}"
            print(line)
        if absent:
            missing.append((site, absent))
    for site, absent in missing:
        print(f"{site['site']}: message {site['message']!r} is not in {DOC} "
              f"(missing: {'; '.join(repr(a) for a in absent)})")
    if missing:
        print(f"check_errors_doc: {len(missing)} of {checked} error sites are not catalogued "
              f"in {DOC}")
        return 1
    print(f"check_errors_doc: all {checked} error sites are catalogued in {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
