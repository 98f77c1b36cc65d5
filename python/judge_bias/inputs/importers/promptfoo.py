"""promptfoo eval results: eval -o results.json, .jsonl or .yaml, and export eval files.

Record schema: promptfoo 0.121.20 (``src/types/index.ts``: ``EvaluateResult``,
``GradingResult``, ``componentResults``; the JSON file is ``{evalId, results:
{version, prompts, results: [EvaluateResult], stats}, config, ...}``, the JSONL
file one ``EvaluateResult`` a line; ``-o .yaml``, ``.yml`` and ``.txt`` the JSON
document in YAML). Results version 2 (promptfoo before 0.9x: 0.43.1 and 0.80.3
checked) has rows with no ``testIdx``, ``promptIdx`` nor ``testCase``: a test
is the line of ``results.table.body`` holding the row's cell, when every row's
cell is in one line; else its ``vars`` (the n-th row of the same vars, provider
and prompt the n-th test: ``--repeat`` and tests of identical vars; numbered in
the order they first appear), and its own options (grader) are the config test's whose vars
the row has. Tests of identical vars: the row's cell in the file's
``results.table`` (its provider, prompt, latency and gradingResult) names its
test (``table.body[rowIndex].test``); promptfoo writes the rows as they finish,
not in test order (0.80.3: ``results.push`` in ``processEvalStep``, 4 at a
time), so without the table, or where the cell is not one test's grader, the
grader is assumed. Counted on stderr, with the grader assumed, when the tests are
a ``file://`` reference or match ambiguously. The CSV, HTML and
XML tables keep no grader nor per-assertion score: refused in one line.

Each result row is one test case (``testIdx``, ``vars``) answered by one
provider under test (``provider.label`` or ``provider.id``) and graded by the
assertions in ``gradingResult.componentResults``.

- **judge_ratings**: one row per result row and model-graded component:
  ``llm-rubric``, ``model-graded-*``, ``g-eval`` and the other types promptfoo
  lists as model-graded (``MODEL_GRADED_ASSERTION_TYPES`` in
  ``src/assertions/index.ts``: factuality, answer-relevance, context-*,
  search-rubric, ...; a ``not-`` prefix is kept in the name). judge = the
  component's grading provider: the assertion's ``provider``, else the test's
  ``options.provider`` (where promptfoo merges ``defaultTest``), else the
  config's ``defaultTest.options.provider``, else ``promptfoo-default-grader``
  (promptfoo picked a default grader from the environment; name it with
  ``--models``); a provider is named by its ``label``, else its ``id``.
  model = the provider under test; dimension = the assertion's ``metric``,
  else its type (``<dimension>#2``, ... when one test repeats it); label =
  the component's ``score`` (its ``pass`` as 1/0 when it has no score); extra
  columns ``pass``, ``rationale`` (the grader's ``reason``), ``assertion_type``.
- **human_annotations**: a manual grade made in promptfoo's web viewer. The
  viewer (``src/app``, ResultsTable ``onRating``) stores it through
  ``POST /api/eval/:evalId/results/:id/rating``: a thumbs up/down adds a
  component with ``assertion.type`` ``human`` (``HUMAN_ASSERTION_TYPE``), and
  both thumbs and "set score" set the row's ``gradingResult.score``/``pass``
  with the reason "Manual result (overrides all other grading results)". The
  human label is that top-level score (the latest manual value), written once
  for each judged dimension of the row (the manual grade is a verdict on the
  whole output, which is what each judge graded), annotator_id
  ``promptfoo-viewer`` (promptfoo records no user), ``rationale`` = the
  grade's comment. A manual grade on a row with no judged dimension goes to
  dimension ``manual``.
- Other assertion types (contains, equals, javascript, ...) grade no output
  by model: they are skipped and counted by type on stderr. A row without a
  gradingResult (a provider error) is counted, not written.
- **Names**: prompt_id = ``test<testIdx>`` (``-p<k>`` when the eval has several
  prompts; ``<evalId or file stem>/`` in front when several files are
  imported, ``-2``, ``-3``, ... after a file name an earlier file has, e.g. two
  ``results.yaml`` of version 2, which has no evalId: said on stderr; one
  evalId in two files is the same eval given twice: refused);
  prompts.csv has the rendered prompt, completions.csv the output.
- **rating_scales**: per dimension the numbers 0 and 1 (promptfoo's score
  range), widened to the smallest and largest score seen; a number in
  between is on the scale. A label that is no number is written as given and
  rejected by the build with its reason; the importer says how many.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

from judge_bias.errors import InputError
from judge_bias.inputs.importers._promptfoo_table import (
    number_tests,
    row_cell_key,
    table_options,
)
from judge_bias.inputs.importers._write import (
    parse_json,
    read_text,
    report_unmapped,
    write_models,
)
from judge_bias.inputs.writer import csv_text, write_contract_file

WHAT = "promptfoo results (eval -o results.json, .jsonl or .yaml)"
YAML_SUFFIXES = (".yaml", ".yml", ".txt")  # promptfoo writes YAML for all three
TABLE_SUFFIXES = {".csv": "CSV", ".html": "HTML", ".htm": "HTML", ".xml": "XML"}
MODEL_GRADED = frozenset(
    {
        "agent-rubric", "answer-relevance", "context-faithfulness", "context-recall",
        "context-relevance", "conversation-relevance", "factuality", "g-eval",
        "llm-rubric", "model-graded-closedqa", "model-graded-factuality",
        "search-rubric", "trajectory:goal-success",
    }
)  # fmt: skip
HUMAN = "human"
MANUAL_REASON = "Manual result (overrides all other grading results)"
DEFAULT_GRADER = "promptfoo-default-grader"
ANNOTATOR = "promptfoo-viewer"
RATING_EXTRAS = ("pass", "rationale", "assertion_type")
HUMAN_EXTRAS = ("rationale",)


def provider_name(provider: object) -> str | None:
    """A provider's name: a string as given, an object's label, else its id (an
    ``options.provider`` map of kinds is named by its ``text`` provider)."""
    if isinstance(provider, str):
        return provider or None
    if isinstance(provider, dict):
        name = provider.get("label") or provider.get("id")
        if name:
            return str(name)
        return provider_name(provider.get("text"))
    return None


def is_model_graded(assertion_type: str) -> bool:
    base = assertion_type.removeprefix("not-")
    return base in MODEL_GRADED or base.startswith("model-graded-")


def components(grading: dict) -> Iterator[dict]:
    """The leaf components of a gradingResult (an assert-set's parts, not the set)."""
    for comp in grading.get("componentResults") or []:
        if not isinstance(comp, dict):
            continue
        if (comp.get("assertion") or {}).get("type") == "assert-set" and comp.get(
            "componentResults"
        ):
            yield from components(comp)
        else:
            yield comp


def _is_result(row: object) -> bool:
    """An EvaluateResult: a provider and its test's index (results version 3), or
    its test's vars (version 2, which records no testIdx)."""
    return isinstance(row, dict) and "provider" in row and ("testIdx" in row or "vars" in row)


def _matches(test_vars: object, row_vars: dict) -> bool:
    """A config test's vars are a row's: each equal, or the row's value one of a
    list (promptfoo runs a test once per value of a list var)."""
    if not isinstance(test_vars, dict):
        return False
    return all(
        k in row_vars and (row_vars[k] == v or (isinstance(v, list) and row_vars[k] in v))
        for k, v in test_vars.items()
    )


def _test_options(rows: list[dict], config: dict, name: str, table: object = None) -> None:
    """Version 2 rows carry no testCase, so no test's own grader (``options.provider``):
    give each row the options of the config test whose vars it has, or, for tests
    of identical vars, of the test of its cell in the file's table. When the tests
    are not inline (a ``file://`` reference), or a row's vars match tests of
    different graders (and no table cell names one) or none, say how many rows and
    the grader assumed (defaultTest's)."""
    v2 = [r for r in rows if "testCase" not in r]
    tests = config.get("tests")
    if not v2 or tests is None:
        return
    default = ((config.get("defaultTest") or {}).get("options") or {}).get("provider")
    assumed = f"defaultTest's grader {provider_name(default) or DEFAULT_GRADER}"
    if not isinstance(tests, list) or not all(isinstance(t, dict) for t in tests):
        print(f"{name}: results version 2 keeps no test's own grader and the config's "
              f"tests are not inline ({str(tests)[:60]}): {len(v2)} result(s) assumed "
              f"{assumed} (options.provider of a test is not read)", file=sys.stderr)  # fmt: skip
        return
    ambiguous = unmatched = 0
    cells: dict[str, list[dict]] | None = None  # the table's, read when first needed
    for row in v2:
        found = [t for t in tests if _matches(t.get("vars") or {}, row.get("vars") or {})]
        # a test of exactly the row's vars over one they only include (a test of no vars)
        found = [t for t in found if t.get("vars") == row.get("vars")] or found
        graders = {provider_name((t.get("options") or {}).get("provider")) for t in found}
        if len(graders) > 1:
            # tests of identical vars: the row's table cell names its test, when the
            # cells alike (same key) are all of one grader
            cells = table_options(table) if cells is None else cells
            found = cells.get(row_cell_key(row), [])
            graders = {provider_name(o.get("provider")) for o in found}
            if len(graders) == 1:
                row["testCase"] = {"options": found[0]}
                continue
            ambiguous += 1
        elif graders:
            row["testCase"] = {"options": found[0].get("options") or {}}
        else:
            unmatched += 1
    if ambiguous or unmatched:
        print(f"{name}: results version 2 keeps no test's own grader: {ambiguous} "
              f"result(s) match tests of different graders (and no one test's cell in "
              f"results.table), {unmatched} no test of the config, by their vars: assumed "
              f"{assumed}", file=sys.stderr)  # fmt: skip


def _parse(text: str, path: Path) -> object:
    """The results document: JSON, or the YAML promptfoo writes for -o .yaml/.yml/.txt."""
    if path.suffix.lower() not in YAML_SUFFIXES:
        return parse_json(text, path, WHAT)
    import yaml  # type: ignore[import-untyped,unused-ignore]  # pyyaml comes with dbt-core

    # libyaml's loader when pyyaml has it (3x less CPU on a 1,000-row file); the
    # same safe constructors as yaml.safe_load
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)  # noqa: S506  # a safe loader
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        raise InputError(f"{path}: not {WHAT}: not YAML ({str(where).strip() or exc})") from exc


