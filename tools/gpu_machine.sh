#!/usr/bin/env bash
# The GPU machine's checks in one call, for a machine lent for minutes (docs/gpu.md):
#   1. the machine: GPU, driver, CPU, the Python packages that run the suite  (machine.txt);
#   2. `nbsymple check --gpu-report` on the numba backend, then on CuPy's     (report-*.txt);
#   3. the GPU asv benchmarks on the large grid, most wanted first, one asv run per group so
#      that each group's results are saved as it ends (asv.txt; the results files are copied
#      to OUT_DIR as well as written to results/<machine>/).
# Each stage has a time limit within SECONDS_TOTAL, so one that fails or runs out of time costs
# only itself. No install step: the package runs from this checkout (a git checkout: asv records
# the commit) with the machine's numpy, numba, numba-cuda, CuPy and asv.
#
#   usage: bash tools/gpu_machine.sh [OUT_DIR [SECONDS_TOTAL]]      (defaults: gpu-machine 420)
#   REPORT_ARGS: more arguments for both reports (e.g. "--sizes 65536 --min-seconds 0.5")
#   NBSYMPLE_BENCH_GRID: the grid of stage 3 (default large)
#   STAGES: the stages to run (default "reports asv"; the machine is always described), or
#           "groups" to print the asv groups' patterns and stop
set -u
usage() {
    echo "usage: bash tools/gpu_machine.sh [OUT_DIR [SECONDS_TOTAL]]: $1" >&2
    exit 2
}
out=$(realpath -m -- "${1:-gpu-machine}")       # from where it was called; then the checkout's root
total=${2:-420}
[[ $total =~ ^[0-9]{1,6}$ ]] || usage "SECONDS_TOTAL is a whole number of seconds, not '$total'"
total=$((10#$total))
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." || usage "cannot reach the checkout"
py=${PYTHON:-python3}
read -r -a report_args <<< "${REPORT_ARGS:-}"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export ASV_PYTHONPATH=$PYTHONPATH        # asv drops PYTHONPATH from its benchmark processes, not this
# the suite's own cache folder (benchmarks/package.py), this user's: one folder in /tmp for every user had numba
# load the kernels (pickled indexes) of whoever made it first (a hunt)
export NUMBA_CACHE_DIR=${NUMBA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nbsymple-versions/numba}
export NBSYMPLE_BENCH_GRID=${NBSYMPLE_BENCH_GRID:-large}
stages=" ${STAGES:-reports asv} "
end=$((SECONDS + total))

# the asv groups, most wanted first: per task and step of C, D and E, then the kernels alone;
# the large N before the small (asv's `name(params)` as tools.tracking's --bench matches it)
groups=()
for b in "tasks\.Tasks\.time_pairwise\('[CDE]'" "tasks\.Transfer\.time_transfer\('[CDE]'" \
         "tasks\.HostTasks\.time_[a-z]+\('[CDE]'" "steps\.Step\.time_step_leapfrog\('[CDE]'" \
         "gpu\.GpuKernel\.time_kernel\('[a-z]+', '[a-z]+', [A-Za-z]+" \
         "steps\.TaskShares\.track_share\('[CDE]'" "steps\.Step\.time_step_si6a\('[CDE]'"; do
    groups+=("^$b, (16384|65536|131072|262144)\b" "^$b, (256|1024|4096)\b")
done

if [[ $stages == *" groups "* ]]; then
    printf '%s\n' "${groups[@]}"
    exit 0
fi
mkdir -p -- "$out" 2> /dev/null || usage "cannot make the folder OUT_DIR ($out)"
# its logs are appended to, stage by stage: an earlier call's would be mixed with this one's (a hunt)
[ -e "$out/machine.txt" ] && usage "OUT_DIR ($out) holds the files of an earlier call, which this one would add \
to; give another folder, or move them away"

stage() {  # stage LOG CAP_SECONDS COMMAND...: run it within its cap and what is left, appended to LOG
    local log=$out/$1 cap=$2 rest=$((end - SECONDS)); shift 2
    [ "$rest" -lt "$cap" ] && cap=$rest
    if [ "$cap" -le 5 ]; then
        echo "== not run, 5 s or less left of the $total s: $*" | tee -a -- "$log"
        return 1
    fi
    echo "== at most $cap s: $*" | tee -a -- "$log"
    local t0=$SECONDS
    timeout --kill-after=10 "$cap" "$@" 2>&1 | tee -a -- "$log"
    local rc=${PIPESTATUS[0]}
    echo "== exit status $rc after $((SECONDS - t0)) s$([ "$rc" -eq 124 ] && echo ' (out of time)')" | tee -a -- "$log"
}

{
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
        --format=csv 2>&1
    grep -m1 "model name" /proc/cpuinfo; echo "cores: $(nproc)"; git log --oneline -1 2>&1
    "$py" - <<'EOF'
import importlib, importlib.metadata, platform
print("python", platform.python_version())
for name, dist in (("numpy", ""), ("numba", ""), ("llvmlite", ""), ("numba.cuda", "numba-cuda"), ("cupy", ""),
                   ("asv", ""), ("matplotlib", "")):
    try:
        m = importlib.import_module(name)
        print(name, importlib.metadata.version(dist) if dist else getattr(m, "__version__", "?"))
    except Exception as e:  # noqa: BLE001 - reported, not fatal
        print(name, "missing:", e)
EOF
} 2>&1 | tee -- "$out/machine.txt"

if [[ $stages == *" reports "* ]]; then
    stage report-numba.txt 200 "$py" -m nbsymple_versions.instruments.gpu_report "${report_args[@]}"
    stage report-cupy.txt 160 "$py" -m nbsymple_versions.instruments.gpu_report --gpu-backend cupy "${report_args[@]}"
fi
[[ $stages == *" asv "* ]] || exit 0
if ! "$py" -c "import asv" 2> /dev/null; then
    echo "== asv: not run, asv is not installed for $py" | tee -- "$out/asv.txt"
    exit 0
fi
for g in "${groups[@]}"; do
    stage asv.txt "$total" "$py" -m tools.tracking run --bench "$g" || break
    find results -name "*.json" -newer "$out/machine.txt" -exec cp {} "$out"/ \;   # saved so far
done
