#!/usr/bin/env bash
# Re-make the format-3 fuzz seeds in tests/corpus/v3/ from the C workloads (build/
# must be built), then the crash corpus (tests/helpers/crashcorpus.py). The format-1
# seeds in tests/corpus/ came from an older runtime and are kept as they are.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=$PWD/build
OUT=$PWD/tests/corpus/v3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
one() {  # one NAME CMD...: run CMD under the tool in a fresh dir (DIR in CMD), keep its log
  local name=$1 d=$T/$1
  shift
  mkdir -p "$d"
  (cd "$d" && env IOCHAR_LOGDIR="$d" "${@//DIR/$d}" >/dev/null)
  cp "$d"/*.iochar "$OUT/$name.iochar"
}
P="LD_PRELOAD=$B/libiochar.so"
one posix env "$P" "$B/tests/posix_workload" strided DIR
one stdio env "$P" "$B/tests/stdio_workload" DIR
one callsites_trace env "$P" IOCHAR_CALLSITES=1 IOCHAR_TRACE=1 "$B/tests/callsite_workload" DIR
mkdir -p "$T/mpi" "$T/ranks"
(cd "$T/mpi" && IOCHAR_LOGDIR="$T/mpi" IOCHAR_CALLSITES=1 IOCHAR_TRACE=1 \
  mpiexec.mpich -n 4 -env LD_PRELOAD "$B/libiochar.so" "$B/tests/mpi_workload" >/dev/null)
cp "$T"/mpi/*.iochar "$OUT/mpi4.iochar"
(cd "$T/ranks" && IOCHAR_LOGDIR="$T/ranks" \
  mpiexec.mpich -n 4 -env LD_PRELOAD "$B/libiochar.so" "$B/tests/mpi_workload" exit >/dev/null) || true
for i in 0 1 2 3; do cp "$T"/ranks/*.rank$i.iochar "$OUT/rank$i.iochar"; done
chmod 644 "$OUT"/*.iochar
PYTHONPATH=$PWD/reports python3 tests/helpers/crashcorpus.py
