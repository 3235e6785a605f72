// Property-based tests: whatever arrives at a boundary, nothing throws unexpectedly and no path
// outside /workspace is ever accepted. FUZZ_RUNS raises the number of cases (npm run fuzz); a failure
// prints the seed, and AGENT_SANDBOX_SEED replays it.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SandboxError } from '../../src/core/errors';
import { resolveWorkspacePath } from '../../src/core/files/paths';
import { analyzePrompt } from '../../src/core/prompt/analyzePrompt';
import { TOOLS } from '../../src/core/tools/toolList';
import { withSeed } from '../seed';

const runs = Number(process.env.FUZZ_RUNS ?? 300);

/** Strings built from the pieces that make paths dangerous. */
const pathish = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        '..',
        '.',
        '/',
        '//',
        '\\',
        '%2e',
        '%2f',
        '\uff0e',
        '\u2215',
        '\0',
        'workspace',
        '/workspace',
        'etc',
        'passwd',
        ' ',
        '~',
      ),
      fc.string({ maxLength: 6 }),
      fc.string({ unit: 'grapheme', maxLength: 4 }),
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(''));

describe('fuzzing the boundaries', () => {
  it('the path policy never accepts a path outside /workspace, and only fails with a SandboxError', () =>
    withSeed(({ seed }) =>
      fc.assert(
        fc.property(fc.oneof(pathish, fc.string(), fc.string({ unit: 'binary' })), (input) => {
          try {
            const resolved = resolveWorkspacePath(input);
            assert.ok(resolved === '/workspace' || resolved.startsWith('/workspace/'), resolved);
            assert.ok(!resolved.split('/').includes('..'), resolved);
            assert.ok(!resolved.includes('\0'));
          } catch (error) {
            assert.ok(SandboxError.is(error), String(error));
          }
        }),
        { seed, numRuns: runs * 3 },
      ),
    ));

  it('every tool input schema answers any JSON without throwing', () =>
    withSeed(({ seed }) => {
      for (const { name, schema } of TOOLS) {
        fc.assert(
          fc.property(
            fc.oneof(
              fc.anything(),
              fc.record(
                {
                  sandbox_id: fc.anything(),
                  path: fc.anything(),
                  command: fc.anything(),
                  cmd: fc.anything(),
                  code: fc.anything(),
                  files: fc.anything(),
                },
                { requiredKeys: [] },
              ),
            ),
            (input) => {
              const result = schema.safeParse(input);
              if (result.success) assert.equal(typeof result.data, 'object', name);
            },
          ),
          { seed, numRuns: runs },
        );
      }
    }));

  it('the .prompt analysis never throws, whatever the text', () => {
    const yamlish = fc
      .array(
        fc.oneof(
          fc.constantFrom(
            '---\n',
            'sandbox:',
            ' python',
            '\n  runtime: ',
            'mode: code\n',
            '  limits:\n    memory: 1g\n',
            ': : :',
            '- [',
            '{{',
            '"',
            "'",
            '\t',
            '\n',
            '&a *a',
            '!!binary',
          ),
          fc.string({ maxLength: 8 }),
        ),
        { maxLength: 30 },
      )
      .map((parts) => parts.join(''));
    return withSeed(({ seed }) =>
      fc.assert(
        fc.property(fc.oneof(yamlish, fc.string(), fc.string({ unit: 'binary' })), (text) => {
          const analysis = analyzePrompt(text);
          assert.ok(Array.isArray(analysis.problems));
        }),
        { seed, numRuns: runs },
      ),
    );
  });
});
