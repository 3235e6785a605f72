// Which calls VS Code was asked to confirm, as invoke learns it from prepareInvocation (matched by input).
import assert from 'node:assert/strict';
import { ClientConfirmations } from '../../src/vscode/tools/clientConfirmations';

describe('client confirmations', () => {
  it('a call prepareInvocation never saw counts as not confirmed', () => {
    assert.equal(new ClientConfirmations().take({ command: 'ls' }), false);
  });

  it('tells each call what its own preparation decided, by input, the latest first, once', () => {
    const notes = new ClientConfirmations();
    notes.note({ command: 'ls' }, true);
    notes.note({ command: 'make' }, false);
    assert.equal(notes.take({ command: 'make' }), false);
    assert.equal(notes.take({ command: 'ls' }), true);
    assert.equal(notes.take({ command: 'ls' }), false, 'taken once');
  });

  it('a confirmation the user declined (never invoked) does not stand for a later call with the same input', () => {
    const notes = new ClientConfirmations();
    notes.note({ command: 'ls' }, true); // declined: no invoke follows
    notes.note({ command: 'ls' }, false); // the same input later, prepared without VS Code's confirmation
    assert.equal(notes.take({ command: 'ls' }), false);
  });

  it('keeps a bounded number of notes', () => {
    const notes = new ClientConfirmations();
    for (let i = 0; i < 1000; i++) notes.note({ command: `echo ${i}` }, true);
    assert.equal(notes.take({ command: 'echo 0' }), false, 'the oldest notes went');
    assert.equal(notes.take({ command: 'echo 999' }), true);
  });
});
