#!/usr/bin/env bash
# Run the fused-norm GPU work on a CUDA machine from a bare checkout (no pip install needed):
#   bash benchmarks/rmsnorm_gpu.sh OUTDIR STEP...
# Steps: env (versions), tests (tests/kernels on the GPU), overhead (eager host cost only),
# sweep-wide / sweep-small (launch-variant sweeps, SPEC_WIDE / SPEC_SMALL override the cases),
# bench (the published sweep: python -m recipecli.kernels.bench_rmsnorm, BENCH_ARGS appended).
# Each step's log goes to OUTDIR/<step>.log; the exit status is the first failing step's.
set -u
out=${1:?OUTDIR}; shift
mkdir -p "$out"
if ! python3 -c "import recipecli.kernels" 2>/dev/null; then
    [ -e recipecli/kernels ] || ln -s ../kernels recipecli/kernels  # as the wheel installs it
    export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONUNBUFFERED=1
rc=0
for step in "$@"; do
    t0=$(date +%s)
    case $step in
    env)
        { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
          python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)"
        } >"$out/env.log" 2>&1 ;;
    tests)
        # the CPU-interpreter file sets TRITON_INTERPRET=1 on import: the GPU file runs alone
        { python3 -m pytest -q -p no:cacheprovider -n 8 tests/kernels/test_kernels.py &&
          python3 -m pytest -q -p no:cacheprovider -n 8 -m gpu tests/kernels/test_kernels_gpu.py
        } >"$out/tests.log" 2>&1 ;;
    overhead)
        python3 -m recipecli.kernels.bench_rmsnorm --out "$out/overhead" --ns 1 --hs 4096 \
            --dtypes bf16 --no-compile >"$out/overhead.log" 2>&1 ;;
    sweep-wide)
        python3 -m recipecli.kernels.sweep_rmsnorm --out "$out/wide" --wide --no-compile \
            --graph-max-n 512 --spec "${SPEC_WIDE:-dual:512:2880:2;dual:4096:2880:2;dual:32768:2880:2;dual:65536:2880:2;dual:4096:2560:2;dual:32768:2560:2;dual:4096:5376:2;dual:32768:5376:2;dual:4096:12288:2;dual:32768:12288:2;dual:32768:3584:2}" \
            >"$out/sweep-wide.log" 2>&1 ;;
    sweep-small)
        python3 -m recipecli.kernels.sweep_rmsnorm --out "$out/small" --small --no-compile \
            --graph-max-n 512 --spec "${SPEC_SMALL:-dual:1:8192:2;dual:64:8192:2;dual:512:8192:2;dual:512:5120:2;dual:512:4096:2;grouped:64:6144:4}" \
            >"$out/sweep-small.log" 2>&1 ;;
    bench)
        # shellcheck disable=SC2086
        python3 -m recipecli.kernels.bench_rmsnorm --out "$out/bench" ${BENCH_ARGS:-} \
            >"$out/bench.log" 2>&1 ;;
    *) echo "unknown step $step" >&2; false ;;
    esac
    s=$?
    echo "step $step rc=$s $(( $(date +%s) - t0 ))s" | tee -a "$out/steps.log"
    [ $rc -eq 0 ] && rc=$s
done
exit $rc