def read_results(path: Path) -> tuple[list[dict], dict, str]:
    """A results file's rows, its config (empty for JSONL) and its source name
    (the evalId, else the file stem); a one-line error for anything else."""
    suffix = path.suffix.lower()
    if suffix in TABLE_SUFFIXES:
        raise InputError(
            f"{path}: promptfoo's {TABLE_SUFFIXES[suffix]} table (-o results{suffix}) keeps "
            "each output's pass/fail and total score, not the grader nor each assertion's "
            "score: give -o results.json (or promptfoo export eval <evalId> -o results.json)"
        )
    text = read_text(path, WHAT)
    config: dict = {}
    table: object = None
    source = path.stem
    if suffix == ".jsonl":
        rows: object = [parse_json(line, path, WHAT) for line in text.splitlines() if line.strip()]
    else:
        data = _parse(text, path)
        results = data.get("results") if isinstance(data, dict) else None
        rows = results.get("results") if isinstance(results, dict) else None
        if not isinstance(data, dict) or not isinstance(rows, list):
            version = results.get("version") if isinstance(results, dict) else None
            seen = f" (results version {version})" if version is not None else ""
            raise InputError(
                f"{path}: not {WHAT}: no results.results list{seen}; promptfoo writes it "
                "in versions 2 and 3 of its results (eval -o, export eval)"
            )
        config = data["config"] if isinstance(data.get("config"), dict) else {}
        table = results.get("table") if isinstance(results, dict) else None
        source = str(data.get("evalId") or path.stem)
    if isinstance(rows, list) and not rows:
        # an eval with no test cases (or every line blank): promptfoo writes an
        # empty JSONL file, or results.results = []
        raise InputError(f"{path}: no results in it (an eval of no test case?): nothing to import")
    if not isinstance(rows, list) or not all(_is_result(r) for r in rows):
        raise InputError(f"{path}: not {WHAT}: a row without provider and testIdx (or vars)")
    number_tests(rows, table, path.name)
    _test_options(rows, config, path.name, table)
    return rows, config, source


