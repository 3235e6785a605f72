// `.prompt` files as a user meets them in the editor: problems underlined as they type, completions,
// hovers, quick fixes, the agent's code lens, Validate Prompt Files, and the grammar's colours.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { closeAllEditors, lookUntil, screenshot } from './helpers';

const EXTENSION_ID = 'agent-sandbox.agent-sandbox';

function folder(): string {
  const uri = vscode.workspace.workspaceFolders?.[0]?.uri;
  assert.ok(uri, 'the test window has a workspace folder');
  return uri.fsPath;
}

async function openPrompt(name: string, text: string): Promise<vscode.TextDocument> {
  const file = path.join(folder(), name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
  await vscode.window.showTextDocument(document);
  return document;
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The diagnostics of a file as "L:C-L:C severity message" (0-based), once they satisfy the check. */
async function diagnostics(uri: vscode.Uri, ready: (list: vscode.Diagnostic[]) => boolean): Promise<string[]> {
  const list = await waitFor(`diagnostics of ${path.basename(uri.fsPath)}`, () => {
    const current = vscode.languages.getDiagnostics(uri);
    return ready(current) ? current : undefined;
  });
  return list.map(
    (d) =>
      `${d.range.start.line}:${d.range.start.character}-${d.range.end.line}:${d.range.end.character} ${vscode.DiagnosticSeverity[d.severity]} ${d.message}`,
  );
}

/** Asks the runner (which drives the browser) for a screenshot of the workbench, and waits for it. */
const BROKEN =
  '---\nmodel: openai/gpt-4o\nsandbox:\n  runtime: pyhton\n  alow_network: true\n  limits:\n    memory: lots\n---\n{{role "system"}}\nHello {{name}}\n';

suite('Prompt files', () => {
  suiteSetup(async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
  });
  suiteTeardown(async () => {
    await closeAllEditors();
  });

  test('a broken .prompt file is underlined at the right ranges, and again as you type', async () => {
    const document = await openPrompt('agents/broken.prompt', BROKEN);
    assert.equal(document.languageId, 'dotprompt');
    assert.deepEqual(await diagnostics(document.uri, (list) => list.length === 3), [
      '3:11-3:17 Error sandbox.runtime "pyhton" is not one of python, node, bash, linux; did you mean python?',
      '4:2-4:14 Warning Unknown key "alow_network" in the sandbox block; did you mean allow_network?',
      '6:12-6:16 Error sandbox.limits.memory: "lots" is not a memory size; write it like 512m or 1g',
    ]);
    assert.equal(vscode.languages.getDiagnostics(document.uri)[0]!.source, 'dotprompt');
    const edit = new vscode.WorkspaceEdit();
    edit.replace(document.uri, new vscode.Range(6, 12, 6, 16), '1g');
    edit.insert(document.uri, new vscode.Position(3, 0), '  mode: compute\n  session: agent\n');
    assert.ok(await vscode.workspace.applyEdit(edit));
    assert.deepEqual(
      await diagnostics(document.uri, (list) => list.length === 3 && list.every((d) => !d.message.includes('lots'))),
      [
        '4:2-4:9 Warning session only matters in code mode (mode: code): in compute mode every call runs in a fresh sandbox, so it is ignored',
        '5:11-5:17 Error sandbox.runtime "pyhton" is not one of python, node, bash, linux; did you mean python?',
        '6:2-6:14 Warning Unknown key "alow_network" in the sandbox block; did you mean allow_network?',
      ],
    );
  });

  test('completion after "runtime: " offers python, node and bash, with their documentation', async () => {
    const document = await openPrompt('agents/complete.prompt', '---\nsandbox:\n  mode: code\n  runtime: \n---\n');
    const list = await vscode.commands.executeCommand<vscode.CompletionList>(
      'vscode.executeCompletionItemProvider',
      document.uri,
      new vscode.Position(3, 11),
    );
    const labels = list.items.map((item) => (typeof item.label === 'string' ? item.label : item.label.label));
    for (const runtime of ['python', 'node', 'bash'])
      assert.ok(labels.includes(runtime), `${runtime} in ${labels.join(', ')}`);
    const linux = list.items.find((item) => item.label === 'linux')!;
    assert.match((linux.documentation as vscode.MarkdownString).value, /Linux shell for code mode/);
    const keys = await vscode.commands.executeCommand<vscode.CompletionList>(
      'vscode.executeCompletionItemProvider',
      document.uri,
      new vscode.Position(2, 2),
    );
    assert.ok(
      keys.items.some((item) => item.label === 'allow_network'),
      'keys of the sandbox block are offered',
    );
  });

  test("hovering a key shows the schema's description", async () => {
    const document = await openPrompt('agents/hover.prompt', '---\nsandbox:\n  allow_network: false\n---\n');
    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
      'vscode.executeHoverProvider',
      document.uri,
      new vscode.Position(2, 5),
    );
    const text = hovers
      .flatMap((hover) => hover.contents.map((content) => (content as vscode.MarkdownString).value))
      .join('\n');
    assert.match(text, /sandbox\.allow_network/);
    assert.match(text, /Ask for network access \(off by default\)/);
  });

  test('sandbox.secrets: the names offered in agentSandbox.secrets are completed, explained and checked', async () => {
    const config = vscode.workspace.getConfiguration('agentSandbox');
    const before = config.inspect('secrets')?.globalValue;
    await config.update(
      'secrets',
      [
        { name: 'GITHUB_TOKEN', domains: ['api.github.com'] },
        { name: 'DB_PASSWORD', inside: true },
      ],
      vscode.ConfigurationTarget.Global,
    );
    try {
      const document = await openPrompt(
        'agents/secrets.prompt',
        '---\nsandbox:\n  secrets:\n    - GITHUB_TOKEN\n    - NPM_TOKEN\n    - \n---\nbody\n',
      );
      const list = await vscode.commands.executeCommand<vscode.CompletionList>(
        'vscode.executeCompletionItemProvider',
        document.uri,
        new vscode.Position(5, 6),
      );
      const names = list.items.map((item) => (typeof item.label === 'string' ? item.label : item.label.label));
      assert.ok(names.includes('DB_PASSWORD'), `DB_PASSWORD in ${names.join(', ')}`);
      assert.ok(!names.includes('GITHUB_TOKEN'), 'a name already listed is not offered again');
      const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
        'vscode.executeHoverProvider',
        document.uri,
        new vscode.Position(3, 9),
      );
      const text = hovers
        .flatMap((hover) => hover.contents.map((content) => (content as vscode.MarkdownString).value))
        .join('\n');
      assert.match(text, /GITHUB_TOKEN → api\.github\.com \(Authorization header\)/);
      const warning = (list: vscode.Diagnostic[]) => list.some((d) => d.message.includes('NPM_TOKEN'));
      // (The empty item being typed is an error of its own.)
      const found = await diagnostics(document.uri, warning);
      assert.deepEqual(
        found.filter((line) => line.includes('NPM_TOKEN')),
        [
          '4:6-4:15 Warning No secret named "NPM_TOKEN" is offered to sandboxes, so the agent\'s sandbox would not open with it. The secrets offered are GITHUB_TOKEN, DB_PASSWORD; to offer another, run "Sandbox: Add Secret" (it adds to agentSandbox.secrets, in your user settings).',
        ],
      );
      // Offering it clears the warning in the open file.
      await config.update(
        'secrets',
        [
          { name: 'GITHUB_TOKEN', domains: ['api.github.com'] },
          { name: 'NPM_TOKEN', domains: ['registry.npmjs.org'] },
        ],
        vscode.ConfigurationTarget.Global,
      );
      await diagnostics(document.uri, (list) => !warning(list));
    } finally {
      await config.update('secrets', before, vscode.ConfigurationTarget.Global);
    }
  });

  test('a quick fix turns a near miss into a clean file', async () => {
    const document = await openPrompt('agents/fix.prompt', '---\nsandbox:\n  runtime: pyhton\n---\nbody\n');
    await diagnostics(document.uri, (list) => list.length === 1);
    const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
      'vscode.executeCodeActionProvider',
      document.uri,
      new vscode.Range(2, 12, 2, 12),
    );
    const fix = actions.find((action) => action.title === 'Change to python');
    assert.ok(fix, `actions: ${actions.map((action) => action.title).join(', ')}`);
    assert.equal(fix.kind?.value, vscode.CodeActionKind.QuickFix.value);
    assert.equal(fix.isPreferred, true);
    assert.ok(await vscode.workspace.applyEdit(fix.edit!));
    assert.equal(document.getText(), '---\nsandbox:\n  runtime: python\n---\nbody\n');
    await diagnostics(document.uri, (list) => list.length === 0);
  });

  test("the code lens opens the agent's sandbox session with its configuration", async () => {
    const document = await openPrompt(
      'agents/lens.prompt',
      '---\nmetadata:\n  name: Lens Agent\nsandbox:\n  mode: code\n  runtime: bash\n  timeout_seconds: 45\n  limits:\n    memory: 256m\n---\nbody\n',
    );
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>(
      'vscode.executeCodeLensProvider',
      document.uri,
    );
    const lens = lenses.find((candidate) => candidate.command?.command === 'agentSandbox.openAgentSession');
    assert.ok(lens?.command, 'a code lens on the sandbox block');
    assert.equal(lens.command.title, 'Open Sandbox Session for Lens Agent');
    assert.equal(lens.range.start.line, 3);
    const info = await vscode.commands.executeCommand<{
      name: string;
      scope: { kind: string; key: string };
      runtime: string;
      spec: { timeoutSeconds: number; limits: { memoryBytes: number } };
    }>(lens.command.command, ...(lens.command.arguments ?? []));
    try {
      assert.ok(info, 'the command returned the session (see the log for why not)');
      assert.deepEqual(info.scope, { kind: 'agent', key: 'Lens-Agent' });
      assert.equal(info.runtime, 'bash');
      assert.equal(info.spec.timeoutSeconds, 45);
      assert.equal(info.spec.limits.memoryBytes, 256 * 1024 * 1024);
    } finally {
      const closed = await vscode.commands.executeCommand<{ name: string }>(
        'agentSandbox.closeSession',
        'agent:Lens-Agent/default',
      );
      assert.equal(closed?.name, info?.name ?? 'default');
    }
    const palette = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON.contributes.menus.commandPalette as {
      command: string;
      when: string;
    }[];
    assert.ok(
      palette.some((entry) => entry.command === 'agentSandbox.openAgentSession' && entry.when === 'false'),
      'hidden from the palette',
    );
  });

  test("real-world .prompt files (the design's examples, Station's agents) show no error", async () => {
    // The installed VSIX carries no tests: the fixtures come from the checkout (the runner names it).
    const fixtures = path.join(
      process.env.AGENT_SANDBOX_VSCODE_ROOT ?? vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath,
      'test/fixtures/prompts',
    );
    const names = [
      'seed-examples/full-configuration.prompt',
      'seed-examples/code-mode-limits.prompt',
      'station-prompts/environments__default__agents__incident-investigator.prompt',
      'station-prompts/environments__default__agents__harness-test.prompt',
    ];
    const documents: vscode.TextDocument[] = [];
    for (const name of names)
      documents.push(
        await openPrompt(`corpus/${path.basename(name)}`, fs.readFileSync(path.join(fixtures, name), 'utf8')),
      );
    // full-configuration has one warning (npm packages with a Python runtime): it shows that the analysis ran.
    assert.deepEqual(await diagnostics(documents[0]!.uri, (list) => list.length > 0), [
      '13:2-13:14 Warning npm_packages need Node.js: make sure the image python:3.11-slim has npm, or use runtime: node',
    ]);
    for (const document of documents) {
      assert.deepEqual(
        vscode.languages
          .getDiagnostics(document.uri)
          .filter((d) => d.severity === vscode.DiagnosticSeverity.Error)
          .map((d) => d.message),
        [],
        document.uri.fsPath,
      );
    }
  });

  test('the grammar colours the frontmatter as YAML and the body as Handlebars (and without the Handlebars grammar too)', async () => {
    const sample =
      '---\nsandbox:\n  runtime: python # the default\n---\n{{!-- a note --}}\n{{#each items}}- {{this}}{{/each}}\nmodel: not yaml here\n';
    const tokenized = await tokenizeWithVsCodeTextMate(sample);
    const withoutHandlebars = await tokenizeWithVsCodeTextMate(sample, ['text.html.handlebars']);
    const scopes = (tokens: Token[], text: string, line?: number) =>
      tokens
        .filter((token) => token.text === text && (line === undefined || token.line === line))
        .map((token) => token.scopes)
        .join(' | ');
    assert.match(scopes(tokenized, '---', 0), /punctuation\.definition\.begin\.frontmatter\.dotprompt/);
    assert.match(
      scopes(tokenized, 'sandbox'),
      /meta\.embedded\.block\.frontmatter\.dotprompt.*entity\.name\.tag\.yaml/,
    );
    assert.match(
      tokenized
        .filter((token) => token.line === 2)
        .map((token) => token.scopes)
        .join(' '),
      /comment\.line\.number-sign\.yaml/,
    );
    for (const tokens of [tokenized, withoutHandlebars]) {
      assert.match(
        tokens
          .filter((token) => token.line === 4)
          .map((token) => token.scopes)
          .join(' '),
        /comment\.block\.handlebars/,
      );
      assert.match(scopes(tokens, 'each'), /keyword\.control/);
      assert.match(scopes(tokens, 'this'), /variable\.parameter\.handlebars/);
      assert.doesNotMatch(
        tokens
          .filter((token) => token.line === 6)
          .map((token) => token.scopes)
          .join(' '),
        /yaml/,
        'the body is not YAML',
      );
    }
    // VS Code's own Handlebars grammar, when present, names a helper "support.constant.handlebars keyword.control"; ours, "keyword.control.handlebars".
    assert.match(
      scopes(tokenized, 'each'),
      /support\.constant\.handlebars keyword\.control( |$)/,
      "VS Code's Handlebars grammar is embedded",
    );
    assert.match(
      scopes(withoutHandlebars, 'each'),
      /keyword\.control\.handlebars/,
      'our own patterns take over without it',
    );
  });

  test('a .prompt file with its problems, listed in the Problems view (and a picture for a person)', async () => {
    const text =
      '---\nmodel: openai/gpt-4o\nmetadata:\n  name: "csv-analyzer"\nsandbox:\n  runtime: linux   # needs code mode\n  alow_network: true\n  pip_packages:\n    - pandas\n  limits:\n    memory: 512m\n---\n{{!-- the system prompt --}}\n{{role "system"}}\nYou analyze CSV data. {{#if verbose}}Explain each step.{{/if}}\n{{#each files}}- {{this.name}}\n{{/each}}\n';
    const document = await openPrompt('agents/screenshot.prompt', text);
    await diagnostics(document.uri, (list) => list.length === 3);
    await vscode.commands.executeCommand('workbench.actions.view.problems');
    await vscode.window.showTextDocument(document, { preserveFocus: false });
    const problems = await lookUntil(
      'problems',
      /treeitem "3 problems in file screenshot\.prompt of folder agents"/,
      'the problems of screenshot.prompt in the Problems view',
    );
    // The file's group: from its heading to the next file's (other tests' files are listed too).
    const group = problems.aria
      .slice(problems.aria.indexOf('problems in file screenshot.prompt'))
      .split(/treeitem "\d+ problems? in file /)[0]!;
    assert.match(group, /treeitem "Error: runtime linux is only available in code mode[^"]* at line 6 /);
    assert.match(
      group,
      /treeitem "Warning: Unknown key \\"alow_network\\"[^"]*did you mean allow_network\? at line 7 /,
    );
    assert.match(group, /treeitem "Warning: pip_packages need Python[^"]* at line 8 /);
    await screenshot('prompt-editor');
  });

  test('Validate Prompt Files checks every .prompt file of the workspace into the Problems view', async () => {
    await closeAllEditors();
    const closed = path.join(folder(), 'agents/never-opened.prompt');
    fs.writeFileSync(closed, '---\nsandbox: linux\n---\n');
    const summary = await vscode.commands.executeCommand<{ files: number; errors: number; warnings: number }>(
      'agentSandbox.validatePromptFiles',
    );
    assert.ok(summary && summary.files >= 8, `files: ${summary?.files}`);
    assert.ok(summary.errors >= 3, `errors: ${summary.errors}`);
    assert.deepEqual(await diagnostics(vscode.Uri.file(closed), (list) => list.length > 0), [
      '1:9-1:14 Error runtime linux is only available in code mode, and sandbox: linux means compute mode: write a block with mode: code and runtime: linux',
    ]);
  });
});

