"""Lightning's precision inputs, as data (model layer: the dialect, the resolver and the
rules read them; ``lightning/fabric/plugins/precision/precision.py`` ``_PRECISION_INPUT``)."""

from __future__ import annotations

from typing import Any

from ...facts import quote

#: the framework's name as findings write it
LABEL = "Lightning"
#: its Python package and distribution (version look-ups, fact ids: ``lightning.*``)
PACKAGE = "lightning"
#: the variants ``TrainingConfig.variant`` names (the dialect's ``flavour``), and how
#: findings write the two libraries built on it
GPT_VARIANT = "litgpt"
#: the GPT variant's console command (``litgpt finetune``)
GPT_PROGRAM = "litgpt"
MEGATRON_VARIANT = "nemo"
MEGATRON2_VARIANT = "nemo2"
TRAINER = "trainer"
#: the note kind the GPT variant's launch leaves naming the entry point that ran (its key)
ENTRY_NOTE = "entry-point"
GPT_LABEL = "LitGPT"
MEGATRON_LABEL = "NeMo"

#: ``_PRECISION_INPUT_STR`` (Lightning >= 2.1.0; 2.0.x had only the ``-mixed``/``32-true``/``64-true`` four)
MODES = (
    "transformer-engine",
    "transformer-engine-float16",
    "16-true",
    "16-mixed",
    "bf16-true",
    "bf16-mixed",
    "32-true",
    "64-true",
)
#: ``_PRECISION_INPUT_STR_ALIAS_CONVERSION``; YAML ``16`` (an int) is accepted like "16"
ALIASES = {"64": "64-true", "32": "32-true", "16": "16-mixed", "bf16": "bf16-mixed"}

#: the ``trainer.precision`` values NeMo 1.x's ``MegatronTrainerBuilder._plugins`` hands to
#: NeMo's own precision plugin (the Trainer then gets ``precision=None``)
NEMO_PLUGIN_INPUTS = ("16", "bf16", "16-mixed", "bf16-mixed")


def alias_warning(raw: Any) -> str | None:
    """Lightning's warning for a legacy alias (``rank_zero_warn`` in ``_convert_precision_to_unified_args``)."""
    text = str(raw)
    if text not in ALIASES or text[:2] in ("32", "64"):
        return None
    return quote("lightning.alias_warning", precision=text, mode=ALIASES[text])


#: NeMo 2's precision plugins (nemo_toolkit 2.4.0): ``nemo/lightning/pytorch/plugins/mixed_precision.py``
#: ``MegatronMixedPrecision(precision=...)`` ("16-mixed", "bf16-mixed", "32"), and the recipe
#: helpers of ``nemo/collections/llm/recipes/precision/mixed_precision.py`` that return one:
#: ``bf16_mixed`` (``:23``: precision "bf16-mixed", params bf16), ``fp16_mixed`` (``:40``:
#: "16-mixed", params fp16), their fp8/mxfp8 variants the same 16-bit precisions with Transformer
#: Engine fp8 on top (read here as their 16-bit base)
NEMO2_PRECISION_PLUGINS: tuple[tuple[str, str | None], ...] = (
    ("MegatronMixedPrecision", None),
    ("bf16_mixed", "bf16-mixed"),
    ("fp16_mixed", "16-mixed"),
    ("bf16_with_fp8_mixed", "bf16-mixed"),
    ("fp16_with_fp8_mixed", "16-mixed"),
    ("bf16_with_mxfp8_mixed", "bf16-mixed"),
    ("fp16_with_mxfp8_mixed", "16-mixed"),
    ("bf16_with_fp8_current_scaling_mixed", "bf16-mixed"),
    ("fp16_with_fp8_current_scaling_mixed", "16-mixed"),
    ("bf16_with_fp8_subchannel_scaling_mixed", "bf16-mixed"),
    ("fp16_with_fp8_subchannel_scaling_mixed", "16-mixed"),
)

#: the program of NeMo 2's CLI (NeMo-Run's ``nemo``, its ``llm`` namespace registered by NeMo's
#: ``setup.py`` ``entry_points={"nemo_run.cli": ["llm = nemo.collections.llm"]}``@8cfedd7)
NEMO_PROGRAM = "nemo"
