/** One card per session: what it is, what it costs, what it can touch, and what can be done with it. */
import type { SessionView, StatsView, WebviewToHost } from '../src/shared/protocol';
import { button, controlValue, dropdown, tag, textField } from './controls';
import { h } from './dom';
import { formatAge, formatBytes } from './format';

const RUNTIMES = ['python', 'node', 'bash', 'linux'] as const;
const ACCESS_LABEL = {
  none: 'workspace: none',
  copy: 'workspace: copy',
  ro: 'workspace: read-only',
  rw: 'workspace: read-write',
} as const;

export interface SessionsUi {
  newRuntime: (typeof RUNTIMES)[number];
}

export function renderSessions(
  sessions: SessionView[],
  stats: Map<string, StatsView>,
  ui: SessionsUi,
  post: (message: WebviewToHost) => void,
  onUiChange: () => void,
): HTMLElement {
  const section = h('section', { class: 'sessions', 'aria-labelledby': 'sessions-title' });
  const runtime = dropdown(
    { 'aria-label': 'Runtime of the new session', 'data-field': 'new-runtime' },
    RUNTIMES.map((value) => ({ value, selected: value === ui.newRuntime })),
    (value) => {
      ui.newRuntime = value as SessionsUi['newRuntime'];
      onUiChange();
    },
  );
  const name = textField(
    { placeholder: 'name', value: nextName(sessions), 'data-field': 'new-name', size: 12 },
    'Name of the new session',
    { hidden: true },
  );
  const open = button(
    'Open Session',
    'Open a new session',
    () =>
      post({
        type: 'openSession',
        name: (controlValue(name) || nextName(sessions)).trim(),
        runtime: ui.newRuntime,
      }),
    'open-session',
    'primary',
  );
  section.append(
    h(
      'div',
      { class: 'section-head' },
      h('h2', { id: 'sessions-title' }, `Sessions (${sessions.length})`),
      h('div', { class: 'new-session' }, name, runtime, open),
    ),
  );
  if (sessions.length === 0) {
    section.append(
      h(
        'p',
        { class: 'empty muted' },
        'No sessions are open. Agents open one on their first sandbox call, or open one here.',
      ),
    );
    return section;
  }
  const list = h('ul', { class: 'cards', role: 'list' });
  for (const session of sessions) list.append(renderCard(session, stats.get(session.id), post));
  section.append(list);
  return section;
}

