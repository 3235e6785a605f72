/** The Sandbox panel's browser code: tells the host it is ready and shows what the host reports. */
import type { HostToWebview, WebviewToHost } from '../src/shared/protocol';

interface VsCodeApi {
  postMessage(message: WebviewToHost): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const root = document.getElementById('root') ?? document.body;

function render(message: HostToWebview): void {
  const status = document.createElement('p');
  status.setAttribute('role', 'status');
  status.textContent = message.connected
    ? `${message.engine} ${message.version ?? ''} at ${message.endpoint}`
    : `${message.engine} is not reachable at ${message.endpoint}: ${message.problem ?? 'unknown problem'}`;
  root.replaceChildren(status);
}

window.addEventListener('message', (event: MessageEvent<HostToWebview>) => {
  if (event.data?.type === 'engineStatus') render(event.data);
});
vscode.postMessage({ type: 'ready' });
