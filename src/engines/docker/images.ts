/**
 * Makes sure a sandbox's image is there: inspect, else pull with progress, else (for a runtime's
 * image, not one the configuration names itself) a local image labelled for the runtime, and say so.
 */
import type Docker from 'dockerode';
import { SandboxError } from '../../core/errors';
import type { ProgressCallback } from '../../core/engine/engine';
import { RUNTIME_LABEL, type ImageChoice } from '../../core/engine/images';
import type { Runtime } from '../../core/spec/spec';
import { withSignal } from './engineCalls';

export interface ReadyImage {
  image: string;
  notices: string[];
}

/** A failed pull is remembered for a while so that every call does not wait for the registry again. */
const PULL_FAILURE_TTL_MS = 5 * 60_000;

export class ImageResolver {
  private readonly failedPulls = new Map<string, { message: string; at: number }>();
  private readonly ready = new Map<string, ReadyImage>();

  constructor(private readonly docker: Docker) {}

  async ensure(
    runtime: Runtime,
    choice: ImageChoice,
    onProgress?: ProgressCallback,
    signal?: AbortSignal,
  ): Promise<ReadyImage> {
    const cached = this.ready.get(choice.image);
    if (cached) return cached;
    const result = await this.resolve(runtime, choice, onProgress, signal);
    this.ready.set(choice.image, result);
    return result;
  }

  /** Forget what is known, e.g. after the engine restarted or images were removed. */
  reset(): void {
    this.ready.clear();
    this.failedPulls.clear();
  }

  private async resolve(
    runtime: Runtime,
    choice: ImageChoice,
    onProgress?: ProgressCallback,
    signal?: AbortSignal,
  ): Promise<ReadyImage> {
    if (await this.exists(choice.image, signal)) return { image: choice.image, notices: [] };
    let pullError: string;
    try {
      await this.pull(choice.image, onProgress, signal);
      return { image: choice.image, notices: [`Pulled ${choice.image}.`] };
    } catch (error) {
      if (SandboxError.is(error, 'aborted')) throw error;
      pullError = (error as Error).message;
    }
    if (choice.fallbackAllowed) {
      const local = await this.labelledImage(runtime, signal);
      if (local) {
        return {
          image: local,
          notices: [
            `${choice.image} is not available and could not be pulled (${pullError}); using the local image ${local}, labelled ${RUNTIME_LABEL}=${runtime}. To choose another image, use ${choice.howToChange}.`,
          ],
        };
      }
    }
    throw new SandboxError(
      'image-unavailable',
      `The image ${choice.image} is not on this machine and could not be pulled: ${pullError}.`,
      `Pull it yourself (docker pull ${choice.image}) or choose another image with ${choice.howToChange}.`,
    );
  }

  private async exists(image: string, signal?: AbortSignal): Promise<boolean> {
    try {
      await this.docker.getImage(image).inspect(withSignal({}, signal));
      return true;
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return false;
      throw error;
    }
  }

  private async pull(image: string, onProgress?: ProgressCallback, signal?: AbortSignal): Promise<void> {
    const failed = this.failedPulls.get(image);
    if (failed && Date.now() - failed.at < PULL_FAILURE_TTL_MS) throw new Error(failed.message);
    onProgress?.({ message: `Pulling ${image}` });
    try {
      const stream = await this.docker.pull(image, withSignal({}, signal));
      await new Promise<void>((resolve, reject) => {
        const layers = new Map<string, { current: number; total: number }>();
        this.docker.modem.followProgress(
          stream,
          (error: Error | null, output: { error?: string }[]) => {
            const failure = error?.message ?? output.find((event) => event.error)?.error;
            if (failure) reject(new Error(failure));
            else resolve();
          },
          (event: { id?: string; status?: string; progressDetail?: { current?: number; total?: number } }) => {
            if (event.id && event.progressDetail?.total)
              layers.set(event.id, { current: event.progressDetail.current ?? 0, total: event.progressDetail.total });
            let current = 0;
            let total = 0;
            for (const layer of layers.values()) {
              current += layer.current;
              total += layer.total;
            }
            onProgress?.({
              message: `Pulling ${image}: ${event.status ?? ''}`.trim(),
              ...(total ? { percent: Math.min(100, Math.round((100 * current) / total)) } : {}),
            });
          },
        );
      });
    } catch (error) {
      const message = cleanPullError(error);
      this.failedPulls.set(image, { message, at: Date.now() });
      throw new Error(message, { cause: error });
    }
  }

  /** The newest local image labelled for this runtime. */
  private async labelledImage(runtime: Runtime, signal?: AbortSignal): Promise<string | undefined> {
    const images = await this.docker.listImages(
      withSignal({ filters: { label: [`${RUNTIME_LABEL}=${runtime}`] } }, signal),
    );
    const newest = images
      .sort((a, b) => b.Created - a.Created)
      .find((image) => image.RepoTags?.some((tag) => tag !== '<none>:<none>'));
    return newest?.RepoTags?.find((tag) => tag !== '<none>:<none>') ?? (images[0] ? images[0].Id : undefined);
  }
}

function cleanPullError(error: unknown): string {
  const raw = (error as { json?: { message?: string } }).json?.message ?? (error as Error).message ?? String(error);
  return raw
    .replace(/^\(HTTP code \d+\)[^-]*-\s*/, '')
    .replace(/\s+/g, ' ')
    .trim();
}
