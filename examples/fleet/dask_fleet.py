#!/usr/bin/python3
"""A fleet report on Dask: mfu stays a single-process tool and Dask schedules it where the
logs are.

Each job log is analysed on a worker with `mfu analyze LOG --output summary` (one JSON line
of additive quantities), and the summaries are reduced on the workers with `mfu merge`, in
groups, as a tree. Summaries hold exact integers, so any grouping gives the same line as
`mfu fleet` on the same files.

    /usr/bin/python3 examples/fleet/dask_fleet.py --local 2 runs/ -- --gpu h100 --gpus 8
    /usr/bin/python3 examples/fleet/dask_fleet.py --scheduler tcp://10.0.0.1:8786 runs/

Prints the fleet's summary line on stdout (`mfu merge --output text` reads it back as a
report) and the jobs that could not be analysed, with the reason, on stderr. Needs Dask's
distributed scheduler (Debian: python3-distributed).
"""
import argparse
import os
import subprocess
import sys

from dask.distributed import Client, LocalCluster


def summarize(path, mfu, flags):
    """One job's summary line, or None and the reason."""
    r = subprocess.run([mfu, "-q", "analyze", path, "--output", "summary", *flags],
                       capture_output=True, text=True)
    return path, (r.stdout if r.returncode == 0 else None), r.stderr.strip()


def merge(lines, mfu):
    """The exact sum of summary lines, as one line."""
    r = subprocess.run([mfu, "merge"], input="".join(lines), capture_output=True, text=True,
                       check=True)
    return r.stdout


def jobs_under(paths):
    """Each file is a job; in a directory, each file (as `mfu fleet` reads a directory)."""
    jobs = []
    for p in paths:
        if os.path.isdir(p):
            jobs += sorted(os.path.join(p, f) for f in os.listdir(p) if not f.startswith("."))
        else:
            jobs.append(p)
    return jobs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", help="job logs, or directories of them")
    ap.add_argument("--mfu", default="mfu", help="the mfu binary on the workers")
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--local", type=int, metavar="N", help="a local cluster of N processes")
    where.add_argument("--scheduler", help="the address of a running Dask scheduler")
    ap.add_argument("--group", type=int, default=8, help="summaries merged per task")
    argv = sys.argv[1:]
    flags = []
    if "--" in argv:  # what follows "--" goes to every mfu analyze
        flags = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    args = ap.parse_args(argv)

    cluster = None
    if args.local:
        cluster = LocalCluster(n_workers=args.local, threads_per_worker=1, processes=True,
                               dashboard_address=None)
    client = Client(cluster if cluster else args.scheduler)
    try:
        jobs = jobs_under(args.paths)
        results = client.gather(client.map(summarize, jobs, mfu=args.mfu, flags=flags))
        lines = [line for _, line, _ in results if line]
        for path, line, why in results:
            if not line:
                print(f"{path}: not analysed: {why}", file=sys.stderr)
        if not lines:
            print("no job could be analysed", file=sys.stderr)
            return 2
        parts = [client.scatter(line) for line in lines]
        while len(parts) > 1:  # a tree of merges on the workers
            parts = [client.submit(merge, parts[i:i + args.group], args.mfu)
                     for i in range(0, len(parts), args.group)]
        sys.stdout.write(parts[0].result() if hasattr(parts[0], "result") else parts[0])
        return 0
    finally:
        client.close()
        if cluster:
            cluster.close()


if __name__ == "__main__":
    sys.exit(main())
