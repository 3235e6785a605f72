/**
 * The host's side of sandbox_run's Python driver (pythonRun.ts): the files and command that run the
 * program through it, and the value and images taken back off the end of its stdout.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { ExecResult, ResolvedFile } from '../engine/engine';
import { checkedImages, type ImageOutput } from '../results/images';
import { PYTHON_RUN } from './pythonRun';

const trailerSchema = z.object({
  value: z.string().nullable(),
  // Checked as untrusted input by checkedImages (types, bytes, sizes, names): the program wrote this line.
  images: z.array(z.object({ mime: z.string(), data: z.string(), source: z.string() })).max(64),
  imagesDropped: z.array(z.string()).max(64),
});

export interface PythonRunPlan {
  files: ResolvedFile[];
  argv: string[];
  /** Takes the value and images off the result's stdout. */
  read(result: ExecResult): ExecResult & { images: ImageOutput[] };
}

export function planPythonRun(folder: string, programPath: string, stdoutCap: number): PythonRunPlan {
  const mark = `agent-sandbox-result-${randomBytes(12).toString('hex')}:`;
  const driverPath = `${folder}/.run.py`;
  const markPath = `${folder}/.mark`;
  return {
    files: [
      { path: driverPath, data: Buffer.from(PYTHON_RUN, 'utf8'), mode: 0o644 },
      { path: markPath, data: Buffer.from(mark, 'utf8'), mode: 0o600 },
    ],
    // Images may take half of what stdout carries; the program's own output has the rest.
    argv: ['python3', '-u', driverPath, programPath, markPath, String(Math.floor(stdoutCap / 2))],
    read: (result) => readTrailer(result, mark),
  };
}

function readTrailer(result: ExecResult, mark: string): ExecResult & { images: ImageOutput[] } {
  const at = result.stdout.indexOf(mark);
  if (at < 0) {
    const lost =
      result.stdoutTruncated && result.outcome === 'ok'
        ? ['A value of the last line or images, if there were any, did not come back: the output passed its limit.']
        : [];
    return { ...result, notices: [...result.notices, ...lost], images: [] };
  }
  const end = result.stdout.indexOf('\n', at);
  const line = result.stdout.slice(at + mark.length, end < 0 ? undefined : end);
  const stdout = result.stdout.slice(0, at) + (end < 0 ? '' : result.stdout.slice(end + 1));
  const stripped = {
    ...result,
    stdout,
    stdoutBytes: Math.max(
      0,
      result.stdoutBytes - Buffer.byteLength(result.stdout.slice(at, end < 0 ? undefined : end + 1)),
    ),
  };
  let parsed: z.output<typeof trailerSchema> | undefined;
  try {
    parsed = trailerSchema.parse(JSON.parse(line));
  } catch {
    parsed = undefined;
  }
  if (!parsed)
    return {
      ...stripped,
      notices: [...result.notices, 'The value of the last line and any images did not come back whole.'],
      images: [],
    };
  const checked = checkedImages(parsed.images, parsed.imagesDropped);
  return {
    ...stripped,
    ...(parsed.value !== null ? { value: parsed.value } : {}),
    notices: [...result.notices, ...checked.notices],
    images: checked.images,
  };
}
