"""The framework's one name, as its messages and version look-ups spell it (llm-foundry),
and the training library under it whose ``Trainer`` gives its keys their meaning (Composer)."""

NAME = "llm-foundry"
#: the library (distribution ``mosaicml``) that reads ``precision`` and ``fsdp_config``
TRAINER = "Composer"
