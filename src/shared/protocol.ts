/**
 * Messages between the extension and the Sandbox panel's webview. The host validates everything that
 * arrives with these schemas; the panel issue grows this union.
 */
import { z } from 'zod';

export const webviewToHostSchema = z.discriminatedUnion('type', [z.object({ type: z.literal('ready') })]);
export type WebviewToHost = z.output<typeof webviewToHostSchema>;

export const engineStatusSchema = z.object({
  type: z.literal('engineStatus'),
  engine: z.enum(['docker', 'virtual']),
  connected: z.boolean(),
  endpoint: z.string(),
  version: z.string().optional(),
  problem: z.string().optional(),
});

export const hostToWebviewSchema = z.discriminatedUnion('type', [engineStatusSchema]);
export type HostToWebview = z.output<typeof hostToWebviewSchema>;
