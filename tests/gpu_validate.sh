#!/usr/bin/env bash
# Every GPU correctness check of cutemma in one go (on an sm_90 machine; results under $1).
#
#   bash tests/gpu_validate.sh OUTDIR [quick]
#
# 1. pytest -m gpu (catalog probe samples, the wgmma descriptor check, sm80 + sm90 GEMM checks)
# 2. the sm90 GEMM's full checks (every config/major/dtype, edges, batched, fp8, tf32)
# 3. clusters of 2 (both majors, pairs along M and N)
# 4. 1,200 random cases through cutemma.gemm (gpu_sweep.py)
# 5. compute-sanitizer memcheck/racecheck/synccheck on small shapes of each sm90 mode
# Each step's log and JSON land in OUTDIR; a summary line per step goes to OUTDIR/summary.txt.
set -u
out=${1:?usage: gpu_validate.sh OUTDIR [quick]}
quick=${2:-}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
step() {  # step NAME COMMAND...: run, keep the log, record rc and seconds
    local name=$1 t0=$SECONDS rc
    shift
    "$@" >"$out/$name.log" 2>&1
    rc=$?
    echo "$name rc=$rc $((SECONDS - t0))s $(tail -n 1 "$out/$name.log")" | tee -a "$out/summary.txt"
}
step pytest_gpu python -m pytest -q -m gpu tests -p no:cacheprovider
step sm90_checks python tests/kernels/gpu_sm90_checks.py "$out/sm90_checks.json" --no-bench ${quick:+--quick}
step cluster python tests/kernels/gpu_sm90_cluster.py "$out/cluster.json" --no-speed
step sweep python tests/kernels/gpu_sweep.py "$out/sweep.json" 1200 --shards=4
for mode in "" fp8 cluster --batched; do
    for tool in memcheck racecheck synccheck; do
        extra=$([ "$tool" = memcheck ] && echo "--report-api-errors no")
        # shellcheck disable=SC2086
        step "san_${tool}_${mode#--}" "$san" --tool "$tool" $extra --error-exitcode 9 \
            python tests/kernels/gpu_sm90_sanitize.py $mode
        [ -n "$quick" ] && break
    done
done
