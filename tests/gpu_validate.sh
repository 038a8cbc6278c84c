#!/usr/bin/env bash
# Every GPU correctness check of cutemma in one go (on an sm_90 machine; results under $1).
#
#   bash tests/gpu_validate.sh OUTDIR [quick] [STEPS]
#
# STEPS: a regex of the step names to run (pytest_gpu, sm90_checks, cluster, sweep, designs,
# epilogue, torch_op, streamk, pdl, tune, threads, key_rows, san_* (san_*_decode: decode
# rings)),
# e.g. 'san_' for the sanitizers alone. All steps take ~11 min on a fresh H100 machine
# (pytest -m gpu ~7 of them, mostly compiling), more than one 10-minute device call: split
# them, e.g. `gpu_validate.sh OUT '' pytest_gpu` in one call and
# `gpu_validate.sh OUT '' 'sm90|cluster|sweep|san_'` in the next.
#
# 1. pytest -m gpu (catalog probe samples, the wgmma descriptor check, sm80 + sm90 GEMM checks)
# 2. the sm90 GEMM's full checks (every config/major/dtype, edges, batched, fp8, tf32)
# 3. clusters of 2 (both majors, pairs along M and N)
# 4. 1,200 random cases through cutemma.gemm (gpu_sweep.py)
# 5. compute-sanitizer memcheck/racecheck/synccheck on small shapes of each sm90 mode
# 6. random GemmDesigns and the seeds' TiledMMAs, fused epilogues, the torch custom op and
#    CUDA graphs, split-K, 8 threads x 40 fresh processes of first calls, the key bench rows
#    (SWEEP_COUNT, DESIGN_COUNT, THREAD_PROCS shrink steps 4 and 6 for a short call)
# Each step's log and JSON land in OUTDIR; a summary line per step goes to OUTDIR/summary.txt;
# the exit status is 1 if any step failed.
set -u
out=${1:?usage: gpu_validate.sh OUTDIR [quick] [STEPS]}
quick=${2:-}
steps=${3:-.}
failed=0
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
step() {  # step NAME COMMAND...: run, keep the log, record rc and seconds
    local name=$1 t0=$SECONDS rc
    shift
    [[ $name =~ $steps ]] || return 0
    "$@" >"$out/$name.log" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] || failed=1
    echo "$name rc=$rc $((SECONDS - t0))s $(tail -n 1 "$out/$name.log" | tr -d '\0')" | tee -a "$out/summary.txt"
}
step pytest_gpu python -m pytest -q -m gpu tests -p no:cacheprovider
step sm90_checks python tests/kernels/gpu_sm90_checks.py "$out/sm90_checks.json" --no-bench ${quick:+--quick}
step cluster python tests/kernels/gpu_sm90_cluster.py "$out/cluster.json" --no-speed
step quad python tests/kernels/gpu_quad_clusters.py "$out/quad.json"
step sweep python tests/kernels/gpu_sweep.py "$out/sweep.json" "${SWEEP_COUNT:-1200}" --shards=4
# issue 20-22's checks: designs (random + the seeds), fused epilogues, the torch custom op and
# CUDA graphs, split-K, first calls from threads in fresh processes, the bench's key rows
step designs python tests/kernels/gpu_designs.py "$out/designs.json" "${DESIGN_COUNT:-160}"
step epilogue python tests/kernels/gpu_epilogue.py "$out/epilogue.json" ${quick:+--quick}
step torch_op python tests/kernels/gpu_torch_op.py "$out/torch_op.json" ${quick:+--quick}
step streamk python tests/kernels/gpu_streamk.py "$out/streamk.json" --prewarm
step pdl python tests/kernels/gpu_pdl.py "$out/pdl.json"
step tune python tests/kernels/gpu_tune_sm90.py "$out/tune.json"
step threads python tests/kernels/gpu_threads.py "$out/threads.json" "${THREAD_PROCS:-40}" 8
step key_rows python tests/kernels/gpu_key_rows.py "$out/key_rows.json"
for mode in "" fp8 cluster --batched; do
    for tool in memcheck racecheck synccheck; do
        extra=$([ "$tool" = memcheck ] && echo "--report-api-errors no")
        # shellcheck disable=SC2086
        step "san_${tool}_${mode#--}" "$san" --tool "$tool" $extra --error-exitcode 9 \
            python tests/kernels/gpu_sm90_sanitize.py $mode
        if [ -n "$quick" ]; then break; fi
    done
done
# sanitize NAME COMMAND...: steps san_<tool>_NAME, COMMAND under each tool (@TOOL@ in it
# becomes the tool's name)
sanitize() {
    local name=$1 tool extra
    shift
    for tool in memcheck racecheck synccheck; do
        extra=$([ "$tool" = memcheck ] && echo "--report-api-errors no")
        # shellcheck disable=SC2086
        step "san_${tool}_${name}" "$san" --tool "$tool" $extra --error-exitcode 9 \
            "${@//@TOOL@/$tool}"
    done
}
# stream-K and swap-AB (issue 21): small shapes of every kind of piece
sanitize streamk python tests/kernels/gpu_streamk.py "$out/san_@TOOL@_streamk.json" --small
# decode kernels at the rings decode.stream_stages sets (issue 21)
sanitize decode python tests/kernels/gpu_decode_sanitize.py
# programmatic dependent launches (issue 21): eager and in a graph, after a torch kernel
sanitize pdl python tests/kernels/gpu_pdl.py "$out/san_@TOOL@_pdl.json" --small
# fused epilogues on cooperative tiles (issue 33): one staging pass, two, a cluster, one
# consumer warpgroup, each with bias + gelu_tanh, scale_col + bias + silu and a residual
sanitize fused_coop python tests/kernels/gpu_sm90_sanitize.py fused cooperative
# 64-row tiles as wide as fill a wave (space.wave_kernels, issue 33) and the narrow ones
# (space.narrow_kernels, bf16 and e4m3): widths off the 64-column grid, every tile edge
# cut, plain and with bias + gelu_tanh
sanitize wave python tests/kernels/gpu_wave_sanitize.py
exit $failed
