import assert from 'node:assert/strict';
import { frontmatterSandboxObjectSchema, specFromFrontmatter } from '../../src/core/spec/frontmatterSpec';
import { completePrompt } from '../../src/core/prompt/completions';
import { hoverPrompt } from '../../src/core/prompt/hover';
import { editDistance, nearMiss } from '../../src/core/prompt/nearMiss';

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
