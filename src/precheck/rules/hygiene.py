"""PC9xx: input that parses but does not mean what it seems to."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..provenance import Origin
from ..script_files import script_kind
from .base import Context, Finding, Fix, RuleStatus, Severity, rule

#: the closest known key a dialect names in an unknown-key note (``; did you mean `bf16`?``)
_SUGGESTION = re.compile(r"; did you mean `([^`]+)`\?")


def _notes(ctx: Context, kind: str) -> Iterator[tuple[Origin, str]]:
    """Notes of this kind in the run's config and in every file it named."""
    pending = [ctx.config]
    while pending:
        config = pending.pop(0)
        for note in config.notes:
            if note.kind == kind:
                yield Origin("file", note.path or config.path, note.line, note.column, note.key), note.message
        pending.extend(config.attached.values())


@rule("PC901", "duplicate-key", Severity.WARNING)
def duplicate_key(ctx: Context) -> Iterator[Finding]:
    """
    Finds a key written twice in one mapping.

    ## What it does
    Reports the second occurrence of a key in the same YAML mapping or JSON object.

    ## Why is this bad?
    YAML and JSON loaders keep the last value silently: `fp16: false` near the top and
    `fp16: true` further down trains in fp16, whatever the reader of the first line
    believes.

    ## Example
    ```yaml
    fp16: false
    learning_rate: 2.0e-5
    fp16: true
    ```
    Use instead: one `fp16` key.

    ## Fix
    Delete the copy that should not win.
    """
    for origin, message in _notes(ctx, "duplicate-key"):
        yield Finding(origin, message, Fix("keep one of the two keys"))


@rule("PC902", "yaml11-boolean", Severity.WARNING)
def yaml11_boolean(ctx: Context) -> Iterator[Finding]:
    """
    Finds YAML 1.1 booleans (`yes`, `no`, `on`, `off`).

    ## What it does
    Reports scalars that PyYAML (YAML 1.1) reads as booleans although they are not
    spelled `true` or `false`.

    ## Why is this bad?
    `fp16: on` is True for PyYAML but the string "on" for YAML 1.2 parsers and for
    tools that read the file differently; `off` silently means False. Configs read by
    more than one tool should say `true`/`false`.

    ## Example
    ```yaml
    bf16: yes
    ```
    Use instead:
    ```yaml
    bf16: true
    ```

    ## Fix
    Write `true` or `false`.
    """
    for origin, message in _notes(ctx, "yaml11-boolean"):
        yield Finding(origin, message, Fix("write true or false"))


@rule("PC903", "multiple-documents", Severity.WARNING)
def multiple_documents(ctx: Context) -> Iterator[Finding]:
    """
    Finds a YAML file that holds more than one document.

    ## What it does
    Reports the second `---` document of a training config.

    ## Why is this bad?
    Training frameworks load one document (`yaml.safe_load` raises "expected a single
    document in the stream" on more; others read the first and drop the rest), so
    settings after the `---` never reach the run. precheck checks the first document only.

    ## Example
    ```yaml
    bf16: true
    ---
    fp16: true
    ```
    Use instead: one document per file.

    ## Fix
    Merge the documents, or split them into separate files.
    """
    for origin, message in _notes(ctx, "multiple-documents"):
        yield Finding(origin, message, Fix("keep one YAML document per config file"))


@rule("PC908", "launch-flags-cut-off", Severity.WARNING)
def launch_flags_cut_off(ctx: Context) -> Iterator[Finding]:
    """
    Finds flags that bash never passes to the launch above them.

    ## What it does
    Reports the lines of a launch script that start with a flag (`--bf16 True`) right after a
    launch command was ended by a comment line or a blank line inside its backslash
    continuation.

    ## Why is this bad?
    In bash a backslash joins a line to the next one only: a comment (`# the model`) or a
    blank line after it ends the command. The launch then runs without every flag below that
    line (the training script's defaults apply: no `--bf16`, no `--deepspeed`), and bash runs
    each following line as a command of its own (`--bf16: command not found`), which a script
    without `set -e` ignores.

    ## Example
    ```bash
    torchrun --nproc_per_node 8 train.py \\
        # the precision
        --bf16 True \\
        --output_dir out
    ```
    Use instead: the comments above or below the command, or none inside it.

    ## Fix
    Remove the comment and blank lines inside the launch command.
    """
    for origin, message in _notes(ctx, "cut-off"):
        yield Finding(origin, message, Fix("remove the comment and blank lines inside the launch command"))


