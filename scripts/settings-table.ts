// Writes the table of settings (src/config.ts) into README.md, between its settings markers.
// Run: npm run docs:settings. test/operations/configuration.test.ts fails when README.md is out of date.
import { readFileSync, writeFileSync } from 'node:fs';
import { settingsTable } from '../src/config.js';

const START = '<!-- settings:start (npm run docs:settings) -->';
const END = '<!-- settings:end -->';
const readme = readFileSync('README.md', 'utf8');
const before = readme.slice(0, readme.indexOf(START) + START.length);
const after = readme.slice(readme.indexOf(END));
if (!readme.includes(START) || !readme.includes(END)) throw new Error(`README.md lacks the markers ${START} … ${END}`);
writeFileSync('README.md', `${before}\n${settingsTable()}\n${after}`);
