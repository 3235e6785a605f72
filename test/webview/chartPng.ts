// A small bar chart as a PNG, made with zlib alone, for the panel's thumbnails.
import { deflateSync, crc32 } from 'node:zlib';

export function barChartPng(width: number, height: number, bars: readonly number[]): Buffer {
  const rows: Buffer[] = [];
  const barWidth = Math.floor(width / (bars.length * 2));
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3, 0xff);
    row[0] = 0;
    bars.forEach((value, i) => {
      if (height - y > value * height) return;
      for (let x = barWidth * (2 * i + 1) - barWidth / 2; x < barWidth * (2 * i + 1) + barWidth / 2; x++)
        row.set([31, 119, 180], 1 + Math.floor(x) * 3);
    });
    rows.push(row);
  }
  const chunk = (kind: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(kind, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
