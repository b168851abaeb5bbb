"""PC6xx: DeepSpeed config files (checked on their own, inline in a HF config, named by Lightning)."""

from __future__ import annotations

import json

import pytest

from helpers import Case, check_case, run_case


def ds(**sections: object) -> str:
    """A DeepSpeed JSON file, one key per line (edits and positions are per key)."""
    return json.dumps(sections, indent=2) + "\n"


Z2 = {"stage": 2}
MICRO = 4

HF = """
model_name_or_path: meta-llama/Llama-3.1-8B
output_dir: out
per_device_train_batch_size: 4
"""

LIGHTNING = """
trainer:
  precision: bf16-mixed
  accelerator: gpu
  devices: 8
  strategy:
    class_path: lightning.pytorch.strategies.DeepSpeedStrategy
    init_args:
      config: ds.json
model:
  class_path: my.Model
"""

#: a HF-style template: every switch "auto"
HF_TEMPLATE = ds(
    fp16={"enabled": "auto", "loss_scale": 0, "initial_scale_power": 16},
    bf16={"enabled": "auto"},
    zero_optimization={"stage": 2},
    train_micro_batch_size_per_gpu="auto",
    gradient_accumulation_steps="auto",
    gradient_clipping="auto",
)

#: an accelerate-style template: the ZeRO stage is "auto" too
STAGE_AUTO = ds(
    bf16={"enabled": "auto"},
    zero_optimization={"stage": "auto"},
    train_micro_batch_size_per_gpu="auto",
    gradient_accumulation_steps="auto",
)

BOTH = ds(fp16={"enabled": True}, bf16={"enabled": True}, zero_optimization=Z2, train_micro_batch_size_per_gpu=MICRO)

