import { expect } from 'chai';
import { likeMatcher, parseLikePattern, patternTrigrams, trigramsOf } from '../../src/domain/pattern.js';

/**
 * The pattern semantics decided in code (Elasticsearch tests the candidates of its names index with likeMatcher):
 * the same as SQLite's LIKE with ESCAPE '\' as the stores use it — contains, ASCII case-insensitive only, `_` one
 * character (a code point), `%` any run, newlines included, every other character literal.
 */
describe('like patterns decided in code', function () {
  const matches = (pattern: string, text: string) => likeMatcher(parseLikePattern(pattern))(text);

  it('matches anywhere, folding ASCII letters only', function () {
    expect(matches('FOO', 'test_foo[1]')).to.equal(true);
    expect(matches('é', 'TEST_É')).to.equal(false);
    expect(matches('straße', 'STRASSE')).to.equal(false);
    // The Kelvin sign and the long s fold to k and s under Unicode case-insensitivity; not here.
    expect(matches('k', '\u212a')).to.equal(false);
    expect(matches('s', '\u017f')).to.equal(false);
  });

  it('reads % and * as any run (newlines too), _ and ? as one code point', function () {
    expect(matches('a%b', 'a\nline\nb')).to.equal(true);
    expect(matches('a_b', 'a😀b')).to.equal(true);
    expect(matches('a__b', 'a😀b')).to.equal(false);
    expect(matches('a?c', 'abbc')).to.equal(false);
  });

  it('takes every other character literally, regular-expression syntax included', function () {
    for (const text of ['a.b', '(x)', '[p]', '^$', 'a+b', 'a|b', '{1}', 'a\\b', 'a/b', 'a-b']) {
      const escaped = text.replace(/[\\%_*?]/g, (c) => `\\${c}`);
      expect(matches(escaped, `before ${text} after`), text).to.equal(true);
      expect(matches(escaped, 'before after'), text).to.equal(false);
    }
    expect(matches('a.b', 'axb')).to.equal(false);
    expect(matches('a\\%b', 'a%b')).to.equal(true);
    expect(matches('a\\%b', 'axb')).to.equal(false);
  });

  it('cuts names and literal runs into the same ASCII-lowercased trigrams, by code point', function () {
    expect(trigramsOf('AbCd')).to.deep.equal(['abc', 'bcd']);
    expect(trigramsOf('😀ab')).to.deep.equal(['😀ab']);
    expect(patternTrigrams(parseLikePattern('ab%CDE_fg'))).to.deep.equal(['cde']);
    expect(patternTrigrams(parseLikePattern('e_1'))).to.deep.equal([]);
  });
});
