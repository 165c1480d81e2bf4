"""Pieces every ``pypto`` subcommand shares: the usage error, loading a program file, writing files.
Imports nothing else of ``pypto.cli``, so the command modules never import each other."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from typing import Dict, List, Optional, Tuple

__all__ = ["CliError", "load_programs", "select_program", "write_files", "kernel_files", "parse_dims",
           "reject_empty_paths", "reject_overwriting_program", "check_dims", "require_orchestration",
           "require_dim_values", "entry_dynamic_dims"]


class CliError(Exception):
    """A usage problem reported as `pypto: error: ...` with exit status 2."""


def not_a_file(path: str) -> str:
    """Why ``path`` cannot be read as a file: missing, or a directory ("no such file" would be wrong)."""
    if os.path.isdir(path):
        return "%s is a directory, not a file" % path
    if os.path.exists(path):   # /dev/null, a FIFO: "no such file" was wrong
        return "%s is not a regular file" % path
    return "no such file: %s" % path


def load_programs(path: str) -> Dict[str, object]:
    """Executes the Python file ``path`` and returns its @pl.program objects by variable name."""
    from pypto._core import ir

    from pypto.errors import PyptoError

    if not os.path.isfile(path):
        raise CliError(not_a_file(path))
    name = "_pypto_cli_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    # An explicit source loader: a program file need not end in .py (spec_from_file_location
    # alone returns None for other suffixes).
    spec = importlib.util.spec_from_file_location(name, path, loader=importlib.machinery.SourceFileLoader(name, path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:    # the file is not Python: where, as the compiler would say it
        raise CliError("%s:%s:%s: not valid Python: %s"
                       % (e.filename or path, e.lineno or 0, e.offset or 0, e.msg)) from None
    except (PyptoError, KeyboardInterrupt):
        raise   # a DSL error is already located; Ctrl-C is not an error of the file
    except SystemExit as e:   # sys.exit() at the top level: pypto exited silently, with the file's status (0: "success")
        raise CliError("%s exited while being loaded (SystemExit(%r) at %s), so nothing was compiled or run: the "
                       "program file is executed as a module; guard its script part with `if __name__ == "
                       "\"__main__\":`" % (path, e.code, _user_frame(e, path))) from None
    except Exception as e:  # noqa: BLE001 - the user's module raised: name its line, not ours
        raise CliError("running %s failed at %s: %s: %s" % (path, _user_frame(e, path), type(e).__name__, e)) from None
    finally:
        sys.path.pop(0)
    return {k: v for k, v in vars(module).items() if isinstance(v, ir.Program)}


def _user_frame(e: BaseException, path: str) -> str:
    """``file:line`` of the innermost traceback frame in ``path`` (else the innermost frame)."""
    import traceback
    frames = traceback.extract_tb(e.__traceback__)
    mine = [f for f in frames if os.path.abspath(f.filename) == os.path.abspath(path)]
    f = (mine or frames)[-1]
    return "%s:%d" % (f.filename, f.lineno)


def select_program(programs: Dict[str, object], wanted: Optional[str], path: str) -> Tuple[str, object]:
    """The program named ``wanted`` (variable or program name), or the only one."""
    if not programs:
        raise CliError("%s defines no @pl.program" % path)
    if wanted is not None:
        for var, prog in programs.items():
            if wanted in (var, prog.name):
                return var, prog
        raise CliError("%s has no program named %r (found: %s)" % (path, wanted, ", ".join(sorted(programs))))
    if len(programs) > 1:
        raise CliError("%s defines several programs (%s); choose one with --program NAME"
                       % (path, ", ".join(sorted(programs))))
    return next(iter(programs.items()))


def write_files(files: Dict[str, str], out_dir: str) -> List[str]:
    """Writes ``{relative path: text}`` under ``out_dir``; returns the written paths."""
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):   # before anything is written
        raise CliError("output directory %s is an existing file" % out_dir)
    written = []
    for rel, text in sorted(files.items()):
        dest = os.path.join(out_dir, rel)
        try:
            os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
            with open(dest, "w") as f:
                f.write(text)
        except OSError as e:
            raise CliError("cannot write %s: %s" % (dest, e.strerror or e))
        written.append(dest)
    return written


def kernel_files(prepared, kernel_ids) -> Dict[str, str]:
    """``{"kernels/<name>.cpp": source}`` for the kernels an orchestration uses."""
    from pypto._core import kernel_cpu
    from pypto.runtime.build import source_stem
    return {"kernels/%s.cpp" % source_stem(name): kernel_cpu.generate(prepared, name) for name in sorted(kernel_ids)}


# The runtime's tensor extents are 32-bit (Tensor::shapes): a larger --dim can never run (it
# failed after the compile, or as a TypeError traceback of pypto graph --static).
MAX_DIM = 0xFFFFFFFF


def parse_dims(items: List[str]) -> Dict[str, int]:
    """``["M=128", "N=64"]`` -> ``{"M": 128, "N": 64}``; raises ValueError on a bad item (not
    ``NAME=INTEGER``, a negative extent or one above MAX_DIM)."""
    dims: Dict[str, int] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip().lstrip("-").isdigit():
            raise ValueError("--dim expects NAME=INTEGER, got %r" % item)
        if int(value) < 0:   # found before compiling, not by the call's argument check after it
            raise ValueError("--dim %s: an extent must be a non-negative integer, got %s" % (name.strip(), value.strip()))
        if int(value) > MAX_DIM:
            raise ValueError("--dim %s: an extent must be at most %d (the runtime's 32-bit tensor extent), got %s"
                             % (name.strip(), MAX_DIM, value.strip()))
        name = name.strip()
        if name in dims and dims[name] != int(value):   # the last one won silently
            raise ValueError("--dim %s is given twice, %s=%d and %s=%s: give it once" % (name, name, dims[name], name,
                                                                                       value.strip()))
        dims[name] = int(value)
    return dims


def parse_scalars(items: List[str]) -> Dict[str, object]:
    """``["n=4", "scale=0.5"]`` -> ``{"n": 4, "scale": 0.5}`` (``--scalar NAME=V``: an integer,
    a float, or true/false); raises ValueError on a bad item."""
    scalars: Dict[str, object] = {}
    for item in items or []:
        name, sep, text = item.partition("=")
        name, text = name.strip(), text.strip()
        if not sep or not name or not text:
            raise ValueError("--scalar expects NAME=VALUE, got %r" % item)
        if text.lower() in ("true", "false"):
            scalars[name] = text.lower() == "true"
            continue
        try:
            scalars[name] = int(text)
        except ValueError:
            try:
                scalars[name] = float(text)
            except ValueError:
                raise ValueError("--scalar %s: %r is not an integer, a float or true/false" % (name, text)) from None
    return scalars


def reject_empty_paths(args, flags: List[Tuple[str, str]]) -> None:
    """A usage error for each ``(flag, attribute)`` of ``args`` given as an empty string: ``-o ""``
    would write into the current directory (or, being falsy, count as not given)."""
    for flag, attr in flags:
        value = getattr(args, attr, None)
        if isinstance(value, str) and not value.strip():
            raise CliError("%s: the path is empty (%r); give a file or directory name" % (flag, value))


def reject_overwriting_program(args, flags: List[Tuple[str, str]]) -> None:
    """A usage error for each ``(flag, attribute)`` output path of ``args`` that is the program
    file itself (``pypto graph prog.py -o prog.py``, ``--save prog.py``): it was overwritten, the
    user's source replaced by a DOT file, an archive or a trace."""
    program = getattr(args, "file", None)
    for flag, attr in flags:
        value = getattr(args, attr, None)
        if not value or not program or not os.path.exists(value) or not os.path.exists(program):
            continue
        try:
            same = os.path.samefile(value, program)
        except OSError:
            continue
        if same:
            raise CliError("%s %s is the program file itself: writing there would replace your program; give "
                           "another path" % (flag, value))


