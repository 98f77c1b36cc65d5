"""The mapping importer's YAML config: read, checked, and turned into plain objects.

Every error is one line naming the config file and the key (``outputs[0].columns.label``).
The format is documented in docs/mapping.md; examples/mapping/ holds one config per
input kind and ready configs for LangSmith and Braintrust exports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge_bias.errors import InputError
from judge_bias.inputs.contract import KINDS
from judge_bias.inputs.importers._records import KINDS as FILE_KINDS
from judge_bias.inputs.writer import csv_text

TOP_KEYS = ("input", "outputs", "rating_scales", "models")
INPUT_KEYS = ("format", "records")
OUTPUT_KEYS = ("kind", "each", "where", "columns")
SPEC_SOURCES = ("path", "const", "template")
SPEC_KEYS = (*SPEC_SOURCES, "map", "default")
CONDITION_OPS = ("in", "not_in", "exists")
SCALE_KEYS = ("dimension", "labels", "range", "label", "score", "is_na", "scale_level")
MODEL_KEYS = ("alias", "model", "family")
# Kinds an output may write; models and rating_scales are the config's own sections.
OUTPUT_KINDS = tuple(k for k in KINDS if k not in ("models", "rating_scales"))
ALL_DIMENSIONS = "*"  # a rating_scales entry for every dimension the outputs write


class MappingError(InputError):
    """A mapping config that cannot be used; the message is one line."""


@dataclass(frozen=True)
class Spec:
    """Where one output column's value comes from."""

    path: tuple[str, ...] | None = None  # the first that resolves
    const: object = None
    template: str | None = None
    map: dict[str, object] | None = None
    default: object = None


@dataclass(frozen=True)
class Condition:
    """One ``where`` test on a record: equal to a value, in or not in a list, present."""

    path: str
    op: str  # eq, in, not_in, exists
    values: tuple[str, ...] = ()
    exists: bool = True


@dataclass(frozen=True)
class Output:
    """One output: rows of ``kind`` made from the records that pass ``where``."""

    kind: str
    columns: dict[str, Spec]
    each: str | None = None
    where: tuple[Condition, ...] = ()


@dataclass
class MappingConfig:
    """A checked mapping config."""

    path: Path
    outputs: list[Output]
    format: str | None = None
    records: str = ""
    scales: list[dict[str, object]] = field(default_factory=list)
    scale_all: list[dict[str, object]] = field(default_factory=list)  # dimension "*"
    models: list[dict[str, str]] = field(default_factory=list)


def load_config(path: str | Path) -> MappingConfig:
    """Read and check a mapping config; a MappingError names the key at fault."""
    import yaml  # type: ignore[import-untyped,unused-ignore]  # pyyaml comes with dbt-core; no stubs

    path = Path(path)
    if not path.is_file():
        raise MappingError(f"--config {path}: no such file")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}" if where is not None else ""
        raise MappingError(f"{path}: not a YAML file{at}") from exc
    return parse_config(data, path)


def parse_config(data: object, path: Path) -> MappingConfig:
    def fail(key: str, message: str) -> MappingError:
        return MappingError(f"{path}: {key}: {message}")

    if not isinstance(data, dict):
        raise MappingError(f"{path}: expected a YAML mapping with an outputs list")
    _only(data, TOP_KEYS, "", fail)
    raw_input = data.get("input") or {}
    if not isinstance(raw_input, dict):
        raise fail("input", "expected a mapping (format, records)")
    _only(raw_input, INPUT_KEYS, "input.", fail)
    fmt = raw_input.get("format")
    if fmt is not None and fmt not in FILE_KINDS:
        raise fail("input.format", f"{fmt!r} is not one of {', '.join(FILE_KINDS)}")
    outputs = data.get("outputs")
    if not isinstance(outputs, list) or not outputs:
        raise fail("outputs", "expected a non-empty list of outputs (kind, columns)")
    config = MappingConfig(
        path=path,
        outputs=[_output(o, f"outputs[{i}]", fail) for i, o in enumerate(outputs)],
        format=fmt,
        records=str(raw_input.get("records") or ""),
    )
    for i, entry in enumerate(data.get("rating_scales") or []):
        rows = _scale(entry, f"rating_scales[{i}]", fail)
        is_all = isinstance(entry, dict) and entry.get("dimension") == ALL_DIMENSIONS
        (config.scale_all if is_all else config.scales).extend(rows)
    for i, entry in enumerate(data.get("models") or []):
        key = f"models[{i}]"
        if not isinstance(entry, dict):
            raise fail(key, "expected a mapping (alias, model, family)")
        _only(entry, MODEL_KEYS, f"{key}.", fail)
        missing = [k for k in MODEL_KEYS if entry.get(k) in (None, "")]
        if missing:
            raise fail(key, f"missing {', '.join(missing)}")
        config.models.append({k: csv_text(entry[k]) for k in MODEL_KEYS})
    return config


def _only(data: dict, allowed: tuple[str, ...], prefix: str, fail: Any) -> None:
    for key in data:
        if key not in allowed:
            raise fail(f"{prefix}{key}", f"unknown key (expected one of {', '.join(allowed)})")


