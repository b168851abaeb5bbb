"""accelerate's DeepSpeed plugin: how it fills a DeepSpeed file's precision and ZeRO stage, and what it refuses.

Read in accelerate 1.15.0 ``utils/dataclasses.py``, ``state.py``, ``accelerator.py`` (the HF
Trainer goes through the same plugin: :mod:`precheck.resolve.deepspeed_hf_trainer`).

- accelerate ``DeepSpeedPlugin.__post_init__`` raises "Please specify the ZeRO optimization
  config in the DeepSpeed config." without ``zero_optimization`` and fills a ``stage: auto``
  with ``ACCELERATE_DEEPSPEED_ZERO_STAGE`` (default 2).
- ``AcceleratorState`` calls ``DeepSpeedPlugin.set_mixed_precision(mixed_precision)`` (the
  Trainer passes ``args.mixed_precision``: fp16/bf16 from the flags, else
  ``ACCELERATE_MIXED_PRECISION``): a missing ``fp16`` section becomes ``{"enabled": true,
  "auto_cast": true}`` for fp16, a missing ``bf16`` one ``{"enabled": true}`` for bf16/fp8,
  others ``{"enabled": false}``; remaining ``"auto"`` are filled without a match check; it
  raises "`--mixed_precision` arg cannot be set to `{mixed_precision}` when `{diff_dtype}` is
  set in the DeepSpeed config file." when the other dtype is enabled. Under DeepSpeed the
  state's own mixed precision is "no": accelerate adds no autocast and no GradScaler.
- ``accelerate launch`` with ``deepspeed_config_file`` and ``mixed_precision`` in the
  accelerate config raises (``DeepSpeedPlugin._deepspeed_config_checks``) "When using
  `deepspeed_config_file`, the following accelerate config variables will be ignored: [...]".
"""

from __future__ import annotations

from ..config import TrainingConfig
from ..facts import quote
from ..provenance import Origin, Sourced
from .deepspeed_engine import Switches, auto_key, derive, standalone_stage
from .plan import Override, OverrideKind

#: template: ``.format(mixed_precision=..., other=...)``
ACCELERATE_OTHER_DTYPE = quote("accelerate.ds_other_dtype")
#: ``DeepSpeedPlugin._deepspeed_config_checks``'s ``env_variable_names_to_ignore`` (the
#: ``ACCELERATE_[DEEPSPEED_]*`` variables, lowercased), as its message prints them
IGNORED_BESIDE_FILE = [
    "gradient_accumulation_steps",
    "gradient_clipping",
    "zero_stage",
    "offload_optimizer_device",
    "offload_param_device",
    "offload_param_nvme_path",
    "offload_optimizer_nvme_path",
    "zero3_save_16bit_model",
    "mixed_precision",
]
ACCELERATE_IGNORED = quote("accelerate.ds_config_file_ignores", ignored=IGNORED_BESIDE_FILE)


def from_config_file(origin: Origin) -> bool:
    """A setting read from an accelerate config file, not given as a launch flag.

    ``accelerate launch`` refuses accelerate's own DeepSpeed settings and ``mixed_precision``
    beside a ``deepspeed_config_file`` only when they come from the config file: it lists
    ``defaults.deepspeed_config``'s keys, and ``mixed_precision`` only when
    ``mp_from_config_flag`` (set when ``--mixed_precision`` was not given and the config file
    has it), in ``ACCELERATE_CONFIG_DS_FIELDS`` (``accelerate/commands/launch.py:1287-1292``,
    ``:1392-1397@1.15.0``), and ``DeepSpeedPlugin._deepspeed_config_checks`` raises only for
    those (``accelerate/utils/dataclasses.py:1507-1532@1.15.0``). A flag
    (``--mixed_precision bf16 --use_deepspeed --deepspeed_config_file ds.json``) is accepted:
    the file's ``"auto"`` values are filled from it."""
    if not origin.in_file:
        return False
    if origin.format is not None:  # a key of the document itself: the accelerate config, or a launch's flag
        return origin.format in ("yaml", "json")
    return str(origin.path).lower().endswith((".yaml", ".yml", ".json"))  # a file a launch merged in


def integrated_stage(ds: TrainingConfig) -> Sourced[int]:
    auto = auto_key(ds, "zero_optimization.stage")
    if ds.zero_stage is None and auto is not None:
        return Sourced(
            2,
            auto.origin.derived(
                "accelerate DeepSpeedPlugin fills `zero_optimization.stage: auto` with "
                "ACCELERATE_DEEPSPEED_ZERO_STAGE (default 2)"
            ),
        )
    return standalone_stage(ds)


