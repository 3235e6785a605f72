import assert from 'node:assert/strict';
import { agentName, agentScopeKey, analyzePrompt } from '../../src/core/prompt/analyzePrompt';
import { findFrontmatter } from '../../src/core/prompt/frontmatter';

/** Each problem as "severity code L:C-L:C" (0-based lines and characters, as editors count) and its message. */
function problems(text: string): { at: string; message: string }[] {
  return analyzePrompt(text).problems.map((p) => ({
    at: `${p.severity} ${p.code} ${p.range.start.line}:${p.range.start.character}-${p.range.end.line}:${p.range.end.character}`,
    message: p.message,
  }));
}

function at(text: string): string[] {
  return problems(text).map((p) => p.at);
}

describe('.prompt analysis: the frontmatter', () => {
  it('finds the frontmatter between --- lines, and none when the file does not start with one', () => {
    const text = '---\nmodel: x\n---\nHello {{name}}\n';
    const block = findFrontmatter(text)!;
    assert.equal(text.slice(block.start, block.end), 'model: x\n');
    assert.equal(text.slice(block.bodyStart), 'Hello {{name}}\n');
    assert.equal(findFrontmatter('Hello\n---\nx: 1\n---\n'), undefined);
    assert.deepEqual(at('Just a body, {{name}}.\n'), []);
    const withBom = `\uFEFF${text}`;
    assert.equal(withBom.slice(findFrontmatter(withBom)!.start, findFrontmatter(withBom)!.end), 'model: x\n');
  });

  it('reports an unterminated frontmatter at its opening line', () => {
    assert.deepEqual(problems('---\nmodel: x\nsandbox: python\nHello\n'), [
      {
        at: 'error frontmatter-unterminated 0:0-0:3',
        message:
          'The frontmatter has no closing line: end it with a line of three dashes (---) before the prompt text.',
      },
    ]);
  });

  it('reports YAML syntax errors in plain words, where the fix goes (more cases in yamlErrors.test.ts)', () => {
    assert.deepEqual(problems('---\nmodel: "gpt-4o\n---\n'), [
      {
        at: 'error yaml-syntax 1:7-1:14',
        message:
          'The " that opens this value is never closed: add " at the end of the value (model: "gpt-4o"), or remove the opening ".',
      },
    ]);
    assert.deepEqual(at('---\nsandbox:\n\truntime: python\n---\n'), ['error yaml-syntax 2:0-2:1']);
    assert.deepEqual(at('---\nsandbox:\n  runtime: [python\n---\n'), ['error yaml-syntax 2:11-2:18']);
  });

  it('handles CRLF line ends with the same ranges', () => {
    assert.deepEqual(at('---\r\nsandbox:\r\n  runtime: pyhton\r\n---\r\nbody\r\n'), ['error invalid-value 2:11-2:17']);
  });

  it('reports a duplicate key on the whole second key', () => {
    assert.deepEqual(problems('---\nmodel: a\nsandbox: python\nsandbox: node\n---\n'), [
      { at: 'error duplicate-key 3:0-3:7', message: 'Duplicate key "sandbox": a key may appear only once in a block.' },
    ]);
    assert.deepEqual(at('---\nsandbox:\n  runtime: python\n  runtime: node\n---\n'), ['error duplicate-key 3:2-3:9']);
  });

  it('reports an unresolved alias and a frontmatter that is not a block of keys', () => {
    assert.deepEqual(at('---\nsandbox: *runtime\n---\n'), ['error yaml-syntax 1:9-1:17']);
    assert.deepEqual(at('---\n- python\n---\n'), ['error frontmatter-not-a-map 1:0-2:0']);
    assert.deepEqual(at('---\n---\nbody\n'), []);
    assert.deepEqual(at('---\n# only a comment\n---\nbody\n'), []);
  });

  it('never reports unknown top-level keys, and only warns about Dotprompt keys of the wrong kind', () => {
    assert.deepEqual(at('---\nmy_extension: {a: 1}\nx-custom: 3\ntools:\n---\n'), []);
    assert.deepEqual(problems('---\ntools: read_file\nmetadata:\n  name: [a]\n---\n'), [
      { at: 'warning invalid-type 1:7-1:16', message: 'tools must be a list, not the text "read_file"' },
      { at: 'warning invalid-type 3:2-3:6', message: 'metadata.name must be text, not a list' },
    ]);
  });
});

