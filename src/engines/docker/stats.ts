/**
 * Live CPU and memory of a container from the engine's stats stream (one JSON object a second),
 * for as long as someone watches.
 */
import type Docker from 'dockerode';
import type { Readable } from 'node:stream';
import type { SessionStats } from '../../core/engine/engine';

interface StatsFrame {
  cpu_stats?: {
    cpu_usage?: { total_usage?: number; percpu_usage?: number[] };
    system_cpu_usage?: number;
    online_cpus?: number;
  };
  precpu_stats?: { cpu_usage?: { total_usage?: number }; system_cpu_usage?: number };
  memory_stats?: {
    usage?: number;
    limit?: number;
    stats?: { cache?: number; inactive_file?: number; total_inactive_file?: number };
  };
}

/** CPU as a percentage of one core (200 = two cores busy), memory without the page cache, as `docker stats` shows. */
export function statsFromFrame(id: string, frame: StatsFrame): SessionStats | undefined {
  const cpu = frame.cpu_stats;
  const pre = frame.precpu_stats;
  const memory = frame.memory_stats;
  if (!cpu?.cpu_usage?.total_usage || !memory?.usage) return undefined;
  const cpuDelta = cpu.cpu_usage.total_usage - (pre?.cpu_usage?.total_usage ?? 0);
  const systemDelta = (cpu.system_cpu_usage ?? 0) - (pre?.system_cpu_usage ?? 0);
  const cores = cpu.online_cpus ?? cpu.cpu_usage.percpu_usage?.length ?? 1;
  const cpuPercent = systemDelta > 0 && cpuDelta > 0 ? (cpuDelta / systemDelta) * cores * 100 : 0;
  const cache = memory.stats?.total_inactive_file ?? memory.stats?.inactive_file ?? memory.stats?.cache ?? 0;
  return { id, cpuPercent, memoryBytes: Math.max(0, memory.usage - cache), memoryLimitBytes: memory.limit ?? 0 };
}

export function watchContainerStats(
  container: Docker.Container,
  listener: (stats: SessionStats) => void,
  onEnd: () => void,
): { dispose(): void } {
  let stream: Readable | undefined;
  let disposed = false;
  container.stats({ stream: true }).then(
    (result) => {
      stream = result as unknown as Readable;
      if (disposed) return stream.destroy();
      let buffer = '';
      stream.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, newline).trim();
          buffer = buffer.slice(newline + 1);
          if (!line) continue;
          try {
            const stats = statsFromFrame(container.id, JSON.parse(line) as StatsFrame);
            if (stats) listener(stats);
          } catch {
            // A frame cut by a reconnect: the next one comes a second later.
          }
        }
      });
      stream.on('end', () => !disposed && onEnd());
      stream.on('error', () => !disposed && onEnd());
    },
    () => !disposed && onEnd(),
  );
  return {
    dispose() {
      disposed = true;
      stream?.destroy();
    },
  };
}