def added_section(ds: TrainingConfig, name: str, mixed: Sourced[str]) -> tuple[Sourced[bool], Override | None]:
    """accelerate ``set_mixed_precision`` for a section the DeepSpeed file lacks."""
    adds = mixed.value == name or (name == "bf16" and mixed.value == "fp8")
    section = '{"enabled": true, "auto_cast": true}' if name == "fp16" else '{"enabled": true}'
    detail = f"the DeepSpeed config has no {name} section: accelerate DeepSpeedPlugin.set_mixed_precision adds " + (
        f"`{name}: {section}` for mixed_precision {mixed.value}" if adds else f'`{name}: {{"enabled": false}}`'
    )
    value = Sourced(adds, derive(mixed, detail))
    legacy = ds.bf16 if name == "bf16" and ds.bf16 is not None and ds.bf16.value else None
    if legacy is None or adds:
        return value, None
    return value, Override(
        field="bf16",
        winner=value,
        loser=legacy,
        reason='accelerate\'s set_mixed_precision adds `bf16: {"enabled": false}` when the DeepSpeed config has no '
        "`bf16` key, and DeepSpeed then ignores the legacy `bfloat16` section (get_bfloat16_config reads it only "
        "without `bf16`): the run trains without bf16",
        kind=OverrideKind.LEGACY_BF16_IGNORED,
    )


def accelerate_switches(main: TrainingConfig, ds: TrainingConfig) -> tuple[Switches, list[Override]]:
    overrides: list[Override] = []
    mixed = main.mixed_precision
    if mixed is None:
        env = main.env.get("ACCELERATE_MIXED_PRECISION")
        mixed = env if env is not None else Sourced("no", Origin.default("accelerate default mixed_precision no"))
    values: dict[str, Sourced[bool]] = {}
    present: dict[str, bool] = {}
    for name in ("fp16", "bf16"):
        path = f"{name}.enabled"
        present[name] = name in ds.keys
        wants = mixed.value == name or (name == "bf16" and mixed.value == "fp8")
        explicit: Sourced[bool] | None = getattr(ds, name) if present[name] else None
        if present[name] and auto_key(ds, path) is not None:
            detail = (
                f"DeepSpeed `{path}: auto` filled from accelerate mixed_precision {mixed.value} (set_mixed_precision)"
            )
            values[name] = Sourced(wants, derive(mixed, detail))
        elif present[name]:
            values[name] = explicit or Sourced(
                False, derive(ds.keys[name], f"the {name} section has no `enabled`: default false")
            )
            if wants and not values[name].value:
                overrides.append(
                    Override(
                        field=name,
                        winner=values[name],
                        loser=Sourced(True, mixed.origin),
                        reason="accelerate leaves an explicit DeepSpeed value alone (set_mixed_precision: "
                        f"fill_match(..., must_match=False)): mixed_precision {mixed.value} does not enable {name}, "
                        f"the DeepSpeed engine trains without it",
                        kind=OverrideKind.SILENT_KEEP,
                    )
                )
        else:
            values[name], legacy = added_section(ds, name, mixed)
            if legacy is not None:
                overrides.append(legacy)
    if mixed.value in ("fp16", "bf16", "fp8"):
        other = "bf16" if mixed.value == "fp16" else "fp16"
        if present[other] and values[other].value:
            text = ACCELERATE_OTHER_DTYPE.format(mixed_precision=mixed.value, other=other)
            overrides.append(
                Override(
                    field=other,
                    winner=values[other],
                    loser=Sourced(False, mixed.origin),
                    reason=f'accelerate raises ValueError (DeepSpeedPlugin.set_mixed_precision): "{text}"',
                    kind=OverrideKind.ACCELERATE_OTHER_DTYPE,
                    error=text,
                )
            )
    named_file = "deepspeed" in main.references  # an inline plugin (zero_stage...) has no such check
    if (
        named_file
        and main.mixed_precision is not None
        and main.dialect == "accelerate"
        and from_config_file(main.mixed_precision.origin)
    ):
        overrides.append(
            Override(
                field="mixed_precision",
                winner=values["bf16"] if values["bf16"].value else values["fp16"],
                loser=main.mixed_precision,
                reason="with a deepspeed_config_file the DeepSpeed file decides precision, and `accelerate launch` "
                "refuses a mixed_precision in the accelerate config: DeepSpeedPlugin._deepspeed_config_checks raises "
                f'ValueError "{ACCELERATE_IGNORED}"',
                kind=OverrideKind.ACCELERATE_IGNORED,
                error=ACCELERATE_IGNORED,
            )
        )
    return Switches(values["fp16"], values["bf16"], integrated_stage(ds)), overrides
