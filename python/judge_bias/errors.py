"""The kinds of error judge-bias raises, one class each, and the exit code the
``judge-bias`` command gives for each kind (``cli.error_line``):

- ``InputError`` (exit 2): the user's input or call is wrong: an input file that
  breaks the contract, a file that is not what its format says, an option or a
  dbt var with a value it cannot take (``SettingError``). The message says what to
  change.
- ``NumericalError`` (exit 4): the data are valid but a computation cannot go on
  (a linear program that fails, a matrix that cannot be factored where the result
  is needed). Fits that can fail on valid data (separation, no convergence) do not
  raise: they return a null estimate with a note in the mart.
- anything else (exit 1, with "unexpected: run again with --debug"): a defect of
  judge-bias; a failed build or validation (``warehouse.build.BuildError``) also
  exits 1, with its own message.
- exit 3 is no error: ``judge-bias check`` found a policy finding (``EXIT_FINDINGS``).

Inside a dbt build an exception fails its model and the build (exit 1); these
codes are what the command gives for errors raised before or outside dbt.
"""

from __future__ import annotations

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NUMERICAL = 0, 1, 2, 4
# `judge-bias check` found a policy finding: not a failure of the tool (checks/)
EXIT_FINDINGS = 3


class InputError(ValueError):
    """The input or the call is wrong (exit 2)."""


class SettingError(InputError):
    """A dbt var or an option has a value it cannot take (exit 2)."""


class NumericalError(ArithmeticError):
    """Valid data, but a computation cannot go on (exit 4)."""
