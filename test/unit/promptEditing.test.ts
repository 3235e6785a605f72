import assert from 'node:assert/strict';
import {
  frontmatterSandboxObjectSchema,
  secretsFromFrontmatter,
  specFromFrontmatter,
} from '../../src/core/spec/frontmatterSpec';
import { analyzePrompt } from '../../src/core/prompt/analyzePrompt';
import { completePrompt } from '../../src/core/prompt/completions';
import { hoverPrompt } from '../../src/core/prompt/hover';
import { editDistance, nearMiss } from '../../src/core/prompt/nearMiss';
import type { PromptEnvironment } from '../../src/core/prompt/secretNames';
import { applyEdits } from '../../src/core/prompt/textPositions';
import { secretSettingsSchema } from '../../src/core/secrets/catalog';

/** Completions at the `|` in the text. */
function complete(marked: string) {
  const offset = marked.indexOf('|');
  const text = marked.replace('|', '');
  const result = completePrompt(text, offset);
  return (
    result && {
      labels: result.items.map((item) => item.label),
      items: result.items,
      replaced: text.slice(result.start, result.end),
    }
  );
}

function hover(marked: string) {
  const offset = marked.indexOf('|');
  const text = marked.replace('|', '');
  const result = hoverPrompt(text, offset);
  return result && { contents: result.contents, over: text.slice(result.start, result.end) };
}

describe('.prompt completions', () => {
  it('offers the runtimes after runtime:, with their documentation', () => {
    const result = complete('---\nsandbox:\n  runtime: |\n---\n')!;
    assert.deepEqual(result.labels, ['python', 'node', 'bash', 'linux']);
    assert.match(result.items[3]!.documentation!, /code mode/);
    assert.deepEqual(complete('---\nsandbox:\n  runtime: py|\n---\n')!.replaced, 'py');
    assert.deepEqual(complete('---\nsandbox: |\n---\n')!.labels, ['python', 'node', 'bash', 'linux']);
    assert.deepEqual(complete('---\nsandbox:\n  mode: |\n---\n')!.labels, ['compute', 'code']);
    assert.deepEqual(complete('---\nsandbox:\n  allow_network: |\n---\n')!.labels, ['true', 'false']);
    const access = complete('---\nsandbox:\n  workspace: |\n---\n')!;
    assert.deepEqual(access.labels, ['none', 'copy', 'ro', 'rw']);
    assert.match(
      access.items[1]!.documentation!,
      /private \/workspace; changes reach the folder only when the user applies them/,
    );
    assert.deepEqual(complete('---\nsandbox:\n  mode: docker\n  network: |\n---\n')!.labels, ['true', 'false']);
  });

  it('offers the keys of the block the cursor is in, minus those already written', () => {
    const keys = complete('---\nsandbox:\n  runtime: python\n  |\n  image: x\n---\n')!;
    assert.deepEqual(keys.labels, [
      'mode',
      'session',
      'timeout_seconds',
      'max_stdout_bytes',
      'workspace',
      'allow_network',
      'allow_domains',
      'secrets',
      'pip_packages',
      'npm_packages',
      'limits',
    ]);
    const mode = keys.items.find((item) => item.label === 'mode')!;
    assert.equal(mode.insertText, 'mode: ');
    assert.equal(mode.retrigger, true, 'the values open right after the key');
    assert.equal(mode.documentation, frontmatterSandboxObjectSchema.shape.mode.description);
    assert.equal(keys.items.find((item) => item.label === 'pip_packages')!.insertText, 'pip_packages:\n  - $0');
    assert.deepEqual(complete('---\nsandbox:\n  limits:\n    me|\n---\n')!.labels, [
      'timeout_seconds',
      'max_file_size_bytes',
      'max_files',
      'max_stdout_bytes',
      'memory',
      'memory_mb',
      'cpu',
      'cpu_millicores',
      'disk',
      'inodes',
    ]);
    assert.ok(complete('---\nmodel: x\n|\n---\n')!.labels.includes('sandbox'));
    assert.ok(!complete('---\nmodel: x\n|\n---\n')!.labels.includes('model'));
  });

  it('offers the harness keys in a harness file, and nothing in the body, in lists or in scalars', () => {
    assert.deepEqual(complete('---\nharness: agentic\nsandbox:\n  |\n---\n')!.labels, [
      'mode',
      'image',
      'timeout',
      'network',
      'environment',
      'resources',
    ]);
    assert.equal(complete('---\nmodel: x\n---\nHello |\n'), undefined);
    assert.equal(complete('---\nsandbox:\n  pip_packages:\n    - |\n---\n'), undefined);
    assert.equal(complete('---\nsandbox:\n  image: |\n---\n'), undefined);
    assert.equal(complete('---\ntools:\n  - name: x\n    |\n---\n'), undefined);
  });

  it('works while the YAML does not parse', () => {
    assert.deepEqual(complete('---\nmodel: "unclosed\nsandbox:\n  runtime: |\n')!.labels, [
      'python',
      'node',
      'bash',
      'linux',
    ]);
  });
});

