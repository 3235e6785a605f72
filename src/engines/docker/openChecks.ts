/** What open() refuses before anything is made: requests that cannot work on this engine as asked. */
import type { OpenOptions } from '../../core/engine/engine';
import { SandboxError } from '../../core/errors';
import { WORKSPACE_DIR } from '../../core/files/paths';
import type { SandboxSpec } from '../../core/spec/spec';
import type { Endpoint } from './connection';

export function checkOpenRequest(spec: SandboxSpec, options: OpenOptions, endpoint: Endpoint): void {
  if (spec.workspaceAccess !== 'none' && !options.workspaceFolder) {
    throw new SandboxError(
      'invalid-input',
      `Workspace access "${spec.workspaceAccess}" needs a workspace folder to mount.`,
      'Open a folder, or set workspace access to none.',
    );
  }
  const bindsWorkspace = spec.workspaceAccess === 'ro' || spec.workspaceAccess === 'rw';
  if (bindsWorkspace && !endpoint.local)
    throw new SandboxError(
      'unsupported',
      `Workspace access "${spec.workspaceAccess}" mounts your folder, but the Docker Engine at ${endpoint.description} (from ${endpoint.source}) runs on another machine, which cannot see it.`,
      'Use workspace access "copy" (the folder is copied into the sandbox, and you review its changes before they are applied), or an engine on this machine.',
    );
  if (
    bindsWorkspace &&
    spec.workspaceAccess === 'ro' &&
    options.files?.some((file) => file.path.startsWith(`${WORKSPACE_DIR}/`))
  ) {
    throw new SandboxError(
      'read-only',
      'Files cannot be staged into a read-only workspace.',
      'Read them from the workspace instead, or ask for read-write access.',
    );
  }
}