CASES = [
    # PC601: both switches on
    Case("both enabled, A100: keep bf16", "PC601", BOTH, ["A100"], {(6, 5)}, fmt="json"),
    Case("both enabled, V100: keep fp16", "PC601", BOTH, ["V100"], {(6, 5)}, fmt="json"),
    Case(
        "fixed: fp16 off",
        "PC601",
        BOTH.replace('"enabled": true\n  },\n  "bf16"', '"enabled": false\n  },\n  "bf16"'),
        ["A100"],
        fmt="json",
    ),
    Case(
        "fp16 with the legacy bfloat16 section: DeepSpeed reads it when there is no bf16 key",
        "PC601",
        ds(fp16={"enabled": True}, bfloat16={"enabled": True}, train_micro_batch_size_per_gpu=MICRO),
        ["V100"],
        {(6, 5)},
        fmt="json",
    ),
    Case(
        "under the HF Trainer the legacy section is ignored (accelerate adds bf16): PC602, not PC601",
        "PC601",
        HF + "fp16: true\ndeepspeed:\n  fp16:\n    enabled: true\n  bfloat16:\n    enabled: true\n"
        "  zero_optimization:\n    stage: 2\n",
        ["A100"],
    ),
    # PC602: legacy bfloat16
    Case(
        "legacy bfloat16 in a standalone file",
        "PC602",
        ds(bfloat16={"enabled": True}, zero_optimization=Z2, train_micro_batch_size_per_gpu=MICRO),
        expect={(2, 3)},
        fmt="json",
    ),
    Case(
        "legacy bfloat16 beside bf16: ignored",
        "PC602",
        ds(bf16={"enabled": True}, bfloat16={"enabled": True}, zero_optimization=Z2, train_micro_batch_size_per_gpu=4),
        expect={(5, 3)},
        fmt="json",
    ),
    Case(
        "legacy bfloat16 under the HF Trainer: accelerate adds bf16 false, the run trains in fp32",
        "PC602",
        HF + "deepspeed:\n  bfloat16:\n    enabled: true\n  zero_optimization:\n    stage: 2\n",
        expect={(5, 3)},
    ),
    Case(
        "fixed: the bf16 spelling",
        "PC602",
        ds(bf16={"enabled": True}, zero_optimization=Z2, train_micro_batch_size_per_gpu=MICRO),
        fmt="json",
    ),
    # PC603: "auto" where Lightning launches
    Case(
        "HF template named by a Lightning DeepSpeedStrategy",
        "PC603",
        LIGHTNING,
        expect={(8, 5), (13, 3)},
        files={"ds.json": HF_TEMPLATE},
    ),
    Case(
        "accelerate template (stage auto) named by a Lightning DeepSpeedStrategy",
        "PC603",
        LIGHTNING,
        expect={(3, 5), (6, 5), (8, 3)},
        files={"ds.json": STAGE_AUTO},
    ),
    Case(
        "32-true: fp16/bf16 auto are dropped, which is what the Trainer wants",
        "PC603",
        LIGHTNING.replace("bf16-mixed", "32-true"),
        files={"ds.json": ds(fp16={"enabled": "auto"}, bf16={"enabled": "auto"}, zero_optimization=Z2)},
    ),
    Case(
        "fixed: explicit values, accumulation left to the Trainer",
        "PC603",
        LIGHTNING,
        files={"ds.json": ds(bf16={"enabled": True}, zero_optimization=Z2, train_micro_batch_size_per_gpu=MICRO)},
    ),
    Case(
        "the same template under the HF Trainer is filled: not reported",
        "PC603",
        HF + "bf16: true\ndeepspeed: ds.json\n",
        files={"ds.json": HF_TEMPLATE},
    ),
    # PC604: "auto" in a file checked on its own
    Case("HF template checked on its own", "PC604", HF_TEMPLATE, expect={(3, 5)}, fmt="json"),
    Case(
        "fixed: explicit values",
        "PC604",
        ds(bf16={"enabled": True}, zero_optimization=Z2, train_micro_batch_size_per_gpu=MICRO),
        fmt="json",
    ),
    Case(
        "checked with the config that names it: PC604 stays quiet",
        "PC604",
        HF + "bf16: true\ndeepspeed: ds.json\n",
        files={"ds.json": HF_TEMPLATE},
    ),
    # PC605: explicit values against the launcher
    Case(
        "fp16.enabled true under bf16 TrainingArguments",
        "PC605",
        HF + "bf16: true\ndeepspeed:\n  fp16:\n    enabled: true\n  zero_optimization:\n    stage: 2\n",
        expect={(7, 5)},
    ),
    Case(
        "micro batch size differs from per_device_train_batch_size",
        "PC605",
        HF + "bf16: true\ndeepspeed:\n  bf16:\n    enabled: auto\n  train_micro_batch_size_per_gpu: 8\n"
        "  zero_optimization:\n    stage: 2\n",
        expect={(8, 3)},
    ),
    Case(
        "a bf16 section without enabled: silently off",
        "PC605",
        HF + "bf16: true\ndeepspeed:\n  bf16:\n    immediate_grad_update: true\n  zero_optimization:\n    stage: 2\n",
        expect={(6, 3)},
    ),
    Case(
        "fixed: auto everywhere",
        "PC605",
        HF + "bf16: true\ndeepspeed:\n  fp16:\n    enabled: auto\n  bf16:\n    enabled: auto\n"
        "  train_micro_batch_size_per_gpu: auto\n  zero_optimization:\n    stage: 2\n",
    ),
    Case(
        "explicit values that agree",
        "PC605",
        HF + "bf16: true\ndeepspeed:\n  bf16:\n    enabled: true\n  train_micro_batch_size_per_gpu: 4\n"
        "  zero_optimization:\n    stage: 2\n",
    ),
    # PC606: apex amp with ZeRO or fp16/bf16 (every release)
    Case(
        "apex amp with ZeRO-2",
        "PC606",
        ds(amp={"enabled": True, "opt_level": "O1"}, zero_optimization=Z2, train_micro_batch_size_per_gpu=MICRO),
        expect={(3, 5)},
        fmt="json",
    ),
    Case(
        "apex amp with bf16 mode",
        "PC606",
        ds(amp={"enabled": True}, bf16={"enabled": True}, train_micro_batch_size_per_gpu=MICRO),
        expect={(3, 5)},
        fmt="json",
    ),
    Case(
        "fixed: apex amp without ZeRO (InternVL's adam_zero1_amp.json has no zero_optimization)",
        "PC606",
        ds(amp={"enabled": True, "opt_level": "O1"}, train_micro_batch_size_per_gpu=MICRO),
        fmt="json",
    ),
    # PC613: DeepSpeed 0.19.8 refuses any amp key
    Case(
        "0.19.8 refuses any amp key, even disabled and without ZeRO",
        "PC613",
        ds(amp={"enabled": False}, train_micro_batch_size_per_gpu=MICRO),
        expect={(2, 3)},
        fmt="json",
        versions={"deepspeed": "0.19.8"},
    ),
    Case(
        "0.19.7 accepts an amp section without ZeRO",
        "PC613",
        ds(amp={"enabled": True, "opt_level": "O1"}, train_micro_batch_size_per_gpu=MICRO),
        fmt="json",
        versions={"deepspeed": "0.19.7"},
    ),
    Case(
        "PC606 already reports amp with ZeRO",
        "PC613",
        ds(amp={"enabled": True}, zero_optimization=Z2, train_micro_batch_size_per_gpu=MICRO),
        fmt="json",
        versions={"deepspeed": "0.19.8"},
    ),
    Case(
        "fixed: no amp key",
        "PC613",
        ds(fp16={"enabled": True}, zero_optimization=Z2, train_micro_batch_size_per_gpu=MICRO),
        fmt="json",
        versions={"deepspeed": "0.19.8"},
    ),
    # PC607: bf16 gradient accumulation
    Case(
        "ZeRO-2 bf16, 16 micro-batches, default accumulation dtype",
        "PC607",
        ds(
            bf16={"enabled": True},
            gradient_accumulation_steps=16,
            train_micro_batch_size_per_gpu=4,
            zero_optimization=Z2,
        ),
        expect={(5, 3)},
        fmt="json",
    ),
    Case(
        "explicit grad_accum_dtype bf16",
        "PC607",
        ds(
            bf16={"enabled": True},
            gradient_accumulation_steps=16,
            train_micro_batch_size_per_gpu=4,
            zero_optimization=Z2,
            data_types={"grad_accum_dtype": "bf16"},
        ),
        expect={(11, 5)},
        fmt="json",
    ),
    Case(
        "fixed: fp32 accumulation",
        "PC607",
        ds(
            bf16={"enabled": True},
            gradient_accumulation_steps=16,
            train_micro_batch_size_per_gpu=4,
            zero_optimization=Z2,
            data_types={"grad_accum_dtype": "fp32"},
        ),
        fmt="json",
    ),
    Case(
        "accumulation steps from TrainingArguments",
        "PC607",
        HF + "bf16: true\ngradient_accumulation_steps: 32\ndeepspeed:\n  bf16:\n    enabled: auto\n"
        "  gradient_accumulation_steps: auto\n  zero_optimization:\n    stage: 2\n",
        expect={(5, 1)},
    ),
    Case(
        "8 micro-batches, the usual fine-tuning setting: a few roundings, not reported",
        "PC607",
        HF + "bf16: true\ngradient_accumulation_steps: 8\ndeepspeed:\n  bf16:\n    enabled: auto\n"
        "  gradient_accumulation_steps: auto\n  zero_optimization:\n    stage: 2\n",
    ),
    Case(
        "one micro-batch: nothing accumulates",
        "PC607",
        HF + "bf16: true\ndeepspeed:\n  bf16:\n    enabled: auto\n  zero_optimization:\n    stage: 2\n",
    ),
    Case(
        "bf16 without ZeRO up to 0.17.5: BF16_Optimizer accumulates in fp32",
        "PC607",
        ds(bf16={"enabled": True}, gradient_accumulation_steps=16, train_micro_batch_size_per_gpu=4),
        fmt="json",
        versions={"deepspeed": "0.17.5"},
    ),
    Case(
        "bf16 without ZeRO from 0.17.6: bf16 gradients accumulate",
        "PC607",
        ds(bf16={"enabled": True}, gradient_accumulation_steps=16, train_micro_batch_size_per_gpu=4),
        expect={(5, 3)},
        fmt="json",
        versions={"deepspeed": "0.17.6"},
    ),
    # PC608: communication_data_type
    Case(
        "bf16 gradients reduced in fp16",
        "PC608",
        ds(
            bf16={"enabled": True},
            communication_data_type="fp16",
            zero_optimization=Z2,
            train_micro_batch_size_per_gpu=4,
        ),
        expect={(5, 3)},
        fmt="json",
    ),
    Case(
        "fp16 gradients reduced in bf16",
        "PC608",
        ds(
            fp16={"enabled": True},
            communication_data_type="bf16",
            zero_optimization=Z2,
            train_micro_batch_size_per_gpu=4,
        ),
        expect={(5, 3)},
        fmt="json",
    ),
    Case(
        "fixed: fp32 reduction",
        "PC608",
        ds(
            bf16={"enabled": True},
            communication_data_type="fp32",
            zero_optimization=Z2,
            train_micro_batch_size_per_gpu=4,
        ),
        fmt="json",
    ),
    Case(
        "bf16 reduction of bf16 gradients is DeepSpeed's default: not reported",
        "PC608",
        ds(
            bf16={"enabled": True},
            communication_data_type="bf16",
            zero_optimization=Z2,
            train_micro_batch_size_per_gpu=4,
        ),
        fmt="json",
    ),
    # PC609: grad_accum_dtype the engine refuses
    Case(
        "bf16 with fp32 accumulation and no ZeRO (newest: 0.18.5+)",
        "PC609",
        ds(
            bf16={"enabled": True},
            data_types={"grad_accum_dtype": "fp32"},
            zero_optimization={"stage": 0},
            train_micro_batch_size_per_gpu=4,
        ),
        expect={(6, 5)},
        fmt="json",
    ),
    Case(
        "0.18.5 dropped the BF16_Optimizer branch without ZeRO",
        "PC609",
        ds(bf16={"enabled": True}, data_types={"grad_accum_dtype": "fp32"}, train_micro_batch_size_per_gpu=4),
        expect={(6, 5)},
        fmt="json",
        versions={"deepspeed": "0.18.5"},
    ),
    Case(
        "0.17.6 still took bf16 with fp32 accumulation without ZeRO",
        "PC609",
        ds(bf16={"enabled": True}, data_types={"grad_accum_dtype": "fp32"}, train_micro_batch_size_per_gpu=4),
        fmt="json",
        versions={"deepspeed": "0.17.6"},
    ),
    Case(
        "0.18.4 still took bf16 with fp32 accumulation without ZeRO",
        "PC609",
        ds(bf16={"enabled": True}, data_types={"grad_accum_dtype": "fp32"}, train_micro_batch_size_per_gpu=4),
        fmt="json",
        versions={"deepspeed": "0.18.4"},
    ),
    Case(
        "fp32 model with fp16 accumulation",
        "PC609",
        ds(data_types={"grad_accum_dtype": "fp16"}, train_micro_batch_size_per_gpu=4),
        expect={(3, 5)},
        fmt="json",
    ),
    Case(
        "up to 0.17.5 BF16_Optimizer took bf16 with fp32 accumulation",
        "PC609",
        ds(bf16={"enabled": True}, data_types={"grad_accum_dtype": "fp32"}, train_micro_batch_size_per_gpu=4),
        fmt="json",
        versions={"deepspeed": "0.17.5"},
    ),
    Case(
        "fixed: ZeRO-1 with fp32 accumulation",
        "PC609",
        ds(
            bf16={"enabled": True},
            data_types={"grad_accum_dtype": "fp32"},
            zero_optimization={"stage": 1},
            train_micro_batch_size_per_gpu=4,
        ),
        fmt="json",
    ),
    # PC610: fp16 loss-scale settings that do nothing
    Case(
        "template's initial_scale_power 32 in a bf16 HF run",
        "PC610",
        HF + "bf16: true\ndeepspeed:\n  fp16:\n    enabled: auto\n    loss_scale: 0\n    initial_scale_power: 32\n"
        "  bf16:\n    enabled: auto\n  zero_optimization:\n    stage: 2\n",
        expect={(9, 5)},
    ),
    Case(
        "static loss scale with fp16 off and bf16 on",
        "PC610",
        ds(fp16={"enabled": False, "loss_scale": 128}, bf16={"enabled": True}, zero_optimization=Z2),
        expect={(4, 5)},
        fmt="json",
    ),
    Case(
        "the same template in an fp16 run: the scale is live",
        "PC610",
        HF + "fp16: true\ndeepspeed:\n  fp16:\n    enabled: auto\n    loss_scale: 0\n    initial_scale_power: 32\n"
        "  bf16:\n    enabled: auto\n  zero_optimization:\n    stage: 2\n",
    ),
    Case(
        "a standalone template with fp16 auto: the launcher decides",
        "PC610",
        ds(fp16={"enabled": "auto", "initial_scale_power": 32}, bf16={"enabled": "auto"}, zero_optimization=Z2),
        fmt="json",
    ),
]


