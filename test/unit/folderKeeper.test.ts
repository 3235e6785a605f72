import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claimKeeper, isKept } from '../../src/core/sessions/folderKeeper';
import { StopRecords } from '../../src/core/sessions/stopRecords';

const ID = 'a'.repeat(64);

describe('folder keeper lock', () => {
  it('one keeper holds a session; a second claim is refused while it lives', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keepers-'));
    const release = claimKeeper(ID, dir);
    assert.ok(release);
    assert.equal(isKept(ID, dir), true);
    assert.equal(claimKeeper(ID, dir), undefined);
    release();
    assert.equal(isKept(ID, dir), false);
    assert.ok(claimKeeper(ID, dir));
  });

  it('a keeper that died without letting go is replaced', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keepers-'));
    // A pid that existed and is gone: a child that has exited.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(join(dir, ID), String(dead));
    assert.equal(isKept(ID, dir), false);
    const release = claimKeeper(ID, dir);
    assert.ok(release);
    assert.equal(readFileSync(join(dir, ID), 'utf8'), String(process.pid));
  });

  it('refuses ids that are not container ids (no paths in the state folder)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keepers-'));
    assert.equal(claimKeeper('../../etc/passwd', dir), undefined);
    assert.equal(isKept('../x', dir), false);
  });
});

describe('stop records', () => {
  it('a stop written by one process is read by another, and forgotten with the container', () => {
    const dir = mkdtempSync(join(tmpdir(), 'stops-'));
    new StopRecords(dir).record(ID, 'disk limit reached: it wrote 60 MiB');
    const read = new StopRecords(dir).read(ID);
    assert.equal(read?.why, 'disk limit reached: it wrote 60 MiB');
    new StopRecords(dir).forget(ID);
    assert.equal(new StopRecords(dir).read(ID), undefined);
  });

  it('ignores ids that are not container ids', () => {
    const dir = mkdtempSync(join(tmpdir(), 'stops-'));
    const records = new StopRecords(dir);
    records.record('../escape', 'x');
    assert.equal(records.read('../escape'), undefined);
  });
});
