/** Compute mode: one snippet in a fresh sandbox, with its input files, discarded after the call. */
import type { ExecResult, FileInput, OpenOptions, SandboxEngine } from '../engine/engine';
import { resolveFiles } from '../files/files';
import type { Runtime, SandboxSpec } from '../spec/spec';
import { planPythonRun } from '../interpreters/runTrailer';
import { checkNetworkTier } from './sessionPolicy';
import { decisionNotes, decisionsCursor } from '../network/decisionNotes';
import type { ImageOutput } from '../results/images';

export interface RunInput {
  code: string;
  files?: readonly FileInput[];
  stdin?: string;
}

const PROGRAM_DIR = '/tmp/agent-sandbox';

const PROGRAMS: Record<Runtime, { file: string; argv: (path: string) => string[] }> = {
  python: { file: 'main.py', argv: (path) => ['python3', '-u', path] },
  node: { file: 'main.js', argv: (path) => ['node', path] },
  bash: { file: 'main.sh', argv: (path) => ['bash', path] },
  linux: { file: 'main.sh', argv: (path) => ['sh', path] },
};

/**
 * Runs the program in a fresh sandbox. A Python program runs through a driver that shows the value of
 * its last line and returns the images it left (runTrailer.ts), as the persistent interpreter does.
 */
export async function runCompute(
  engine: SandboxEngine,
  spec: SandboxSpec,
  input: RunInput,
  options: Omit<OpenOptions, 'files' | 'ephemeral' | 'name'> = {},
): Promise<ExecResult & { images: ImageOutput[] }> {
  checkNetworkTier(spec, engine.capabilities, engine.kind);
  const program = PROGRAMS[spec.runtime];
  const programPath = `${PROGRAM_DIR}/${program.file}`;
  const driven =
    spec.runtime === 'python' ? planPythonRun(PROGRAM_DIR, programPath, spec.limits.maxStdoutBytes) : undefined;
  const files = [
    ...resolveFiles(input.files ?? [], spec.limits),
    { path: programPath, data: Buffer.from(input.code, 'utf8'), mode: 0o644 },
    ...(driven?.files ?? []),
  ];
  const sandbox = await engine.open({ ...spec, mode: 'compute' }, { ...options, files, ephemeral: true });
  try {
    // Where its network decisions stand (an allowlist run), so that the result tells its own.
    const cursor = await decisionsCursor(sandbox);
    const result = await sandbox.exec(
      { cmd: driven?.argv ?? program.argv(programPath), stdin: input.stdin },
      options.signal,
    );
    const noted = {
      ...result,
      notices: [...sandbox.info.notices, ...result.notices, ...(await decisionNotes(sandbox, cursor))],
    };
    return driven ? driven.read(noted) : { ...noted, images: [] };
  } finally {
    await sandbox.close();
  }
}
