"""Reading the board's own files (/proc, /sys, /etc) from any Python the runner meets, standard library only: the
runner imports it, and device-info's and the doctor's probe scripts carry its text (device/info/probe_script.py)."""


def read_text(path, limit=-1):
    """The file's text (at most `limit` bytes of it), or "" when it is missing or unreadable."""
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode(errors="replace")
    except OSError:
        return ""
