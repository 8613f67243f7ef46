"""many-seeks: an explicit seek before most accesses."""

from __future__ import annotations

from .base import Advice, Context, num

ID = "many-seeks"


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    for module in ("POSIX", "STDIO"):
        ms = ctx.module_summary(module)
        seeks, ops = float(ms.get("seeks", 0)), float(ms.get("reads", 0) + ms.get("writes", 0))
        if seeks < cfg["min_seeks"] or not ops or seeks / ops < cfg["per_op"]:
            continue
        rec = ("use pread/pwrite with explicit offsets instead of lseek + read/write"
               if module == "POSIX" else
               "each fseek drops the stdio buffer: read/write larger blocks sequentially, or "
               "use pread/pwrite on the file descriptor")
        out.append(Advice(
            ID, "warn",
            f"{module}: {num(seeks)} seeks for {num(ops)} accesses ({seeks / ops:.2f} per access)",
            rec, {f"{module}_SEEKS": seeks, "accesses": ops}, module))
    return out
