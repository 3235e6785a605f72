/** Which container image serves a runtime, and where that choice came from. */
import type { Runtime } from '../spec/spec';

export const DEFAULT_IMAGES: Readonly<Record<Runtime, string>> = {
  python: 'python:3.12-slim',
  node: 'node:22-slim',
  bash: 'debian:bookworm-slim',
  linux: 'debian:bookworm-slim',
};

/** Local images carrying this label may stand in for a runtime whose image cannot be pulled. */
export const RUNTIME_LABEL = 'org.agent-sandbox.runtime';

export type ImageSource = 'spec' | 'configured' | 'environment' | 'default';

export interface ImageChoice {
  image: string;
  source: ImageSource;
  /** The setting or variable a user changes to pick another image. */
  howToChange: string;
  /** A labelled local image may replace it when it cannot be pulled. */
  fallbackAllowed: boolean;
}

export function envVarForRuntime(runtime: Runtime): string {
  return `AGENT_SANDBOX_IMAGE_${runtime.toUpperCase()}`;
}

export function chooseImage(
  runtime: Runtime,
  specImage: string | undefined,
  configured: Partial<Record<Runtime, string>> | undefined,
  env: NodeJS.ProcessEnv = process.env,
): ImageChoice {
  const howToChange = `the setting agentSandbox.images.${runtime}, the CLI flag --image, or the variable ${envVarForRuntime(runtime)}`;
  if (specImage)
    return {
      image: specImage,
      source: 'spec',
      howToChange: 'the image given in the sandbox configuration',
      fallbackAllowed: false,
    };
  const fromConfig = configured?.[runtime];
  if (fromConfig) return { image: fromConfig, source: 'configured', howToChange, fallbackAllowed: true };
  const fromEnv = env[envVarForRuntime(runtime)];
  if (fromEnv) return { image: fromEnv, source: 'environment', howToChange, fallbackAllowed: true };
  return { image: DEFAULT_IMAGES[runtime], source: 'default', howToChange, fallbackAllowed: true };
}