def check_dims(dims: Dict[str, int], known, what: str, flag: str = "--dim") -> None:
    """A usage error for a ``--dim NAME=N`` whose NAME is not one of ``known`` (the dynamic
    dimensions of ``what``, e.g. "entry main of program P"): it would be ignored silently."""
    known = sorted(set(known))
    for name in sorted(dims):
        if name not in known:
            raise CliError("%s %s=%d: %s has no dynamic dimension %s (%s)"
                           % (flag, name, dims[name], what, name,
                              "its dynamic dimensions: " + ", ".join(known) if known else "it has none"))


def require_orchestration(program, name: str, flag: str) -> None:
    """A usage error unless ``name`` is an Orchestration function of ``program``, found from the
    parsed program before compiling (the passes add kernels, never an Orchestration function).

        require_orchestration(program, args.func, "--func")
    """
    from pypto import codegen
    orch = codegen.orchestration_functions(program)
    if name in orch:
        return
    listed = "its Orchestration functions: %s" % (", ".join(orch) or "none")
    fn = program.get(name)
    if fn is None:
        raise CliError("%s %r: program %s has no function of that name (%s)" % (flag, name, program.name, listed))
    raise CliError("%s %r names an %s function of program %s, not an Orchestration function (%s)"
                   % (flag, name, fn.type.name, program.name, listed))


def entry_dynamic_dims(program, entry: str) -> List[Tuple[str, str]]:
    """``(dimension, parameter)`` of each dynamic dimension in the shapes of the tensor
    parameters of function ``entry`` of the parsed ``program``, first parameter naming each."""
    from pypto._core import ir
    out: List[Tuple[str, str]] = []
    for param in program.get(entry).params:
        for d in getattr(param.type, "shape", None) or ():
            if isinstance(d, ir.Var) and d.name not in [n for n, _ in out]:
                out.append((d.name, param.name))
    return out


def require_dim_values(needed: List[Tuple[str, str]], dims: Dict[str, int], inputs_given: bool) -> None:
    """A usage error for the first ``(dimension, parameter)`` of ``needed`` without a value in
    ``dims`` (it was an error of the call, after the compile)."""
    for name, param in needed:
        if name not in dims:
            raise CliError("dynamic dimension %s of parameter '%s' needs a value: give it with --dim %s=<extent>%s"
                           % (name, param, name, "" if inputs_given else
                              " (or an array '%s' of that shape in --inputs FILE.npz)" % param))


def dynamic_dim_names(params) -> List[str]:
    """The dynamic dimension names in the shapes of ``params`` (``CompiledProgram.params`` or a
    HOST program's ``signature``)."""
    names = []
    for p in params:
        for d in (getattr(p, "shape", None) or ()) if getattr(p, "kind", "") == "tensor" else ():
            if isinstance(d, str) and not d.isdigit() and d not in names:
                names.append(d)
    return names
