/** Runs the built CLI (dist/cli.js) as a child process, the way a user's shell would. */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

export const CLI = resolve(__dirname, '../../dist/cli.js');

export interface CliRun {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

export function runCli(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; stdin?: string } = {},
): Promise<CliRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout: Buffer.concat(stdout), stderr }));
    child.stdin?.end(options.stdin);
  });
}

/** The same, with stdout as text. */
export async function runCliText(
  args: readonly string[],
  options: Parameters<typeof runCli>[1] = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const result = await runCli(args, options);
  return { ...result, stdout: result.stdout.toString('utf8') };
}
