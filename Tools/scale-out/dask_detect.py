#!/usr/bin/env python3
"""Runs `parley detect` over a list of recordings on a Dask distributed cluster.

    python3 Tools/scale-out/dask_detect.py --scheduler ADDRESS --files-from LIST --output-dir DIR
        [--format FORMAT] [--batch N] [--parley PATH]

The list (one path per line, `-` for standard input) is cut into batches of N paths. Each batch
is one Dask task: on a worker, `parley detect --jobs 1 --skip-existing --output-dir DIR
[--format FORMAT] --files-from -` with the batch's paths on its standard input. DIR must be on a
file system that every worker sees at the same path (the paths in the list too). A task whose
worker dies is run again by Dask on another worker; since it skips what has a result in DIR,
the rerun only does what is left, and a result is never half-written (parley writes each under a
temporary name and renames it). Every process that writes DIR merges its entries into
DIR/failed.tsv under a lock, so concurrent batches do not lose each other's failures.

On a terminal the driver shows a progress line; at the end it prints the summary line that
`parley detect` prints, summed over the batches, on standard error:

    parley detect: 400 files: 398 ok, 0 partial, 2 failed, 0 skipped; 0.667 h of audio in 9.8 s (245x real time)

Files that a killed attempt finished are counted as skipped by the attempt that reran the
batch. Audio hours are summed from each batch's own summary line (0.001 h resolution).

Exit status as `parley detect`'s: 0 every file analysed, 1 some file failed or was only partly
read (or a batch still failed after its retries), 2 usage error (a missing list, an unreachable
scheduler, a `parley` that cannot run, or parley's own usage error).
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field

SUMMARY = re.compile(
    r"^parley detect: (\d+) files?: (\d+) ok, (\d+) partial, (\d+) failed, (\d+) skipped; "
    r"([0-9.]+) h of audio in ([0-9.]+) s")


class UsageError(Exception):
    """A problem with the command line or the set-up: exit status 2."""


@dataclass
class BatchResult:
    """What one batch's `parley detect` run reported."""
    ok: int = 0
    partial: int = 0
    failed: int = 0
    skipped: int = 0
    audio_hours: float = 0.0
    status: int = 0
    messages: list[str] = field(default_factory=list)


def run_batch(parley: str, paths: list[str], output_dir: str, fmt: str | None) -> BatchResult:
    """Runs on a worker: one `parley detect` over `paths`, its summary line parsed."""
    cmd = [parley, "detect", "--jobs", "1", "--skip-existing", "--output-dir", output_dir]
    if fmt:
        cmd += ["--format", fmt]
    cmd += ["--files-from", "-"]
    try:
        proc = subprocess.run(cmd, input="".join(p + "\n" for p in paths), capture_output=True, text=True)
    except OSError as e:
        # No parley to run on this worker: a set-up error, not worth a retry.
        return BatchResult(status=2, messages=[f"dask_detect.py: cannot run {parley}: {e.strerror}"])
    result = BatchResult(status=proc.returncode)
    for line in proc.stderr.splitlines():
        m = SUMMARY.match(line)
        if m:
            result.ok, result.partial, result.failed, result.skipped = (int(m.group(i)) for i in range(2, 6))
            result.audio_hours = float(m.group(6))
        elif line:
            result.messages.append(line)
    if proc.returncode == 2:
        # parley's own usage error: the same on every worker, so not worth a retry.
        return result
    if proc.returncode not in (0, 1) or not any(SUMMARY.match(l) for l in proc.stderr.splitlines()):
        # Killed or crashed without its summary: an exception, so that Dask retries the batch.
        raise RuntimeError(f"parley detect exited with status {proc.returncode}: " + " | ".join(result.messages[-3:]))
    return result


def read_list(path: str) -> list[str]:
    """The paths of LIST (`-`: standard input), one a line, blank lines skipped."""
    try:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8", errors="surrogateescape").read()
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}") from e
    return [line for line in text.splitlines() if line]


