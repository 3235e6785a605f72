/** The benchmark's outputs: a Markdown table, the JSON behind it, and an SVG (and PNG) of the latency distributions. */
import { existsSync } from 'node:fs';
import type { ActivationResult } from './activation';
import type { ComparisonResult, GroupResult } from './measure';
import { ms, percentile, ratio } from './stats';

export interface BenchReport {
  when: string;
  machine: Record<string, string>;
  settings: Record<string, string | number>;
  groups: GroupResult[];
  activation?: ActivationResult;
  notes: string[];
  profiles: { title: string; lines: string[] }[];
}

export function markdown(report: BenchReport): string {
  const out: string[] = [];
  out.push(
    `Machine: ${Object.entries(report.machine)
      .map(([key, value]) => `${key} ${value}`)
      .join(', ')}.`,
  );
  out.push(
    `Run: ${report.when}; ${Object.entries(report.settings)
      .map(([key, value]) => `${key} ${value}`)
      .join(', ')}.`,
    '',
  );
  out.push('| operation | arm | p50 ms | p90 ms | errors |', '| --- | --- | ---: | ---: | ---: |');
  for (const group of report.groups) {
    for (const arm of group.arms)
      out.push(
        `| ${group.title} | ${arm.name} | ${ms(arm.summary.p50)} | ${ms(arm.summary.p90)} | ${arm.errors.length} |`,
      );
  }
  if (report.activation) {
    const { activation } = report;
    out.push(
      `| extension activation (require + activate, Node with a stand-in vscode) | dist/extension.js | ${ms(activation.total.p50)} | ${ms(activation.total.p90)} | 0 |`,
    );
    if (activation.firstUse)
      out.push(
        `| first use after activation (the services load: dist/compositionRoot.js) | API read | ${ms(activation.firstUse.p50)} | ${ms(activation.firstUse.p90)} | 0 |`,
      );
  }
  out.push(
    '',
    '| ours / baseline | p50 / p50 (or as said) | per-round p50 (p10–p90) | target | met |',
    '| --- | ---: | ---: | ---: | :---: |',
  );
  for (const group of report.groups) {
    for (const comparison of group.comparisons) out.push(comparisonRow(group.title, comparison));
  }
  if (report.activation) {
    const { activation } = report;
    const met = activation.total.p50 < 50 ? 'yes' : '**no**';
    out.push(
      `| extension activation: require ${ms(activation.require.p50)} ms + activate() ${ms(activation.activate.p50)} ms (p50) | ${ms(activation.total.p50)} ms | | < 50 ms | ${met} |`,
    );
    out.push(
      '',
      `Bundle: ${Object.entries(activation.bundle)
        .map(([file, bytes]) => `${file} ${(bytes / 1024).toFixed(0)} KiB`)
        .join(', ')}.`,
    );
  }
  for (const profile of report.profiles)
    out.push('', `${profile.title}:`, '', ...profile.lines.map((line) => `    ${line}`));
  if (report.notes.length) out.push('', ...report.notes.map((note) => `- ${note}`));
  return `${out.join('\n')}\n`;
}

/**
 * One comparison: a time ratio (ours / baseline), the milliseconds ours adds (ours - baseline), or a
 * throughput ratio (baseline / ours in time, so ours' throughput over the baseline's).
 */
function comparisonRow(title: string, comparison: ComparisonResult): string {
  const { kind = 'ratio', target, spread } = comparison;
  const met = comparison.met === undefined ? '' : comparison.met ? 'yes' : '**no**';
  const show = kind === 'added' ? added : kind === 'time' ? (value: number) => `${ms(value)} ms` : ratio;
  const what =
    kind === 'added'
      ? `${comparison.ours} − ${comparison.baseline}, ms added`
      : kind === 'throughput'
        ? `${comparison.ours} / ${comparison.baseline}, throughput`
        : kind === 'time'
          ? `${comparison.ours}, ms (${comparison.baseline}: ${ratio(comparison.p50Ratio)} of it)`
          : `${comparison.ours} / ${comparison.baseline}`;
  const bound =
    target === undefined
      ? '–'
      : kind === 'added'
        ? `< ${target} ms added`
        : kind === 'time'
          ? `< ${target} ms`
          : kind === 'throughput'
            ? `≥ ${target.toFixed(2)}×`
            : `≤ ${target.toFixed(2)}×`;
  return `| ${title}: ${what} | ${show(comparison.value ?? comparison.p50Ratio)} | ${show((spread ?? comparison.ratio).p50)} (${show((spread ?? comparison.ratio).p10)}–${show((spread ?? comparison.ratio).p90)}) | ${bound} | ${met} |`;
}

function added(value: number): string {
  return Number.isFinite(value) ? `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(2)} ms` : '–';
}

const WIDTH = 900;
const ROW = 26;
const LEFT = 250;
const RIGHT = 90;

