import * as vscode from 'vscode';
suite('probe', () => {
  test('probe', async function () {
    this.timeout(20000);
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 10) await vscode.commands.executeCommand('agentSandbox.showLog');
      const m = (globalThis as any).__m ?? ((s: string) => console.log(s));
      require('fs').appendFileSync('/tmp/probe.txt', `${i} ${JSON.stringify(vscode.window.visibleTextEditors.map((e) => e.document.uri.toString()))} docs=${vscode.workspace.textDocuments.length}\n`);
      await new Promise((r) => setTimeout(r, 500));
    }
  });
});
