// The catalog of secrets offered by name (core/secrets/catalog.ts) and the network it gives a sandbox
// (sessionPolicy's withBoundDomains): pure logic; the real paths are in the engine and vscode tiers.
import assert from 'node:assert/strict';
import { SandboxError } from '../../src/core/errors';
import {
  describeSecret,
  offeredDomains,
  pickSecrets,
  resolveSecrets,
  secretNamesOf,
  secretSettingsSchema,
  type SecretWords,
} from '../../src/core/secrets/catalog';
import { sessionSpec, withBoundDomains, type PolicyContext } from '../../src/core/sessions/sessionPolicy';
import { parseSettings } from '../../src/core/spec/settings';

const WORDS: SecretWords = { add: 'add it', setValue: (name) => `Set ${name}.` };

const entries = secretSettingsSchema.parse([
  { name: 'GITHUB_TOKEN', domains: ['api.github.com', 'API.GitHub.com'] },
  { name: 'KEY', domains: ['api.example.com'], header: 'x-api-key: {value}' },
  { name: 'REGISTRY', domains: ['registry.example.com'], basicAuthUser: 'ci' },
  { name: 'DB_PASSWORD', inside: true },
]);

describe('secrets offered by name', () => {
  it('reads each kind of entry, with the bearer header as the default, and says each in words', () => {
    assert.deepEqual(entries.map(describeSecret), [
      'GITHUB_TOKEN → api.github.com, api.github.com (Authorization header)',
      'KEY → api.example.com (x-api-key header)',
      'REGISTRY → registry.example.com (basic auth as ci)',
      'DB_PASSWORD (its value enters the sandbox)',
    ]);
    assert.deepEqual(offeredDomains(entries), ['api.github.com', 'api.example.com', 'registry.example.com']);
  });

  it('refuses entries that cannot work, saying what to write', () => {
    const problem = (entry: object) => {
      const parsed = secretSettingsSchema.safeParse([entry]);
      assert.ok(!parsed.success, JSON.stringify(entry));
      return parsed.error.issues[0]!.message;
    };
    assert.match(problem({ name: 'T' }), /give the domains .* or "inside": true/);
    assert.match(problem({ name: 'T', inside: true, domains: ['a.example'] }), /an inside secret .* has no domains/);
    assert.match(problem({ name: 'T', domains: ['10.0.0.1'] }), /domain names like api\.example\.com/);
    assert.match(problem({ name: 'T', domains: ['a.example'], header: 'Authorization: Bearer' }), /\{value\}/);
    assert.match(problem({ name: 'T', domains: ['a.example'], header: 'X: {value}', basicAuthUser: 'u' }), /not both/);
    assert.match(problem({ name: '1T', inside: true }), /variable name/);
    const twice = secretSettingsSchema.safeParse([
      { name: 'T', inside: true },
      { name: 'T', inside: true },
    ]);
    assert.ok(!twice.success);
    assert.match(twice.error.issues[0]!.message, /listed twice/);
  });

  it('picks what a request names; an unknown name is the request`s error naming those offered', () => {
    assert.deepEqual(
      pickSecrets(['DB_PASSWORD', 'KEY', 'KEY'], entries, WORDS).map((entry) => entry.name),
      ['DB_PASSWORD', 'KEY'],
    );
    assert.throws(
      () => pickSecrets(['NOPE'], entries, WORDS),
      (error: unknown) =>
        SandboxError.is(error, 'invalid-input') &&
        /no secret named "NOPE".*GITHUB_TOKEN, KEY, REGISTRY, DB_PASSWORD/.test(error.message) &&
        /add it/.test(error.hint ?? ''),
    );
    assert.throws(() => pickSecrets(['X'], [], WORDS), /No secret is offered to sandboxes yet/);
  });

  it('reads values only for the picked secrets, with a fresh placeholder for each bound one', async () => {
    const asked: string[] = [];
    const value = async (name: string) => (asked.push(name), `value-of-${name}`);
    const picked = pickSecrets(['GITHUB_TOKEN', 'DB_PASSWORD'], entries, WORDS);
    const one = await resolveSecrets(picked, value, WORDS);
    const two = await resolveSecrets(picked, value, WORDS);
    assert.deepEqual(asked, ['GITHUB_TOKEN', 'DB_PASSWORD', 'GITHUB_TOKEN', 'DB_PASSWORD']);
    assert.deepEqual(one.inside, { DB_PASSWORD: 'value-of-DB_PASSWORD' });
    assert.deepEqual(one.boundValues, { GITHUB_TOKEN: 'value-of-GITHUB_TOKEN' });
    assert.match(one.bound[0]!.placeholder, /^agent-sandbox-placeholder-[0-9a-f]{32}$/);
    assert.notEqual(one.bound[0]!.placeholder, two.bound[0]!.placeholder);
  });

  it('a missing value, or one a header cannot carry, is an environment failure naming where to set it', async () => {
    const picked = pickSecrets(['GITHUB_TOKEN'], entries, WORDS);
    await assert.rejects(
      resolveSecrets(picked, async () => undefined, WORDS),
      (error: unknown) => SandboxError.is(error, 'secret-unavailable') && error.hint === 'Set GITHUB_TOKEN.',
    );
    for (const bad of ['line\nbreak', 'trailing\n', 'nul\u0000', 'wide\u2028'])
      await assert.rejects(
        resolveSecrets(picked, async () => bad, WORDS),
        (error: unknown) =>
          SandboxError.is(error, 'secret-unavailable') &&
          /cannot carry/.test(error.message) &&
          !error.message.includes(bad),
      );
  });

  it('a bound secret`s domains join the allowlist; the whole network becomes the allowlist, said', () => {
    const bound = pickSecrets(['GITHUB_TOKEN'], entries, WORDS);
    const notices: string[] = [];
    assert.deepEqual(withBoundDomains({ network: false, networkAllow: [] }, bound, notices), {
      network: false,
      networkAllow: ['api.github.com'],
    });
    assert.match(notices[0]!, /reaches api\.github\.com for the bound secret GITHUB_TOKEN/);
    const full: string[] = [];
    assert.deepEqual(withBoundDomains({ network: true, networkAllow: [] }, bound, full), {
      network: false,
      networkAllow: ['api.github.com'],
    });
    assert.match(full[0]!, /through the proxy, not the whole network/);
    const covered: string[] = [];
    withBoundDomains({ network: false, networkAllow: ['*.github.com'] }, bound, covered);
    assert.deepEqual(covered, [], 'nothing to say when the allowlist covers it already');
    assert.deepEqual(
      withBoundDomains({ network: true, networkAllow: [] }, pickSecrets(['DB_PASSWORD'], entries, WORDS), []),
      {
        network: true,
        networkAllow: [],
      },
    );
  });

  it('a session spec holds the placeholder and the inside value, never the bound value; its names are found again', async () => {
    const settings = parseSettings({
      secrets: [
        { name: 'GITHUB_TOKEN', domains: ['api.github.com'] },
        { name: 'DB_PASSWORD', inside: true },
      ],
    });
    const context: PolicyContext = { settings, trusted: true, folder: undefined };
    const request = { secrets: ['GITHUB_TOKEN', 'DB_PASSWORD'] };
    const resolved = await resolveSecrets(
      pickSecrets(request.secrets, settings.secrets, WORDS),
      async (name) => `secret-${name}`,
      WORDS,
    );
    const { spec } = sessionSpec(request, context, resolved);
    assert.equal(spec.env.GITHUB_TOKEN, resolved.bound[0]!.placeholder);
    assert.equal(spec.env.DB_PASSWORD, 'secret-DB_PASSWORD');
    assert.equal(spec.env.SSL_CERT_FILE, '/tmp/agent-sandbox-ca.pem');
    assert.ok(!JSON.stringify(spec).includes('secret-GITHUB_TOKEN'), 'the bound value is not in the spec');
    assert.deepEqual(spec.networkAllow, ['api.github.com']);
    assert.deepEqual(secretNamesOf(spec, settings.secrets), ['GITHUB_TOKEN', 'DB_PASSWORD']);
  });
});
