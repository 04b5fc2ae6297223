"""JUnit XML, the report CI servers read (Jenkins, GitLab, GitHub's test
reporters): one `<testcase>` per row of `check` or `regress`, a failing
row's reason as its `<failure message=…>`, a row that could not be judged
(an input the chain refuses) as an `<error>`, a row judged without part of
its evidence (no numbers) as `<skipped>` where the command does not fail it.

    write_junit("results.xml", "hlo2penguin check", [Case("example", "a/example.hlo", failure="1 lost")])

Written with the standard library's ElementTree (the format is a dozen
elements; no dependency is worth it), in the shape pytest's own
`--junitxml` writes (`testsuites` > `testsuite` > `testcase`), so a CI
server shows `check`'s and `regress`'s rows beside the suite's tests.
"""

from __future__ import annotations

import socket
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import datetime, timezone

from pipeline.cli.support import write_output

__all__ = ["Case", "check_cases", "junit_xml", "write_junit"]


@dataclass(frozen=True)
class Case:
    """One test case: `name` (the module, stage, dialect…), `classname` (where
    it comes from: the file or program), at most one of `failure` (the row
    failed: why), `error` (it could not be judged: why) and `skipped`
    (judged without part of it: what), and what it printed beside (`output`)."""

    name: str
    classname: str
    failure: str | None = None
    error: str | None = None
    skipped: str | None = None
    seconds: float = 0.0
    output: str | None = None


def junit_xml(suite: str, cases: list[Case]) -> bytes:
    """The JUnit XML document of one test suite named `suite`."""
    failures = sum(c.failure is not None for c in cases)
    errors = sum(c.error is not None for c in cases)
    skipped = sum(c.skipped is not None and c.failure is None and c.error is None for c in cases)
    suite = _clean(suite)
    root = ET.Element("testsuites", name=suite, tests=str(len(cases)), failures=str(failures),
                      errors=str(errors), skipped=str(skipped))
    element = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)), failures=str(failures),
                            errors=str(errors), skipped=str(skipped),
                            time=f"{sum(c.seconds for c in cases):.3f}",
                            timestamp=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                            hostname=socket.gethostname())
    for case in cases:
        item = ET.SubElement(element, "testcase", classname=_clean(case.classname), name=_clean(case.name),
                             time=f"{case.seconds:.3f}")
        if case.failure is not None:
            _detail(item, "failure", case.failure)
        elif case.error is not None:
            _detail(item, "error", case.error)
        elif case.skipped is not None:
            ET.SubElement(item, "skipped", message=_clean(case.skipped))
        if case.output:
            ET.SubElement(item, "system-out").text = _clean(case.output)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def write_junit(path: str, suite: str, cases: list[Case]) -> None:
    """`junit_xml` written to `path` atomically (never a partial file)."""
    write_output(path, junit_xml(suite, cases))


def check_cases(summary) -> list[Case]:
    """The rows of `hlo2penguin check` (a `pipeline.cli.check.CheckSummary`) as test cases."""
    cases = []
    for row in summary.modules:
        name = f"{row.module} {row.stage}" if row.stage else row.module
        counts = ", ".join(f"{v} {k}" for k, v in row.counts().items())
        if row.error:
            cases.append(Case(name, row.file or row.path, error=row.error))
        elif row.lost or row.spurious:
            cases.append(Case(name, row.file or row.path, failure=f"{row.lost} edge(s) lost, {row.spurious} dep "
                                                                  f"edge(s) spurious ({counts}): run hlo2penguin "
                                                                  f"{row.path} --emit report for each edge"))
        else:
            cases.append(Case(name, row.file or row.path, output=counts))
    return cases


def _detail(item: ET.Element, tag: str, text: str) -> None:
    """`<failure message="first line">whole text</failure>` (or `<error>`)."""
    text = _clean(text)
    first = text.splitlines()[0] if text.strip() else tag
    ET.SubElement(item, tag, message=first).text = text


def _clean(text: str) -> str:
    """`text` without the characters XML 1.0 cannot hold (control characters
    an input's name or XLA's message may carry), each shown as `\\xNN`."""
    return "".join(c if c in "\t\n\r" or (" " <= c and c not in "\ufffe\uffff") else f"\\x{ord(c):02x}"
                   for c in text)