describe('.prompt hovers', () => {
  const text = '---\nmetadata:\n  name: dev\nsandbox:\n  runtime: py|thon\n  limits:\n    memory: 1g\n---\n';

  it("shows the schema's description of a key, and what a value means", () => {
    const onValue = hover(text)!;
    assert.equal(onValue.over, 'python');
    assert.match(onValue.contents, /^\*\*sandbox\.runtime\*\*: python \| node \| bash \| linux/);
    assert.ok(onValue.contents.includes(frontmatterSandboxObjectSchema.shape.runtime.description!));
    assert.match(onValue.contents, /`python`: Python 3/);
    const onKey = hover(text.replace('py|thon', 'python').replace('memory', 'mem|ory'))!;
    assert.equal(onKey.over, 'memory');
    assert.match(onKey.contents, /\*\*sandbox\.limits\.memory\*\*[\s\S]*like 512m or 1g/);
    assert.match(
      hover(text.replace('py|thon', 'python').replace('name', 'na|me'))!.contents,
      /^\*\*metadata\.name\*\*/,
    );
    assert.match(hover('---\nsandbox: no|de\n---\n')!.contents, /`node`: Node\.js/);
  });

  it('says nothing about unknown keys or the body', () => {
    assert.equal(hover('---\nmy_key: x|y\n---\n'), undefined);
    assert.equal(hover('---\nmodel: x\n---\nbo|dy\n'), undefined);
  });
});

describe('near misses', () => {
  it('counts a swap of two letters as one edit', () => {
    assert.equal(editDistance('pyhton', 'python'), 1);
    assert.equal(editDistance('alow_network', 'allow_network'), 1);
    assert.equal(nearMiss('pyhton', ['python', 'node']), 'python');
    assert.equal(nearMiss('ruby', ['python', 'node', 'bash', 'linux']), undefined);
    assert.equal(nearMiss('Python', ['python']), 'python');
  });
});

describe('.prompt sandbox block: workspace', () => {
  it("asks for the workspace access it names (the user's policy still caps it), and refuses anything else", () => {
    assert.equal(specFromFrontmatter({ runtime: 'bash', workspace: 'copy' }).workspaceAccess, 'copy');
    assert.equal(specFromFrontmatter({ runtime: 'bash' }).workspaceAccess, undefined);
    assert.throws(() => specFromFrontmatter({ workspace: 'readwrite' }), /Invalid sandbox block[\s\S]*workspace/);
  });
});

