// Lint: typescript-eslint's recommended rules plus the layer rules that keep the design honest.
// `vscode` is imported only under src/vscode, dockerode only under src/engines/docker, just-bash
// only under src/engines/virtual, the MCP SDK only under src/mcp; src/core imports none of them and
// no engine or front end.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const layer = (files, paths, patterns, why) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      {
        paths: paths.map((name) => ({ name, message: why })),
        patterns: patterns.map((group) => ({ group: [group], message: why })),
      },
    ],
  },
});

export default tseslint.config(
  {
    ignores: ['dist/**', 'out/**', 'node_modules/**', '.cache/**', 'test/vscode/driver/**', 'media/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      'no-console': 'error',
      // Escaping terminal control characters is part of the job (names, output, redaction).
      'no-control-regex': 'off',
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  { files: ['webview/**'], languageOptions: { globals: { ...globals.browser } } },
  // The CLI, scripts and tests print on purpose.
  { files: ['src/cli/**', 'scripts/**', 'test/**', '*.mjs'], rules: { 'no-console': 'off' } },
  // Tests set a value before a try so a failure message can show it.
  { files: ['test/**'], rules: { 'no-useless-assignment': 'off' } },
  layer(
    ['src/core/**'],
    ['vscode', 'dockerode', 'just-bash'],
    [
      '**/vscode/**',
      '**/engines/**',
      '**/cli/**',
      '**/mcp/**',
      'dockerode/*',
      'just-bash/*',
      '@modelcontextprotocol/*',
    ],
    'src/core is plain TypeScript: no VS Code, no engine library, no front end. Put the code in src/vscode or src/engines/<engine> and pass what core needs in.',
  ),
  layer(
    ['src/engines/docker/**'],
    ['vscode', 'just-bash'],
    ['**/vscode/**', '**/cli/**', '**/mcp/**', '**/engines/virtual/**', 'just-bash/*', '@modelcontextprotocol/*'],
    'The Docker engine depends on core only.',
  ),
  layer(
    ['src/engines/virtual/**'],
    ['vscode', 'dockerode'],
    ['**/vscode/**', '**/cli/**', '**/mcp/**', '**/engines/docker/**', 'dockerode/*', '@modelcontextprotocol/*'],
    'The virtual engine depends on core only.',
  ),
  layer(['src/cli/**'], ['vscode'], ['**/vscode/**'], 'The CLI runs without VS Code.'),
  // The MCP server is a front end like the CLI: the SDK stays in src/mcp, which knows core only.
  layer(
    ['src/mcp/**'],
    ['vscode', 'dockerode', 'just-bash'],
    ['**/vscode/**', '**/cli/**', '**/engines/**', 'dockerode/*', 'just-bash/*'],
    'src/mcp serves the core tools over MCP: no VS Code, no engine, no CLI; the CLI passes in what it needs.',
  ),
  layer(
    ['src/vscode/**', 'src/shared/**', 'webview/**'],
    ['dockerode', 'just-bash'],
    ['dockerode/*', 'just-bash/*', '@modelcontextprotocol/*'],
    'Only src/engines/docker imports dockerode and only src/engines/virtual imports just-bash; go through the engine interface in src/core/engine/engine.ts.',
  ),
  { files: ['src/shared/**', 'webview/**'], rules: { 'no-restricted-imports': browserImports(true) } },
  // The webview toolkit is archived upstream: one module holds it, so that a replacement touches one file.
  { files: ['webview/controls.ts'], rules: { 'no-restricted-imports': browserImports(false) } },
);

function browserImports(withoutToolkit) {
  return [
    'error',
    {
      paths: [
        ...['vscode', 'dockerode', 'just-bash'].map((name) => ({
          name,
          message: 'The webview and its protocol run in the browser.',
        })),
        ...(withoutToolkit
          ? [
              {
                name: '@vscode/webview-ui-toolkit',
                message: 'Build controls with webview/controls.ts, the one module that uses the toolkit.',
              },
            ]
          : []),
      ],
      patterns: [
        {
          group: ['**/core/**', '**/engines/**', '**/vscode/**', '**/cli/**'],
          message: 'The webview talks to the host only through src/shared/protocol.ts.',
        },
      ],
    },
  ];
}
