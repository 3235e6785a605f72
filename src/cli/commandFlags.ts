/** What several commands read from their flags alike: the folder, the protected paths, and the exit code they end with. */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ExecResult } from '../core/engine/engine';
import { PROTECTED_PATHS } from '../core/policy/protectedPaths';
import { usageError, type ParsedArgs } from './args';

export function workspaceFolder(args: ParsedArgs): string {
  const folder = resolve(args.values.folder ?? process.cwd());
  try {
    return realpathSync(folder);
  } catch {
    throw usageError(`The folder ${folder} does not exist.`);
  }
}

/** The protected paths (.git, .vscode, ...) an rw sandbox may not change; --allow-config-writes lifts them for this call. */
export function protectedPathsFlag(args: ParsedArgs): readonly string[] {
  return args.values['allow-config-writes'] ? [] : PROTECTED_PATHS;
}

/** Exit code of the CLI for a sandboxed call: the program's own, 124 on timeout, like coreutils' timeout. */
export function exitCodeFor(result: ExecResult): number {
  switch (result.outcome) {
    case 'ok':
      return 0;
    case 'timeout':
      return 124;
    case 'cancelled':
      return 130;
    case 'oom':
      return 137;
    default:
      return result.exitCode ?? 125;
  }
}
