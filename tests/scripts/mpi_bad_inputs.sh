# Bad input to a data-parallel run: ranks given another seed, model config or data set stop at
# start with an error naming the rank and what differs; an error on one rank stops them all; a
# launch without the MPI plugin and a batch that does not divide among the ranks are clear
# errors too.
source "$(dirname "$0")/lib.bash"
require_mpi
prepare_small_corpus
base=(--steps 3 --seq-len 32 --micro-batch 2 --eval-every 0 --checkpoint-every 0 --quiet)
config="$root/tests/fixtures/train/diff.json"

# two_ranks "rank 1's extra options" options...: rank 0 runs the options, rank 1 the same plus its own.
two_ranks() {
  local extra="$1"; shift
  # shellcheck disable=SC2086
  mpi_run -np 1 "$difftx" train "$@" : -np 1 "$difftx" train "$@" $extra
}

# Sanity: the same command on both ranks trains.
two_ranks "" --config "$config" --data "$work/data" "${base[@]}" --out "$work/ok" > /dev/null

expect_error "rank 1: '/options/seed' is 2 here but 1 on rank 0" \
  two_ranks "--seed 2" --config "$config" --data "$work/data" "${base[@]}" --out "$work/r1"
expect_error "rank 1: '/model config/attention' is \"baseline\" here but \"diff\" on rank 0" \
  mpi_run -np 1 "$difftx" train --config "$config" --data "$work/data" "${base[@]}" --out "$work/r2" : \
          -np 1 "$difftx" train --config "$root/tests/fixtures/train/baseline.json" --data "$work/data" "${base[@]}" \
          --out "$work/r2"
cp -r "$work/data" "$work/other_data"
sed -i 's/"val_fraction": 0.05/"val_fraction": 0.050001/' "$work/other_data/metadata.json"
expect_error "rank 1: '/data/metadata.json' is" \
  mpi_run -np 1 "$difftx" train --config "$config" --data "$work/data" "${base[@]}" --out "$work/r3" : \
          -np 1 "$difftx" train --config "$config" --data "$work/other_data" "${base[@]}" --out "$work/r3"
grep -qF "the ranks were not given the same inputs" "$work/out.txt" || { echo "FAIL: no summary"; exit 1; }

# An error on one rank alone stops the job (MPI_Abort) rather than leaving rank 0 waiting.
expect_error "difftx train: error: rank 1 of 2: $work/nope: the data directory does not exist" \
  mpi_run -np 1 "$difftx" train --config "$config" --data "$work/data" "${base[@]}" --out "$work/r6" : \
          -np 1 "$difftx" train --config "$config" --data "$work/nope" "${base[@]}" --out "$work/r6"
expect_error "--batch-tokens 96 must be a multiple of ranks x --micro-batch x --seq-len = 2 x 2 x 32" \
  mpi_run -np 2 "$difftx" train --config "$config" --data "$work/data" "${base[@]}" --batch-tokens 96 --out "$work/r4"
expect_error "difftx was started by an MPI launcher (OMPI_COMM_WORLD_SIZE is set), but its MPI plugin cannot be loaded" \
  mpi_run -np 2 -x DIFFTX_MPI_PLUGIN=/nonexistent/libdifftx_mpi.so "$difftx" train --config "$config" \
          --data "$work/data" "${base[@]}" --out "$work/r5"
echo "PASS"
