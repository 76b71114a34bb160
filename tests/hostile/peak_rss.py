#!/usr/bin/env python3
"""peak_rss.py FILE COMMAND...: runs COMMAND, writes its peak resident memory to FILE and exits
as COMMAND did (128 + N when a signal N ended it, as shells report it).

The peak is ru_maxrss of RUSAGE_CHILDREN in KiB: the largest resident set of any process this one
waited for, directly or through a waiting parent (`timeout` waits for jobgen). Resident memory, not
address space: `ulimit -v` caps the latter and measures nothing.
"""
import resource
import subprocess
import sys


def main():
    out, command = sys.argv[1], sys.argv[2:]
    code = subprocess.call(command)
    with open(out, "w") as f:
        f.write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
