"""``precheck smoke``: one real training step of a tiny model with the config's resolved plan.

Modules: :mod:`.tiny_model` (which architecture, built from a config), :mod:`.setup`
(plan → what to apply; torch-free), :mod:`.step` (the step; imports torch),
:mod:`.lora` and :mod:`.optimizers` (what the step builds), :mod:`.report` (findings on the
config keys, text and JSON), :mod:`.run` (the command). Importing this package imports
neither torch nor transformers.
"""
