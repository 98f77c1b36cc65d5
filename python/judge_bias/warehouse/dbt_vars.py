"""The dbt vars of ``judge-bias build --vars '{...}'``: read as dbt reads ``--vars``
(a YAML mapping; JSON is YAML), given to every dbt command of the build, and to the
pre-flight for the vars that change what it checks (csv_dialects: how each file is
read; judge_bias_input_relations: relations instead of files, so no data folder).

``data_dir`` among them is the folder of ``--data``: it is taken out and checked as
the data folder (relative to the current folder, as --data is), never passed twice.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from judge_bias.errors import InputError
from judge_bias.inputs.relations import KINDS_VAR, relation_kinds

# PyYAML, the YAML reader of dbt-core (a dependency), which reads --vars the same way;
# imported by name: no type stubs are installed for it
yaml: Any = importlib.import_module("yaml")


class VarsError(InputError):
    """--vars is not a mapping, or contradicts another option; one line."""


def parse_vars(text: str | None) -> dict[str, Any]:
    """The mapping of ``--vars`` (YAML or JSON, as dbt reads it); {} for none."""
    if text is None or not text.strip():
        return {}
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" (line {where.line + 1}, column {where.column + 1})" if where else ""
        raise VarsError(
            f"--vars {text!r} is not YAML{at}; write a mapping, e.g. '{{ci_level: 0.95}}'"
        ) from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise VarsError(
            f"--vars {text!r} is not a mapping of var -> value; write e.g. '{{ci_level: 0.95}}'"
        )
    return {str(k): v for k, v in value.items()}


def dbt_args(dbt_vars: Mapping[str, Any]) -> list[str]:
    """The ``--vars`` argument of a dbt command (JSON: dbt reads it as YAML)."""
    return ["--vars", json.dumps(dict(dbt_vars), sort_keys=True)] if dbt_vars else []


def split_data_dir(
    data: str | Path | None, dbt_vars: Mapping[str, Any]
) -> tuple[str | Path | None, dict[str, Any]]:
    """(the data folder, the other vars): ``data_dir`` in the vars is the --data
    folder; both given and different is an error."""
    rest = dict(dbt_vars)
    given = rest.pop("data_dir", None)
    if given is None or str(given) == "":
        return data, rest
    if data is not None and Path(data).resolve() != Path(str(given)).resolve():
        raise VarsError(
            f"--data {data} and --vars data_dir {given} name two data folders; give one of them"
        )
    return str(given), rest


def input_relations(dbt_vars: Mapping[str, Any]) -> tuple[str, ...]:
    """The input kinds read from relations (var judge_bias_input_relations), checked."""
    return relation_kinds(dbt_vars.get(KINDS_VAR))