def summary_line(total: BatchResult, files: int, wall: float) -> str:
    """The summary line of `parley detect`, for the whole list."""
    s = (f"parley detect: {files} file{'' if files == 1 else 's'}: {total.ok} ok, {total.partial} partial, "
         f"{total.failed} failed, {total.skipped} skipped; {total.audio_hours:.3f} h of audio in {wall:.1f} s")
    if wall > 0 and total.audio_hours > 0:
        speed = total.audio_hours * 3600 / wall
        s += f" ({speed:.1f}x real time)" if speed < 10 else f" ({speed:.0f}x real time)"
    return s


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="dask_detect.py", description="parley detect over a Dask cluster")
    ap.add_argument("--scheduler", required=True, help="the Dask scheduler's address, e.g. tcp://10.0.0.5:8786")
    ap.add_argument("--files-from", required=True, metavar="LIST", help="one path per line; - for standard input")
    ap.add_argument("--output-dir", required=True, metavar="DIR", help="where results go (seen by every worker)")
    ap.add_argument("--format", help="parley detect's --format (summary, json, csv, rttm, audacity, frames)")
    ap.add_argument("--batch", type=int, default=50, metavar="N", help="paths per task (default 50)")
    ap.add_argument("--parley", default="parley", metavar="PATH", help="the parley executable on the workers")
    args = ap.parse_args(argv)   # exits with status 2 on a usage error
    started = time.monotonic()
    try:
        if args.batch < 1:
            raise UsageError("--batch must be at least 1")
        if args.format and args.format not in ("summary", "json", "csv", "rttm", "audacity", "frames"):
            raise UsageError(f"--format must be summary, json, csv, rttm, audacity or frames, got '{args.format}'")
        paths = read_list(args.files_from)
        os.makedirs(args.output_dir, exist_ok=True)
        output_dir = os.path.abspath(args.output_dir)
        try:
            from distributed import Client, as_completed
        except ImportError as e:
            raise UsageError("the Python package 'distributed' is missing "
                             "(pip install -r Tools/scale-out/requirements.txt)") from e
        try:
            client = Client(args.scheduler, timeout="10s")
        except (OSError, TimeoutError) as e:
            raise UsageError(f"cannot reach the Dask scheduler at {args.scheduler}: {e}") from e
    except UsageError as e:
        print(f"dask_detect.py: {e}", file=sys.stderr)
        return 2

    batches = [paths[i:i + args.batch] for i in range(0, len(paths), args.batch)]
    futures = {client.submit(run_batch, args.parley, b, output_dir, args.format, retries=3, pure=False): b
               for b in batches}
    total = BatchResult()
    done_files = 0
    status = 0
    tty = sys.stderr.isatty()
    try:
        for fut in as_completed(futures):
            batch = futures[fut]
            try:
                r = fut.result()
            except Exception as e:  # noqa: BLE001 - a batch that failed every retry
                r = BatchResult(failed=len(batch), status=1,
                                messages=[f"dask_detect.py: a batch of {len(batch)} files from {batch[0]} "
                                          f"failed after its retries: {e}"])
            if r.status == 2:
                for m in r.messages:
                    print(m, file=sys.stderr)
                for other in futures:
                    other.cancel()
                return 2
            for m in r.messages:
                print(("\r\033[K" if tty else "") + m, file=sys.stderr)
            total.ok += r.ok
            total.partial += r.partial
            total.failed += r.failed
            total.skipped += r.skipped
            total.audio_hours += r.audio_hours
            status = max(status, 1 if r.status else 0)
            done_files += len(batch)
            if tty:
                wall = time.monotonic() - started
                frac = done_files / max(1, len(paths))
                eta = wall / frac - wall if frac > 0 else 0
                print(f"\r\033[K[{'#' * int(frac * 20):<20}] {frac * 100:3.0f}%  {done_files}/{len(paths)} files  "
                      f"{total.audio_hours:.2f} h of audio  {int(wall) // 60}:{int(wall) % 60:02d} "
                      f"ETA {int(eta) // 60}:{int(eta) % 60:02d}", end="", file=sys.stderr, flush=True)
    finally:
        if tty:
            print("\r\033[K", end="", file=sys.stderr)
        client.close()
    if total.failed + total.partial > 0:
        status = 1
    print(summary_line(total, len(paths), time.monotonic() - started), file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
