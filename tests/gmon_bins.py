#!/usr/bin/env python3
"""gmon_bins.py GMON: the histogram of a GNU gmon.out (version 1), read
independently of cgprof's reader.  Prints the bin holding the most
samples summed over every histogram record of the same range, as
"bin INDEX sum TOTAL records V1 V2 ...", the Vi being that bin's value
in each record (a count over 65,535 is split over several)."""
import struct
import sys

data = open(sys.argv[1], "rb").read()
if data[:4] != b"gmon":
    sys.exit("%s: not a gmon.out" % sys.argv[1])
off = 20
records = []
while off < len(data):
    tag = data[off]
    off += 1
    if tag == 0:
        lo, hi, nbins, _rate = struct.unpack_from("<QQII", data, off)
        off += 24 + 16
        bins = struct.unpack_from("<%dH" % nbins, data, off)
        off += 2 * nbins
        records.append((lo, hi, bins))
    elif tag == 1:
        off += 20
    else:
        sys.exit("%s: tag %d at offset %d: not a histogram or an arc" % (sys.argv[1], tag, off - 1))
if not records:
    sys.exit("%s: no histogram" % sys.argv[1])
ranges = set((lo, hi, len(b)) for lo, hi, b in records)
if len(ranges) != 1:
    sys.exit("%s: histogram records of different ranges" % sys.argv[1])
sums = [sum(r[2][i] for r in records) for i in range(len(records[0][2]))]
top = max(range(len(sums)), key=lambda i: sums[i])
print("bin", top, "sum", sums[top], "records", *[r[2][top] for r in records])
