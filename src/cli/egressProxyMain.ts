/**
 * dist/egressProxy.js: the allowlist proxy process on its own (egressProxyCommand.ts), so that each
 * allowlist sandbox's process loads only the proxy, its log and its allowlist, not the whole CLI
 * (dockerode, the tools, the MCP server). Started as `node dist/egressProxy.js egress-proxy DIR` by
 * core/network/egressProcesses.ts; `agent-sandbox egress-proxy DIR` does the same from dist/cli.js.
 */
import { egressProxyCommand } from './egressProxyCommand';

async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] !== 'egress-proxy') return 2;
  const controller = new AbortController();
  const stop = () => controller.abort(new Error('stopped'));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    return await egressProxyCommand(argv.slice(1), controller.signal);
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`agent-sandbox egress-proxy: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 125;
  },
);