def _case(name: str) -> Case:
    return next(c for c in CASES if c.name == name)


def _messages(name: str) -> list[str]:
    return [f.message for f in run_case(_case(name))]


def test_both_enabled_fix_keeps_what_the_devices_support() -> None:
    [a100] = run_case(_case("both enabled, A100: keep bf16"))
    [v100] = run_case(_case("both enabled, V100: keep fp16"))
    assert a100.fix is not None and a100.fix.edits[0].line == 3  # fp16.enabled → false
    assert v100.fix is not None and v100.fix.edits[0].line == 6  # bf16.enabled → false


def test_mismatch_quotes_both_errors() -> None:
    [message] = _messages("fp16.enabled true under bf16 TrainingArguments")
    assert "`--mixed_precision` arg cannot be set to `bf16` when `fp16` is set in the DeepSpeed config file." in message
    assert "- ds fp16.enabled=True vs hf fp16|fp16_full_eval=False" in message
    assert "The easiest method is to set these DeepSpeed config values to 'auto'." in message


def test_lightning_names_the_consequences() -> None:
    messages = _messages("accelerate template (stage auto) named by a Lightning DeepSpeedStrategy")
    assert any("trains in fp32" in m for m in messages)
    assert any("ZeRO stage 0" in m for m in messages)
    assert any("'>' not supported between instances of 'str' and 'int'" in m for m in messages)


