/**
 * Docker contexts, resolved as the docker CLI resolves them: DOCKER_CONTEXT, else the config's
 * `currentContext` (`$DOCKER_CONFIG/config.json`, `~/.docker` by default); the context's endpoint
 * is in `contexts/meta/<sha256 of the name>/meta.json`, its TLS files in
 * `contexts/tls/<sha256 of the name>/docker/`. "default" means no context: DOCKER_HOST or the
 * default socket. (An explicit host and DOCKER_HOST come first, as for the docker CLI.)
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { SandboxError } from '../../core/errors';

export interface ContextEndpoint {
  name: string;
  /** Where the name came from: DOCKER_CONTEXT, or the config file. */
  from: string;
  host: string;
  /** The context's TLS files, when it has them. */
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  /** The context says not to verify the engine's certificate; Agent Sandbox verifies it all the same. */
  skipTlsVerify: boolean;
}

const metaSchema = z
  .object({
    Name: z.string(),
    Endpoints: z
      .object({
        docker: z.object({ Host: z.string().min(1), SkipTLSVerify: z.boolean().optional() }).loose(),
      })
      .loose(),
  })
  .loose();

const configSchema = z.object({ currentContext: z.string().optional() }).loose();

function configDir(env: NodeJS.ProcessEnv): string {
  return env.DOCKER_CONFIG?.trim() || join(homedir(), '.docker');
}

/** The context in use, or undefined for "default" (or none set). */
export function resolveDockerContext(env: NodeJS.ProcessEnv = process.env): ContextEndpoint | undefined {
  const dir = configDir(env);
  let name = env.DOCKER_CONTEXT?.trim();
  let from = 'DOCKER_CONTEXT';
  if (!name) {
    const configFile = join(dir, 'config.json');
    if (!existsSync(configFile)) return undefined;
    let parsed: z.output<typeof configSchema>;
    try {
      parsed = configSchema.parse(JSON.parse(readFileSync(configFile, 'utf8')));
    } catch (error) {
      throw new SandboxError(
        'engine-unavailable',
        `The Docker configuration ${configFile} cannot be read: ${(error as Error).message.split('\n')[0]}.`,
        'Fix the file (it is JSON), or set DOCKER_HOST to the engine’s address.',
      );
    }
    name = parsed.currentContext?.trim();
    from = configFile;
  }
  if (!name || name === 'default') return undefined;
  const id = createHash('sha256').update(name).digest('hex');
  const metaFile = join(dir, 'contexts', 'meta', id, 'meta.json');
  if (!existsSync(metaFile))
    throw new SandboxError(
      'engine-unavailable',
      `The Docker context "${name}" (from ${from}) does not exist: there is no ${metaFile}.`,
      'List the contexts with `docker context ls` and pick one with `docker context use NAME` (or DOCKER_CONTEXT), or set DOCKER_HOST.',
    );
  let meta: z.output<typeof metaSchema>;
  try {
    meta = metaSchema.parse(JSON.parse(readFileSync(metaFile, 'utf8')));
  } catch (error) {
    throw new SandboxError(
      'engine-unavailable',
      `The Docker context "${name}" (${metaFile}) has no engine address: ${(error as Error).message.split('\n')[0]}.`,
      'Create the context again with `docker context create`, or set DOCKER_HOST.',
    );
  }
  const tlsDir = join(dir, 'contexts', 'tls', id, 'docker');
  const file = (base: string) => (existsSync(join(tlsDir, base)) ? readFileSync(join(tlsDir, base)) : undefined);
  const tls = existsSync(tlsDir) ? { ca: file('ca.pem'), cert: file('cert.pem'), key: file('key.pem') } : undefined;
  return {
    name,
    from,
    host: meta.Endpoints.docker.Host,
    tls,
    skipTlsVerify: meta.Endpoints.docker.SkipTLSVerify === true,
  };
}
