import unittest
import xml.etree.ElementTree as ET

from tests.support import load_script

schemathesis_junit_count = load_script("schemathesis-junit-count")


def count(xml):
    return schemathesis_junit_count.count_outcomes(ET.fromstring(xml))


class CountOutcomesTest(unittest.TestCase):
    def test_empty(self):
        self.assertEqual(count("<testsuites/>"), (0, 0))

    def test_failures_and_errors_fail(self):
        xml = """<testsuites><testsuite>
          <testcase name="GET /a"/>
          <testcase name="GET /b"><failure message="x"/></testcase>
          <testcase name="GET /c"><error message="y"/></testcase>
          <testcase name="GET /d"><skipped/><system-out>ok</system-out></testcase>
          <testcase name="Stateful tests"><failure/><failure/></testcase>
        </testsuite></testsuites>"""
        self.assertEqual(count(xml), (2, 3))

    def test_only_direct_children_count(self):
        self.assertEqual(
            count('<testsuite><testcase name="a"><system-out><failure/></system-out></testcase></testsuite>'), (1, 0)
        )


if __name__ == "__main__":
    unittest.main()
