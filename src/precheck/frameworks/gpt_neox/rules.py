"""PC725: a DeepSpeed ``bf16`` section enabled with no gpt-neox ``precision``; PC726: bf16 asked
for with ``fp16.type: bfloat16``, gpt-neox 1.x's (DeeperSpeed's) spelling; PC727: a ``precision``
NeoXArgs refuses.

Source (EleutherAI/gpt-neox, not on PyPI; read at the commits of a fetched mirror):

- before EleutherAI/gpt-neox#1311, ``NeoXArgs.calculate_derived`` derives ``precision`` from the
  ``fp16`` section only (``megatron/neox_arguments/arguments.py:958-964``@ee2f142), so a run with
  a ``bf16`` section and no ``precision`` keeps ``precision`` None; ``params_dtype``
  (``:724-734``@ee2f142) is then ``torch.float``: the model is built in fp32 while DeepSpeed
  runs its bf16 engine on the section it was handed, and the forward pass fails on a
  Float/BFloat16 mismatch (EleutherAI/gpt-neox#1305). Release v2.0 (the last tag) has no
  ``bf16`` key at all (``deepspeed_args.py``@v2.0), and ``NeoXArgs(**config)``
  (``arguments.py:227``@v2.0) refuses the unknown key.
- #1311 (commit 6e81f0be, 2024-11-13) adds the bf16 derivation: ``bf16.enabled`` with no
  ``precision`` makes it ``bfloat16`` (``arguments.py:966-979``@ea7aefd). No tagged release
  has it yet: the boundary (``data/facts.json`` ``gpt-neox.bf16_section_ignored``) takes a
  checkout after it as 2.1.dev0 and later, a release up to v2.0 (or a checkout before it) as
  older.
- ``fp16: {enabled: true, type: bfloat16}`` was bf16 for gpt-neox 1.x, whose DeeperSpeed fork
  read ``type`` (``requirements/requirements.txt``@v1.0 pins EleutherAI/DeeperSpeed). From v2.0
  gpt-neox runs upstream DeepSpeed (``requirements.txt``@v2.0): v2.0 still derives
  ``precision: bfloat16`` from ``type`` (``arguments.py:850-853``@v2.0) and builds the model in
  bf16, while DeepSpeed runs its fp16 engine on the enabled section: the run crashes
  (EleutherAI/gpt-neox#939); the maintainers replaced the section with ``precision: bfloat16``
  (#941, 03f4f775). Later checkouts derive ``fp16`` from ``fp16.enabled`` (``arguments.py:966-971``
  @ea7aefd) and read no ``type``: the run trains in fp16, not the bf16 the file asks for.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...facts import quote, span
from ...rules.base import Context, Edit, Finding, Fix, FixSafety, Severity, rule
from .label import NAME

#: gpt-neox releases on upstream DeepSpeed, which has no ``fp16.type``
FP16_TYPE_UNREAD = span("gpt-neox.fp16_type_unread")
#: the premise of a file checked without the launch that names its config set
ALONE = (
    "no other file of the config set deepy.py merges sets `precision`: check the launch "
    "(python ./deepy.py train.py a.yml b.yml) to read the whole set"
)
#: releases (checkouts) whose NeoXArgs ignores the bf16 section when deriving the precision
BF16_SECTION_IGNORED = span("gpt-neox.bf16_section_ignored")


@rule(
    "PC725",
    "gpt-neox-bf16-without-precision",
    Severity.ERROR,
    versions=(BF16_SECTION_IGNORED,),
    affects_latest=False,
    frameworks=(NAME,),
    fix_safety=FixSafety.SAFE,
)
def gpt_neox_bf16_without_precision(ctx: Context) -> Iterator[Finding]:
    """
    Finds a gpt-neox config set with a DeepSpeed `bf16` section enabled and no `precision`.

    ## What it does
    Reports a gpt-neox config (or the config set a `deepy.py` launch merges) whose `bf16`
    section has `enabled: true` while no file sets `precision`, on gpt-neox checkouts before
    EleutherAI/gpt-neox#1311. With the version not known it is a warning (the current main
    branch derives `precision: bfloat16` from the section).

    ## Why is this bad?
    Before #1311, `NeoXArgs.calculate_derived` derived the precision from the `fp16` section
    only (`megatron/neox_arguments/arguments.py:958-964@ee2f142`): `precision` stays unset,
    `params_dtype` is `torch.float` (`:724-734@ee2f142`) and the model is built in fp32 while
    DeepSpeed runs the bf16 engine; attention then fails on a Float/BFloat16 mismatch
    (EleutherAI/gpt-neox#1305). Release v2.0 has no `bf16` key at all and refuses it.
    #1311 (`arguments.py:966-979@ea7aefd`) fills `precision: bfloat16` from the section.

    ## Example
    ```yaml
    num_layers: 24
    hidden_size: 2048
    num_attention_heads: 16
    bf16:
      enabled: true
    ```
    Use instead:
    ```yaml
    num_layers: 24
    hidden_size: 2048
    num_attention_heads: 16
    precision: bfloat16
    bf16:
      enabled: true
    ```

    ## Fix
    Add `precision: bfloat16`; every gpt-neox release then builds the model in bf16.
    """
    config = ctx.config
    section = config.bf16
    if section is None or section.value is not True or not section.origin.in_file:
        return
    if config.setting("precision") is not None or (section.origin.key or "").split(".")[0] != "bf16":
        return
    path = section.origin.path or config.path
    # a file checked on its own is one file of the set deepy.py merges: another may set `precision`
    alone = path == config.path
    yield Finding(
        section.origin,
        "the DeepSpeed `bf16` section is enabled but no `precision` is set: gpt-neox before #1311 derives the "
        "precision from the `fp16` section only, builds the model in float32 (NeoXArgs.params_dtype) beside "
        "DeepSpeed's bf16 engine, and the forward pass fails on a Float/BFloat16 mismatch",
        Fix("add `precision: bfloat16`", (Edit(path, "precision", "bfloat16", format=section.origin.format),)),
        assumptions=(ALONE,) if alone else (),
    )


@rule(
    "PC726",
    "gpt-neox-fp16-type-bfloat16",
    Severity.ERROR,
    versions=(FP16_TYPE_UNREAD,),
    frameworks=(NAME,),
    fix_safety=FixSafety.UNSAFE,
)
def gpt_neox_fp16_type_bfloat16(ctx: Context) -> Iterator[Finding]:
    """
    Finds bf16 asked for through the fp16 section's `type` (gpt-neox 1.x's spelling) on gpt-neox 2.x.

    ## What it does
    Reports a gpt-neox config whose DeepSpeed `fp16` section is enabled with
    `type: bfloat16`, the way gpt-neox 1.x (on EleutherAI's DeeperSpeed) asked for bf16.

    ## Why is this bad?
    From v2.0 gpt-neox runs upstream DeepSpeed, which has no `type` in its fp16 section
    (`requirements/requirements.txt@v2.0`). v2.0 builds the model in bf16 from `type`
    (`megatron/neox_arguments/arguments.py:850-853@v2.0`) while DeepSpeed runs its fp16 engine
    on the enabled section: the run crashes (EleutherAI/gpt-neox#939). Later checkouts derive
    `precision: fp16` from `fp16.enabled` (`arguments.py:966-971@ea7aefd`) and read no `type`:
    the run trains in fp16, not in bf16 as the file asks.

    ## Example
    ```yaml
    num_layers: 12
    hidden_size: 768
    num_attention_heads: 12
    fp16:
      enabled: true
      type: bfloat16
    ```
    Use instead:
    ```yaml
    num_layers: 12
    hidden_size: 768
    num_attention_heads: 12
    precision: bfloat16
    ```

    ## Fix
    Ask for bf16 with `precision: bfloat16` and turn the fp16 section off (or remove it, as
    EleutherAI/gpt-neox#941 did in `configs/bf16_125M.yml`); this changes the run's precision
    from what current releases do.
    """
    config = ctx.config
    kind = config.setting("fp16.type")
    enabled = config.setting("fp16.enabled")
    if kind is None or str(kind.value).lower() not in ("bfloat16", "bf16") or not kind.origin.in_file:
        return
    if enabled is None or enabled.value is not True:
        return
    path = kind.origin.path or config.path
    yield Finding(
        kind.origin,
        f"`fp16.type: {kind.value}` is how gpt-neox 1.x (DeeperSpeed) asked for bf16: upstream DeepSpeed, which "
        "gpt-neox runs since v2.0, has no `type`; v2.0 builds the model in bf16 and DeepSpeed's fp16 engine then "
        "fails on it (EleutherAI/gpt-neox#939), later releases derive precision fp16 from `fp16.enabled` and "
        "train in fp16",
        Fix(
            "ask for bf16 with `precision: bfloat16` and turn the fp16 section off",
            (
                Edit(path, "fp16.enabled", False, enabled.origin.line, format=enabled.origin.format),
                Edit(path, "precision", "bfloat16", format=kind.origin.format),
            ),
        ),
    )


#: ``NeoXArgs.precision``'s ``Literal`` (``neox_args.py:102``@ea7aefd), compared case-insensitively
PRECISION_VALUES = ("fp16", "fp32", "bfloat16")


@rule("PC727", "gpt-neox-precision-refused", Severity.ERROR, frameworks=(NAME,), fix_safety=FixSafety.UNSAFE)
def gpt_neox_precision_refused(ctx: Context) -> Iterator[Finding]:
    """
    Finds a gpt-neox `precision` that NeoXArgs refuses.

    ## What it does
    Reports a gpt-neox config whose `precision` is not one of `fp16`, `fp32`, `bfloat16`
    (`bf16`, `float16`, `amp_bf16` are not).

    ## Why is this bad?
    `precision` is a `Literal["fp16", "fp32", "bfloat16"]`
    (`megatron/neox_arguments/neox_args.py:102@ea7aefd`; the same at v1.0 and v2.0).
    `NeoXArgs.validate_types` (`arguments.py:1365-1402@ea7aefd`) logs
    `precision: 'bf16' Not in accepted values` and `__post_init__` raises
    `ValueError: NeoXArgs.__post_init__() NeoXArgs types cannot be validated`
    (`arguments.py:152-156@ea7aefd`) before anything trains.

    ## Example
    ```yaml
    num_layers: 12
    hidden_size: 768
    num_attention_heads: 12
    precision: bf16
    ```
    Use instead:
    ```yaml
    num_layers: 12
    hidden_size: 768
    num_attention_heads: 12
    precision: bfloat16
    ```

    ## Fix
    Write one of `fp16`, `fp32`, `bfloat16`; which one changes the run, so the fix is unsafe.
    """
    config = ctx.config
    item = config.setting("precision")
    if item is None or not item.origin.in_file or not isinstance(item.value, str):
        return
    if item.value.lower() in PRECISION_VALUES:
        return
    word = {"bf16": "bfloat16", "float16": "fp16", "half": "fp16", "float32": "fp32"}.get(item.value.lower())
    edits = (Edit(item.origin.path or config.path, "precision", word, item.origin.line, format=item.origin.format),)
    yield Finding(
        item.origin,
        f"`precision: {item.value}` is not one gpt-neox takes ({', '.join(PRECISION_VALUES)}): "
        f'"{quote("gpt-neox.precision_not_accepted", value=item.value)}", then '
        f'"ValueError: {quote("gpt-neox.types_not_validated")}"',
        Fix(f"write one of {', '.join(PRECISION_VALUES)}", edits if word else ()),
    )


__all__ = ["gpt_neox_bf16_without_precision", "gpt_neox_fp16_type_bfloat16", "gpt_neox_precision_refused"]
