"""PC92x: what the installed libraries say of the run's files (``precheck --deep``).

These rules report the answers :mod:`precheck.deep` got from the installed transformers,
TRL and accelerate; without ``--deep`` there are none, and the rules find nothing. Like
the other PC9xx rules they read notes left on the configs: they never import a library.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeGuard

from ..provenance import Origin
from ..sources.nodes import SourceNote
from .base import Context, Finding, Fix, Severity, rule

#: the kinds of the notes the deep pass leaves (:class:`precheck.deep.notes.DeepNote`), one
#: per rule; declared here, so that a run without ``--deep`` imports nothing of the deep pass
REMOVED_KEY = "deep-key-not-in-installed-version"  # PC920
UNKNOWN_KEY = "deep-unknown-key"  # PC921
DEPRECATED_KEY = "deep-deprecated-key"  # PC922
ACCELERATE_REFUSES = "deep-accelerate-refuses"  # PC923
LAUNCH_REFUSES = "deep-accelerate-launch-refuses"  # PC924


@dataclass(slots=True)
class DeepNote(SourceNote):
    """A note from the deep pass (:mod:`precheck.deep`), with the concrete change it calls
    for; declared with the rules that read it (:mod:`precheck.deep.notes` re-exports it)."""

    fix: str = ""


def _deep_notes(ctx: Context, kind: str) -> Iterator[Finding]:
    """A finding for each deep note of this kind in the run's config and the files it named."""
    pending = [ctx.config]
    while pending:
        config = pending.pop(0)
        for note in config.notes:
            if note.kind == kind and _from_deep_pass(note):
                origin = Origin("file", note.path or config.path, note.line, note.column, note.key)
                yield Finding(origin, note.message, Fix(note.fix))
        pending.extend(config.attached.values())


def _from_deep_pass(note: object) -> TypeGuard[DeepNote]:
    """Whether the deep pass left the note (it made the note and so imported its class)."""
    return isinstance(note, DeepNote)


@rule("PC920", "key-not-in-installed-version", Severity.ERROR)
def key_not_in_installed_version(ctx: Context) -> Iterator[Finding]:
    """
    Finds a TrainingArguments key the installed transformers no longer has, or does not have yet (`--deep`).

    ## What it does
    With `--deep`, reads the fields of the installed `TrainingArguments` (and of TRL's
    configs when TRL is installed) and reports each key of the file that another release
    of transformers has but the installed one lacks: removed or renamed keys
    (`evaluation_strategy`, removed in 4.51.0; `no_cuda`, `fp16_backend`,
    `per_gpu_train_batch_size`, removed in 5.0.0; `warmup_ratio`, removed in 5.15.0) and keys
    newer than the installed release (`eval_strategy` before 4.41.0). The message names the
    release that changed the key and what replaces it (read from the PyPI wheels of every
    minor release from 4.40.0 to 5.23.0, see `precheck.deep.history`). Where TRL is
    installed, also TRL `ModelConfig` keys it removed (`torch_dtype`, removed in trl 0.27.0:
    use `dtype`). `half_precision_backend` is left to PC204.

    ## Why is this bad?
    The training script stops before the first step. `HfArgumentParser.parse_yaml_file`
    raises `ValueError: Some keys are not used by the HfArgumentParser: ['evaluation_strategy']`,
    TRL's `TrlParser` `ValueError: Unknown arguments from config file: ['--torch_dtype',
    'bfloat16']. Please remove them, add them to the dataclass, or set
    `fail_with_unknown_args=False`.` and `TrainingArguments(**kwargs)` raises `TypeError:
    TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'`.
    A config copied from a tutorial written for another release fails only once the job
    has started.

    ## Example
    With transformers 5.23.0 installed:
    ```yaml
    evaluation_strategy: steps
    no_cuda: false
    ```
    Use instead:
    ```yaml
    eval_strategy: steps
    use_cpu: false
    ```

    ## Fix
    Use the replacement the message names, or remove the key; or install the release the
    file was written for.
    """
    yield from _deep_notes(ctx, REMOVED_KEY)


@rule("PC921", "unknown-key-installed", Severity.WARNING)
def unknown_key_installed(ctx: Context) -> Iterator[Finding]:
    """
    Finds a key no release of TrainingArguments has, close to a field the installed one has (`--deep`).

    ## What it does
    With `--deep`, compares each key that is not a field of the installed
    `TrainingArguments` / TRL configs (nor of any release since 4.40.0) with those fields
    and with the model keys TRL recipes use, and reports it with a did-you-mean when one is
    close (`bf_16` → `bf16`, `gradient_checkpoint` → `gradient_checkpointing`). Keys close to
    nothing are taken for the script's own arguments and left alone. Under `--deep` this
    replaces PC905 for these files: the installed library's fields decide.

    ## Why is this bad?
    `HfArgumentParser` stops with `ValueError: Some keys are not used by the
    HfArgumentParser: ['bf_16']`; a script that parses with `allow_extra_keys=True` ignores
    the key instead, and the run trains in fp32 while its author believes bf16 is on.

    ## Example
    ```yaml
    bf_16: true
    ```
    Use instead:
    ```yaml
    bf16: true
    ```

    ## Fix
    Rename the key to the field the message names.
    """
    yield from _deep_notes(ctx, UNKNOWN_KEY)


