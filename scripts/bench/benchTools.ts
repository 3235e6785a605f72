/** The tools' own path on one engine, as the bench calls it: a SandboxService over a folder of the bench's, with the test images and a warm pool. */
import { join } from 'node:path';
import { FileStore } from '../../src/core/files/fileStore';
import { SandboxService } from '../../src/core/sessions/sandboxService';
import { parseSettings } from '../../src/core/spec/settings';
import type { ToolCallContext } from '../../src/core/tools/runTool';
import type { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { TEST_IMAGES } from '../../test/engine/harness';

export function benchTools(
  engine: DockerEngine,
  folder: string,
  poolSize: number,
): { service: SandboxService; tool: ToolCallContext } {
  const settings = parseSettings({ images: TEST_IMAGES, pool: { size: poolSize } });
  const service = new SandboxService({
    engine: () => engine,
    settings: () => settings,
    workspaceFolder: () => folder,
    trusted: () => true,
  });
  const tool: ToolCallContext = {
    service,
    engine: 'docker',
    signal: new AbortController().signal,
    store: new FileStore(join(folder, '.store')),
    redact: (text) => text,
  };
  return { service, tool };
}
