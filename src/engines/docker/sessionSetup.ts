/**
 * A session's container, started, made ready before the caller gets it: its allowlist relay (its only
 * way out), the files given at open, the folder's copy, and the packages asked for.
 */
import type Docker from 'dockerode';
import type { OpenOptions } from '../../core/engine/engine';
import { keepBaseObjects } from '../../core/files/copyObjects';
import { saveBaseline, type FolderCopy } from '../../core/files/folderCopy';
import { networkTier } from '../../core/network/allowlist';
import { defaultStateDir } from '../../core/sessions/leases';
import type { SandboxSpec } from '../../core/spec/spec';
import type { DockerEngine } from './dockerEngine';
import { installPackages } from './packages';
import { placeCopy, placeFiles } from './placeFiles';
import type { TarLayout } from './tar';

export async function setUpSession(
  engine: DockerEngine,
  container: Docker.Container,
  spec: SandboxSpec,
  /** The sandbox user, uid:gid. */
  user: string,
  options: OpenOptions,
  folder?: { copy: FolderCopy; layout: TarLayout | undefined },
): Promise<void> {
  const signal = options.signal;
  const allowlisted = networkTier(spec) === 'allowlist';
  const copy = folder?.copy;
  const layout = folder?.layout;
  // Its only way out, before anything of the caller's runs in it.
  if (allowlisted)
    await engine.guard(async () => {
      await engine.egress.start(container.id, spec, user, options);
      await engine.egress.trustSessionCa(container, spec, user, signal);
    }, signal);
  // $HOME and a private /workspace are the sandbox user's tmpfs from the start; the first files go in as that user.
  await engine.guard(
    () =>
      placeFiles({
        docker: engine.docker,
        container,
        user,
        files: options.files ?? [],
        limits: spec.limits,
        signal,
      }),
    signal,
  );
  if (copy) {
    // The copied text, kept as the base of a later merge (a file changed on both sides), while the
    // copy is placed: both are done before the sandbox is returned, and neither waits for the other.
    const [placement, kept] = await Promise.allSettled([
      engine.guard(
        () =>
          placeCopy({
            docker: engine.docker,
            container,
            user,
            copy,
            layout,
            limits: spec.limits,
            signal,
          }),
        signal,
      ),
      keepBaseObjects(defaultStateDir(), container.id, copy.files, copy.baseline),
    ]);
    if (placement.status === 'rejected') throw placement.reason;
    if (kept.status === 'rejected') throw kept.reason;
    await saveBaseline(defaultStateDir(), container.id, copy.baseline);
  }
  // Before the caller gets the sandbox, so no code of theirs runs while the network is on for the install
  // (with an allowlist: while the package index is let through).
  const indexAllowed = engine.egress.duringInstall(container.id, spec);
  try {
    await engine.guard(
      () =>
        installPackages({
          docker: engine.docker,
          container,
          spec,
          user,
          onProgress: options.onProgress,
          signal,
        }),
      signal,
    );
  } finally {
    indexAllowed();
  }
}
