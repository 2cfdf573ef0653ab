#!/usr/bin/env bash
# Runs weft-sim on PROGRAM in one process and under `mpirun -np RANKS`, and
# requires the same exit status, stdout (less the wall-clock lines), stats
# JSON and outputs byte for byte (docs/simulator.md, "Distributed
# simulation").
#   run-mpi.sh MPIRUN WEFT_SIM WORKDIR RANKS PROGRAM [weft-sim options...]
set -u
mpirun="$1" sim="$2" work="$3" ranks="$4" prog="$5"
shift 5
rm -rf "$work" && mkdir -p "$work/one" "$work/many"
# mpirun as root needs these (the tests run as root in containers).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
"$sim" "$prog" --stats "$work/one/stats.json" --output-dir "$work/one" "$@" \
  > "$work/one.out" 2> "$work/one.err"
rc1=$?
"$mpirun" --oversubscribe -np "$ranks" "$sim" "$prog" \
  --stats "$work/many/stats.json" --output-dir "$work/many" "$@" \
  > "$work/many.out" 2> "$work/many.err"
rcn=$?
fail=0
if [ "$rc1" != "$rcn" ]; then
  echo "exit status: one process $rc1, $ranks ranks $rcn"; fail=1
fi
filter() { grep -v -e 'simulated in' -e 'ranks; rank 0 sent' "$1"; }
if ! diff <(filter "$work/one.out") <(filter "$work/many.out"); then
  echo "stdout differs"; fail=1
fi
# Under mpirun --threads is noted (each rank runs one thread) and the
# results are the same.
if ! diff <(grep '^weft-sim' "$work/one.err") \
          <(grep '^weft-sim' "$work/many.err" | grep -v 'note: --threads'); then
  echo "stderr differs"; fail=1
fi
case " $* " in
*" --threads "*)
  if ! grep -q "note: --threads .* each of the $ranks ranks runs one thread" \
         "$work/many.err"; then
    echo "no note of --threads under mpirun"; fail=1
  fi ;;
esac
for f in "$work"/one/*; do
  [ -e "$f" ] || continue
  if ! cmp "$f" "$work/many/$(basename "$f")"; then fail=1; fi
done
n1=$(ls "$work/one" | wc -l) nn=$(ls "$work/many" | wc -l)
if [ "$n1" != "$nn" ]; then echo "files: $n1 vs $nn"; fail=1; fi
if [ "$fail" != 0 ]; then
  echo "--- $ranks ranks stderr:"; cat "$work/many.err"
  exit 1
fi
echo "same results with 1 and $ranks ranks (exit status $rc1, $n1 files)"
