import assert from 'node:assert/strict';
import type { ExecResult } from '../../src/core/engine/engine';
import { planPythonRun } from '../../src/core/interpreters/runTrailer';

function result(stdout: string): ExecResult {
  return {
    outcome: 'ok',
    exitCode: 0,
    stdout,
    stderr: '',
    stdoutBytes: Buffer.byteLength(stdout),
    stderrBytes: 0,
    stdoutTruncated: false,
    stderrTruncated: false,
    durationMs: 1,
    notices: [],
  };
}

const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(32)]).toString('base64');

describe("sandbox_run's trailer (value and images after a Python program's output)", () => {
  it('takes the value and the images off the end of stdout, and the output keeps its own bytes', () => {
    const plan = planPythonRun('/tmp/agent-sandbox', '/tmp/agent-sandbox/main.py', 1024 * 1024);
    const mark = plan.files[1]!.data.toString();
    const trailer = `${mark}${JSON.stringify({ value: '42', images: [{ mime: 'image/png', data: PNG, source: 'figure 1' }], imagesDropped: [] })}\n`;
    const read = plan.read(result(`no newline${trailer}after exit\n`));
    assert.equal(read.stdout, 'no newlineafter exit\n');
    assert.equal(read.stdoutBytes, Buffer.byteLength('no newlineafter exit\n'));
    assert.equal(read.value, '42');
    assert.deepEqual(
      read.images.map((image) => [image.mime, image.source]),
      [['image/png', 'figure 1']],
    );
  });

  it('treats the trailer as the program wrote it: no forged type, bytes or name reaches a front end', () => {
    const plan = planPythonRun('/tmp/agent-sandbox', '/tmp/agent-sandbox/main.py', 1024 * 1024);
    const mark = plan.files[1]!.data.toString();
    const forged = [
      { mime: 'text/html', data: Buffer.from('<script>alert(1)</script>').toString('base64'), source: 'page' },
      { mime: 'image/png', data: Buffer.from('not a png').toString('base64'), source: 'fake' },
      { mime: 'image/png', data: PNG, source: '\u001b]0;owned\u0007figure' },
    ];
    const read = plan.read(result(`${mark}${JSON.stringify({ value: null, images: forged, imagesDropped: [] })}\n`));
    assert.deepEqual(
      read.images.map((image) => image.source),
      ['?]0;owned?figure'],
    );
    assert.match(read.notices.join('\n'), /page \(text\/html is no image type\), fake \(its bytes are no PNG\)/);
  });

  it('says when the trailer did not come back whole, and leaves a program without one as it was', () => {
    const plan = planPythonRun('/tmp/agent-sandbox', '/tmp/agent-sandbox/main.py', 1024 * 1024);
    const mark = plan.files[1]!.data.toString();
    assert.match(plan.read(result(`${mark}{"value": "4`)).notices.join(), /did not come back whole/);
    const plain = plan.read(result('just output\n'));
    assert.equal(plain.stdout, 'just output\n');
    assert.deepEqual(plain.notices, []);
  });
});
