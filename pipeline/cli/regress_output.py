"""What `regress` prints beside its table: each changed row's explanation
(the edges whose fate changed, the diff of its Penguin program), the hints
a user acts on, and the rows as JUnit test cases for a CI server."""

from __future__ import annotations

import shlex

from pipeline.cli.junit import Case


def explanations(summary) -> str:
    """Under the table: each row whose golden changed, with why."""
    parts = [f"{r.program} {r.module} {r.dialect}: {r.golden}\n{r.explanation()}"
             for r in summary.rows if r.golden.startswith("changed")]
    return "\nchanged goldens:\n" + "\n".join(parts) if parts else ""


def hints(summary, directory: str, require_numbers: bool) -> list[str]:
    """One line each, naming a command the user runs on their own corpus."""
    corpus = shlex.quote(directory)
    found = []
    if any(r.golden.startswith("changed") or r.golden == "missing" for r in summary.rows):
        found.append(f"a golden changed or is missing; after an intended change, rewrite them: "
                     f"hlo2penguin regress {corpus} --update-goldens")
    unnumbered = sum(r.unnumbered for r in summary.rows)
    if unnumbered:
        found.append(f"{unnumbered} row(s) judged without numbers (no inputs/<name>.npz or expected/<name>.npz"
                     f"{', which --require-numbers fails' if require_numbers else ''}): add the program with its "
                     f"inputs by hlo2penguin corpus add {corpus} ...")
    return found


def _reasons(summary, row) -> list[str]:
    reasons = []
    if row.lost or row.spurious:
        reasons.append(f"{row.lost} edge(s) lost, {row.spurious} dep edge(s) spurious")
    if row.numerics.startswith(("FAIL", "unsupported")) or (summary.require_numbers and row.unnumbered):
        reasons.append(f"numerics: {row.numerics}")
    if row.golden.startswith("changed") or row.golden == "missing":
        reasons.append(f"golden: {row.golden}")
    return reasons


def junit_cases(summary) -> list[Case]:
    """One test case per row (classname the program, name its module and
    dialect): a failure with the row's reasons, the fate changes and the
    diff; an error for a row the chain could not judge; skipped numbers
    where the run does not require them."""
    cases = []
    for row in summary.rows:
        name = f"{row.module} {row.dialect}"
        counts = ", ".join(f"{v} {k}" for k, v in row.counts().items())
        reasons = _reasons(summary, row)
        if row.error:
            cases.append(Case(name, row.program, error=row.error))
        elif reasons:
            cases.append(Case(name, row.program, failure="; ".join(reasons) + "\n" + row.explanation(),
                              output=counts))
        elif row.unnumbered:
            cases.append(Case(name, row.program, skipped=f"numerics: {row.numerics}", output=counts))
        else:
            cases.append(Case(name, row.program, output=counts))
    return cases
