/** VS Code's CancellationToken at the edge, AbortSignal everywhere inside (as vscode-containers does). */
import type * as vscode from 'vscode';

export function abortSignalFrom(token: vscode.CancellationToken | undefined): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  if (!token) return { signal: controller.signal, dispose: () => undefined };
  if (token.isCancellationRequested) controller.abort(new Error('cancelled in VS Code'));
  const listener = token.onCancellationRequested(() => controller.abort(new Error('cancelled in VS Code')));
  return { signal: controller.signal, dispose: () => listener.dispose() };
}