/** One panel per group: each arm's samples as dots, its p10–p90 as a bar and its p50 as a tick, on a log axis. */
export function svgChart(report: BenchReport): string {
  const panels: { title: string; rows: { name: string; samples: number[] }[] }[] = report.groups.map((group) => ({
    title: group.title,
    rows: group.arms.map((arm) => ({ name: arm.name, samples: arm.samples.filter(Number.isFinite) })),
  }));
  if (report.activation)
    panels.push({
      title: 'extension activation (require + activate)',
      rows: [{ name: 'dist/extension.js', samples: report.activation.samples.map((sample) => sample.totalMs) }],
    });
  const parts: string[] = [];
  let y = 30;
  parts.push(
    `<text x="12" y="20" class="title">Agent Sandbox benchmark · ${escape(report.when)} · ${escape(report.machine.cpu ?? '')}</text>`,
  );
  for (const panel of panels) {
    const all = panel.rows.flatMap((row) => row.samples);
    if (!all.length) continue;
    const low = Math.max(0.1, Math.min(...all) / 1.15);
    const high = Math.max(...all) * 1.15;
    const x = (value: number) =>
      LEFT + ((Math.log(value) - Math.log(low)) / (Math.log(high) - Math.log(low))) * (WIDTH - LEFT - RIGHT);
    y += 18;
    parts.push(`<text x="12" y="${y}" class="panel">${escape(panel.title)}</text>`);
    const top = y + 6;
    for (const tick of ticks(low, high))
      parts.push(
        `<line x1="${x(tick)}" x2="${x(tick)}" y1="${top}" y2="${top + panel.rows.length * ROW}" class="grid"/><text x="${x(tick)}" y="${top + panel.rows.length * ROW + 12}" class="tick">${tick} ms</text>`,
      );
    panel.rows.forEach((row, index) => {
      const mid = top + index * ROW + ROW / 2;
      const at = (p: number) => percentile(row.samples, p);
      parts.push(`<text x="${LEFT - 8}" y="${mid + 4}" class="arm">${escape(row.name)}</text>`);
      parts.push(
        `<rect x="${x(at(10))}" y="${mid - 5}" width="${Math.max(1, x(at(90)) - x(at(10)))}" height="10" class="band band${index % 4}"/>`,
      );
      row.samples.forEach((value, sample) =>
        parts.push(`<circle cx="${x(value)}" cy="${mid + ((sample % 5) - 2) * 2}" r="2" class="dot dot${index % 4}"/>`),
      );
      parts.push(`<line x1="${x(at(50))}" x2="${x(at(50))}" y1="${mid - 8}" y2="${mid + 8}" class="median"/>`);
      parts.push(`<text x="${WIDTH - RIGHT + 8}" y="${mid + 4}" class="value">p50 ${ms(at(50))}</text>`);
    });
    y = top + panel.rows.length * ROW + 22;
  }
  const style = [
    'text{font-family:system-ui,sans-serif;fill:#222}',
    '.title{font-size:14px;font-weight:600}.panel{font-size:13px;font-weight:600}.arm{font-size:12px;text-anchor:end}',
    '.tick{font-size:10px;fill:#777;text-anchor:middle}.value{font-size:11px}.grid{stroke:#e3e3e3}.median{stroke:#111;stroke-width:2}',
    '.band{opacity:.28}.dot{opacity:.75}',
    '.band0,.dot0{fill:#1f77b4}.band1,.dot1{fill:#ff7f0e}.band2,.dot2{fill:#2ca02c}.band3,.dot3{fill:#9467bd}',
  ].join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${y + 10}" viewBox="0 0 ${WIDTH} ${y + 10}"><style>${style}</style><rect width="100%" height="100%" fill="#fff"/>${parts.join('')}</svg>\n`;
}

/** Renders the SVG to PNG with Debian's Chromium through playwright-core, when both are there. */
export async function renderPng(svg: string, path: string): Promise<string | undefined> {
  const executablePath = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((candidate) => existsSync(candidate));
  if (!executablePath)
    return 'no Chromium at /usr/bin/chromium (scripts/provision-vscode.sh installs it): PNG skipped, the SVG is there';
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage({ deviceScaleFactor: 2 });
    await page.setContent(`<html><body style="margin:0">${svg}</body></html>`);
    await page.locator('svg').screenshot({ path });
    return undefined;
  } finally {
    await browser.close();
  }
}

function ticks(low: number, high: number): number[] {
  const out: number[] = [];
  for (let decade = 10 ** Math.floor(Math.log10(low)); decade <= high; decade *= 10) {
    for (const step of [1, 2, 5]) {
      const value = decade * step;
      if (value >= low && value <= high) out.push(Number(value.toPrecision(3)));
    }
  }
  return out;
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