def _output(raw: object, key: str, fail: Any) -> Output:
    if not isinstance(raw, dict):
        raise fail(key, "expected a mapping (kind, columns, each?, where?)")
    _only(raw, OUTPUT_KEYS, f"{key}.", fail)
    kind = raw.get("kind")
    if kind not in OUTPUT_KINDS:
        raise fail(f"{key}.kind", f"{kind!r} is not one of {', '.join(OUTPUT_KINDS)}")
    columns = raw.get("columns")
    if not isinstance(columns, dict) or not columns:
        raise fail(f"{key}.columns", "expected a mapping of column: source")
    specs = {str(c): _spec(s, f"{key}.columns.{c}", fail) for c, s in columns.items()}
    contract = KINDS[kind]
    missing = [c for c in contract.required if c not in specs]
    missing += [" or ".join(g) for g in contract.one_of if not any(c in specs for c in g)]
    if missing:
        raise fail(f"{key}.columns", f"{kind} needs {', '.join(missing)}")
    each = raw.get("each")
    if each is not None and not isinstance(each, str):
        raise fail(f"{key}.each", "expected a dotted path to a list or an object")
    where = raw.get("where") or {}
    if not isinstance(where, dict):
        raise fail(f"{key}.where", "expected a mapping of path: value")
    conditions = tuple(_condition(p, v, f"{key}.where.{p}", fail) for p, v in where.items())
    return Output(kind, specs, each, conditions)


def _spec(raw: object, key: str, fail: Any) -> Spec:
    if isinstance(raw, str):
        return Spec(path=(raw,))
    if not isinstance(raw, dict):
        raise fail(key, "expected a path or a mapping (path, const or template; map; default)")
    _only(raw, SPEC_KEYS, f"{key}.", fail)
    sources = [s for s in SPEC_SOURCES if s in raw]
    if len(sources) != 1:
        raise fail(key, "give exactly one of path, const, template")
    value_map = raw.get("map")
    if value_map is not None and not isinstance(value_map, dict):
        raise fail(f"{key}.map", "expected a mapping of value: label")
    if "template" in raw and not isinstance(raw["template"], str):
        raise fail(f"{key}.template", "expected a string")
    paths = raw.get("path")
    if isinstance(paths, str):
        paths = [paths]
    if "path" in raw and (
        not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths)
    ):
        raise fail(f"{key}.path", "expected a dotted path or a list of them (first found wins)")
    return Spec(
        path=tuple(paths) if paths else None,
        const=raw.get("const"),
        template=raw.get("template"),
        map={csv_text(k): v for k, v in value_map.items()} if value_map else None,
        default=raw.get("default"),
    )


def _condition(path: object, value: object, key: str, fail: Any) -> Condition:
    if isinstance(value, dict):
        _only(value, CONDITION_OPS, f"{key}.", fail)
        if len(value) != 1:
            raise fail(key, "give one of in, not_in, exists")
        [(op, arg)] = value.items()
        if op == "exists":
            return Condition(str(path), "exists", exists=bool(arg))
        if not isinstance(arg, list):
            raise fail(f"{key}.{op}", "expected a list of values")
        return Condition(str(path), op, tuple(csv_text(v) for v in arg))
    if isinstance(value, list):
        return Condition(str(path), "in", tuple(csv_text(v) for v in value))
    return Condition(str(path), "eq", (csv_text(value),))


def _scale(raw: object, key: str, fail: Any) -> list[dict[str, object]]:
    if not isinstance(raw, dict):
        raise fail(key, "expected a mapping (dimension and labels, range or label + score)")
    _only(raw, SCALE_KEYS, f"{key}.", fail)
    dimension = raw.get("dimension")
    if dimension in (None, ""):
        raise fail(f"{key}.dimension", "missing")
    extra = {k: raw[k] for k in ("is_na", "scale_level") if k in raw}
    forms = [k for k in ("labels", "range", "label") if k in raw]
    if len(forms) != 1:
        raise fail(key, "give exactly one of labels (label: score), range [low, high], label")
    if "labels" in raw:
        labels = raw["labels"]
        if not isinstance(labels, dict) or not labels:
            raise fail(f"{key}.labels", "expected a mapping of label: score")
        for label, score in labels.items():
            _number(score, f"{key}.labels.{label}", fail)
        return [
            {"dimension": dimension, "label": k, "score": v, **extra} for k, v in labels.items()
        ]
    if "range" in raw:
        ends = raw["range"]
        if not isinstance(ends, list) or len(ends) != 2:
            raise fail(f"{key}.range", "expected [low, high]")
        low, high = (_number(v, f"{key}.range", fail) for v in ends)
        if not low < high:
            raise fail(f"{key}.range", f"low {low} is not below high {high}")
        return [{"dimension": dimension, "label": v, "score": v, **extra} for v in ends]
    if "score" not in raw:
        raise fail(f"{key}.score", "missing (label needs a score)")
    _number(raw["score"], f"{key}.score", fail)
    return [{"dimension": dimension, "label": raw["label"], "score": raw["score"], **extra}]


def _number(value: object, key: str, fail: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(key, f"{value!r} is not a number")
    return float(value)
