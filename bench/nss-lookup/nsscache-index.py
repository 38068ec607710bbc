#!/usr/bin/env python3
"""nsscache-index.py - writes the sorted indexes libnss-cache searches, as nsscache does.

Usage: nsscache-index.py passwd|group FILE. For passwd FILE (passwd.cache) writes
FILE.ixname and FILE.ixuid; for group FILE (group.cache) FILE.ixname and FILE.ixgid.
Each index line is `key NUL byte-offset`, padded with NULs to one width for the whole
file and ended by a newline, sorted bytewise (libnss-cache binary-searches it with strcmp
and reads the entry at the offset).
"""
import sys


def write_index(path, entries):
    entries.sort(key=lambda e: e[0].encode())
    width = max(len(k.encode()) + 1 + len(str(o)) for k, o in entries) + 1
    with open(path, "wb") as f:
        for key, offset in entries:
            f.write((key.encode() + b"\0" + str(offset).encode()).ljust(width, b"\0") + b"\n")


def main():
    kind, path = sys.argv[1], sys.argv[2]
    by_name, by_id = [], []
    offset = 0
    with open(path, "rb") as f:
        for line in f:
            fields = line.decode().split(":")
            by_name.append((fields[0], offset))
            by_id.append((fields[2], offset))
            offset += len(line)
    write_index(path + ".ixname", by_name)
    write_index(path + (".ixuid" if kind == "passwd" else ".ixgid"), by_id)


if __name__ == "__main__":
    main()
