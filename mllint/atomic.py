"""Writing a file whole or not at all. The data goes to a temporary file in the same directory, is synced,
then renamed over the file: a reader, a crash or a full disk sees the old file or the new one, never a
part. On an error the temporary file is removed and the old file is left as it was."""
from __future__ import annotations

import os
import stat


def replace_file(path: str, data: bytes, keep: os.stat_result | None = None) -> None:
    """Write `data` to `path`. With `keep`, the existing file's status: its mode, owner and group are kept,
    and a file with several hard links (or whose owner cannot be given to the new one) is overwritten in
    place once the temporary file has shown the data fits, so that every link sees the new content."""
    import tempfile  # here: a run that writes nothing does not load it

    descriptor, temporary = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".mllint-", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if keep is not None and (keep.st_nlink > 1 or not _owned_as(temporary, keep)):
            os.unlink(temporary)  # it showed the data fits: its space is for the file now
            _overwrite(path, data)
            return
        if keep is not None:
            os.chmod(temporary, stat.S_IMODE(keep.st_mode))
        os.replace(temporary, path)
    finally:
        if os.path.lexists(temporary):
            os.unlink(temporary)


def _owned_as(temporary: str, keep: os.stat_result) -> bool:
    """Give the temporary file the owner and group of the file it replaces (root's `--fix` on another
    user's file); False when that is not allowed."""
    if (keep.st_uid, keep.st_gid) == (os.getuid(), os.getgid()):
        return True
    try:
        os.chown(temporary, keep.st_uid, keep.st_gid)
    except OSError:
        return False
    return True


def _overwrite(path: str, data: bytes) -> None:
    """Write `data` over the file's content in place; on an error, put the old content back."""
    with open(path, "r+b") as handle:
        old = handle.read()
        try:
            handle.seek(0)
            handle.write(data)
            handle.truncate()
            handle.flush()
            os.fsync(handle.fileno())
        except OSError:
            handle.seek(0)
            handle.write(old)
            handle.truncate()
            handle.flush()
            raise
