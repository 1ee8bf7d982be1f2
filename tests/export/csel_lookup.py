#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Which algorithm does an MPICH selection file (CSEL JSON) name for a call?

An independent reading of the file, as MPICH 4.0 evaluates it: in each object the first key
(in file order) whose condition holds, down to a key "algorithm=NAME". It knows the
conditions optcoll export writes; any other key is an error (so a file with a key it does not
understand fails the test instead of being guessed at).

usage: csel_lookup.py FILE COLLECTIVE P BYTES_PER_RANK COUNT [--user-op] [--in-place]
prints the algorithm name.
"""
import json
import sys


def pof2(p):
    return 1 << (p.bit_length() - 1)


def holds(key, call):
    if key.startswith("collective="):
        return key == "collective=" + call["collective"]
    if key in ("comm_type=intra",):
        return True
    if key == "comm_type=inter":
        return False
    if key.endswith("=any"):
        return True
    if key == "comm_size=pow2":
        return call["p"] == pof2(call["p"])
    for name in ("comm_size", "avg_msg_size", "total_msg_size"):
        if key.startswith(name + "<="):
            return call[name] <= int(key[len(name) + 2:])
    if key == "count<pow2":
        return call["count"] < pof2(call["p"])
    flags = {
        "is_op_built_in": not call["user_op"],
        "is_commutative": True,
        "is_sendbuf_inplace": call["in_place"],
    }
    for name, value in flags.items():
        if key == name + "=yes":
            return value
        if key == name + "=no":
            return not value
    raise SystemExit(f"csel_lookup: unknown key {key!r}")


def lookup(tree, call):
    while True:
        for key, sub in tree.items():
            if key.startswith("algorithm="):
                return key[len("algorithm="):]
            if holds(key, call):
                tree = sub
                break
        else:
            raise SystemExit("csel_lookup: no key matches (MPICH would abort)")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 5:
        raise SystemExit(__doc__)
    path, collective, p, bytes_per_rank, count = args
    p, bytes_per_rank, count = int(p), int(bytes_per_rank), int(count)
    total_is_p_blocks = collective in ("allgather", "allgatherv", "reduce_scatter",
                                       "reduce_scatter_block", "alltoallv")
    call = {
        "collective": collective,
        "p": p,
        "comm_size": p,
        "avg_msg_size": bytes_per_rank,
        "total_msg_size": p * bytes_per_rank if total_is_p_blocks else bytes_per_rank * p,
        "count": count,
        "user_op": "--user-op" in sys.argv,
        "in_place": "--in-place" in sys.argv,
    }
    with open(path) as f:
        tree = json.load(f)
    print(lookup({k: v for k, v in tree.items() if holds(k, call)}, call))


if __name__ == "__main__":
    main()
