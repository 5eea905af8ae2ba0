"""Writing into a run directory the way tiersim itself does: whole or not at all, and never through
a symbolic link. The bytes go to NAME.tmp, created exclusively (O_CREAT | O_EXCL | O_NOFOLLOW, after
removing whatever had that name), are flushed to disk and renamed over NAME (a link there is
replaced, not followed). Used by scripts/plot and scripts/render; from the shell:

  safe_write.py SRC DST     copies the file SRC (a private temporary file) to DST that way
"""
import os
import sys


def write_bytes(path, data):
    """Writes data (bytes) as the file `path`."""
    directory, name = os.path.split(os.path.abspath(path))
    dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        tmp = name + ".tmp"
        try:
            os.unlink(tmp, dir_fd=dfd)  # a link itself, never what it points to
        except FileNotFoundError:
            pass
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dfd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    finally:
        os.close(dfd)


def require_real_directory(path, create=False):
    """`path` is a directory of its own, not a link to one elsewhere (made when missing and create)."""
    if create and not os.path.lexists(path):
        os.makedirs(path, exist_ok=True)
    if os.path.islink(path) or not os.path.isdir(path):
        sys.exit("%s: is a symbolic link or not a directory; nothing is written through it" % path)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], "rb") as f:
        write_bytes(sys.argv[2], f.read())