@rule("PC904", "missing-reference", Severity.WARNING)
def missing_reference(ctx: Context) -> Iterator[Finding]:
    """
    Finds a config that names a file (a DeepSpeed JSON, an FSDP or accelerate config) that is not there.

    ## What it does
    Follows `deepspeed:`, `deepspeed_config_file:`, `fsdp_config:`, `--deepspeed` and the like
    as the launch resolves them: a relative path is looked for in the folder the launch script
    `cd`-s to, the repository root (the folder with `.git`, else with a project file such as
    `requirements.txt`), the naming file's folder, then the folders between; never in the
    current folder, so the report is the same wherever precheck runs. It reports a path that
    no candidate holds.

    ## Why is this bad?
    The named file decides the run's precision (DeepSpeed's `fp16`/`bf16` blocks, ZeRO
    stage, loss scaling); precheck cannot check what it cannot read. If the file is missing
    at launch too, transformers raises `ValueError: Expected a string path to an existing
    deepspeed config, or a dictionary, or a base64 encoded string. Received: ds.json`.

    ## Example
    ```yaml
    deepspeed: configs/ds_zero3.json   # no such file
    ```
    Use instead: the path of the file, relative to the repository root or to where the script `cd`-s.

    ## Fix
    Correct the path, or add the file to the repository.
    """
    for origin, message in _notes(ctx, "missing-reference"):
        yield Finding(origin, message, Fix("correct the path, or add the file it names"))


@rule("PC905", "unknown-key", Severity.WARNING)
def unknown_key(ctx: Context) -> Iterator[Finding]:
    """
    Finds a key the framework does not read, such as a misspelt precision switch.

    ## What it does
    Compares each top-level key with the keys the file's framework reads. A key close to a
    known one (`bf_16`, `fp_16`, `mixed_precison`) is reported with a did-you-mean; for
    frameworks that refuse unknown keys (accelerate's config file), every unknown key is
    reported.

    ## Why is this bad?
    A misspelt switch does nothing where the framework ignores extra keys: `bf_16: true`
    trains in fp32 while its author believes bf16 is on. Where the framework is strict the
    run stops at launch: accelerate raises `ValueError: The config file at default_config.yaml
    had unknown keys (['mixed_precison']), please try upgrading your `accelerate` version or
    fix (and potentially remove) these keys from your config file.`; `HfArgumentParser`
    raises `ValueError: Some keys are not used by the HfArgumentParser: ['bf_16']`.

    ## Example
    ```yaml
    mixed_precison: bf16
    ```
    Use instead:
    ```yaml
    mixed_precision: bf16
    ```

    ## Fix
    Spell the key as the framework does (the message names the closest one), or remove it.
    """
    for origin, message in _notes(ctx, "unknown-key"):
        close = _SUGGESTION.search(message)
        if close is None:
            yield Finding(origin, message, Fix("rename the key to the one the framework reads, or remove it"))
        else:  # the did-you-mean the dialect found, in the help line the text output shows
            name = close.group(1)
            key = origin.key or ""
            # a nested key (`fsdp_config.fsdp_x`) keeps its table: the suggestion names the last part
            full = f"{key.rsplit('.', 1)[0]}.{name}" if "." in key and "." not in name else name
            yield Finding(origin, message, Fix(f"did you mean {name}? rename `{key}` to `{full}`, or remove it"))