@rule("PC922", "key-deprecated-in-installed-version", Severity.INFO)
def key_deprecated_in_installed_version(ctx: Context) -> Iterator[Finding]:
    """
    Finds a key the installed transformers or TRL still accepts but has deprecated (`--deep`).

    ## What it does
    With `--deep`, reports each key whose field in the installed `TrainingArguments` (or
    TRL config) documents itself as deprecated, quoting that help text and naming the
    replacement it gives. In transformers 5.23.0: `gradient_checkpointing` and
    `gradient_checkpointing_kwargs`, "Deprecated alias of `activation_checkpointing`, will be
    removed in v6."

    ## Why is this bad?
    Nothing breaks yet: transformers copies the value to the new field and warns
    (`FutureWarning: `gradient_checkpointing` is deprecated and will be removed in v6. Use
    `activation_checkpointing` instead.`). The release that removes the field turns the
    key into a PC920 error.

    ## Example
    With transformers 5.23.0 installed:
    ```yaml
    gradient_checkpointing: true
    ```
    Use instead:
    ```yaml
    activation_checkpointing: true
    ```

    ## Fix
    Rename the key as the message says (once every environment that runs the file has a
    release with the new field).
    """
    yield from _deep_notes(ctx, DEPRECATED_KEY)


@rule("PC923", "accelerate-rejects-config", Severity.ERROR)
def accelerate_rejects_config(ctx: Context) -> Iterator[Finding]:
    """
    Finds an accelerate config file the installed accelerate cannot load (`--deep`).

    ## What it does
    With `--deep`, loads the file with accelerate's own
    `accelerate.commands.config.config_args.load_config_from_file`, as `accelerate launch
    --config_file` does first, and reports the exception it raises with accelerate's text:
    keys the installed `ClusterConfig`/`SageMakerConfig` lacks (one finding per key, at the
    key), a missing `distributed_type`, a `distributed_type` or `compute_environment` that
    is not one of accelerate's values.

    ## Why is this bad?
    `accelerate launch` stops before starting a process, whatever its flags:
    `ValueError: The config file at fsdp.yaml had unknown keys (['fsdp_sharding_stratgy']),
    please try upgrading your `accelerate` version or fix (and potentially remove) these keys
    from your config file.` or `ValueError: 'MULTIGPU' is not a valid DistributedType`.

    ## Example
    ```yaml
    distributed_type: MULTIGPU
    mixed_precision: bf16
    ```
    Use instead:
    ```yaml
    distributed_type: MULTI_GPU
    mixed_precision: bf16
    ```

    ## Fix
    Change the file as accelerate's message says (or install the accelerate release the
    file was written for).
    """
    yield from _deep_notes(ctx, ACCELERATE_REFUSES)


@rule("PC924", "accelerate-launch-refuses", Severity.WARNING)
def accelerate_launch_refuses(ctx: Context) -> Iterator[Finding]:
    """
    Finds an accelerate config that `accelerate launch --config_file FILE` refuses without more flags (`--deep`).

    ## What it does
    With `--deep`, runs the installed accelerate's launch checks on the file with no other
    flag: `_validate_launch_command` and the environment the launcher exports
    (`prepare_multi_gpu_env`, `prepare_deepspeed_cmd_env`, `prepare_simple_launcher_cmd_env`),
    and reports the error, quoting accelerate: a `mixed_precision` or dynamo backend name
    accelerate does not know, an unquoted YAML `mixed_precision: no` (the boolean False),
    FSDP `cpu_ram_efficient_loading` without `sync_module_states`, no `num_processes` for a
    distributed run. Errors that depend on the machine precheck runs on (FP8 packages,
    `mpirun`, a busy port) are not reported.

    ## Why is this bad?
    The launch stops: `ValueError: Unknown mixed_precision mode: float16. Choose between
    ['no', 'fp8', 'fp16', 'bf16'].`, `AttributeError: 'bool' object has no attribute
    'lower'`, `ValueError: You need to manually pass in `--num_processes` using this config
    yaml.` Some of these a flag on the launch command supplies (`--num_processes`,
    `--mixed_precision`), hence a warning rather than an error.

    ## Example
    ```yaml
    distributed_type: MULTI_GPU
    mixed_precision: float16
    num_processes: 2
    ```
    Use instead:
    ```yaml
    distributed_type: MULTI_GPU
    mixed_precision: fp16
    num_processes: 2
    ```

    ## Fix
    Change the key accelerate names, or pass the setting on the `accelerate launch` command line.
    """
    yield from _deep_notes(ctx, LAUNCH_REFUSES)
