/**
 * A compute sandbox needs $HOME, /workspace and the runner's folder owned by the sandbox user, and only
 * root can make them: through the archive API, before start. Per container that call is about a third
 * of the engine's work for a container when many start at once, so it is done once per image instead:
 * a thin image on top (agent-sandbox/prepared:<hash>), made by committing a never-started container that
 * the archive API prepared. Nothing ran in it; it holds only those folders.
 */
import type Docker from 'dockerode';
import { createHash, randomBytes } from 'node:crypto';
import { CONTAINER_PREFIX } from './labels';
import { buildTar, type TarEntry } from './tar';

export const PREPARED_REPOSITORY = 'agent-sandbox/prepared';
export const PREPARED_FROM_LABEL = 'org.agent-sandbox.prepared-from';
/** Part of every prepared image's tag: a change to what goes in makes new ones. */
const FORMAT = '1';

export class PreparedImages {
  private readonly cache = new Map<string, Promise<string | undefined>>();

  constructor(private readonly docker: Docker) {}

  /** The prepared image for `image` with these folders, made on first use; undefined when the engine cannot make it (the caller then prepares each container). */
  get(image: string, directories: readonly TarEntry[]): Promise<string | undefined> {
    const key = JSON.stringify([image, directories.map(({ name, mode, uid, gid }) => [name, mode, uid, gid])]);
    let prepared = this.cache.get(key);
    if (!prepared) {
      prepared = this.make(image, directories).catch(() => {
        this.cache.delete(key); // tried again on a later run
        return undefined;
      });
      this.cache.set(key, prepared);
    }
    return prepared;
  }

  /** Forget what is known, e.g. after the engine restarted or images were removed. */
  reset(): void {
    this.cache.clear();
  }

  private async make(image: string, directories: readonly TarEntry[]): Promise<string> {
    const base = await this.docker.getImage(image).inspect();
    const folders = directories.map(({ name, mode, uid, gid }) => `${name}:${mode.toString(8)}:${uid}:${gid}`).join(',');
    const tag = createHash('sha256').update(`${FORMAT}\n${base.Id}\n${folders}`).digest('hex').slice(0, 24);
    const name = `${PREPARED_REPOSITORY}:${tag}`;
    try {
      await this.docker.getImage(name).inspect();
      return name;
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode !== 404) throw error;
    }
    // Never started, and unlabelled so that the image made from it carries no labels of ours.
    const container = await this.docker.createContainer({ name: `${CONTAINER_PREFIX}prepare-${randomBytes(4).toString('hex')}`, Image: image, Entrypoint: ['true'], Cmd: [], NetworkDisabled: true });
    try {
      await container.putArchive(await buildTar(directories), { path: '/' });
      await container.commit({ repo: PREPARED_REPOSITORY, tag, pause: false, comment: `Agent Sandbox: ${image} with ${folders}`, changes: `LABEL ${PREPARED_FROM_LABEL}=${JSON.stringify(image)}` });
    } finally {
      await container.remove({ force: true }).catch(() => undefined);
    }
    return name;
  }
}