def test_legacy_key_under_hf_says_bf16_is_lost() -> None:
    [message] = _messages("legacy bfloat16 under the HF Trainer: accelerate adds bf16 false, the run trains in fp32")
    assert "trains without bf16" in message


# --- FSDP under `accelerate launch` (PC611+) ---------------------------------------------

FSDP_HEAD = """
compute_environment: LOCAL_MACHINE
distributed_type: FSDP
mixed_precision: bf16
num_processes: 8
fsdp_config:
"""


def fsdp(*entries: str, head: str = FSDP_HEAD) -> str:
    """An accelerate FSDP config; ``entries`` go under ``fsdp_config`` from line 6 on."""
    return head.lstrip("\n") + "".join(f"  {e}\n" for e in entries)


FSDP_CASES = [
    # PC611: fsdp_sync_module_states false with CPU-RAM-efficient loading (explicit or defaulted)
    Case(
        "efficient loading without sync",
        "PC611",
        fsdp("fsdp_version: 2", "fsdp_cpu_ram_efficient_loading: true", "fsdp_sync_module_states: false"),
        expect={(8, 3)},
    ),
    Case(
        "sync false alone: the launcher defaults efficient loading to true",
        "PC611",
        fsdp("fsdp_sharding_strategy: FULL_SHARD", "fsdp_sync_module_states: false"),
        expect={(7, 3)},
    ),
    Case(
        "unprefixed spelling: the launcher adds fsdp_",
        "PC611",
        fsdp("sync_module_states: false"),
        expect={(6, 3)},
    ),
    Case(
        "fixed: sync true",
        "PC611",
        fsdp("fsdp_version: 2", "fsdp_cpu_ram_efficient_loading: true", "fsdp_sync_module_states: true"),
    ),
    Case(
        "fixed: efficient loading off",
        "PC611",
        fsdp("fsdp_cpu_ram_efficient_loading: false", "fsdp_sync_module_states: false"),
    ),
    Case(
        "not FSDP: the launcher never checks",
        "PC611",
        fsdp("fsdp_sync_module_states: false", head=FSDP_HEAD.replace("FSDP", "MULTI_GPU")),
    ),
    Case(
        "quoted 'false' is a truthy string for the launcher",
        "PC611",
        fsdp("fsdp_sync_module_states: 'false'"),
    ),
    # PC612: the sharding key the FSDP version does not read
    Case(
        "FSDP2 with fsdp_sharding_strategy SHARD_GRAD_OP",
        "PC612",
        fsdp("fsdp_version: 2", "fsdp_sharding_strategy: SHARD_GRAD_OP"),
        expect={(7, 3)},
    ),
    Case(
        "fixed: FSDP2 with reshard_after_forward false",
        "PC612",
        fsdp("fsdp_version: 2", "fsdp_reshard_after_forward: false"),
    ),
    Case(
        "FSDP2: both keys agree, nothing lost",
        "PC612",
        fsdp("fsdp_version: 2", "fsdp_sharding_strategy: SHARD_GRAD_OP", "fsdp_reshard_after_forward: false"),
    ),
    Case(
        "FSDP1 (default version) with reshard_after_forward false: FULL_SHARD is exported",
        "PC612",
        fsdp("fsdp_reshard_after_forward: false", "fsdp_offload_params: false"),
        expect={(6, 3)},
    ),
    Case(
        "FSDP1 with reshard_after_forward naming the default strategy (TRL's fsdp1.yaml)",
        "PC612",
        fsdp("fsdp_version: 1", "fsdp_reshard_after_forward: FULL_SHARD"),
    ),
    Case(
        "FSDP1 with a sharding strategy that differs from reshard_after_forward",
        "PC612",
        fsdp("fsdp_version: 1", "fsdp_sharding_strategy: FULL_SHARD", "fsdp_reshard_after_forward: SHARD_GRAD_OP"),
        expect={(8, 3)},
    ),
]
CASES += FSDP_CASES


