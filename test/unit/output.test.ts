import assert from 'node:assert/strict';
import { CappedOutput, trimIncompleteUtf8 } from '../../src/core/results/output';

describe('output capping', () => {
  it('keeps everything under the cap', () => {
    const output = new CappedOutput(100);
    output.push(Buffer.from('hello '));
    output.push(Buffer.from('world'));
    assert.equal(output.text('stdout'), 'hello world');
    assert.equal(output.truncated, false);
    assert.equal(output.totalBytes, 11);
  });

  it('keeps the first bytes, counts the rest and shows a marker', () => {
    const output = new CappedOutput(1024);
    for (let i = 0; i < 100; i++) output.push(Buffer.alloc(1024, 'a'));
    assert.equal(output.truncated, true);
    assert.equal(output.totalBytes, 100 * 1024);
    const text = output.text('stdout');
    assert.ok(text.startsWith('a'.repeat(1024)));
    assert.match(text, /\[stdout truncated: showing the first 1 KiB of 100 KiB\. Write large output to a file/);
  });

  it('never cuts a character in half', () => {
    const output = new CappedOutput(4);
    output.push(Buffer.from('ab€€')); // € is 3 bytes: the cap falls inside the first one
    assert.ok(output.text('stdout').startsWith('ab\n['));
    assert.deepEqual([...trimIncompleteUtf8(Buffer.from('a€'))], [...Buffer.from('a€')]);
    assert.deepEqual([...trimIncompleteUtf8(Buffer.from('a€').subarray(0, 3))], [...Buffer.from('a')]);
  });

  it('shows invalid UTF-8 as replacement characters', () => {
    const output = new CappedOutput(100);
    output.push(Buffer.from([0x68, 0xff, 0x69]));
    assert.equal(output.text('stdout'), 'h\ufffdi');
  });
});
