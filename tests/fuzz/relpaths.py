#!/usr/bin/env python3
"""relpaths.py PROFILE...: rewrites, in place, the module paths of cgprof
profiles that point into this checkout, the temporary directory, the home
directory or the current directory -- all found at run time -- to the
file's base name, so that seed profiles recorded for the fuzzer name no
machine's directories. System paths (/lib/..., [vdso]) stay.
The layout is docs/profile-format.md's: MODULE (tag 2) records are rebuilt
with the new path length; every other record is copied as it is."""
import os
import struct
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRATCH = tuple(os.path.realpath(d).rstrip("/") + "/" for d in
                (REPO, tempfile.gettempdir(), os.path.expanduser("~"), os.getcwd()))


def rewrite(path):
    data = open(path, "rb").read()
    hsize = struct.unpack_from("<I", data, 12)[0]
    out = bytearray(data[:hsize])
    pos = hsize
    while pos + 16 <= len(data):
        tag, flags, size = struct.unpack_from("<IIQ", data, pos)
        body = data[pos + 16:pos + 16 + size]
        if tag == 2:
            fixed = struct.calcsize("<IIQQQII")
            mid, mflags, bias, lo, hi, blen, plen = struct.unpack_from("<IIQQQII", body)
            bid = body[fixed:fixed + blen]
            mpath = body[fixed + blen:fixed + blen + plen].decode()
            if mpath.startswith(SCRATCH) or os.path.realpath(mpath).startswith(SCRATCH):
                mpath = os.path.basename(mpath)
            p = mpath.encode()
            body = struct.pack("<IIQQQII", mid, mflags, bias, lo, hi, blen, len(p)) + bid + p
            body += b"\0" * (-len(body) % 8)
        out += struct.pack("<IIQ", tag, flags, len(body)) + body
        pos += 16 + size
    open(path, "wb").write(out)


for f in sys.argv[1:]:
    rewrite(f)