function renderCard(
  session: SessionView,
  stats: StatsView | undefined,
  post: (message: WebviewToHost) => void,
): HTMLElement {
  const dead = session.state === 'dead';
  const card = h('li', {
    class: `card state-${session.state}`,
    'data-session': session.sandboxId,
    'aria-label': `Session ${session.sandboxId}, ${session.state}`,
  });
  card.append(
    h(
      'div',
      { class: 'card-head' },
      h('strong', { class: 'session-name', title: session.sandboxId }, session.sandboxId),
      session.scope !== 'workspace' ? tag(session.scope) : null,
      session.openedBy === 'mcp' ? tag('MCP') : session.openedBy === 'cli' ? tag('CLI') : null,
      h('span', { class: 'runtime' }, session.runtime),
      h('span', { class: `pill pill-${session.state}`, role: 'status' }, session.state),
    ),
    h(
      'p',
      { class: 'muted small image', title: session.image },
      `${session.image} · up ${formatAge(session.createdAt)}${session.lastUsedAt && !dead ? ` · idle ${formatAge(session.lastUsedAt)}` : ''}`,
    ),
  );
  if (dead)
    card.append(h('p', { class: 'death', role: 'alert' }, session.deathReason ?? 'The session is no longer running.'));
  else card.append(renderUsage(session, stats));
  card.append(
    h(
      'div',
      { class: 'badges' },
      h(
        'span',
        { class: `badge access-${session.workspaceAccess}`, 'data-badge': 'access' },
        ACCESS_LABEL[session.workspaceAccess],
      ),
      h(
        'span',
        {
          class: `badge network-${session.network ? 'on' : session.networkAllow?.length ? 'allowlist' : 'off'}`,
          'data-badge': 'network',
          ...(session.networkAllow?.length ? { title: `reaches only: ${session.networkAllow.join(', ')}` } : {}),
        },
        `network: ${session.network ? 'on' : session.networkAllow?.length ? `allowlist (${session.networkAllow.length})` : 'off'}`,
      ),
    ),
  );
  if (session.secrets?.length) card.append(renderSecrets(session.sandboxId, session.secrets));
  if (session.lastCommand) {
    const { summary, exitCode } = session.lastCommand;
    card.append(
      h(
        'p',
        { class: 'last small' },
        h('span', { class: 'muted' }, 'last: '),
        h('code', {}, summary),
        exitCode === null ? '' : h('span', { class: exitCode === 0 ? 'exit-ok' : 'exit-bad' }, ` → exit ${exitCode}`),
      ),
    );
  }
  if (session.images?.length) card.append(renderImages(session.images, post));
  if (session.copyChanges && !dead) card.append(renderCopyChanges(session.sandboxId, session.copyChanges, post));
  const id = session.sandboxId;
  const access = dropdown(
    { 'aria-label': `Workspace access of ${id}`, 'data-action': 'set-access', disabled: dead },
    (['none', 'copy', 'ro', 'rw'] as const).map((value) => ({ value, selected: value === session.workspaceAccess })),
    (value) => {
      if (value !== session.workspaceAccess)
        post({ type: 'setAccess', sandboxId: id, access: value as SessionView['workspaceAccess'] });
    },
  );
  card.append(
    h(
      'div',
      { class: 'actions' },
      dead
        ? null
        : button(
            'Terminal',
            `Open a terminal in ${id}`,
            () => post({ type: 'openTerminal', sandboxId: id }),
            'open-terminal',
          ),
      dead ? null : h('label', { class: 'inline' }, h('span', { class: 'small muted' }, 'access'), access),
      button(
        'Restart',
        `Restart ${id} (its files are lost)`,
        () => post({ type: 'restartSession', sandboxId: id }),
        'restart-session',
      ),
      button('Close', `Close ${id}`, () => post({ type: 'closeSession', sandboxId: id }), 'close-session'),
    ),
  );
  return card;
}

/** A copy session's changes awaiting review, with the same actions as Source Control › Sandbox changes. */
function renderCopyChanges(
  id: string,
  changes: NonNullable<SessionView['copyChanges']>,
  post: (message: WebviewToHost) => void,
): HTMLElement {
  const { files, conflicts, held, problem } = changes;
  const notes = [
    conflicts ? `${conflicts} conflict${conflicts === 1 ? '' : 's'}` : '',
    held ? `${held} need${held === 1 ? 's' : ''} confirmation` : '',
  ].filter(Boolean);
  const text = problem
    ? `Changes could not be listed: ${problem}`
    : files
      ? `${files} changed file${files === 1 ? '' : 's'} await review${notes.length ? ` (${notes.join(', ')})` : ''}`
      : 'No changes in the copy';
  return h(
    'div',
    { class: 'copy-changes', role: 'group', 'aria-label': `Changes of ${id}` },
    h('span', { class: 'small', role: 'status' }, text),
    files
      ? h(
          'span',
          { class: 'actions' },
          button(
            'Review',
            `Review the changes of ${id} in Source Control`,
            () => post({ type: 'reviewChanges', sandboxId: id }),
            'review-changes',
          ),
          button(
            'Apply All',
            `Apply every change of ${id} to the folder`,
            () => post({ type: 'applyChanges', sandboxId: id }),
            'apply-changes',
          ),
          button(
            'Discard All',
            `Discard every change of ${id}`,
            () => post({ type: 'discardChanges', sandboxId: id }),
            'discard-changes',
          ),
        )
      : null,
  );
}

/**
 * The secrets a session holds, by name: a bound one with where it goes and how often the proxy added
 * it (and, as a warning, how often its placeholder went out unreplaced); an inside one warned about,
 * its value being in the sandbox. The host sends names and bindings only, never a value.
 */
