#!/usr/bin/env bash
# Run the fused-norm GPU work on a CUDA machine from a bare checkout (no pip install needed):
#   bash benchmarks/rmsnorm_gpu.sh OUTDIR STEP...
# Steps: env (versions), tests (tests/kernels on the GPU), overhead (eager host cost only),
# sweep-wide / sweep-small / sweep-fp16 (launch-variant sweeps, SPEC_WIDE / SPEC_SMALL /
# SPEC_FP16 override the cases), sass (SASS opcode counts of the dual kernel, bf16 and fp16),
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
    sweep-fp16)
        python3 -m recipecli.kernels.sweep_rmsnorm --out "$out/fp16" --wide --no-compile \
            --graph-max-n 4096 --spec "${SPEC_FP16:-dual:4096:4096:2:fp16;dual:4096:4096:2;dual:4096:2560:2:fp16;dual:4096:7168:2:fp16}" \
            >"$out/sweep-fp16.log" 2>&1 ;;
    sass)
        python3 - >"$out/sass.log" 2>&1 <<'PY'
import collections, torch
from recipecli.kernels import rmsnorm_kernels as RK, rmsnorm_triton as K
for dt in (torch.bfloat16, torch.float16):
    n = h = 4096
    a, b = torch.randn(n, h, device="cuda", dtype=dt), torch.randn(n, h, device="cuda", dtype=dt)
    w, o = torch.ones(h, device="cuda", dtype=dt), torch.empty(n, 2 * h, device="cuda", dtype=dt)
    K.dual_rmsnorm_launch(a, b, w, w, 1e-5, 1e-5, o[:, :h], o[:, h:])
torch.cuda.synchronize()
for cache in RK._dual_rmsnorm_kernel.device_caches.values():
    for ck in cache[0].values():
        sass = ck.asm["sass"]
        ops = collections.Counter(ln.split()[1].split(".")[0] for ln in sass.splitlines()
                                  if ln.strip().startswith("/*") and len(ln.split()) > 1)
        print(ck.src.signature.get("a_ptr"), ck.metadata.num_warps, dict(ops.most_common(40)))
        print(sass[:15000])
PY
        ;;
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