@rule("PC906", "quoted-boolean", Severity.WARNING)
def quoted_boolean(ctx: Context) -> Iterator[Finding]:
    """
    Finds a precision switch written as a quoted string (`"false"`) instead of a boolean.

    ## What it does
    Reports `fp16`, `bf16`, `tf32` and other on/off switches whose value is the string
    `"true"` or `"false"` rather than the boolean.

    ## Why is this bad?
    Some readers convert the string (argparse-based CLIs such as TRL's), others pass it
    through: `HfArgumentParser.parse_yaml_file` hands `"false"` to `TrainingArguments`
    unchanged, and its `__post_init__` tests `if self.fp16:` — a non-empty string is true,
    so `fp16: "false"` turns fp16 on. The same file means opposite things to two tools.

    On a command line read by python-fire (a framework whose entry point is a `fire.Fire` function),
    the bare word is the trap: fire's parser (`fire/parser.py` `_Replacement`) keeps only
    the names `True`, `False` and `None` as Python literals and passes `--use_fp16 false` on
    as the string `'false'`, which `update_config` sets and `if train_config.use_fp16:`
    reads as true.

    ## Example
    ```yaml
    fp16: "false"
    ```
    Use instead:
    ```yaml
    fp16: false
    ```

    ## Fix
    Remove the quotes (on a python-fire command line, write `True` or `False`).
    """
    for origin, message in _notes(ctx, "quoted-boolean"):
        # a script's or a `precheck -- CMD` command line's flag: python-fire's bare word
        script = origin.path is not None and (script_kind(origin.path) is not None or origin.path.startswith("<"))
        fix = "write True or False" if script else "remove the quotes: write true or false"
        yield Finding(origin, message, Fix(fix))


@rule("PC907", "unused-suppression", Severity.INFO, status=RuleStatus.OPT_IN, suppressions=True)
def unused_suppression(ctx: Context) -> Iterator[Finding]:
    """
    Finds a `# precheck: ignore` comment that silences nothing.

    ## What it does
    Reports an inline `# precheck: ignore[CODE]` whose rule reports nothing on its line, a
    `# precheck: ignore-file[CODE]` whose rule reports nothing in its file, a code in a
    suppression that is not a rule, and a comment that starts like a suppression but is not
    one (`# precheck: ignore[PC205` with no `]`), which silences nothing. Off by default: turn it on with
    `--show-unused-suppressions` or `--extend-select PC907` (like ruff's RUF100).

    ## Why is this bad?
    A suppression outlives the problem it silenced: after the config is fixed, the stale
    comment would silence the same rule if the problem came back on that line, and it tells
    the next reader of the file about a trap that is no longer there.

    ## Example
    ```yaml
    bf16: false  # precheck: ignore[PC101]
    ```
    Use instead:
    ```yaml
    bf16: false
    ```

    ## Fix
    Delete the comment, or the codes in it that silence nothing.
    """
    known = ctx.suppressions
    if known is None:  # run outside the engine's pass: no findings to weigh the comments with
        return
    for origin, message in known.malformed:  # they look like suppressions but are not: they silence nothing
        yield Finding(origin, message, Fix("fix the comment"))
    # a rule that could not run (a hardware rule, no GPU known) cannot tell whether it is needed
    unknown = known.undecided
    for item in known.comments:
        used = item.used
        scope = "in this file" if item.file_wide else "on this line"
        if not item.codes:
            if not used and not unknown:
                yield Finding(item.origin, f"`{item.comment}` silences nothing {scope}", Fix("delete the comment"))
            continue
        stale = [c for c in item.codes if c not in used and c not in unknown]
        if not stale:
            continue
        wrong = [c for c in stale if c not in known.codes]
        quiet = [c for c in stale if c in known.codes]
        parts = []
        if quiet:
            parts.append(f"{', '.join(quiet)} report{'s' if len(quiet) == 1 else ''} nothing {scope}")
        if wrong:
            parts.append(f"{', '.join(wrong)} {'is not a rule' if len(wrong) == 1 else 'are not rules'}")
        yield Finding(
            item.origin,
            f"unused suppression `{item.comment}`: {'; '.join(parts)}",
            Fix(f"delete {', '.join(stale)} from the comment (or the whole comment)"),
        )
