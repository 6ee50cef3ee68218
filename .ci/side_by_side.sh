# Sourced by the CI scripts. side_by_side NAME:COMMAND ...: runs each COMMAND (evaluated in a subshell of the
# calling script, so its functions and variables are there, with errexit) beside the others, keeps each one's
# output apart and prints it whole, with how long it took, in the order given; fails if any failed. On two cores,
# for steps that each keep about one core busy or wait on something else.
side_by_side() {
  local logs pids=() names=() failed=0 i
  logs=$(mktemp -d)
  for i in "$@"; do
    names+=("${i%%:*}")
    (
      set -e
      start=$SECONDS
      eval "${i#*:}"
      echo "ci: ${i%%:*} took $((SECONDS - start)) s"
    ) >"$logs/${#names[@]}" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { failed=1; echo "ci: ${names[$i]} failed"; }
    cat "$logs/$((i + 1))"
  done
  rm -rf "$logs"
  return $failed
}