describe('.prompt sandbox block: secrets', () => {
  /** What `agentSandbox.secrets` offers in these tests: one bound secret, one inside. */
  const offered = secretSettingsSchema.parse([
    { name: 'GITHUB_TOKEN', domains: ['api.github.com'] },
    { name: 'DB_PASSWORD', inside: true },
  ]);
  const environment = { secrets: offered };

  function problems(text: string, env: PromptEnvironment = environment): string[] {
    return analyzePrompt(text, env).problems.map(
      (p) =>
        `${p.severity} ${p.code} ${p.range.start.line}:${p.range.start.character}-${p.range.end.line}:${p.range.end.character} ${p.message}`,
    );
  }

  function completeWith(marked: string, env: PromptEnvironment = environment) {
    const offset = marked.indexOf('|');
    const text = marked.replace('|', '');
    const result = completePrompt(text, offset, env);
    return result && { labels: result.items.map((item) => item.label), items: result.items, text, result };
  }

  function hoverWith(marked: string, env: PromptEnvironment = environment) {
    const offset = marked.indexOf('|');
    const text = marked.replace('|', '');
    const result = hoverPrompt(text, offset, env);
    return result && { contents: result.contents, over: text.slice(result.start, result.end) };
  }

  it('asks for the names it lists, once each; nothing in the shorthand or without the key', () => {
    assert.deepEqual(secretsFromFrontmatter({ runtime: 'bash', secrets: ['GITHUB_TOKEN', 'DB_PASSWORD'] }), [
      'GITHUB_TOKEN',
      'DB_PASSWORD',
    ]);
    assert.deepEqual(secretsFromFrontmatter({ secrets: ['A', 'A'] }), ['A']);
    assert.deepEqual(secretsFromFrontmatter({ runtime: 'bash' }), []);
    assert.deepEqual(secretsFromFrontmatter('python'), []);
    assert.throws(() => secretsFromFrontmatter({ secrets: ['1TOKEN'] }), /Invalid sandbox block[\s\S]*secrets/);
    // The names are no part of the spec layer: openSession takes them apart, so the policy picks them.
    assert.equal('secrets' in specFromFrontmatter({ secrets: ['GITHUB_TOKEN'] }), false);
  });

  it('checks the syntax of each name always, at the name, in the words of the setting', () => {
    const text = '---\nsandbox:\n  secrets:\n    - GITHUB_TOKEN\n    - my-token\n    - 2FA\n---\n';
    const syntax = 'a secret name is a variable name: letters, digits and "_", not starting with a digit';
    const expected = [
      `error invalid-value 4:6-4:14 sandbox.secrets[1]: ${syntax}`,
      `error invalid-value 5:6-5:9 sandbox.secrets[2]: ${syntax}`,
    ];
    assert.deepEqual(problems(text, {}), expected, 'without the offered secrets (the CLI)');
    assert.deepEqual(problems(text), expected, 'a bad name is not also "not offered"');
    assert.deepEqual(problems('---\nsandbox:\n  secrets: GITHUB_TOKEN\n---\n', {}), [
      'error invalid-type 2:11-2:23 sandbox.secrets must be a list, not the text "GITHUB_TOKEN"',
    ]);
    assert.deepEqual(problems('---\nsandbox:\n  secrets: [GITHUB_TOKEN, DB_PASSWORD]\n---\n'), []);
    assert.deepEqual(problems('---\nsandbox:\n  secrets: []\n---\n'), []);
  });

  it('warns about a name the user does not offer, naming those offered and how to add one, with a did-you-mean', () => {
    assert.deepEqual(problems('---\nsandbox:\n  secrets: [GITHUB_TOKEN, NPM_TOKEN, github_tokne]\n---\n'), [
      'warning unknown-secret 2:26-2:35 No secret named "NPM_TOKEN" is offered to sandboxes, so the agent\'s sandbox would not open with it. The secrets offered are GITHUB_TOKEN, DB_PASSWORD; to offer another, run "Sandbox: Add Secret" (it adds to agentSandbox.secrets, in your user settings).',
      'warning unknown-secret 2:37-2:49 No secret named "github_tokne" is offered to sandboxes, so the agent\'s sandbox would not open with it; did you mean GITHUB_TOKEN? The secrets offered are GITHUB_TOKEN, DB_PASSWORD; to offer another, run "Sandbox: Add Secret" (it adds to agentSandbox.secrets, in your user settings).',
    ]);
    assert.deepEqual(problems('---\nsandbox:\n  secrets: [NPM_TOKEN]\n---\n', { secrets: [] }), [
      'warning unknown-secret 2:12-2:21 No secret named "NPM_TOKEN" is offered to sandboxes, so the agent\'s sandbox would not open with it. No secret is offered yet: to offer one, run "Sandbox: Add Secret" (it adds to agentSandbox.secrets, in your user settings).',
    ]);
    const typo = '---\nsandbox:\n  secrets:\n    - GITHUB_TOKNE\n---\n';
    const fix = analyzePrompt(typo, environment).problems[0]!.fixes[0]!;
    assert.equal(fix.title, 'Change to GITHUB_TOKEN');
    assert.equal(applyEdits(typo, fix.edits), '---\nsandbox:\n  secrets:\n    - GITHUB_TOKEN\n---\n');
    assert.deepEqual(problems('---\nsandbox:\n  secrets: [DB_PASSWORD, DB_PASSWORD]\n---\n', {}), [
      'warning duplicate-secret 2:25-2:36 The secret DB_PASSWORD is listed twice in sandbox.secrets: keep one.',
    ]);
    // Station's harness dialect has no secrets: its block is not ours to check.
    assert.deepEqual(problems('---\nsandbox:\n  mode: docker\n  secrets: [NPM_TOKEN]\n---\n'), []);
  });

  it('offers the key, then the offered names not listed yet, with their bindings', () => {
    const key = completeWith('---\nsandbox:\n  runtime: python\n  sec|\n---\n')!;
    const secrets = key.items.find((item) => item.label === 'secrets')!;
    assert.equal(secrets.insertText, 'secrets:\n  - $0');
    assert.equal(secrets.retrigger, true, 'the names open on the first item');
    assert.equal(secrets.documentation, frontmatterSandboxObjectSchema.shape.secrets.description);
    assert.equal(
      completeWith('---\nsandbox:\n  sec|\n---\n', { secrets: [] })!.items.find((item) => item.label === 'secrets')!
        .retrigger,
      false,
    );

    const first = completeWith('---\nsandbox:\n  secrets:\n    - |\n---\n')!;
    assert.deepEqual(first.labels, ['GITHUB_TOKEN', 'DB_PASSWORD']);
    assert.equal(first.items[0]!.detail, 'sandbox.secrets: bound secret');
    assert.match(
      first.items[0]!.documentation!,
      /^GITHUB_TOKEN → api\.github\.com \(Authorization header\): .*placeholder/,
    );
    assert.match(first.items[1]!.documentation!, /^DB_PASSWORD \(its value enters the sandbox\)/);
    const second = completeWith('---\nsandbox:\n  secrets:\n    - GITHUB_TOKEN\n    - DB|\n---\n')!;
    assert.deepEqual(second.labels, ['DB_PASSWORD']);
    assert.equal(second.text.slice(second.result.start, second.result.end), 'DB');
    assert.deepEqual(completeWith('---\nsandbox:\n  secrets:\n  - |\n  - DB_PASSWORD\n---\n')!.labels, [
      'GITHUB_TOKEN',
    ]);
    assert.deepEqual(completeWith('---\nsandbox:\n  secrets: [DB_PASSWORD, |]\n---\n')!.labels, ['GITHUB_TOKEN']);
    assert.deepEqual(completeWith('---\nsandbox:\n  secrets: [|]\n---\n')!.labels, ['GITHUB_TOKEN', 'DB_PASSWORD']);
    // Nothing to offer: no names known, all listed, another list, or the harness dialect.
    assert.equal(completeWith('---\nsandbox:\n  secrets:\n    - |\n---\n', {}), undefined);
    assert.equal(completeWith('---\nsandbox:\n  secrets: [GITHUB_TOKEN, DB_PASSWORD, |]\n---\n'), undefined);
    assert.equal(completeWith('---\nsandbox:\n  pip_packages:\n    - |\n---\n'), undefined);
    assert.equal(completeWith('---\ntools:\n  - |\n---\n'), undefined);
    assert.equal(completeWith('---\nharness: agentic\nsandbox:\n  secrets:\n    - |\n---\n'), undefined);
  });

  it('hovers a name with its binding, and says when it is not offered', () => {
    const bound = hoverWith('---\nsandbox:\n  secrets: [GITHUB_TO|KEN, DB_PASSWORD, NPM_TOKEN]\n---\n')!;
    assert.equal(bound.over, 'GITHUB_TOKEN');
    assert.match(
      bound.contents,
      /^\*\*sandbox\.secrets\*\*: list of strings\n\n`GITHUB_TOKEN`: GITHUB_TOKEN → api\.github\.com \(Authorization header\): the variable GITHUB_TOKEN holds a placeholder/,
    );
    const inside = hoverWith('---\nsandbox:\n  secrets:\n    - DB_PASS|WORD\n---\n')!;
    assert.equal(inside.over, 'DB_PASSWORD');
    assert.match(inside.contents, /`DB_PASSWORD`: DB_PASSWORD \(its value enters the sandbox\)/);
    const missing = hoverWith('---\nsandbox:\n  secrets: [NPM_TO|KEN]\n---\n')!;
    assert.match(missing.contents, /`NPM_TOKEN`: not offered to sandboxes\. To offer it, run "Sandbox: Add Secret"\./);
    const onKey = hoverWith('---\nsandbox:\n  sec|rets: [GITHUB_TOKEN]\n---\n')!;
    assert.equal(onKey.over, 'secrets');
    assert.ok(onKey.contents.includes(frontmatterSandboxObjectSchema.shape.secrets.description!));
    // Without the offered secrets (no settings), a name gets the key's description.
    assert.ok(
      hoverWith('---\nsandbox:\n  secrets: [NPM_TO|KEN]\n---\n', {})!.contents.includes('`NPM_TOKEN`: Secrets'),
    );
  });
});
