"""``pypto trace summary trace.json``: the critical path, time per kernel and worker utilisation of
a run's trace (``pypto.trace_summary``)."""

from __future__ import annotations

from pypto.cli.common import CliError, reject_empty_paths

__all__ = ["add_trace_parser", "cmd_trace"]


def add_trace_parser(sub) -> None:
    p = sub.add_parser("trace", help="inspect a trace written by --trace / trace= / PYPTO_TRACE",
                       description="Inspect a Chrome/Perfetto trace of a run.")
    tsub = p.add_subparsers(dest="trace_command", required=True, metavar="{summary}")   # named in the usage error, not the dest
    s = tsub.add_parser("summary", help="critical path, time per kernel, worker utilisation")
    s.add_argument("file", help="trace JSON written by a run")
    s.add_argument("--top", type=int, default=20, help="critical-path tasks to list (default 20)")


def cmd_trace(args) -> int:
    from pypto.trace_summary import TraceFormatError, summarize

    reject_empty_paths(args, [("the trace file", "file")])
    if args.top < 0:
        raise CliError("--top must be 0 or more, got %d" % args.top)
    if _is_device(args.file):   # /dev/zero was read until memory ran out; a pipe (<(...)) ends and is read
        raise CliError("%s is a device, not a trace file; give the JSON file a run wrote" % args.file)
    try:
        summary = summarize(args.file)
    except FileNotFoundError:
        raise CliError("no such file: %s" % args.file)
    except OSError as e:    # a directory, no permission, ...
        raise CliError("cannot read %s: %s" % (args.file, e.strerror or e))
    except (TraceFormatError, KeyError, TypeError, ValueError) as e:
        raise CliError("%s is not a pypto trace: %s" % (args.file, e))
    print(summary.format(top=args.top))
    return 0


def _is_device(path: str) -> bool:
    """``path`` is a character or block device (reading one may never end)."""
    import os
    import stat
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False   # reported by the read, as before
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
