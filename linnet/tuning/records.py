"""The tuning file: recorded kernel choices, keyed by device, op, binding and numerics.

A project commits it beside its sources, like a lock file (`linnet.tuning.json` beside the
source file by default). `linnet tune` writes it; compiling reads it:

    {
      "format": "linnet-tuning",
      "version": 1,
      "devices": {
        "NVIDIA H200": {
          "examples.matmul.matmul": {
            "M=4096 N=4096 K=4096": {
              "fast": {"kernel": "matmul_tiles", "generics": {"BM": 128, "BN": 128, "BK": 64},
                       "warps": 8, "stages": 3, "time_ms": 0.52, "header_time_ms": 0.61,
                       "date": "2025-01-31", "linnet": "0.1.0"}}}}}
    }

Devices are named as `torch.cuda.get_device_name()` names them ("cpu" for the CPU, where
kernels run in Triton's interpreter: for tests). An op is its module path and name, its
binding the op's generics (dims and dtypes) in declaration order. Anything else (not JSON,
another program's file, a wrong field) is a `TuningFileError` naming the file and the field.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import LinnetError
from ..ir.numerics import KERNEL_MODES
from ..passes.kernels.kernel_tuning import KernelTuning, TunedChoice, hint_problem, tile_problem

FORMAT = "linnet-tuning"
VERSION = 1
DEFAULT_NAME = "linnet.tuning.json"
ENV = "LINNET_TUNING"
NUMERICS = KERNEL_MODES  # linnet.ir.numerics: the modes under which kernels run


class TuningFileError(LinnetError, ValueError):
    """A tuning file that cannot be read or used; the message names the file and why."""


@dataclass
class TuningFile:
    """A tuning file's records (`devices`), read from and written to `path`."""
    path: str
    devices: dict[str, dict[str, dict[str, dict[str, dict[str, Any]]]]] = field(
        default_factory=dict)

    @classmethod
    def load(cls, path: str | os.PathLike, missing_ok: bool = False) -> "TuningFile":
        """The file at path; a new empty one when it does not exist and `missing_ok`."""
        p = Path(path)
        if not p.exists():
            if missing_ok:
                return cls(str(path))
            raise TuningFileError(f"{path}: no such tuning file")
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise TuningFileError(f"{path}: cannot be read ({err})") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise TuningFileError(f"{path}: not valid JSON (line {err.lineno}, column "
                                  f"{err.colno}: {err.msg})") from None
        except (ValueError, RecursionError) as err:  # a 5,000-digit number, deep nesting
            why = "nested too deeply" if isinstance(err, RecursionError) else str(err)
            raise TuningFileError(f"{path}: not a tuning file ({why})") from None
        return cls(str(path), _validated(str(path), data))

    def device_names(self) -> list[str]:
        return sorted(self.devices)

    def choose_device(self, device: str | None) -> tuple[str, str]:
        """The device to use and, when none can be, a note saying why.

        A named device is used as named; with no name, the only device recorded."""
        if device is not None:
            if device in self.devices:
                return device, ""
            known = ", ".join(self.device_names()) or "none"
            return device, f"{self.path} has no choices for {device} (devices: {known})"
        names = self.device_names()
        if len(names) == 1:
            return names[0], ""
        if not names:
            return "", f"{self.path} records no choices"
        return "", (f"{self.path} records choices for several devices ({', '.join(names)}); "
                    f"name one to use them")

    def for_device(self, device: str | None = None) -> KernelTuning:
        """The choices recorded for the device (see `choose_device`), as pipeline data."""
        name, note = self.choose_device(device)
        if note:
            return KernelTuning((), self.path, name, note)
        choices = []
        for op, bindings in self.devices[name].items():
            for binding, by_numerics in bindings.items():
                for numerics, record in by_numerics.items():
                    choices.append(TunedChoice(
                        op, binding, numerics, record["kernel"],
                        tuple(sorted(record["generics"].items())),
                        record.get("warps"), record.get("stages")))
        return KernelTuning(tuple(choices), self.path, name)

    def record(self, device: str, op: str, binding: str, numerics: str,
               entry: dict[str, Any]) -> None:
        """Set the record of op at binding under numerics on device (replacing any)."""
        _check_record(self.path, f"{device}/{op}/{binding}/{numerics}", entry)
        self.devices.setdefault(device, {}).setdefault(op, {}).setdefault(binding, {})[
            numerics] = entry

    def lookup(self, device: str, op: str, binding: str, numerics: str) -> dict | None:
        return self.devices.get(device, {}).get(op, {}).get(binding, {}).get(numerics)

    def to_json(self) -> str:
        data = {"format": FORMAT, "version": VERSION, "devices": self.devices}
        return json.dumps(data, indent=2, sort_keys=True) + "\n"

    def save(self) -> None:
        """Write the file whole (a temporary file renamed over it: never half written)."""
        target = Path(self.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".linnet-tuning-", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(self.to_json())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


# ------------------------------------------------------------------------------------------
# Which file a compilation or a tuning run uses.

def tuning_path(tuning: str | os.PathLike | None, source: str | os.PathLike) -> Path:
    """The file `linnet tune` writes: `tuning` when given, else `$LINNET_TUNING`, else
    `linnet.tuning.json` beside the source file."""
    if tuning is not None:
        return Path(tuning)
    env = os.environ.get(ENV)
    return Path(env) if env else Path(source).parent / DEFAULT_NAME


def tuning_for(tuning: Any, source: str | os.PathLike, device: str | None = None
               ) -> KernelTuning | None:
    """What a compilation of `source` uses: `tuning` is False (none), a `KernelTuning` (as
    it is), a `TuningFile`, a path (that file, which must exist), or None: the file named
    by `$LINNET_TUNING` (which must exist), else `linnet.tuning.json` beside the source file
    when there is one, else none. `device` picks the device's choices (see
    `TuningFile.choose_device`)."""
    found = tuning_file(tuning, source)
    return found.for_device(device) if isinstance(found, TuningFile) else found


def tuning_file(tuning: Any, source: str | os.PathLike) -> TuningFile | KernelTuning | None:
    """The file (or the choices) that `tuning` names for `source`, read once: a loader
    reads it when it is made and picks the device's choices at each call."""
    if tuning is False:
        return None
    if isinstance(tuning, (KernelTuning, TuningFile)):
        return tuning
    if tuning is not None:
        return TuningFile.load(tuning)
    env = os.environ.get(ENV)
    if env:
        if not Path(env).exists():
            raise TuningFileError(f"{env}: no such tuning file (named by ${ENV})")
        return TuningFile.load(env)
    if not Path(source).is_file():
        return None
    beside = Path(source).parent / DEFAULT_NAME
    return TuningFile.load(beside) if beside.is_file() else None


# ------------------------------------------------------------------------------------------
# Validation: every field checked, each error naming the file and the field.

def _validated(path: str, data: Any) -> dict:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise TuningFileError(f"{path}: not a Linnet tuning file (it has no "
                              f"\"format\": \"{FORMAT}\")")
    version = data.get("version")
    if version != VERSION:
        newer = isinstance(version, int) and version > VERSION
        raise TuningFileError(f"{path}: tuning file version {version!r}"
                              + (", written by a newer Linnet" if newer else "")
                              + f"; this Linnet reads version {VERSION}")
    devices = _object(path, "devices", data.get("devices"))
    for device, ops in devices.items():
        for op, bindings in _object(path, device, ops).items():
            for binding, by_numerics in _object(path, f"{device}/{op}", bindings).items():
                where = f"{device}/{op}/{binding}"
                for numerics, record in _object(path, where, by_numerics).items():
                    if numerics not in NUMERICS:
                        raise TuningFileError(f"{path}: {where}: unknown numerics "
                                              f"{numerics!r} (expected equivalent or fast)")
                    _check_record(path, f"{where}/{numerics}", record)
    return devices


def _object(path: str, where: str, value: Any) -> dict:
    if not isinstance(value, dict):
        raise TuningFileError(f"{path}: {where}: expected an object, found "
                              f"{type(value).__name__}")
    return value


def _check_record(path: str, where: str, record: Any) -> None:
    record = _object(path, where, record)

    def bad(name: str, what: str) -> TuningFileError:
        return TuningFileError(f"{path}: {where}: `{name}` must be {what}, found "
                               f"{_shown(record.get(name))}")

    if not isinstance(record.get("kernel"), str) or not record["kernel"]:
        raise bad("kernel", "the kernel's name")
    generics = record.get("generics")
    if not isinstance(generics, dict) or not all(isinstance(k, str) for k in generics):
        raise bad("generics", "an object of tile sizes")
    for name, value in generics.items():
        if tile_problem(value) is not None:
            raise TuningFileError(f"{path}: {where}: generic `{name}` must be "
                                  f"{tile_problem(value)}, found {_shown(value)}")
    for hint in ("warps", "stages"):
        if record.get(hint) is not None and hint_problem(hint, record[hint]) is not None:
            raise bad(hint, f"{hint_problem(hint, record[hint])} or null")
    time = record.get("time_ms")
    if time is not None and (isinstance(time, bool) or not isinstance(time, (int, float))):
        raise bad("time_ms", "a number")


def _shown(value: Any, width: int = 40) -> str:
    """A value of the file, short: an integer of 5,000 digits or a list nested a
    thousand deep has a repr too long, or none at all."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    try:
        text = repr(value)
    except (RecursionError, ValueError):
        return f"a deeply nested {type(value).__name__}"
    return text if len(text) <= width else text[:width - 3] + "..."
