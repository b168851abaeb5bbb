"""What the deep pass tells the rules: source notes with the fix the library's answer implies.

The deep pass (:func:`precheck.deep.inspect`) asks the installed libraries and records
their answers on the run's configs as :class:`DeepNote` s; the PC92x rules
(:mod:`precheck.rules.deep`) turn them into findings, as the hygiene rules do with the
notes the sources leave. Rules stay pure: they never import transformers or accelerate.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..sources.nodes import SourceNote

#: note kinds, one per rule
REMOVED_KEY = "deep-key-not-in-installed-version"  # PC920
UNKNOWN_KEY = "deep-unknown-key"  # PC921
DEPRECATED_KEY = "deep-deprecated-key"  # PC922
ACCELERATE_REFUSES = "deep-accelerate-refuses"  # PC923
LAUNCH_REFUSES = "deep-accelerate-launch-refuses"  # PC924


@dataclass(slots=True)
class DeepNote(SourceNote):
    """A note from the deep pass, with the concrete change it calls for."""

    fix: str = ""
