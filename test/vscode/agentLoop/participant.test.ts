// @sandbox in the real chat, with the scripted model: a `.prompt` agent run with /run (its tools,
// its session, its step limit, its output schema), a free-form request whose plot shows inline, a
// step limit reached, a cancelled request, and a file with errors refused with the editor's own
// diagnostics. What the chat showed is read from its HTML, and screenshots are kept.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { lookUntil, setWorkspaceAccessInUserSettings } from '../suite/helpers';
import { runCase, scriptedModelReady, snapshot } from './chat';
import { loopDir } from './script';

const EXTENSION_ID = 'agent-sandbox.agent-sandbox';

interface Api {
  service: { list(): Promise<{ id: string; name?: string; scope: { kind: string; key?: string } }[]> };
  activity: { recent(): { tool: string; summary: string; sandboxId?: string; ok: boolean }[] };
}

/**
 * The chat as the user sees it once it shows `until`: a screenshot kept in out/screenshots and the
 * chat view's HTML. The model's closing text ends a case, but the participant may still be writing
 * its last lines, so the view is looked at again until they are there (or the tries run out).
 */
async function chatShown(name: string, until: RegExp): Promise<string> {
  // The chat renders a response word by word, and slower when the page is busy: a slow machine
  // can show half an answer for many seconds, so this polls for up to a minute and a half.
  let html = '';
  const started = Date.now();
  let reopened = false;
  for (;;) {
    await snapshot(name);
    html = fs.readFileSync(path.join(loopDir(), `${name}.html`), 'utf8');
    if (until.test(text(html)) || until.test(html) || Date.now() > started + 90_000) break;
    // A response whose last part stopped rendering at its first word (seen in CI, the chat showing
    // "Checkpoint Restored") is drawn whole again from the chat's model when the view is reopened.
    if (!reopened && Date.now() > started + 15_000) {
      reopened = true;
      await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar');
      await vscode.commands.executeCommand('workbench.action.chat.open');
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const png = path.join(loopDir(), `${name}.png`);
  if (fs.existsSync(png)) {
    const screenshots = path.resolve(loopDir(), '..', 'screenshots');
    fs.mkdirSync(screenshots, { recursive: true });
    fs.copyFileSync(png, path.join(screenshots, `${name}.png`));
  }
  return html;
}

function text(html: string): string {
  return html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/&gt;/g, '>')
    .replace(/&lt;/g, '<')
    .replace(/\s+/g, ' ');
}

function resultText(run: Awaited<ReturnType<typeof runCase>>, callId: string): string {
  const result = run.transcript.results.find((candidate) => candidate.callId === callId);
  assert.ok(result, `the model received the result of ${callId}`);
  return result.parts.map((part) => (part.type === 'text' ? part.value : '')).join('');
}

suite('@sandbox in the chat', function () {
  this.timeout(240_000);
  let api: Api;
  const root = fs.realpathSync(vscode.workspace.workspaceFolders![0]!.uri.fsPath);
  const agents = path.join(root, 'agents');
  const write = (name: string, body: string) => fs.writeFileSync(path.join(agents, name), body);

  suiteSetup(async () => {
    api = (await vscode.extensions.getExtension(EXTENSION_ID)!.activate()) as Api;
    await scriptedModelReady();
    // A chat of its own: the suites before end theirs with a cancelled request, whose restored
    // checkpoint left the next answer in the same chat rendering no further than its first word.
    await vscode.commands.executeCommand('workbench.action.chat.newChat');
    fs.mkdirSync(agents, { recursive: true });
  });
  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.chat.newChat');
    await vscode.commands.executeCommand('agentSandbox.closeAllSessions', 'confirmed');
    fs.rmSync(agents, { recursive: true, force: true });
  });

  test('/run runs a .prompt agent in its own session: it writes a file, runs it, and its answer is checked', async () => {
    write(
      'greeter.prompt',
      [
        '---',
        'name: greeter',
        'model: scripted',
        'tools: [fs_write, exec]',
        'max_steps: 4',
        'input:',
        '  schema:',
        '    person: string',
        'output:',
        '  format: json',
        '  schema:',
        '    greeting: string',
        '    exit: integer',
        'sandbox:',
        '  mode: code',
        '  runtime: python',
        '---',
        '[scripted-case:agent-greeter] Write hello.py that greets {{person}}, run it, and answer as JSON.',
        '',
      ].join('\n'),
    );
    const run = await runCase(
      {
        id: 'agent-greeter',
        turns: [
          {
            calls: [
              {
                name: 'sandbox_fs_write',
                input: { files: [{ path: 'hello.py', content: 'import sys\nprint("Hello, " + sys.argv[1])\n' }] },
              },
            ],
          },
          { calls: [{ name: 'sandbox_exec', input: { command: 'python3 hello.py Ada' } }] },
          { text: '{"greeting": "Hello, Ada", "exit": 0}' },
        ],
      },
      { query: '@sandbox /run agents/greeter.prompt {"person": "Ada"}', timeoutMs: 180_000 },
    );
    // Only the file's tools were offered, and the calls ran in the agent's own session.
    for (const request of run.transcript.requests)
      assert.deepEqual([...request.toolsOffered].sort(), ['sandbox_exec', 'sandbox_fs_write']);
    assert.match(resultText(run, 'agent-greeter-t0-c0'), /hello\.py/);
    assert.match(resultText(run, 'agent-greeter-t1-c0'), /^exit code 0 · [\s\S]*Hello, Ada/);
    const session = (await api.service.list()).find((candidate) => candidate.scope.kind === 'agent');
    assert.ok(session, 'the agent has a session of its own');
    assert.equal(session.scope.key, 'greeter');
    const shown = text(await chatShown('chat-agent-run', /The answer matches the output schema/));
    assert.match(shown, /Running greeter with Scripted, in sandbox agent:greeter\/default/);
    assert.match(shown, /sandbox_exec python3 hello\.py Ada/);
    assert.match(shown, /exit code 0/);
    assert.match(shown, /The answer matches the output schema of agents\/greeter\.prompt/);
    // The Sandbox panel shows the session as the agent's.
    await vscode.commands.executeCommand('agentSandbox.showPanel');
    await lookUntil(
      'panel',
      /listitem "Session agent:greeter\/default, running"[\s\S]*agent/,
      "the agent's session in the panel",
    );
  });

  test('the Run Agent code lens of a .prompt file runs it in the chat', async () => {
    write('lens.prompt', ['---', 'tools: [exec]', '---', '[scripted-case:agent-lens] Say hello.', ''].join('\n'));
    const uri = vscode.Uri.file(path.join(agents, 'lens.prompt'));
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    let lens: vscode.CodeLens | undefined;
    for (let tries = 0; tries < 100 && !lens; tries++) {
      const lenses =
        (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri)) ?? [];
      lens = lenses.find((candidate) => candidate.command?.title === 'Run Agent lens');
      if (!lens) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(lens?.command, 'the file has a Run Agent code lens');
    const run = await runCase(
      {
        id: 'agent-lens',
        turns: [
          { calls: [{ name: 'sandbox_exec', input: { command: 'echo hello from the lens' } }] },
          { text: 'Said hello.' },
        ],
      },
      {
        timeoutMs: 120_000,
        send: () => vscode.commands.executeCommand(lens!.command!.command, ...(lens!.command!.arguments ?? [])),
      },
    );
    assert.match(resultText(run, 'agent-lens-t0-c0'), /hello from the lens/);
    assert.match(text(await chatShown('chat-agent-lens', /Said hello\./)), /@sandbox \/run agents\/lens\.prompt/);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('an answer that does not fit the output schema is reported', async () => {
    write(
      'counter.prompt',
      [
        '---',
        'tools: [exec]',
        'output:',
        '  schema:',
        '    count: integer',
        '---',
        '[scripted-case:agent-bad-output] Count, and answer as JSON.',
        '',
      ].join('\n'),
    );
    await runCase(
      { id: 'agent-bad-output', turns: [{ text: '{"count": "many"}' }] },
      { query: '@sandbox /run agents/counter.prompt', timeoutMs: 120_000 },
    );
    const shown = text(await chatShown('chat-agent-bad-output', /does not match the output schema/));
    assert.match(shown, /The answer does not match the output schema of agents\/counter\.prompt: count: /);
  });

  test('a free-form request: the plot it makes shows in the chat', async () => {
    const run = await runCase(
      {
        id: 'free-plot',
        turns: [
          {
            calls: [
              {
                name: 'sandbox_run',
                input: {
                  runtime: 'python',
                  code: 'import matplotlib.pyplot as plt\nplt.figure(figsize=(4, 3))\nplt.plot([x * x for x in range(20)])\nplt.title("squares")',
                },
              },
            ],
          },
          { text: 'Here are the squares.' },
        ],
      },
      { query: '@sandbox [scripted-case:free-plot] plot the squares of 0 to 19', timeoutMs: 180_000 },
    );
    const result = run.transcript.results.find((candidate) => candidate.callId === 'free-plot-t0-c0');
    assert.ok(result?.parts.some((part) => part.type === 'data' && part.mimeType === 'image/png'));
    const html = await chatShown('chat-free-plot', /alt="Image from the sandbox"[\s\S]*Here are the squares\./);
    assert.match(
      html,
      /<img [^>]*src="data:image\/png;base64,[^"]+" alt="Image from the sandbox"/,
      'the plot is an image in the chat',
    );
    assert.match(text(html), /Here are the squares\./);
  });

  test('the step limit ends the run and says so', async () => {
    write(
      'looper.prompt',
      ['---', 'tools: [exec]', 'max_steps: 2', '---', '[scripted-case:agent-limit] Keep going.', ''].join('\n'),
    );
    const echo = (n: number) => ({ calls: [{ name: 'sandbox_exec', input: { command: `echo step ${n}` } }] });
    const run = await runCase(
      { id: 'agent-limit', turns: [echo(1), echo(2), echo(3), { text: 'never' }] },
      { query: '@sandbox /run agents/looper.prompt', until: 'chat-complete', timeoutMs: 180_000 },
    );
    assert.equal(run.transcript.requests.length, 2, 'the model was asked twice, the limit');
    assert.equal(run.transcript.ended, false);
    const shown = text(await chatShown('chat-agent-step-limit', /Stopped after 2 steps/));
    assert.match(shown, /Stopped after 2 steps, the limit \(max_steps\)/);
  });

  test('cancelling the request stops the running call and the loop', async () => {
    write('sleeper.prompt', ['---', 'tools: [exec]', '---', '[scripted-case:agent-cancel] Wait.', ''].join('\n'));
    const run = await runCase(
      {
        id: 'agent-cancel',
        turns: [
          { calls: [{ name: 'sandbox_exec', input: { command: 'sleep 600', timeout_seconds: 3600 } }] },
          { text: 'never' },
        ],
      },
      {
        query: '@sandbox /run agents/sleeper.prompt',
        until: 'chat-complete',
        timeoutMs: 180_000,
        during: async () => {
          for (let tries = 0; tries < 600; tries++) {
            const sessions = await api.service.list();
            if (sessions.some((session) => session.scope.key === 'sleeper')) break;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          await new Promise((resolve) => setTimeout(resolve, 2_000));
          await vscode.commands.executeCommand('workbench.action.chat.cancel');
        },
      },
    );
    assert.deepEqual(
      run.transcript.requests.map((request) => request.answered),
      ['calls'],
      'the model was not called again after the stop',
    );
    for (let tries = 0; tries < 300; tries++) {
      if (api.activity.recent().some((entry) => entry.tool === 'sandbox_exec' && entry.summary === 'sleep 600')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const ended = api.activity.recent().find((entry) => entry.summary === 'sleep 600');
    assert.ok(ended, 'the call ended');
    assert.equal(ended.ok, false);
  });

  test("a call the tools' rules ask about is confirmed in the chat before it runs", async () => {
    await setWorkspaceAccessInUserSettings('ro');
    try {
      write(
        'reader.prompt',
        [
          '---',
          'tools: [fs_read]',
          'sandbox:',
          '  mode: code',
          '  runtime: bash',
          '  workspace: ro',
          '---',
          '[scripted-case:agent-confirm] Read hello.py.',
          '',
        ].join('\n'),
      );
      const run = await runCase(
        {
          id: 'agent-confirm',
          turns: [
            { calls: [{ name: 'sandbox_fs_read', input: { path: '/workspace/hello.py' } }] },
            { text: 'Read it.' },
          ],
        },
        {
          query: '@sandbox /run agents/reader.prompt',
          answers: [{ dialog: 'Allow for This Sandbox' }],
          timeoutMs: 120_000,
        },
      );
      assert.match(run.seen[0]!.title, /Sandbox "agent:reader\/default" would read your workspace folder/);
      assert.match(resultText(run, 'agent-confirm-t0-c0'), /hello from the test workspace/);
    } finally {
      await setWorkspaceAccessInUserSettings('none');
    }
  });

  test('a file with errors is refused with the problems the editor shows', async () => {
    write(
      'broken.prompt',
      ['---', 'sandbox:', '  runtime: python', '  timeout_seconds: lots', '---', 'Hello.', ''].join('\n'),
    );
    const uri = vscode.Uri.file(path.join(agents, 'broken.prompt'));
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    let diagnostics: vscode.Diagnostic[] = [];
    for (let tries = 0; tries < 100 && !diagnostics.length; tries++) {
      diagnostics = vscode.languages
        .getDiagnostics(uri)
        .filter((diagnostic) => diagnostic.severity === vscode.DiagnosticSeverity.Error);
      if (!diagnostics.length) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(diagnostics.length, 'the editor shows the error');
    const run = await runCase(
      { id: 'agent-broken', turns: [{ text: 'never' }] },
      { query: '@sandbox /run agents/broken.prompt', until: 'chat-complete', timeoutMs: 60_000 },
    );
    assert.equal(run.transcript.requests.length, 0, 'the model was never asked');
    const shown = text(await chatShown('chat-agent-refused', /cannot run until these are fixed/));
    assert.match(shown, /agents\/broken\.prompt cannot run until these are fixed/);
    for (const diagnostic of diagnostics)
      assert.ok(
        shown.includes(`line ${diagnostic.range.start.line + 1}, column ${diagnostic.range.start.character + 1}`) &&
          shown.includes(diagnostic.message.split('\n')[0]!.slice(0, 40)),
        `the chat shows the editor's "${diagnostic.message}"`,
      );
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
});
