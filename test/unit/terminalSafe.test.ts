// Tool results are shown in terminals by some clients: no escape sequence from the sandbox reaches
// them, and every other control character is shown, not acted on.
import assert from 'node:assert/strict';
import { terminalSafe } from '../../src/core/results/terminalSafe';

describe('terminal-safe results', () => {
  it('drops colour, cursor, title and clipboard sequences, keeping the text', () => {
    assert.equal(terminalSafe('\x1b[32mok\x1b[0m 100%'), 'ok 100%');
    assert.equal(terminalSafe('a\x1b[2J\x1b[Hb'), 'ab');
    assert.equal(terminalSafe('\x1b]0;pwned title\x07x'), 'x');
    assert.equal(terminalSafe('\x1b]52;c;ZWNobyBoaQ==\x1b\\y'), 'y', 'OSC 52 clipboard write');
    assert.equal(terminalSafe('\x9b31mred'), 'red', '8-bit CSI');
    assert.equal(terminalSafe('\x1b7saved\x1b8'), 'saved');
  });

  it('shows the other control characters as control pictures, keeping tabs and line breaks', () => {
    assert.equal(terminalSafe('bell\x07 nul\x00 bs\x08 del\x7f'), 'bell\u2407 nul\u2400 bs\u2408 del\u2421');
    assert.equal(terminalSafe('a\tb\r\nc\rd'), 'a\tb\r\nc\rd');
    assert.equal(terminalSafe('lone \x1b'), 'lone \u241b');
    assert.equal(terminalSafe('c1 \x85'), 'c1 \ufffd');
  });

  it('leaves ordinary text as it is, the same string', () => {
    const text = 'exit code 0 · 12 ms\nstdout:\nhéllo wörld ✓ 日本\n';
    assert.equal(terminalSafe(text), text);
  });

  it('is linear on a long run of escapes', () => {
    const text = '\x1b['.repeat(200_000);
    assert.equal(terminalSafe(text).length <= text.length, true);
  });
});
