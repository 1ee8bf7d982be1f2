#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Replays a measured tuning table (optcoll tune --out) under a cost model, without running
anything: every measured run is predicted again (optcoll simulate), auto's choice is made
again (optcoll plan), and the model's error and model-only auto's regret are computed
against the measured times. For trying a model (a new calibration, a changed field) against
measurements taken on a machine one no longer has.

    bench/regret/replay.py TABLE.json MODEL.json [--optcoll build/release/cli/optcoll]
        [--set field=value ...] [--rows] [--steady K]

--set changes one model field before the replay (e.g. --set send_gap=8e-7). The v-kinds'
points (gatherv:spikes, scatterv:skewed) are skipped: their counts come from the tune run's
distribution parameters, which plan does not take. A point whose auto choice was not
measured in the table (a composition, or parameters no variant gave) has no regret.

--steady K predicts what tune measures, back-to-back calls, instead of one call: the
schedule repeated K times (each rank's call i + 1 after all of its call i), per call
(T(K) - T(1)) / (K - 1). Model error only (auto's choice is the model's own, one call).
"""
import argparse, json, os, statistics, subprocess, sys, tempfile


def run_json(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def repeated(schedule, k):
    """The schedule run k times back to back: each rank's copy c + 1 after all of copy c;
    copy c's messages take sequence numbers c * stride + seq (stride: the largest + 1)."""
    stride = 1 + max([op["seq"] for r in schedule["ranks"] for op in r["ops"] if "seq" in op]
                     or [0])
    out = {key: v for key, v in schedule.items() if key != "tree"}
    out["ranks"] = []
    for rank in schedule["ranks"]:
        ops, n, new = rank["ops"], len(rank["ops"]), []
        for c in range(k):
            for op in ops:
                o = dict(op)
                after = {j + c * n for j in op.get("after", [])}
                if c > 0:
                    after |= set(range((c - 1) * n, c * n))
                o.pop("after", None)
                if after:
                    o["after"] = sorted(after)
                if "seq" in o:
                    o["seq"] = op["seq"] + c * stride
                new.append(o)
        out["ranks"].append({"ops": new, "scratch": rank.get("scratch", 0)})
    return out


def steady_time(optcoll, coll, base, run, k, tmpdir):
    """Per-call time of k back-to-back calls of `run`: (T(k) - T(1)) / (k - 1)."""
    one = os.path.join(tmpdir, "one.json")
    cmd = [optcoll, "plan", coll, *base, "--algorithm", run["algorithm"], "--dump", one]
    for kv in filter(None, run["params"].split(",")):
        cmd += ["--param", kv]
    subprocess.run(cmd, capture_output=True, check=True)
    many = os.path.join(tmpdir, "many.json")
    json.dump(repeated(json.load(open(one)), k), open(many, "w"))
    model = base[base.index("--model") + 1]
    times = [run_json([optcoll, "simulate", "--schedule", f, "--model", model, "--json"])
             ["makespan"] for f in (one, many)]
    return (times[1] - times[0]) / (k - 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table")
    ap.add_argument("model")
    ap.add_argument("--optcoll", default="build/release/cli/optcoll")
    ap.add_argument("--set", action="append", default=[], help="field=value")
    ap.add_argument("--rows", action="store_true", help="print every point")
    ap.add_argument("--steady", type=int, default=0, help="K: predict K back-to-back calls")
    a = ap.parse_args()
    table = json.load(open(a.table))
    model = json.load(open(a.model))
    for kv in a.set:
        k, v = kv.split("=", 1)
        try:
            model[k] = json.loads(v)
        except json.JSONDecodeError:
            model[k] = v
    tmp = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump(model, tmp)
    tmp.close()
    p = table["nranks"]
    tmpdir = tempfile.mkdtemp()
    errors, regrets, rows = [], [], []
    for point in table["points"]:
        if point["counts"] != "regular":
            continue
        coll = point["collective"]
        count = str(max(1, point["bytes"] // 8))
        base = ["-p", str(p), "--count", count, "--model", tmp.name]
        runs = point["runs"]
        best = min(runs, key=lambda r: r["seconds"])
        for r in runs:
            if a.steady > 1:
                predicted = steady_time(a.optcoll, coll, base, r, a.steady, tmpdir)
                errors.append(abs(predicted / r["seconds"] - 1))
                continue
            cmd = [a.optcoll, "simulate", coll, *base, "--algorithm", r["algorithm"], "--json"]
            for kv in filter(None, r["params"].split(",")):
                cmd += ["--param", kv]
            predicted = run_json(cmd)["makespan"]
            errors.append(abs(predicted / r["seconds"] - 1))
        chosen = run_json([a.optcoll, "plan", coll, *base, "--json"])
        pick = next((r for r in runs if r["algorithm"] == chosen["algorithm"]
                     and r["params"] == chosen.get("params", "")), None)
        regret = pick["seconds"] / best["seconds"] if pick else None
        if regret is not None:
            regrets.append(regret)
        rows.append((coll, point["bytes"], best["algorithm"], best["seconds"] * 1e6,
                     chosen["algorithm"] + (f" ({chosen['params']})" if chosen.get("params") else ""),
                     regret))
    errors.sort()
    print(f"model error over {len(errors)} runs: median {statistics.median(errors):.0%}, "
          f"90th percentile {errors[int(0.9 * (len(errors) - 1))]:.0%}")
    print(f"model-only auto regret over {len(regrets)} points: median "
          f"{statistics.median(regrets):.2f}, max {max(regrets):.2f} "
          f"({len(rows) - len(regrets)} points' choices not measured)")
    if a.rows:
        for coll, b, best, us, pick, regret in rows:
            print(f"| {coll} | {b} | {best} | {us:.1f} | {pick} | "
                  f"{'-' if regret is None else f'{regret:.2f}'} |")


if __name__ == "__main__":
    main()
