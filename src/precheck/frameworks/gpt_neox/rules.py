"""PC725: a DeepSpeed ``bf16`` section enabled with no gpt-neox ``precision``.

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
"""

from __future__ import annotations

from collections.abc import Iterator

from ...facts import span
from ...rules.base import Context, Edit, Finding, Fix, FixSafety, Severity, rule
from .label import NAME

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


__all__ = ["gpt_neox_bf16_without_precision"]
