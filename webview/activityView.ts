/** The most recent tool calls (tool, summary, exit code, duration) and network decisions of allowlist sandboxes. */
import type { ActivityView, WebviewToHost } from '../src/shared/protocol';
import { button } from './controls';
import { h } from './dom';
import { formatDuration, formatTime } from './format';

export function renderActivity(activity: ActivityView[], post: (message: WebviewToHost) => void): HTMLElement {
  const section = h(
    'section',
    { class: 'activity', 'aria-labelledby': 'activity-title' },
    h(
      'div',
      { class: 'section-head' },
      h('h2', { id: 'activity-title' }, 'Activity'),
      button(
        'Export',
        'Export the audit log (tool calls and network decisions) as JSON Lines',
        () => post({ type: 'exportLog' }),
        'export-log',
      ),
    ),
  );
  if (activity.length === 0) {
    section.append(h('p', { class: 'empty muted' }, 'No tool calls or network connections yet.'));
    return section;
  }
  const list = h('ol', { class: 'activity-list', role: 'list' });
  for (const entry of [...activity].reverse()) {
    const network = entry.tool === 'network';
    const exit = network
      ? entry.ok
        ? ''
        : 'refused'
      : entry.exitCode === null
        ? entry.ok
          ? ''
          : 'error'
        : `exit ${entry.exitCode}`;
    list.append(
      h(
        'li',
        { class: entry.ok ? 'ok' : 'failed' },
        h(
          'div',
          { class: 'activity-head small' },
          h('span', { class: 'tool' }, entry.tool.replace(/^sandbox_/, '')),
          entry.sandboxId ? h('span', { class: 'muted' }, entry.sandboxId) : null,
          exit ? h('span', { class: entry.exitCode === 0 ? 'exit-ok' : 'exit-bad' }, exit) : null,
          h(
            'span',
            { class: 'muted right' },
            network ? formatTime(entry.at) : `${formatDuration(entry.durationMs)} · ${formatTime(entry.at)}`,
          ),
        ),
        ...summaryLines(entry),
      ),
    );
  }
  section.append(list);
  return section;
}

/**
 * The entry's summary; a network decision's secret notes (after "; ") each on a line of its own, so
 * that they are not cut off: a placeholder that was not replaced is drawn as a warning.
 */
function summaryLines(entry: ActivityView): HTMLElement[] {
  const [first, ...notes] = entry.tool === 'network' ? entry.summary.split('; ') : [entry.summary];
  return [
    h('code', { class: 'summary', title: entry.summary }, first || '-'),
    ...notes.map((note) =>
      h('code', { class: `summary note ${/not replaced/.test(note) ? 'note-warning' : ''}`, title: note }, note),
    ),
  ];
}
