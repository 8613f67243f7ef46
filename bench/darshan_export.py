"""Darshan export speed: `iochar-parser --to-darshan` on real-format logs of 10^4 and
10^5 POSIX records (bench/report_speed.py's synthetic jobs), and PyDarshan reading the
result back, medians of 3 runs each in this process.

    python bench/darshan_export.py [--quick]      (--quick: 10^4 only)
"""

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report_speed import real_schema, synthetic  # noqa: E402


def median_time(fn, arg, runs=3):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        out = fn(arg)
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main():
    import darshan

    import iochar
    from iochar.darshan_export import to_bytes, write_new

    sizes = [10**4] if "--quick" in sys.argv else [10**4, 10**5]
    with tempfile.TemporaryDirectory() as d:
        schema = real_schema(d)
        print(f"{'records':>8} {'open s':>8} {'export s':>9} {'rec/s':>9} {'iochar B':>10} "
              f"{'darshan B':>10} {'PyDarshan read s':>17}")
        for n in sizes:
            src = f"{d}/n{n}.iochar"
            synthetic(n, src, schema)
            t_open, log = median_time(iochar.open, src, runs=1)
            log.records("POSIX")
            t_exp, data = median_time(to_bytes, log)
            out = write_new(f"{d}/n{n}.darshan", data)
            t_read, _ = median_time(lambda p: darshan.DarshanReport(p, read_all=True), str(out))
            print(f"{n:>8} {t_open:>8.2f} {t_exp:>9.2f} {n / t_exp:>9,.0f} "
                  f"{Path(src).stat().st_size:>10,} {len(data):>10,} {t_read:>17.2f}")


if __name__ == "__main__":
    main()
