import { execFileSync } from 'node:child_process';

/** Reading back the reports `monitor-admin check` writes for a CI: Markdown table rows and JUnit XML. */

/** The cells of a Markdown table row, split at the pipes that are not escaped and read back as text. */
export function cellsOf(row: string): string[] {
  return row
    .replace(/^\| /, '')
    .replace(/ \|$/, '')
    .split(/(?<!\\) \| /)
    .map((cell) => cell.replace(/\\(.)/g, '$1'));
}

interface JunitCase {
  classname: string;
  name: string;
  failure: { type: string | null; message: string; text: string | null } | null;
  /** A skipped case's message (null when not skipped). */
  skipped: string | null;
  out: string | null;
}

interface JunitSuite {
  attributes: Record<string, string>;
  properties: Record<string, string>;
  cases: JunitCase[];
}

export interface Junit {
  root: string;
  /** The root element's attributes. */
  attributes: Record<string, string>;
  suites: JunitSuite[];
  /** The first suite's attributes, properties and cases (a report of `check` has one). */
  suite: Record<string, string>;
  properties: Record<string, string>;
  cases: JunitCase[];
}

/** JUnit XML read by Python's xml.etree, a real XML parser: it refuses what is not well-formed. */
export function parseJunit(xml: string): Junit {
  const script = `
import json, sys, xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.buffer.read())
def case(c):
    f, s, o = c.find('failure'), c.find('skipped'), c.find('system-out')
    return {'classname': c.get('classname'), 'name': c.get('name'),
            'failure': None if f is None else {'type': f.get('type'), 'message': f.get('message'), 'text': f.text},
            'skipped': None if s is None else s.get('message', ''),
            'out': None if o is None else o.text}
suites = [{'attributes': dict(s.attrib), 'properties': {p.get('name'): p.get('value') for p in s.iter('property')},
           'cases': [case(c) for c in s.findall('testcase')]} for s in root.findall('testsuite')]
print(json.dumps({'root': root.tag, 'attributes': dict(root.attrib), 'suites': suites}))
`;
  const read = JSON.parse(
    execFileSync('python3', ['-c', script], { input: Buffer.from(xml, 'utf8') }).toString(),
  ) as Pick<Junit, 'root' | 'attributes' | 'suites'>;
  const first = read.suites[0] ?? { attributes: {}, properties: {}, cases: [] };
  return { ...read, suite: first.attributes, properties: first.properties, cases: first.cases };
}