def test_ram_efficient_loading_quotes_the_launcher() -> None:
    [finding] = run_case(_case("sync false alone: the launcher defaults efficient loading to true"))
    assert "When using `--fsdp_cpu_ram_efficient_loading` set `--fsdp_sync_module_states` to `True`" in finding.message
    assert 'defaults it to "true"' in finding.message
    assert finding.fix is not None and finding.fix.edits[0].value is True


def test_ignored_sharding_names_what_the_run_gets() -> None:
    [finding] = run_case(_case("FSDP2 with fsdp_sharding_strategy SHARD_GRAD_OP"))
    assert "ignored under FSDP2" in finding.message and "FULL_SHARD" in finding.message
    assert finding.fix is not None and finding.fix.edits[0].remove


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case(case: Case) -> None:
    check_case(case)


def test_amp_key_with_deepspeed_unknown_is_a_warning_that_says_how_to_pin() -> None:
    from precheck.rules.base import Severity

    text = ds(amp={"enabled": False}, train_micro_batch_size_per_gpu=MICRO)
    found = run_case(Case("", "PC613", text, fmt="json"))
    assert len(found) == 1 and found[0].severity == Severity.WARNING
    assert "--assume-version deepspeed==VERSION" in found[0].message


def test_a_precision_alias_is_named_by_the_mode_it_becomes() -> None:
    """PC603 reads the mode the dialect set once (``config.precision_mode``): ``bf16`` is bf16-mixed."""
    case = Case(
        "alias",
        "PC603",
        LIGHTNING.replace("bf16-mixed", "bf16"),
        files={"ds.json": ds(bf16={"enabled": "auto"}, zero_optimization=Z2)},
    )
    [finding] = run_case(case)
    assert "although `precision` is bf16-mixed" in finding.message


LITGPT = """
precision: bf16-true
checkpoint_dir: checkpoints/meta-llama/Llama-3.1-8B
out_dir: out
devices: 8
strategy:
  class_path: lightning.fabric.strategies.DeepSpeedStrategy
  init_args:
    config: ds.json
train:
  global_batch_size: 64
  micro_batch_size: 4
"""


def test_only_a_trainer_run_is_told_the_trainer_refuses_accumulation() -> None:
    """The variant the dialect set decides: a LitGPT script has no Trainer to refuse the key."""
    template = {"ds.json": ds(gradient_accumulation_steps="auto", zero_optimization=Z2)}
    [trainer] = run_case(Case("trainer", "PC603", LIGHTNING, files=template))
    [script] = run_case(Case("litgpt", "PC603", LITGPT, files=template))
    assert "Trainer refuses the key itself" in trainer.message
    assert "Trainer refuses" not in script.message and "batch-size arithmetic" in script.message