describe('.prompt analysis: the sandbox block', () => {
  it('accepts the shorthand and the full object form', () => {
    assert.deepEqual(at('---\nsandbox: node\n---\n'), []);
    const full =
      '---\nsandbox:\n  mode: code\n  session: agent\n  runtime: python\n  image: python:3.11-slim\n  timeout_seconds: 300\n  max_stdout_bytes: 65536\n  allow_network: true\n  pip_packages: [pandas]\n  limits:\n    timeout_seconds: 300\n    max_file_size_bytes: 10485760\n    max_files: 100\n    max_stdout_bytes: 65536\n    memory: 1g\n    cpu: 1.5\n---\n';
    assert.deepEqual(at(full), []);
    assert.deepEqual(
      at('---\nsandbox:\n  runtime: node\n  limits:\n    memory_mb: 256\n    cpu_millicores: 500\n---\n'),
      [],
    );
  });

  it('reports a misspelled runtime, in both forms, with a did-you-mean', () => {
    assert.deepEqual(problems('---\nsandbox: pyhton\n---\n'), [
      {
        at: 'error invalid-value 1:9-1:15',
        message:
          'sandbox "pyhton" is not a runtime: use python, node, bash, linux, or a block of settings; did you mean python?',
      },
    ]);
    assert.deepEqual(problems('---\nsandbox:\n  runtime: nod\n  mode: compte\n---\n'), [
      {
        at: 'error invalid-value 2:11-2:14',
        message: 'sandbox.runtime "nod" is not one of python, node, bash, linux; did you mean node?',
      },
      {
        at: 'error invalid-value 3:8-3:14',
        message: 'sandbox.mode "compte" is not one of compute, code; did you mean compute?',
      },
    ]);
  });

  it('reports values of the wrong type at the value', () => {
    assert.deepEqual(
      problems(
        '---\nsandbox:\n  allow_network: "yes"\n  timeout_seconds: "300"\n  pip_packages: pandas\n  limits:\n    cpu_millicores: 1.5\n---\n',
      ),
      [
        {
          at: 'error invalid-type 2:17-2:22',
          message: 'sandbox.allow_network must be true or false, not the text "yes"',
        },
        { at: 'error invalid-type 3:19-3:24', message: 'sandbox.timeout_seconds must be a number, not the text "300"' },
        { at: 'error invalid-type 4:16-4:22', message: 'sandbox.pip_packages must be a list, not the text "pandas"' },
        {
          at: 'error invalid-type 6:20-6:23',
          message: 'sandbox.limits.cpu_millicores must be a whole number, not 1.5',
        },
      ],
    );
    assert.deepEqual(problems('---\nsandbox: [python]\n---\n'), [
      {
        at: 'error invalid-type 1:0-1:7',
        message: 'sandbox must be a runtime (python, node, bash, linux) or a block of settings, not a list',
      },
    ]);
    assert.deepEqual(at('---\nsandbox:\n---\n'), ['warning invalid-type 1:0-1:7']);
  });

  it('reports values out of bounds, memory sizes, and bad package names', () => {
    assert.deepEqual(
      problems(
        '---\nsandbox:\n  timeout_seconds: 0\n  pip_packages: [ok, "rm -rf"]\n  limits:\n    memory: 512\n    cpu: 100\n    max_files: 0\n---\n',
      ),
      [
        { at: 'error invalid-value 2:19-2:20', message: 'sandbox.timeout_seconds must be more than 0' },
        {
          at: 'error invalid-value 3:21-3:29',
          message:
            'sandbox.pip_packages[1]: a pip package is a name from the package index with an optional version, like pandas or numpy==2.1 or requests[socks]>=2.31; not a path, URL or git repository',
        },
        {
          at: 'error invalid-value 5:12-5:15',
          message: 'sandbox.limits.memory must be at least 32 MiB; a plain number is bytes: did you mean 512m?',
        },
        { at: 'error invalid-value 6:9-6:12', message: 'sandbox.limits.cpu must be at most 64' },
        { at: 'error invalid-value 7:15-7:16', message: 'sandbox.limits.max_files must be at least 1' },
      ],
    );
    assert.deepEqual(problems('---\nsandbox:\n  limits:\n    memory: lots\n---\n'), [
      {
        at: 'error invalid-value 3:12-3:16',
        message: 'sandbox.limits.memory: "lots" is not a memory size; write it like 512m or 1g',
      },
    ]);
    assert.deepEqual(at('---\nsandbox:\n  limits:\n    memory: 100g\n---\n'), ['error invalid-value 3:12-3:16']);
  });

  it('warns about unknown keys in the block and in limits, with a did-you-mean', () => {
    assert.deepEqual(
      problems(
        '---\nsandbox:\n  alow_network: true\n  timeout: 30\n  memory: 1g\n  colour: blue\n  limits:\n    memroy: 1g\n---\n',
      ),
      [
        {
          at: 'warning unknown-key 2:2-2:14',
          message: 'Unknown key "alow_network" in the sandbox block; did you mean allow_network?',
        },
        {
          at: 'warning unknown-key 3:2-3:9',
          message: 'Unknown key "timeout" in the sandbox block; did you mean timeout_seconds?',
        },
        {
          at: 'warning unknown-key 4:2-4:8',
          message: '"memory" is a limit: write it under limits:, here it is ignored.',
        },
        {
          at: 'warning unknown-key 5:2-5:8',
          message:
            'Unknown key "colour" in the sandbox block: it is ignored. Known keys: mode, session, runtime, image, timeout_seconds, max_stdout_bytes, workspace, allow_network, allow_domains, secrets, pip_packages, npm_packages, limits.',
        },
        { at: 'warning unknown-key 7:4-7:10', message: 'Unknown key "memroy" in sandbox.limits; did you mean memory?' },
      ],
    );
  });

  it('applies the rules between fields', () => {
    assert.deepEqual(problems('---\nsandbox:\n  runtime: linux\n  session: agent\n---\n'), [
      {
        at: 'error mode-conflict 2:11-2:16',
        message: 'runtime linux is only available in code mode (mode: code); the default mode is compute',
      },
      {
        at: 'warning mode-conflict 3:2-3:9',
        message:
          'session only matters in code mode (mode: code): in compute mode every call runs in a fresh sandbox, so it is ignored',
      },
    ]);
    assert.deepEqual(at('---\nsandbox:\n  mode: compute\n  runtime: linux\n---\n'), ['error mode-conflict 3:11-3:16']);
    assert.deepEqual(at('---\nsandbox: linux\n---\n'), ['error mode-conflict 1:9-1:14']);
    assert.deepEqual(at('---\nsandbox:\n  mode: code\n  runtime: linux\n  session: workflow\n---\n'), []);
    assert.deepEqual(problems('---\nsandbox:\n  runtime: node\n  pip_packages: [pandas]\n---\n'), [
      {
        at: 'warning package-runtime 3:2-3:14',
        message:
          "pip_packages need Python, which the node runtime's image does not have: use runtime: python, or an image with pip",
      },
    ]);
    assert.deepEqual(at('---\nsandbox:\n  runtime: bash\n  image: my/tools\n  pip_packages: [pandas]\n---\n'), []);
    assert.deepEqual(at('---\nsandbox:\n  npm_packages: [lodash]\n---\n'), ['warning package-runtime 2:2-2:14']);
    assert.deepEqual(at('---\nsandbox:\n  runtime: node\n  npm_packages: [lodash]\n---\n'), []);
    assert.deepEqual(
      problems(
        '---\nsandbox:\n  timeout_seconds: 10\n  limits:\n    timeout_seconds: 20\n    memory: 1g\n    memory_mb: 512\n---\n',
      ),
      [
        {
          at: 'warning overridden-value 2:2-2:17',
          message: 'timeout_seconds is ignored: limits.timeout_seconds (20) is used',
        },
        { at: 'warning overridden-value 6:4-6:13', message: 'limits.memory_mb is ignored: limits.memory is used' },
      ],
    );
  });

  it("recognizes Station's agent-harness dialect and does not report its keys", () => {
    const harness =
      '---\nname: investigator\nharness:\n  enabled: true\n  timeout: 60m\nworkspace:\n  mode: sandbox\nsandbox:\n  mode: docker\n  image: python:3.12-slim\n  timeout: 30m\n  resources:\n    cpu: "2"\n    memory: 4g\n  network:\n    enabled: true\n    allowed_hosts: ["*.github.com"]\n---\nbody\n';
    const analysis = analyzePrompt(harness);
    assert.deepEqual(analysis.problems, []);
    assert.equal(analysis.dialect, 'harness');
    assert.equal(analysis.sandbox?.style, 'harness');
    assert.deepEqual(
      at('---\nharness: agentic\nharness_config:\n  max_steps: 25\n  sandbox:\n    mode: host\n---\n'),
      [],
    );
    assert.deepEqual(at('---\nsandbox:\n  mode: e2b\n  network: sometimes\n---\n'), [
      'warning invalid-value 3:11-3:20',
    ]);
  });

  it('names the agent after metadata.name, the top-level name or the file, as a valid scope key', () => {
    assert.equal(
      agentName(analyzePrompt('---\nmetadata:\n  name: "Developer Agent"\n---\n'), '/x/dev.prompt'),
      'Developer Agent',
    );
    assert.equal(agentName(analyzePrompt('---\nname: harness-test\n---\n'), '/x/dev.prompt'), 'harness-test');
    assert.equal(agentName(analyzePrompt('---\nsandbox: python\n---\n'), '/x/csv-analyzer.prompt'), 'csv-analyzer');
    assert.equal(agentScopeKey('Developer Agent'), 'Developer-Agent');
    assert.equal(agentScopeKey('  ☃ résumé bot!'), 'r-sum-bot');
    assert.equal(agentScopeKey('!!!'), 'agent');
  });
});
