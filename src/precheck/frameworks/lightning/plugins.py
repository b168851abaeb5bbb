"""NeMo 2's precision plugins, by the names a script or the CLI gives them."""

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
