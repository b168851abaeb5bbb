"""PC718: OpenRLHF's vLLM engines on a GPU without bf16.

Source: OpenRLHF 0.11.2 ``trainer/ray/vllm_engine.py:273`` creates every vLLM engine of
``train_ppo_ray`` (``--vllm.num_engines N``, N > 0) with ``"dtype": "bfloat16"``, whatever
``--ds.param_dtype`` says; vLLM 0.11.0 checks the dtype when each worker starts
(``v1/worker/gpu_worker.py:163``: ``current_platform.check_if_supports_dtype``) and
``platforms/cuda.py:497-514`` raises for bfloat16 below compute capability 8.0.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...facts import quote
from ...hardware import devices_label
from ...rules.base import Context, Finding, Fix, Severity, anchor, rule
from ...rules.device import used_devices


@rule(
    "PC718",
    "openrlhf-vllm-bf16-unsupported-gpu",
    Severity.ERROR,
    hardware=True,
    frameworks=("openrlhf",),
)
def openrlhf_vllm_bf16_unsupported_gpu(ctx: Context) -> Iterator[Finding]:
    """
    Finds OpenRLHF PPO runs whose vLLM engines would start on a GPU without bf16.

    ## What it does
    Reports `--vllm.num_engines N` (N > 0) of `openrlhf.cli.train_ppo_ray` when a device
    the run uses has compute capability below 8.0 (V100, T4), whatever `--ds.param_dtype` is.

    ## Why is this bad?
    OpenRLHF creates each generation engine with `dtype="bfloat16"`
    (`trainer/ray/vllm_engine.py:273@0.11.2`), and vLLM checks the dtype when a worker
    starts (`v1/worker/gpu_worker.py:163@0.11.0`): `ValueError: Bfloat16 is only supported on
    GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-32GB GPU has compute
    capability 7.0. You can use float16 instead by explicitly setting the `dtype` flag in CLI`
    (`platforms/cuda.py:497-514@0.11.0`). `--ds.param_dtype fp16` does not reach the engines,
    so the run stops before its first rollout.

    ## Example
    ```bash
    python3 -m openrlhf.cli.train_ppo_ray --vllm.num_engines 2 --ds.param_dtype fp16 ...   # on V100s
    ```
    Use instead: `--vllm.num_engines 0` (generation by the DeepSpeed actor), or Ampere or newer GPUs.

    ## Fix
    Set `--vllm.num_engines 0` (then drop `--ds.packing_samples`, which asserts vLLM engines,
    `train_ppo_ray.py:705@0.11.2`), or run on GPUs of compute capability 8.0 or more.
    """
    engines = ctx.config.keys.get("vllm.num_engines")
    if engines is None or not isinstance(engines.value, int) or engines.value <= 0:
        return
    lacking = [d for d in used_devices(ctx) if d.model.cc is not None and d.model.cc < (8, 0)]
    if not lacking:
        return
    first = lacking[0].model
    major, minor = first.cc or (0, 0)
    refused = quote(
        "vllm.bf16_unsupported_gpu", gpu_name=first.name, compute_str=f"has compute capability {major}.{minor}"
    )
    yield Finding(
        anchor(ctx.config.path, engines.origin),
        f"{engines.value} vLLM engine(s) on {devices_label(lacking)}: OpenRLHF starts them with dtype "
        f'bfloat16 (vllm_engine.py:273@0.11.2) and vLLM raises ValueError("{refused}") '
        "when each worker starts, whatever --ds.param_dtype says",
        Fix(
            "set `--vllm.num_engines 0` (the actor generates; `--ds.packing_samples` needs vLLM, so it goes too), "
            "or use GPUs of compute capability 8.0+"
        ),
    )
