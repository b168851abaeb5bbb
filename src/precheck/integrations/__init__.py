"""precheck inside training code: :mod:`precheck.integrations.transformers` has
``PrecheckCallback``, a transformers ``TrainerCallback`` that checks the real run before its
first step. Importing this package imports neither torch nor transformers; importing the
``transformers`` submodule needs them (``pip install 'precheck-ml[hf]'``).
"""
