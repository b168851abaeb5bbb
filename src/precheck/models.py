"""What precheck knows about popular checkpoints without downloading them.

``native_dtype`` is the ``torch_dtype`` the publisher saved in the checkpoint's
``config.json``: the precision the weights were trained and released in. Each family
names where that was read; families whose value could not be confirmed are left out
rather than guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Family:
    """A model family: the names that match it and the dtype its weights ship in."""

    name: str
    pattern: re.Pattern[str]
    native_dtype: str
    source: str


FAMILIES: tuple[Family, ...] = (
    Family(
        "TinyLlama",
        re.compile(r"tinyllama"),
        "bfloat16",
        'TinyLlama/TinyLlama-1.1B-Chat-v1.0 config.json "torch_dtype": "bfloat16" (as mirrored by unsloth/tinyllama)',
    ),
    Family(
        "Llama 2",
        re.compile(r"llama-?2-\d+b"),
        "float16",
        'meta-llama/Llama-2-7b-hf config.json "torch_dtype": "float16" (transformers docs tip, PR #25794)',
    ),
    Family(
        "Llama 3",
        re.compile(r"llama-?3(?:\.\d+)?-\d+(?:\.\d+)?b|llama-?3(?:\.\d+)?$|meta-llama-3"),
        "bfloat16",
        'meta-llama/Llama-3.x config.json "torch_dtype": "bfloat16" (the fine-tuning recipes of meta-llama, PR #663)',
    ),
    Family(
        "Qwen2",
        re.compile(r"qwen2|qwen3"),
        "bfloat16",
        'Qwen/Qwen2.5-*-Instruct config.json "torch_dtype": "bfloat16"',
    ),
    Family(
        "GLM-4",
        # glm-4-9b, glm-4-9b-chat(-1m), glm4-9b; not ChatGLM-6B/ChatGLM2/3 (float16, a different family)
        re.compile(r"(?<![a-z])glm-?4-\d+b"),
        "bfloat16",
        'THUDM/glm-4-9b-chat config.json "torch_dtype": "bfloat16" (snapshot f6e0743b, as transformers 4.43.4 '
        "printed it on load); THUDM/GLM-4 finetune/finetune.py:333 loads it with torch_dtype=torch.bfloat16",
    ),
    Family(
        "Baichuan2-13B",
        # Baichuan2-13B-Base/-Chat; not Baichuan-13B (v1) and not Baichuan2-7B (its config.json not confirmed)
        re.compile(r"baichuan-?2-13b"),
        "bfloat16",
        'baichuan-inc/Baichuan2-13B-Chat config.json:24 "torch_dtype": "bfloat16" (revision 670d17ee, quoted in '
        "baichuan-inc/Baichuan2#50, where Baichuan answers that fp16 in cli_demo.py is for cards without bf16); "
        "Baichuan2's own fine-tune recipe trains with --bf16 True (README.md:504@ed1cf0f)",
    ),
    Family(
        "Mistral",
        re.compile(r"mistral|mixtral"),
        "bfloat16",
        'mistralai/Mistral-7B-v0.1 config.json "torch_dtype": "bfloat16"',
    ),
)


def family_of(model: str) -> Family | None:
    name = model.lower()
    # the table lists the most specific family first (TinyLlama before Llama)
    for family in FAMILIES:
        if family.pattern.search(name):
            return family
    return None
