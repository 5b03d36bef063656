#!/usr/bin/env python3
"""Prints the number of training rows in every *.npz under the given dirs
(KataGo's layout: the first dimension of binaryInputNCHWPacked), reading only
the .npy headers. Temporary files (*.tmp) are skipped. Stdlib only."""
import ast
import os
import sys
import zipfile


def rows_in(path):
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        # KataGo's C++ writer names members without the ".npy" numpy adds.
        member = next(n for n in ("binaryInputNCHWPacked", "binaryInputNCHWPacked.npy") if n in names)
        with z.open(member) as f:
            head = f.read(10)
            if head[:6] != b"\x93NUMPY":
                raise ValueError(f"{path}: not an npy member")
            major = head[6]
            if major == 1:
                hlen = int.from_bytes(head[8:10], "little")
                header = f.read(hlen)
            else:
                hlen = int.from_bytes(head[8:10] + f.read(2), "little")
                header = f.read(hlen)
            return ast.literal_eval(header.decode("latin1"))["shape"][0]


total = 0
for d in sys.argv[1:]:
    for root, _, files in os.walk(d):
        for name in files:
            if name.endswith(".npz"):
                try:
                    total += rows_in(os.path.join(root, name))
                except (OSError, ValueError, KeyError, StopIteration, zipfile.BadZipFile) as e:
                    print(f"skipping {name}: {e}", file=sys.stderr)
print(total)
