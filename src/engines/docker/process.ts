/**
 * A long-running program in a running container on pipes (SandboxProcess): an exec without a
 * terminal, stdin attached, its multiplexed output split into stdout and stderr as it arrives. It
 * runs under the container's init as a subreaper with the environment marker of exec.ts, so that
 * closing it kills everything it started.
 */
import type Docker from 'dockerode';
import { randomUUID } from 'node:crypto';
import { PassThrough, type Duplex } from 'node:stream';
import type { SandboxProcess } from '../../core/engine/engine';
import { EXEC_MARKER_VAR, exitCodeOf, killMarked, underSubreaper } from './exec';
import { settledWithin } from './settledWithin';

export interface ProcessParams {
  docker: Docker;
  container: Docker.Container;
  user: string;
  argv: readonly string[];
  cwd: string;
  env: readonly string[];
}

/** How long the output may keep flowing after the kill before the stream is cut. */
const CLOSE_DRAIN_MS = 2000;

export async function openDockerProcess(params: ProcessParams): Promise<SandboxProcess> {
  const marker = randomUUID();
  const exec = await params.container.exec({
    Cmd: underSubreaper(params.argv),
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    User: params.user,
    WorkingDir: params.cwd,
    Env: [...params.env, `${EXEC_MARKER_VAR}=${marker}`],
  });
  const stream = (await exec.start({ hijack: true, stdin: true })) as Duplex;
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  params.docker.modem.demuxStream(stream, stdout, stderr);
  const ended = new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });
  const exited = ended.then(() => exitCodeOf(exec).catch(() => null));
  let closing: Promise<void> | undefined;
  return {
    write: (data) => {
      if (!stream.destroyed && stream.writable) stream.write(data);
    },
    onStdout: (listener) => stdout.on('data', listener),
    onStderr: (listener) => stderr.on('data', listener),
    exited,
    close: () =>
      (closing ??= (async () => {
        await killMarked(params, marker).catch(() => false);
        if (!(await settledWithin(ended, CLOSE_DRAIN_MS))) stream.destroy();
      })()),
  };
}
