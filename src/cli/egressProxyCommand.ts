/**
 * `agent-sandbox egress-proxy DIR`: the host side of one allowlist sandbox (core/network/egressHost.ts),
 * started detached by the engine that opens the sandbox; not for people. Serves the sandbox's proxy
 * until its relay is gone or it is stopped. Prints nothing (a failure to start goes to stderr, which
 * the launcher keeps in the folder); exits 0 when it ends as it should.
 */
import { isAbsolute } from 'node:path';
import { runEgressHost } from '../core/network/egressHost';

export async function egressProxyCommand(argv: readonly string[], signal: AbortSignal): Promise<number> {
  const [dir] = argv;
  if (!dir || !isAbsolute(dir)) return 2;
  // Socket paths relative to the folder stay within a unix socket's 108 bytes, wherever the state folder is.
  process.chdir(dir);
  await runEgressHost('.', signal);
  return 0;
}
