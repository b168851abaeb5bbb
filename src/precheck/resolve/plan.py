"""The precision plan, re-exported from the model layer (:mod:`precheck.plan`), where it lives."""

from __future__ import annotations

from ..plan import CORE_FIELDS, PLAN_FIELDS, Override, OverrideKind, PrecisionPlan, same_dtype_plan

__all__ = ["CORE_FIELDS", "PLAN_FIELDS", "Override", "OverrideKind", "PrecisionPlan", "same_dtype_plan"]
