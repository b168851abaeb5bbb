"""What the deep pass tells the rules: source notes with the fix the library's answer implies.

The deep pass (:func:`precheck.deep.inspect`) asks the installed libraries and records
their answers on the run's configs as :class:`DeepNote` s; the PC92x rules
(:mod:`precheck.rules.deep`) turn them into findings, as the hygiene rules do with the
notes the sources leave. Rules stay pure: they never import transformers or accelerate.
"""

from __future__ import annotations

from ..rules.deep import ACCELERATE_REFUSES, DEPRECATED_KEY, LAUNCH_REFUSES, REMOVED_KEY, UNKNOWN_KEY, DeepNote

#: the note kinds, one per rule, and the note class: declared by the rules, which read them
__all__ = ["ACCELERATE_REFUSES", "DEPRECATED_KEY", "LAUNCH_REFUSES", "REMOVED_KEY", "UNKNOWN_KEY", "DeepNote"]
