"""Counts the operations of a schemathesis JUnit report (scripts/schemathesis.sh): each operation (a <testcase>, plus
one for the stateful scenarios) passes when no check failed on it and no error stopped it.

  schemathesis-junit-count.py REPORT.xml

Prints `PASSED FAILED` on one line.
"""

import sys
import xml.etree.ElementTree as ET


def count_outcomes(root):
    """(passed, failed) over the <testcase> elements under the XML element ROOT."""
    outcomes = [any(child.tag in ("failure", "error") for child in case) for case in root.iter("testcase")]
    return len(outcomes) - sum(outcomes), sum(outcomes)


def main(argv):
    passed, failed = count_outcomes(ET.parse(argv[1]).getroot())
    print(passed, failed)


if __name__ == "__main__":
    main(sys.argv)