def _template(row: dict) -> str:
    """The prompt a row answers: its label (the template), else its rendered text."""
    prompt = row.get("prompt") or {}
    return csv_text(prompt.get("label") or prompt.get("raw"))


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _label(comp: dict) -> object:
    score = comp.get("score")
    if _number(score) is not None:
        return score
    if isinstance(comp.get("pass"), bool):
        return int(comp["pass"])
    return score


def _judge(comp: dict, row: dict, default: object) -> str | None:
    assertion = comp.get("assertion") or {}
    options = (row.get("testCase") or {}).get("options") or {}
    return provider_name(assertion.get("provider")) or provider_name(
        options.get("provider")
    ) or provider_name(default)  # fmt: skip


def _manual(grading: dict) -> tuple[object, object] | None:
    """(score, comment) of the row's manual grade, or None."""
    human = [c for c in components(grading) if (c.get("assertion") or {}).get("type") == HUMAN]
    if grading.get("reason") == MANUAL_REASON:
        comment = grading.get("comment") or (human[-1].get("comment") if human else None)
        return grading.get("score"), comment
    if human:
        return human[-1].get("score"), human[-1].get("comment")
    return None


def import_promptfoo(
    files: Sequence[str | Path], out_dir: str | Path, models: str | Path | None = None
) -> dict[str, int]:
    """Convert promptfoo results files to the input contract in ``out_dir``.

    Returns the number of rows written per output file."""
    loaded = []
    sources: Counter[str] = Counter()
    first: dict[str, Path] = {}
    renamed = []
    for path in map(Path, files):
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file")
        rows, config, source = read_results(path)
        if source in first and source != path.stem:
            # one evalId twice: the same eval (e.g. its -o file and its export), not two
            raise InputError(
                f"{path}: the eval {source} is also in {first[source]}: give each eval once "
                "(its promptfoo export eval file holds the viewer's manual grades too)"
            )
        first.setdefault(source, path)
        sources[source] += 1
        if sources[source] > 1:
            source = f"{source}-{sources[source]}"
            renamed.append(f"{path} as {source}/")
        loaded.append((path, rows, config, source))
    if renamed:
        print(f"promptfoo: {len(renamed)} file(s) share an earlier file's evalId or name: "
              f"prompt ids {'; '.join(renamed)}", file=sys.stderr)  # fmt: skip
    ratings: list[dict[str, object]] = []
    humans: list[dict[str, object]] = []
    prompts: dict[str, dict[str, object]] = {}
    completions: dict[tuple[str, str], dict[str, object]] = {}
    skipped: Counter[str] = Counter()
    defaulted = unjudged_manual = 0
    for path, rows, config, source in loaded:
        errors = 0
        default = ((config.get("defaultTest") or {}).get("options") or {}).get("provider")
        templates = list(dict.fromkeys(_template(r) for r in rows))
        prefix = f"{source}/" if len(loaded) > 1 else ""
        dataset = str(config.get("description") or "promptfoo")
        for row in rows:
            raw = csv_text((row.get("prompt") or {}).get("raw"))
            pid = f"{prefix}test{row['testIdx']}"
            pid += f"-p{templates.index(_template(row))}" if len(templates) > 1 else ""
            model = provider_name(row.get("provider")) or ""
            prompts.setdefault(pid, {"prompt_id": pid, "dataset": dataset, "prompt_text": raw})
            output = (row.get("response") or {}).get("output")
            completions.setdefault(
                (pid, model), {"prompt_id": pid, "model": model, "completion_text": output}
            )
            grading = row.get("gradingResult")
            if not isinstance(grading, dict):
                errors += 1
                continue
            dims: Counter[str] = Counter()
            judged: list[str] = []
            for comp in components(grading):
                assertion = comp.get("assertion") or {}
                atype = str(assertion.get("type") or "")
                if atype == HUMAN:
                    continue
                if not is_model_graded(atype):
                    skipped[atype or "(no type)"] += 1
                    continue
                base = str(assertion.get("metric") or atype)
                dims[base] += 1
                dimension = base if dims[base] == 1 else f"{base}#{dims[base]}"
                judge = _judge(comp, row, default)
                defaulted += judge is None
                judged.append(dimension)
                ratings.append(
                    {
                        "judge": judge or DEFAULT_GRADER, "prompt_id": pid, "model": model,
                        "dimension": dimension, "label": _label(comp), "pass": comp.get("pass"),
                        "rationale": comp.get("reason"), "assertion_type": atype,
                    }
                )  # fmt: skip
            manual = _manual(grading)
            if manual is not None:
                unjudged_manual += not judged
                for dimension in judged or ["manual"]:
                    humans.append(
                        {
                            "prompt_id": pid, "model": model, "dimension": dimension,
                            "annotator_id": ANNOTATOR, "label": manual[0], "rationale": manual[1],
                        }
                    )  # fmt: skip
        if errors:
            print(f"{path.name}: {errors} result(s) without a gradingResult (provider "
                  "errors): nothing graded to import", file=sys.stderr)  # fmt: skip
    if skipped:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(skipped.items()))
        print(f"promptfoo: {sum(skipped.values())} component(s) not graded by a model "
              f"skipped ({kinds})", file=sys.stderr)  # fmt: skip
    if defaulted:
        print(
            f"promptfoo: {defaulted} model-graded component(s) name no grading provider: "
            f"judge {DEFAULT_GRADER} (map it to a model with --models)",
            file=sys.stderr,
        )
    if unjudged_manual:
        print(f"promptfoo: {unjudged_manual} manual grade(s) on rows no model graded: "
              "dimension 'manual'", file=sys.stderr)  # fmt: skip
    scales, off_scale = _scales(ratings + humans)
    report_unmapped("promptfoo", off_scale, "score(s) that are no number")
    names = [str(r["judge"]) for r in ratings] + [m for _, m in completions]
    out = Path(out_dir)
    return {
        "judge_ratings": write_contract_file(out, "judge_ratings", ratings, RATING_EXTRAS),
        "human_annotations": write_contract_file(out, "human_annotations", humans, HUMAN_EXTRAS),
        "prompts": write_contract_file(out, "prompts", prompts.values()),
        "completions": write_contract_file(out, "completions", completions.values()),
        "rating_scales": write_contract_file(out, "rating_scales", scales),
        "models": write_models(out, names, None, models),
    }


def _scales(rows: list[dict[str, object]]) -> tuple[list[dict[str, object]], int]:
    """Per dimension 0 and 1 widened to the scores seen; the count of labels that are
    no number."""
    seen: dict[str, list[float]] = {}
    off = 0
    for r in rows:
        value = _number(r["label"])
        off += value is None
        seen.setdefault(str(r["dimension"]), []).extend([] if value is None else [value])
    scales = []
    for dimension, values in seen.items():
        low, high = min([0.0, *values]), max([1.0, *values])
        scales += [{"dimension": dimension, "label": v, "score": v} for v in (low, high)]
    return scales, off
