"""The check policy: a YAML mapping with an optional `judges` list (the judges in
production the rules apply to; default every judge) and `rules`, one entry per rule
name (rules.RULES) with its options. Every option is checked here, so a typo is a
one-line usage error (exit 2), never a rule silently not run."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge_bias.checks.settings import DEFAULT_POLICY, SEVERITIES
from judge_bias.errors import InputError


@dataclass(frozen=True)
class Policy:
    rules: dict[str, Any]
    judges: tuple[str, ...] = ()
    source: str = "the default policy"
    options: dict[str, Any] = field(default_factory=dict)


def load_policy(path: str | Path | None) -> Policy:
    """The policy in ``path`` (YAML), or the permissive default when None."""
    if path is None:
        return parse_policy(DEFAULT_POLICY, "the default policy")
    import yaml  # type: ignore[import-untyped, unused-ignore]

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"--policy {path}: no such file")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"--policy {path}: not valid YAML ({first})") from None
    return parse_policy(data, str(path))


def parse_policy(data: object, source: str) -> Policy:
    from judge_bias.checks.rules import RULES

    if not isinstance(data, dict):
        raise InputError(f"{source}: a policy is a mapping with `rules` (and `judges`)")
    unknown = set(data) - {"rules", "judges"}
    if unknown:
        raise InputError(f"{source}: unknown key(s) {', '.join(sorted(unknown))}; "
                         "use rules and judges")  # fmt: skip
    judges = data.get("judges") or []
    if not isinstance(judges, list) or not all(isinstance(j, str) for j in judges):
        raise InputError(f"{source}: judges must be a list of judge names")
    rules = data.get("rules") or {}
    if not isinstance(rules, dict):
        raise InputError(f"{source}: rules must be a mapping of rule name to options")
    for name, options in rules.items():
        if name not in RULES:
            raise InputError(f"{source}: unknown rule {name!r}; rules: {', '.join(sorted(RULES))}")
        RULES[name].validate(options if options is not None else {}, f"{source}: {name}")
    clean = {name: (options if options is not None else {}) for name, options in rules.items()}
    return Policy(rules=clean, judges=tuple(judges), source=source)


def check_options(
    options: object, where: str, allowed: dict[str, type | tuple[type, ...]]
) -> dict[str, Any]:
    """``options`` as a mapping whose keys are in ``allowed`` with values of its types
    (plus `severity`), else a one-line ValueError naming ``where``."""
    if isinstance(options, list) and list in (allowed.get("items"),):
        return {"items": options}
    if not isinstance(options, dict):
        raise InputError(f"{where}: options must be a mapping")
    allowed = {**allowed, "severity": str}
    for key, value in options.items():
        if key not in allowed:
            raise InputError(f"{where}: unknown option {key!r}; options: "
                             f"{', '.join(sorted(allowed))}")  # fmt: skip
        types = allowed[key]
        if isinstance(value, bool) and bool not in (
            types if isinstance(types, tuple) else (types,)
        ):
            raise InputError(f"{where}: {key} must not be true/false")
        if not isinstance(value, types):
            raise InputError(f"{where}: {key} has the wrong type ({value!r})")
    if options.get("severity", "error") not in SEVERITIES:
        raise InputError(f"{where}: severity must be one of {', '.join(SEVERITIES)}")
    return options
