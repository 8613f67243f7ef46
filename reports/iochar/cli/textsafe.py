"""Names in terminal output: the one escaper (iochar.safetext.escape) under the name
the job-list code uses. Control characters and invalid UTF-8 shown as escapes
(\\x1b, \\n, \\xff), so a crafted file name cannot move the cursor or forge lines."""

from __future__ import annotations

from ..safetext import escape as esc

__all__ = ["esc"]