function renderSecrets(id: string, secrets: NonNullable<SessionView['secrets']>): HTMLElement {
  const list = h('ul', { class: 'secrets-list', role: 'list' });
  for (const secret of secrets) {
    const used = secret.inside ? '' : secret.used ? `used ${times(secret.used)}` : 'not used yet';
    const refused = secret.refused ? `${secret.refused} not replaced` : '';
    const label = [`${secret.name} ${secret.binding}`, used, refused ? `${refused} (sent where it is not bound)` : '']
      .filter(Boolean)
      .join(', ');
    list.append(
      h(
        'li',
        {
          class: `secret ${secret.inside || secret.refused ? 'secret-warning' : ''}`,
          'data-secret': secret.name,
          'aria-label': label,
        },
        h('code', { class: 'secret-name' }, secret.name),
        secret.inside
          ? h(
              'span',
              { class: 'secret-inside', title: 'Its value is in the sandbox: the code there can read it' },
              `⚠ ${secret.binding}`,
            )
          : h('span', { class: 'muted secret-binding' }, secret.binding),
        used ? h('span', { class: 'muted secret-used' }, used) : null,
        refused
          ? h(
              'span',
              {
                class: 'secret-refused',
                title:
                  'The sandbox sent its placeholder where the secret is not bound (another host or header, a URL, a body): see Activity',
              },
              `⚠ ${refused}`,
            )
          : null,
      ),
    );
  }
  return h(
    'div',
    { class: 'secrets small', role: 'group', 'aria-label': `Secrets of ${id} (${secrets.length})` },
    h('span', { class: 'muted' }, 'secrets: '),
    list,
  );
}

function times(count: number): string {
  return count === 1 ? 'once' : `${count} times`;
}

/** The last result's images as thumbnails; each opens in VS Code's image preview. */
function renderImages(images: NonNullable<SessionView['images']>, post: (message: WebviewToHost) => void): HTMLElement {
  return h(
    'div',
    { class: 'thumbs', role: 'group', 'aria-label': `Last images (${images.length})` },
    ...images.map((image) => {
      const size = image.width && image.height ? `, ${image.width}×${image.height}` : '';
      const button = h(
        'button',
        {
          class: 'thumb',
          type: 'button',
          title: `${image.source}${size}: open`,
          'aria-label': `Open image ${image.name}`,
        },
        h('img', { src: image.src, alt: `${image.source}${size}` }),
      );
      button.addEventListener('click', () => post({ type: 'openImage', key: image.key }));
      return button;
    }),
  );
}

export function renderUsage(session: SessionView, stats: StatsView | undefined): HTMLElement {
  const cpu = stats ? Math.min(100, stats.cpuPercent / session.cpus) : undefined;
  const memory = stats?.memoryBytes;
  const limit = stats?.memoryLimitBytes || session.memoryLimitBytes;
  return h(
    'div',
    { class: 'usage' },
    meter(
      'CPU',
      cpu,
      cpu === undefined ? `- of ${session.cpus} CPU` : `${stats!.cpuPercent.toFixed(0)}% of ${session.cpus} CPU`,
    ),
    meter(
      'Memory',
      memory === undefined ? undefined : (100 * memory) / limit,
      memory === undefined ? `- of ${formatBytes(limit)}` : `${formatBytes(memory)} of ${formatBytes(limit)}`,
    ),
  );
}

function meter(label: string, percent: number | undefined, text: string): HTMLElement {
  const value = percent === undefined ? 0 : Math.max(0, Math.min(100, percent));
  const fill = h('div', { class: 'meter-fill' });
  fill.style.width = `${value}%`; // through the CSSOM: the panel's CSP allows no inline style attributes
  return h(
    'div',
    { class: 'meter-row' },
    h('span', { class: 'small meter-label' }, label),
    h(
      'div',
      {
        class: `meter ${value > 85 ? 'meter-high' : ''}`,
        role: 'meter',
        'aria-label': `${label}: ${text}`,
        'aria-valuemin': 0,
        'aria-valuemax': 100,
        'aria-valuenow': Math.round(value),
      },
      fill,
    ),
    h('span', { class: 'small meter-text' }, text),
  );
}

function nextName(sessions: SessionView[]): string {
  if (!sessions.some((session) => session.sandboxId === 'default')) return 'default';
  for (let n = 2; ; n++) if (!sessions.some((session) => session.sandboxId === `session-${n}`)) return `session-${n}`;
}
