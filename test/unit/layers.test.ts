import assert from 'node:assert/strict';
import { ESLint } from 'eslint';

// The layer rules are lint rules; this proves they fire, so a config change cannot quietly drop them.
describe('lint: the layers', function () {
  this.timeout(60_000);
  const eslint = new ESLint({ cwd: process.cwd() });
  const problems = async (filePath: string, code: string) => {
    const [result] = await eslint.lintText(code, { filePath });
    return (result?.messages ?? []).map((m) => m.ruleId);
  };

  const cases: Array<[string, string, boolean]> = [
    ['src/core/example.ts', "import * as vscode from 'vscode';\nexport const x = vscode;\n", true],
    ['src/core/example.ts', "import Docker from 'dockerode';\nexport const x = Docker;\n", true],
    ['src/core/example.ts', "import { x as y } from '../engines/docker/exec';\nexport const x = y;\n", true],
    ['src/engines/docker/example.ts', "import * as vscode from 'vscode';\nexport const x = vscode;\n", true],
    ['src/engines/virtual/example.ts', "import Docker from 'dockerode';\nexport const x = Docker;\n", true],
    ['src/cli/example.ts', "import * as vscode from 'vscode';\nexport const x = vscode;\n", true],
    ['webview/example.ts', "import { x as y } from '../src/core/spec';\nexport const x = y;\n", true],
    [
      'webview/example.ts',
      "import { vsCodeButton } from '@vscode/webview-ui-toolkit';\nexport const x = vsCodeButton;\n",
      true,
    ],
    [
      'webview/controls.ts',
      "import { vsCodeButton } from '@vscode/webview-ui-toolkit';\nexport const x = vsCodeButton;\n",
      false,
    ],
    ['webview/controls.ts', "import { x as y } from '../src/core/spec';\nexport const x = y;\n", true],
    ['src/vscode/example.ts', "import * as vscode from 'vscode';\nexport const x = vscode;\n", false],
    ['src/engines/docker/example.ts', "import Docker from 'dockerode';\nexport const x = Docker;\n", false],
  ];
  for (const [file, code, refused] of cases) {
    it(`${refused ? 'refuses' : 'allows'}: ${code.split('\n')[0]} in ${file}`, async () => {
      const rules = await problems(file, code);
      assert.equal(rules.includes('no-restricted-imports'), refused, JSON.stringify(rules));
    });
  }

  it('refuses console.log outside the CLI', async () => {
    assert.ok((await problems('src/core/example.ts', "console.log('x');\n")).includes('no-console'));
    assert.ok(!(await problems('src/cli/example.ts', "console.log('x');\n")).includes('no-console'));
  });
});