interface Token {
  line: number;
  text: string;
  scopes: string;
}

/**
 * Tokenizes with the TextMate engine VS Code itself ships (vscode-textmate and vscode-oniguruma under
 * its app root) and the grammars the installed extensions contribute, as the editor colours a file.
 */
async function tokenizeWithVsCodeTextMate(text: string, missing: string[] = []): Promise<Token[]> {
  const modules = path.join(vscode.env.appRoot, 'node_modules');
  // VS Code's own copies live outside our bundle, so they are loaded at run time by path.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const load = (name: string) => require(path.join(modules, name));
  const textmate = load('vscode-textmate');
  const oniguruma = load('vscode-oniguruma');
  const wasm = fs.readFileSync(path.join(modules, 'vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const files = new Map<string, string>();
  for (const extension of vscode.extensions.all) {
    for (const grammar of (extension.packageJSON.contributes?.grammars ?? []) as {
      scopeName?: string;
      path?: string;
    }[]) {
      if (grammar.scopeName && grammar.path && !files.has(grammar.scopeName))
        files.set(grammar.scopeName, path.join(extension.extensionPath, grammar.path));
    }
  }
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
      createOnigString: (value: string) => new oniguruma.OnigString(value),
    }),
    loadGrammar: async (scopeName: string) => {
      const file = files.get(scopeName);
      return file && !missing.includes(scopeName)
        ? textmate.parseRawGrammar(fs.readFileSync(file, 'utf8'), file)
        : null;
    },
  });
  const grammar = await registry.loadGrammar('text.dotprompt');
  assert.ok(grammar, 'the dotprompt grammar loads');
  const tokens: Token[] = [];
  let state = textmate.INITIAL;
  for (const [line, content] of text.split('\n').entries()) {
    const result = grammar.tokenizeLine(content, state);
    for (const token of result.tokens as { startIndex: number; endIndex: number; scopes: string[] }[])
      tokens.push({ line, text: content.slice(token.startIndex, token.endIndex), scopes: token.scopes.join(' ') });
    state = result.ruleStack;
  }
  return tokens;
}
