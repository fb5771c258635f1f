"""A per-user cache directory that no other local user can write into.

The compiler keeps two kinds of files between runs: the parser's tables and the
generated PyTorch and JAX modules. Whatever is read back from such a file is
either run (a module) or steers the parser, so a file another user could have
planted must never be read. Every file therefore lives in a directory that

* sits under `$LINNET_CACHE`, else `$XDG_CACHE_HOME/linnet`, else
  `~/.cache/linnet` (never in the shared temporary directory),
* is created with mode 0700, and is checked, without following symbolic
  links, to be a directory owned by the current user that nobody else may
  write to or list,

and every file read back is opened without following links and checked, on the
open descriptor, to be a regular file owned by the current user that nobody
else may write to. Files are written to a private temporary name and renamed
into place, so a reader sees a whole file or none. When no such directory can
be had (the cache is missing, read-only, or owned by someone else), the callers
carry on without a cache: `private_dir` returns None and they compute afresh.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

DIR_MODE = 0o700


def cache_root() -> Path:
    """`$LINNET_CACHE`, else `$XDG_CACHE_HOME/linnet`, else `~/.cache/linnet`."""
    explicit = os.environ.get("LINNET_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "linnet"
    return Path(os.path.expanduser("~")) / ".cache" / "linnet"


def private_dir(name: str) -> Path | None:
    """`<cache root>/<name>`, created 0700 if missing; None if it is not safely ours.

    The root itself may be shared or belong to someone else (a `$LINNET_CACHE`
    set to a common folder); only `name` below it must be private, since that is
    where files are read from.
    """
    folder = cache_root() / name
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(folder, DIR_MODE)
        except FileExistsError:
            _tighten(folder)
        return folder if is_private_dir(folder) else None
    except OSError:
        return None


def _tighten(folder: Path) -> None:
    """Make a real directory of ours that others may use (an older linnet made it 0755) 0700.

    Files others may have put there while it was open stay unread: `read_private`
    rejects any file that is not ours."""
    info = os.lstat(folder)
    if (stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()
            and stat.S_IMODE(info.st_mode) & 0o077):
        os.chmod(folder, DIR_MODE)


def is_private_dir(folder: Path) -> bool:
    """True if folder is a real directory (not a link) of ours that only we can use."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return (stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()
            and stat.S_IMODE(info.st_mode) & 0o077 == 0)


def read_private(path: Path) -> bytes | None:
    """The bytes of path if it is a regular file of ours that others cannot write; else None.

    The checks run on the open descriptor (opened without following a final
    link, and without blocking: opening a named pipe would wait for a writer), so the
    file checked is the file read.
    """
    if not is_private_dir(path.parent):
        return None
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not (stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid()
                and stat.S_IMODE(info.st_mode) & 0o022 == 0):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    except OSError:
        return None
    finally:
        os.close(fd)


def write_private(path: Path, data: bytes) -> bool:
    """Write data to path atomically (a private temporary file renamed into place).

    Returns False, having changed nothing, when the directory is not private or
    the write fails (a full or read-only disk): a cache is an optimisation only.
    """
    if not is_private_dir(path.parent):
        return False
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")  # mode 0600
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
