#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/aoti/conv_algorithms.sh [BUNDLE] [WORK] — on the GPU machine: how much of the zoo's
# CNN time is the choice of convolution algorithm? Exports the zoo's CNNs, then times each
# through slimcuda with cuDNN's heuristics (the default) and with SLIMCUDA_CUDNN_BENCHMARK=1
# (algorithms chosen by running them), and PyTorch's own runner on the same .pt2 with
# torch.backends.cudnn.benchmark off (its default) and on. Prints one table (µs per call).
set -uo pipefail
bundle="$(cd "${1:-gpu-bundle}" && pwd)"
work="${2:-${TMPDIR:-/tmp}/slimcuda-conv}"
models=(tv_resnet18 tv_resnet18_bf16 tv_mobilenet_v3_small tv_mobilenet_v3_small_fp16 timm_resnet10t conv_options)
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$work"
python3 tools/aoti/export_models.py "$work" --only "${models[@]}" --jobs 8 >"$work/export.log" 2>&1 ||
  { tail -20 "$work/export.log"; exit 1; }
us() { python3 -c 'import json,sys; print("%.1f" % json.loads(sys.stdin.readlines()[-1])["slimcuda_us_median"])'; }
echo "| model | slimcuda, heuristics | slimcuda, benchmark | PyTorch runner, heuristics | PyTorch runner, benchmark |"
echo "|---|---|---|---|---|"
for m in "${models[@]}"; do
  python3 tools/aoti/pt2_to_package.py "$work/$m" "$bundle/pack" >/dev/null || continue
  h=$("$bundle/zoo_runner" "$work/$m" --iterations 200 --warmup 50 | us)
  b=$(SLIMCUDA_CUDNN_BENCHMARK=1 "$bundle/zoo_runner" "$work/$m" --iterations 200 --warmup 50 | us)
  python3 tools/aoti/export_models.py "$work" --only "$m" --time-runner 200 --warmup 50 >/dev/null 2>&1
  th=$(python3 -c "import json; print('%.1f' % json.load(open('$work/torch_runner.json'))['$m']['torch_runner_us_median'])")
  ZOO_TORCH_CUDNN_BENCHMARK=1 python3 tools/aoti/export_models.py "$work" --only "$m" --time-runner 200 --warmup 50 >/dev/null 2>&1
  tb=$(python3 -c "import json; print('%.1f' % json.load(open('$work/torch_runner.json'))['$m']['torch_runner_us_median'])")
  echo "| $m | $h | $b | $th | $tb |"
done
