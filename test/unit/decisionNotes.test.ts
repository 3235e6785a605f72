import assert from 'node:assert/strict';
import type { LoggedDecision } from '../../src/core/network/decisionLog';
import { describeDecisions } from '../../src/core/network/decisionNotes';

let seq = 0;
function decision(host: string, allowed: boolean, reason?: string): LoggedDecision {
  return {
    seq: ++seq,
    at: '2026-11-24T00:00:00.000Z',
    host,
    port: 443,
    allowed,
    ...(allowed ? { rule: host } : { reason: reason ?? `${host} is not on the allowlist` }),
    bytesSent: 10,
    bytesReceived: 20,
  };
}

describe('network decisions in a tool result', () => {
  it('says nothing when the call made no connection', () => {
    assert.deepEqual(describeDecisions([]), []);
  });

  it('counts the allowed connections by name and names each refused one with its reason, once', () => {
    const lines = describeDecisions([
      decision('pypi.org', true),
      decision('pypi.org', true),
      decision('files.pythonhosted.org', true),
      decision('evil.example', false),
      decision('evil.example', false),
      decision('10.0.0.1', false, '10.0.0.1 is an IP address; only names on the allowlist are reached'),
    ]);
    assert.equal(
      lines[0],
      'Network: 3 connections through the allowlist (pypi.org:443 ×2, files.pythonhosted.org:443).',
    );
    assert.match(
      lines[1]!,
      /^Network refused 3 connections: evil\.example:443 \(evil\.example is not on the allowlist\); 10\.0\.0\.1:443 \(10\.0\.0\.1 is an IP address; only names on the allowlist are reached\)\. Retrying will not help: ask the user to add the name/,
    );
  });

  it('keeps a long list short and says when decisions were left out', () => {
    const many = Array.from({ length: 12 }, (_, i) => decision(`host${i}.example`, false));
    const lines = describeDecisions(many, true);
    assert.match(lines[0]!, /host7\.example:443 \([^)]*\); and 4 more\./);
    assert.equal(lines[1], 'Network: more decisions were made than are shown.');
  });
});
